/**
 * The ValidatingWebhookConfiguration and MutatingWebhookConfiguration that send the API server's
 * admission requests to celgate for a given set of policies. Pure: policies and options in, plain
 * objects out (the command renders them as YAML).
 *
 * One webhook per route in use, each calling the server's split path for it (`/validate/fail`,
 * `/mutate/ignore`, ...). The route of a (policy, binding) pair is policy/routing.ts's, the same rule
 * the server's split paths select by: the policy's failurePolicy, except that a binding that can only
 * warn or audit goes to the Ignore path. So when celgate cannot be reached the API server fails a
 * request only where a policy could have denied it, and a policy that says Ignore never blocks a
 * request because a Fail policy's webhook is down.
 *
 * Each webhook says as much as a webhook can of what its policies select (rules, the selector
 * requirements and matchConditions they all share; carry.ts), so the API server does not call
 * celgate for requests none of them can select, and never for the namespaces a cluster needs to
 * heal itself: kube-system, kube-node-lease and celgate's own.
 */
import { routeOf } from "../policy/routing.ts";
import type {
  FailurePolicy,
  LabelSelectorRequirement,
  ParsedBinding,
  ParsedPolicy,
} from "../policy/types.ts";
import {
  commonMatchConditions,
  commonRequirements,
  namespaceRequirements,
  objectRequirements,
  renderSelector,
  type RoutedPair,
} from "./carry.ts";
import { type Hazard, unreachedHazards, wildcardHazards } from "./hazards.ts";
import { components } from "./components.ts";
import { boundRules, mergeRules, type WebhookRule } from "./rules.ts";
import { type TimedWebhook, type WorstChain, worstCaseWait } from "./timeouts.ts";

/** What the generator reads of a policy set; a CompiledPolicySet has it. */
export interface EnforcedPolicies {
  readonly bindings: readonly {
    readonly binding: ParsedBinding;
    readonly policy: { readonly policy: ParsedPolicy };
  }[];
  readonly unbound: readonly { readonly kind: ParsedPolicy["kind"]; readonly name: string }[];
}

export interface CertManagerIssuer {
  readonly kind: "Issuer" | "ClusterIssuer";
  readonly name: string;
}

export interface WebhookOptions {
  /** The Service in front of celgate, and its namespace (also excluded from interception). */
  readonly service: string;
  readonly namespace: string;
  /** The Service port the API server calls; default 443. */
  readonly port?: number;
  /** 1–30; default DEFAULT_TIMEOUT_SECONDS. */
  readonly timeoutSeconds?: number;
  /** More namespaces never sent to celgate, besides kube-system, kube-node-lease and `namespace`. */
  readonly excludeNamespaces?: readonly string[];
  /** Base64 of the PEM bundle the API server verifies celgate's certificate with. */
  readonly caBundle?: string;
  /** Let cert-manager issue the serving certificate and inject its CA into the configurations. */
  readonly certManager?: CertManagerIssuer;
}

export type Phase = "validate" | "mutate";

/** The server route for each phase and failurePolicy (src/adapters/server/server.ts). */
export const WEBHOOK_PATHS: Readonly<Record<Phase, Readonly<Record<FailurePolicy, string>>>> = {
  validate: { Fail: "/validate/fail", Ignore: "/validate/ignore" },
  mutate: { Fail: "/mutate/fail", Ignore: "/mutate/ignore" },
};

export const DEFAULT_PORT = 443;
/**
 * celgate answers in milliseconds, and a shorter wait lets the API server apply failurePolicy sooner
 * when celgate cannot be reached. With all four of celgate's webhooks matching one request, both
 * mutating ones reinvoked, the worst wait is 5 × 5 s = 25 s: within half of the API server's
 * default 60 s request deadline, leaving the rest to the other webhooks and the write itself.
 */
export const DEFAULT_TIMEOUT_SECONDS = 5;
/** Namespaces no webhook of celgate's ever intercepts, besides its own (the cluster's lifeline). */
export const ALWAYS_EXCLUDED_NAMESPACES = ["kube-system", "kube-node-lease"] as const;
/** The namespace label the API server sets on every namespace (Kubernetes 1.21+). */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";
export const ADMISSION_REVIEW_VERSIONS = ["v1", "v1beta1"] as const;

const FAILURE_POLICIES: readonly FailurePolicy[] = ["Fail", "Ignore"];

/** The cert-manager Certificate (and the Secret it writes) that serves the webhook. */
export function certificateName(service: string): string {
  return `${service}-tls`;
}

/**
 * A webhook's name: the first (or only) webhook of a path is `SERVICE.NS.fail.validate.celgate.dev`,
 * the next ones of the same path `SERVICE.NS.fail-2.validate.celgate.dev` and so on.
 */
export function webhookName(
  service: string,
  namespace: string,
  phase: Phase,
  fp: FailurePolicy,
  index = 0,
): string {
  const route = index === 0 ? fp.toLowerCase() : `${fp.toLowerCase()}-${index + 1}`;
  return `${service}.${namespace}.${route}.${phase}.celgate.dev`;
}

export function configurationName(service: string, namespace: string): string {
  return `${service}.${namespace}.celgate.dev`;
}

/** The DNS names the API server uses for a Service: the serving certificate must carry them. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

/** A pair with the webhook rules it needs. */
interface RuledPair extends RoutedPair {
  readonly rules: readonly WebhookRule[];
}

/** The pairs of one route (phase and failurePolicy). */
interface Route {
  readonly phase: Phase;
  readonly failurePolicy: FailurePolicy;
  readonly pairs: RuledPair[];
}

/** One webhook to write: a route's pairs that some request may reach together (components.ts). */
export interface PlannedWebhook {
  readonly name: string;
  readonly phase: Phase;
  /** The route: the failurePolicy of the webhook and of the split path it calls. */
  readonly failurePolicy: FailurePolicy;
  readonly pairs: readonly RoutedPair[];
  /** The union of the pairs' rules, merged. */
  readonly rules: readonly WebhookRule[];
  /** A mutating webhook is reinvoked when one of its policies asks for it. */
  readonly reinvoke: boolean;
}

export interface WebhookManifests {
  /** Certificate (with certManager), then the validating and the mutating configuration, each when it has webhooks. */
  readonly documents: readonly Record<string, unknown>[];
  /** What a reader should know about the result: omitted configurations, policies that add no rules. */
  readonly notes: readonly string[];
  /** What may hurt: rules that reach resources through a wildcard (hazards.ts). */
  readonly warnings: readonly string[];
  /** The longest one request can wait on these webhooks (timeouts.ts). */
  readonly worstCase: WorstChain;
}

function phaseOf(policy: ParsedPolicy): Phase {
  return policy.kind === "ValidatingAdmissionPolicy" ? "validate" : "mutate";
}

/** The namespaces celgate's webhooks never intercept, each once, in a fixed order. */
export function excludedNamespaces(
  options: Pick<WebhookOptions, "namespace" | "excludeNamespaces">,
): string[] {
  return [
    ...new Set([...ALWAYS_EXCLUDED_NAMESPACES, options.namespace, ...(options.excludeNamespaces ?? [])]),
  ];
}

/** Collects each enforced (policy, binding) pair, with its rules, under its phase and route. */
function routeBindings(set: EnforcedPolicies, notes: string[]): Route[] {
  const routes: Route[] = [];
  for (const phase of ["validate", "mutate"] as const)
    for (const failurePolicy of FAILURE_POLICIES) routes.push({ phase, failurePolicy, pairs: [] });
  for (const { binding, policy: compiled } of set.bindings) {
    const policy = compiled.policy;
    const route = routeOf(policy, binding);
    const group = routes.find((g) => g.phase === phaseOf(policy) && g.failurePolicy === route);
    if (!group) continue;
    const rules = boundRules(
      policy.matchConstraints?.resourceRules ?? [],
      binding.matchResources?.resourceRules ?? [],
    );
    if (rules.length === 0) {
      notes.push(
        policy.matchConstraints === undefined
          ? `${policy.kind} '${policy.name}' has no matchConstraints: it matches nothing and adds no webhook rules`
          : `${binding.kind} '${binding.name}' selects no resource of policy '${policy.name}': it adds no webhook rules`,
      );
      continue;
    }
    if (route !== policy.failurePolicy)
      notes.push(
        `${binding.kind} '${binding.name}' can only warn or audit: policy '${policy.name}' is served on the Ignore webhook, so celgate being down never fails a request for it`,
      );
    group.pairs.push({ policy, binding, rules });
  }
  for (const p of set.unbound)
    notes.push(`${p.kind} '${p.name}' has no binding: not enforced, so it adds no webhook rules`);
  return routes.filter((g) => g.pairs.length > 0);
}

/** What a webhook of these pairs would carry (carry.ts), as a key: equal keys carry the same. */
function carriedKey(pairs: readonly RoutedPair[]): string {
  return JSON.stringify([
    commonMatchConditions(pairs).map((c) => c.expression.trim()),
    commonRequirements(pairs.map(namespaceRequirements)),
    commonRequirements(pairs.map(objectRequirements)),
  ]);
}

/**
 * The webhooks the enforced pairs need: per route, the sets of pairs some request may reach
 * together (components.ts), those that would carry the same conditions and selectors joined again
 * (they are still reached apart, and one webhook says the same as two). In binding order. Never throws.
 */
export function planWebhooks(
  set: EnforcedPolicies,
  options: Pick<WebhookOptions, "service" | "namespace">,
  notes: string[] = [],
): PlannedWebhook[] {
  return routeBindings(set, notes).flatMap((route) => {
    const joined = new Map<string, RuledPair[]>();
    for (const part of components(route.pairs, (p) => p.rules)) {
      const key = carriedKey(part);
      joined.set(key, [...(joined.get(key) ?? []), ...part]);
    }
    return [...joined.values()].map((pairs, index) => ({
      name: webhookName(options.service, options.namespace, route.phase, route.failurePolicy, index),
      phase: route.phase,
      failurePolicy: route.failurePolicy,
      pairs: pairs.map(({ policy, binding }) => ({ policy, binding })),
      rules: mergeRules(pairs.flatMap((p) => p.rules)),
      reinvoke: pairs.some(
        (p) => p.policy.kind === "MutatingAdmissionPolicy" && p.policy.reinvocationPolicy === "IfNeeded",
      ),
    }));
  });
}

function webhook(group: PlannedWebhook, options: WebhookOptions): Record<string, unknown> {
  const { service, namespace } = options;
  // Excluding kube-system and kube-node-lease keeps the control plane and the nodes' heartbeats
  // working whatever the policies say; excluding celgate's own namespace lets its pods restart even
  // when every celgate replica is down ("Avoiding deadlocks in self-hosted webhooks").
  const exclusion: LabelSelectorRequirement = {
    key: NAMESPACE_NAME_LABEL,
    operator: "NotIn",
    values: excludedNamespaces(options),
  };
  const namespaceSelector = renderSelector([
    ...commonRequirements(group.pairs.map(namespaceRequirements)),
    exclusion,
  ]);
  const objectSelector = renderSelector(commonRequirements(group.pairs.map(objectRequirements)));
  const matchConditions = commonMatchConditions(group.pairs);
  return {
    name: group.name,
    admissionReviewVersions: [...ADMISSION_REVIEW_VERSIONS],
    clientConfig: {
      service: {
        namespace,
        name: service,
        path: WEBHOOK_PATHS[group.phase][group.failurePolicy],
        port: options.port ?? DEFAULT_PORT,
      },
      ...(options.caBundle !== undefined ? { caBundle: options.caBundle } : {}),
    },
    rules: group.rules.map((r) => ({
      operations: [...r.operations],
      apiGroups: [...r.apiGroups],
      apiVersions: [...r.apiVersions],
      resources: [...r.resources],
      scope: r.scope,
    })),
    failurePolicy: group.failurePolicy,
    // Policies name the versions they were written for; Equivalent also sends the same objects
    // requested through another group or version (converted), so no version bypasses a policy.
    matchPolicy: "Equivalent",
    namespaceSelector,
    ...(objectSelector ? { objectSelector } : {}),
    ...(matchConditions.length > 0
      ? { matchConditions: matchConditions.map((c) => ({ name: c.name, expression: c.expression })) }
      : {}),
    sideEffects: "None",
    timeoutSeconds: options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    ...(group.phase === "mutate" ? { reinvocationPolicy: group.reinvoke ? "IfNeeded" : "Never" } : {}),
  };
}

function hazardWarning(hookName: string, hazard: Hazard): string {
  return `webhook ${hookName}: a wildcard rule also matches ${hazard.what}: ${hazard.why}. Name the resources the policies need in their resourceRules`;
}

function metadata(options: WebhookOptions, name: string): Record<string, unknown> {
  return {
    name,
    labels: { "app.kubernetes.io/name": "celgate", "app.kubernetes.io/instance": options.service },
    ...(options.certManager
      ? {
          annotations: {
            "cert-manager.io/inject-ca-from": `${options.namespace}/${certificateName(options.service)}`,
          },
        }
      : {}),
  };
}

function certificate(options: WebhookOptions, issuer: CertManagerIssuer): Record<string, unknown> {
  const name = certificateName(options.service);
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: {
      name,
      namespace: options.namespace,
      labels: { "app.kubernetes.io/name": "celgate", "app.kubernetes.io/instance": options.service },
    },
    spec: {
      secretName: name,
      dnsNames: serviceDnsNames(options.service, options.namespace),
      issuerRef: { name: issuer.name, kind: issuer.kind, group: "cert-manager.io" },
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      // 90 days, renewed 30 days ahead; celgate reloads the mounted files without a restart.
      duration: "2160h",
      renewBefore: "720h",
    },
  };
}

/** Builds the webhook configurations for the enforced policies. Never throws. */
export function webhookManifests(set: EnforcedPolicies, options: WebhookOptions): WebhookManifests {
  const notes: string[] = [];
  const warnings: string[] = [];
  const planned = planWebhooks(set, options, notes);
  const documents: Record<string, unknown>[] = [];
  if (options.certManager) documents.push(certificate(options, options.certManager));
  const name = configurationName(options.service, options.namespace);
  const timed: TimedWebhook[] = [];
  for (const [phase, kind] of [
    ["validate", "ValidatingWebhookConfiguration"],
    ["mutate", "MutatingWebhookConfiguration"],
  ] as const) {
    const hooks = planned.filter((g) => g.phase === phase);
    if (hooks.length === 0) {
      notes.push(
        `no ${kind}: no enforced ${phase === "validate" ? "ValidatingAdmissionPolicy" : "MutatingAdmissionPolicy"} selects any resource`,
      );
      continue;
    }
    for (const g of hooks) {
      for (const h of wildcardHazards(g.rules)) warnings.push(hazardWarning(g.name, h));
      for (const h of unreachedHazards(g.rules))
        warnings.push(`webhook ${g.name}: its rules name ${h.what}: ${h.unreached}`);
      timed.push({
        name: g.name,
        phase,
        timeoutSeconds: options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
        reinvoked: g.reinvoke,
        rules: g.rules,
      });
    }
    documents.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind,
      metadata: metadata(options, name),
      webhooks: hooks.map((g) => webhook(g, options)),
    });
  }
  return { documents, notes, warnings, worstCase: worstCaseWait(timed) };
}
