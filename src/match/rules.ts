/**
 * Whether one NamedRuleWithOperations selects a request, as the API server's webhook rule matcher
 * (admission/plugin/webhook/predicates/rules) and the resourceNames check of the policy matcher
 * (admission/plugin/policy/matching) decide it.
 */
import type { AdmissionRequest, GroupVersionResource } from "../request/types.ts";
import type { NamedRuleWithOperations } from "../policy/types.ts";

/**
 * What a rule is compared with. Usually the request's own resource; with matchPolicy Equivalent the
 * matcher also tries the resource the client originally asked for (see matcher.ts).
 */
export interface RuleTarget {
  readonly resource: GroupVersionResource;
  /** "" when the request is for the main resource. */
  readonly subResource: string;
}

export function requestTarget(request: AdmissionRequest): RuleTarget {
  return { resource: request.resource, subResource: request.subResource ?? "" };
}

/** Why a rule did not select a request: the first of its fields that failed, in the API server's order. */
export type RuleMismatch = "scope" | "operation" | "apiGroup" | "apiVersion" | "resource" | "resourceName";

// Loops rather than `some` with a closure: the matcher runs for every policy a request may meet.
function exactOrWildcard(items: readonly string[], wanted: string): boolean {
  for (const item of items) if (item === "*" || item === wanted) return true;
  return false;
}

/** The core/v1 Namespace resource: it has a name in `request.namespace` yet is cluster-scoped. */
export function isNamespaceResource(resource: GroupVersionResource): boolean {
  return resource.group === "" && resource.version === "v1" && resource.resource === "namespaces";
}

function scopeMatches(rule: NamedRuleWithOperations, target: RuleTarget, namespace: string): boolean {
  switch (rule.scope) {
    case "*":
      return true;
    case "Namespaced":
      return !isNamespaceResource(target.resource) && namespace !== "";
    case "Cluster":
      return isNamespaceResource(target.resource) || namespace === "";
    default:
      return false;
  }
}

function resourceMatches(patterns: readonly string[], target: RuleTarget): boolean {
  for (const pattern of patterns) {
    // Only the first "/" separates resource from subresource; `*` on either side is a wildcard that
    // also covers "no subresource". So `pods` selects pods but none of its subresources, while `pods/*`
    // selects pods and all its subresources, and `*/*` everything (as the API server's rules.go does).
    const slash = pattern.indexOf("/");
    const res = slash < 0 ? pattern : pattern.slice(0, slash);
    const sub = slash < 0 ? "" : pattern.slice(slash + 1);
    if ((res === "*" || res === target.resource.resource) && (sub === "*" || sub === target.subResource))
      return true;
  }
  return false;
}

/**
 * Checks the rule against the target (scope, operation, group, version, resource) and then the
 * request's name against resourceNames. Returns undefined on a match.
 *
 * resourceNames: empty selects every name. A CREATE whose name the server will generate has name ""
 * and is then only selected by an empty list (or one listing ""), as in Kubernetes.
 */
export function ruleMismatch(
  rule: NamedRuleWithOperations,
  request: AdmissionRequest,
  target: RuleTarget = requestTarget(request),
): RuleMismatch | undefined {
  if (!scopeMatches(rule, target, request.namespace)) return "scope";
  if (!exactOrWildcard(rule.operations, request.operation)) return "operation";
  if (!exactOrWildcard(rule.apiGroups, target.resource.group)) return "apiGroup";
  if (!exactOrWildcard(rule.apiVersions, target.resource.version)) return "apiVersion";
  if (!resourceMatches(rule.resources, target)) return "resource";
  if (rule.resourceNames.length > 0 && !rule.resourceNames.includes(request.name)) return "resourceName";
  return undefined;
}

export function ruleMatches(
  rule: NamedRuleWithOperations,
  request: AdmissionRequest,
  target: RuleTarget = requestTarget(request),
): boolean {
  return ruleMismatch(rule, request, target) === undefined;
}

/** `apps/v1 deployments/scale`; the core group shows as its version only (`v1 pods`). */
export function describeTarget(target: RuleTarget): string {
  const { group, version, resource } = target.resource;
  const gv = group === "" ? version : `${group}/${version}`;
  return `${gv} ${resource}${target.subResource === "" ? "" : `/${target.subResource}`}`;
}
