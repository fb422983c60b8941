/**
 * The one place `failurePolicy` turns an error into a verdict. Every error of a policy evaluation
 * comes here, whatever its kind: an expression that does not compile, fails, runs out of cost or
 * past the request's deadline; a binding whose selector or params cannot be read; an audit
 * annotation that cannot be evaluated. As the API server's validating plugin does it (kubernetes
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/):
 *
 * - validator.go maps an evaluation error (a validation, a matchCondition, the policy's budget) to
 *   ActionDeny under Fail and ActionAdmit under Ignore; dispatcher.go then enforces an ActionDeny
 *   through each of the binding's validationActions, like a validation that is false.
 * - dispatcher.go's `addConfigError` denies a configuration error of the policy or binding (a
 *   selector or namespace that cannot be read, params that cannot be collected) under Fail whatever
 *   the binding's validationActions, and drops it under Ignore.
 * - An InternalError (a mutation's patched object that does not decode into its kind's Go type,
 *   mutating/dispatcher.go) fails the request whatever the failurePolicy.
 * - An audit annotation that fails to evaluate is AuditAnnotationActionError under Fail (a denial,
 *   again whatever the validationActions) and is left out under Ignore; one whose value is neither
 *   a string nor null is AuditAnnotationActionError under either failurePolicy.
 */
import type { CompiledPolicy } from "../compile/policy.ts";
import type { ValidationAction } from "../policy/types.ts";
import type { Evaluation } from "./evaluate.ts";
import {
  finish,
  NO_ANNOTATIONS,
  NO_VIOLATIONS,
  NO_WARNINGS,
  type ResultBase,
  type Subject,
  validationActions,
} from "./results.ts";
import type { EvaluationErrorKind, PolicyResult, Violation } from "./types.ts";

/**
 * The violations an evaluation error adds: under Fail one for each of the binding's actions, added
 * to `into` (a new list when there is none yet); under Ignore none, and `into` comes back as it was.
 */
export function errorViolations(
  into: Violation[] | undefined,
  policy: CompiledPolicy,
  actions: readonly ValidationAction[],
  message: string,
  expressionIndex: number,
): Violation[] | undefined {
  if (policy.failurePolicy !== "Fail") return into;
  const out = into ?? [];
  for (const action of actions) out.push({ message, reason: "Invalid", code: 422, action, expressionIndex });
  return out;
}

/** The errors dispatcher.go reports through `addConfigError`: denied under Fail, whatever the actions. */
const CONFIGURATION_ERRORS: ReadonlySet<EvaluationErrorKind> = new Set([
  "configuration",
  "param-not-found",
  "namespace-not-found",
]);

/** One denial, not subject to the binding's validationActions (reason Invalid, as a decision without one). */
function denial(into: Violation[] | undefined, message: string, expressionIndex: number): Violation[] {
  const out = into ?? [];
  out.push({ message, reason: "Invalid", code: 422, action: "Deny", expressionIndex });
  return out;
}

/**
 * The violations an audit annotation's error adds: a denial under Fail (AuditAnnotationActionError),
 * none under Ignore (AuditAnnotationActionExclude). `typeError`: the value was neither a string nor
 * null, which validator.go makes AuditAnnotationActionError under either failurePolicy.
 */
export function auditAnnotationViolations(
  into: Violation[] | undefined,
  policy: CompiledPolicy,
  message: string,
  typeError: boolean,
): Violation[] | undefined {
  if (!typeError && policy.failurePolicy !== "Fail") return into;
  return denial(into, message, -1);
}

/**
 * The warnings an error adds. A policy cut short by the request's deadline under failurePolicy
 * Ignore admits, as Kubernetes would; unlike an ordinary error it says so, because the request was
 * admitted unchecked.
 */
export function errorWarnings(
  policy: CompiledPolicy,
  kind: EvaluationErrorKind | undefined,
): readonly string[] {
  return kind === "timeout" && policy.failurePolicy === "Ignore"
    ? [
        `${policy.kind} '${policy.name}' did not finish before the request's deadline and was ignored (failurePolicy Ignore)`,
      ]
    : NO_WARNINGS;
}

/** The violations of an error that ended an evaluation, by its kind (see the module's comment). */
function errorViolationsOf(
  kind: EvaluationErrorKind,
  policy: CompiledPolicy,
  actions: readonly ValidationAction[],
  message: string,
  expressionIndex: number,
): Violation[] | undefined {
  // An InternalError fails the request whatever the failurePolicy (mutating/dispatcher.go returns
  // a StatusError before failurePolicy is looked at).
  if (kind === "internal")
    return [{ message, reason: "InternalError", code: 500, action: "Deny", expressionIndex }];
  if (CONFIGURATION_ERRORS.has(kind))
    return policy.failurePolicy === "Fail" ? denial(undefined, message, expressionIndex) : undefined;
  return errorViolations(undefined, policy, actions, message, expressionIndex);
}

/**
 * The result of a policy evaluation that an error ended before it reached a verdict of its own: an
 * InternalError (fails the request whatever the failurePolicy), a configuration error (denied under
 * Fail whatever the actions) or an evaluation error (through the binding's actions under Fail).
 * `detail` is added to the result's reason only, never to the violation the response carries.
 */
export function errorResult(
  base: ResultBase,
  subject: Subject,
  kind: EvaluationErrorKind,
  message: string,
  ev: Evaluation,
  started: number,
  expressionIndex = -1,
  detail?: string,
): PolicyResult {
  const policy = subject.policy;
  const actions = validationActions(subject);
  return finish(
    base,
    {
      outcome: "error",
      errorKind: kind,
      reason: detail === undefined ? message : `${message}: ${detail}`,
      // The audit annotation of an Audit violation names the binding's actions (dispatcher.go).
      validationActions: policy.kind === "ValidatingAdmissionPolicy" ? actions : undefined,
      violations: errorViolationsOf(kind, policy, actions, message, expressionIndex) ?? NO_VIOLATIONS,
      warnings: errorWarnings(policy, kind),
      auditAnnotations: NO_ANNOTATIONS,
    },
    ev,
    started,
  );
}
