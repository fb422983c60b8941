/**
 * Which of the webhook's split paths (`/validate/fail`, `/validate/ignore`, `/mutate/fail`,
 * `/mutate/ignore`) serves a (policy, binding) pair. The one rule: `celgate manifests` points each
 * webhook at a path with the route's failurePolicy, and the server's split paths evaluate exactly
 * the pairs routed to them, so both read it from here.
 *
 * A path's webhook failurePolicy is what the API server does when it cannot reach celgate. A
 * binding whose validationActions are only Warn and Audit can never deny a request, so celgate being
 * down must not deny it either: such a pair is routed to Ignore whatever its policy's failurePolicy.
 * On the Ignore path the pair is evaluated as before (its own failurePolicy still decides what an
 * expression error means: under Fail it becomes a warning or an audit annotation, never a denial).
 */
import type { FailurePolicy, ParsedBinding, ParsedPolicy, ValidationAction } from "./types.ts";

/** What routing reads of a policy and of its binding. */
export type RoutedPolicy = Pick<ParsedPolicy, "kind" | "failurePolicy">;
export interface RoutedBinding {
  readonly kind: ParsedBinding["kind"];
  readonly validationActions?: readonly ValidationAction[];
}

/** Whether a validating binding can deny: only its Deny action does. */
export function canDeny(binding: RoutedBinding | undefined): boolean {
  if (binding === undefined || binding.kind !== "ValidatingAdmissionPolicyBinding") return true;
  return (binding.validationActions ?? []).includes("Deny");
}

/**
 * The failurePolicy of the path that serves a pair. Without a binding (the CLI evaluates unbound
 * policies as if bound with Deny) the policy's own failurePolicy.
 */
export function routeOf(policy: RoutedPolicy, binding: RoutedBinding | undefined): FailurePolicy {
  if (policy.kind === "ValidatingAdmissionPolicy" && !canDeny(binding)) return "Ignore";
  return policy.failurePolicy;
}
