/**
 * The one place `failurePolicy` turns an error into a verdict. Every error of a policy evaluation
 * comes here, whatever its kind: an expression that does not compile, fails, runs out of cost or
 * past the request's deadline; a binding whose selector or params cannot be read. Under Fail the
 * error becomes a violation for each of the binding's validation actions, which decision.ts then
 * enforces like any other; under Ignore it adds none, and the request is admitted as far as this
 * policy goes (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/
 * validator.go maps an error to ActionDeny or ActionAdmit the same way).
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
 * The violations an error adds: under Fail one for each of the binding's actions, added to `into`
 * (a new list when there is none yet); under Ignore none, and `into` comes back as it was.
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

/**
 * The result of a policy evaluation that an error ended before it reached a verdict of its own.
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
  return finish(
    base,
    {
      outcome: "error",
      errorKind: kind,
      reason: detail === undefined ? message : `${message}: ${detail}`,
      violations:
        kind === "internal"
          ? // An InternalError fails the request whatever the failurePolicy (mutating/dispatcher.go
            // returns a StatusError before failurePolicy is looked at).
            [{ message, reason: "InternalError", code: 500, action: "Deny", expressionIndex }]
          : (errorViolations(undefined, policy, validationActions(subject), message, expressionIndex) ??
            NO_VIOLATIONS),
      warnings: errorWarnings(policy, kind),
      auditAnnotations: NO_ANNOTATIONS,
    },
    ev,
    started,
  );
}
