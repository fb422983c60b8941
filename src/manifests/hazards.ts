/**
 * Resources a wildcard webhook rule takes in without anyone having asked for them, and why each is
 * worth a warning. A rule that names such a resource explicitly was meant; one that reaches it only
 * through `*` (any group or any resource) usually was not.
 */
import type { WebhookRule } from "./rules.ts";

export interface Hazard {
  /** What the resources are, for the message. */
  readonly what: string;
  readonly resources: readonly { readonly group: string; readonly resource: string }[];
  readonly why: string;
  /**
   * For resources the API server does not send to webhooks (at all, or from a release on): why a
   * rule that names them on purpose still enforces nothing there.
   */
  readonly unreached?: string;
}

export const HAZARDS: readonly Hazard[] = [
  {
    what: "leases (coordination.k8s.io)",
    resources: [{ group: "coordination.k8s.io", resource: "leases" }],
    why: "leader election and node heartbeats renew them every few seconds; each renewal would wait for celgate, and fail with it",
  },
  {
    what: "events",
    resources: [
      { group: "", resource: "events" },
      { group: "events.k8s.io", resource: "events" },
    ],
    why: "every controller writes them; a busy cluster would send celgate most of its writes for nothing",
  },
  {
    what: "admission configuration objects",
    // The API server never calls webhooks for these (admission/plugin/webhook/predicates/rules:
    // IsExemptAdmissionConfigurationResource), so a policy meant for them is silently not enforced.
    resources: [
      "validatingwebhookconfigurations",
      "mutatingwebhookconfigurations",
      "validatingadmissionpolicies",
      "validatingadmissionpolicybindings",
      "mutatingadmissionpolicies",
      "mutatingadmissionpolicybindings",
    ].map((resource) => ({ group: "admissionregistration.k8s.io", resource })),
    why: "the API server never sends them to a webhook, so policies meant for them are not enforced this way (apply such policies natively, or as static manifests)",
    unreached:
      "the API server never sends them to a webhook, so policies meant for them are not enforced this way (apply such policies natively, or as static manifests)",
  },
  {
    what: "authentication and authorization reviews",
    // Never persisted; the API server's own exclusion list (kubernetes pkg/kubeapiserver/admission/
    // exclusion/resources.go `excluded`), which webhooks skip from 1.37 on
    // (ExcludeAdmissionWebhookVirtualResources, beta and on by default; apiserver
    // admission/plugin/webhook/generic/webhook.go isExcludedFromAllHooks).
    resources: [
      { group: "authentication.k8s.io", resource: "selfsubjectreviews" },
      { group: "authentication.k8s.io", resource: "tokenreviews" },
      { group: "authorization.k8s.io", resource: "localsubjectaccessreviews" },
      { group: "authorization.k8s.io", resource: "selfsubjectaccessreviews" },
      { group: "authorization.k8s.io", resource: "selfsubjectrulesreviews" },
      { group: "authorization.k8s.io", resource: "subjectaccessreviews" },
    ],
    why: "from Kubernetes 1.37 the API server sends these to no webhook (ExcludeAdmissionWebhookVirtualResources), and before it every login and permission check would wait for celgate, and fail with it",
    unreached:
      "from Kubernetes 1.37 the API server sends these to no webhook (ExcludeAdmissionWebhookVirtualResources, on by default), so policies meant for them are not enforced this way there",
  },
];

function resourceMatches(pattern: string, resource: string): boolean {
  const [res, sub] = pattern.split("/", 2) as [string, string | undefined];
  return (res === "*" || res === resource) && (sub === undefined || sub === "*");
}

/** Whether the rule matches the resource only because of a wildcard group or resource. */
export function matchesByWildcard(rule: WebhookRule, group: string, resource: string): boolean {
  const byGroup = rule.apiGroups.includes("*") || rule.apiGroups.includes(group);
  const patterns = rule.resources.filter((p) => resourceMatches(p, resource));
  if (!byGroup || patterns.length === 0) return false;
  const explicitGroup = rule.apiGroups.includes(group);
  const explicitResource = patterns.some((p) => p.split("/")[0] === resource);
  return !(explicitGroup && explicitResource);
}

/** Whether the rule names the group and resource itself, not through a wildcard. */
function namesExplicitly(rule: WebhookRule, group: string, resource: string): boolean {
  return (
    rule.apiGroups.includes(group) &&
    rule.resources.some((p) => p.split("/")[0] === resource && resourceMatches(p, resource))
  );
}

/** The hazards of resources no webhook receives that some rule names on purpose. */
export function unreachedHazards(rules: readonly WebhookRule[]): Hazard[] {
  return HAZARDS.filter(
    (h) =>
      h.unreached !== undefined &&
      h.resources.some((r) => rules.some((rule) => namesExplicitly(rule, r.group, r.resource))),
  );
}

/** The hazards some rule reaches through a wildcard. */
export function wildcardHazards(rules: readonly WebhookRule[]): Hazard[] {
  return HAZARDS.filter((h) =>
    h.resources.some((r) => rules.some((rule) => matchesByWildcard(rule, r.group, r.resource))),
  );
}
