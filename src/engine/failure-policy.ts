/**
 * What `failurePolicy` makes of an error: under Fail a violation for each of the binding's
 * validation actions, under Ignore none (and a warning when the request's deadline cut the policy
 * short).
 */
import type { CompiledPolicy } from "../compile/policy.ts";
import type { ValidationAction } from "../policy/types.ts";
import { NO_ANNOTATIONS, NO_WARNINGS } from "./decision.ts";
import type { Evaluation } from "./evaluate.ts";
import { finish, NO_VIOLATIONS, type Subject, validationActions } from "./results.ts";
import type { EvaluationErrorKind, PolicyResult, Violation } from "./types.ts";

/**
 * Under failurePolicy Fail an error denies: one violation for each of the binding's actions, added
 * to `into` (a new list when there is none yet), which is returned.
 */
export function addErrorViolations(
  into: Violation[] | undefined,
  actions: readonly ValidationAction[],
  message: string,
  expressionIndex: number,
): Violation[] {
  const out = into ?? [];
  for (const action of actions) out.push({ message, reason: "Invalid", code: 422, action, expressionIndex });
  return out;
}

/** The one place `failurePolicy` turns an error into a verdict. */
export function errorResult(
  base: Omit<
    PolicyResult,
    "outcome" | "violations" | "warnings" | "auditAnnotations" | "trace" | "cost" | "durationMs"
  >,
  subject: Subject,
  kind: EvaluationErrorKind,
  message: string,
  ev: Evaluation,
  started: number,
  expressionIndex = -1,
): PolicyResult {
  const violations =
    subject.policy.failurePolicy === "Fail"
      ? addErrorViolations(undefined, validationActions(subject), message, expressionIndex)
      : NO_VIOLATIONS;
  return finish(
    base,
    {
      outcome: "error",
      errorKind: kind,
      reason: message,
      violations,
      warnings: deadlineWarning(subject.policy, kind),
      auditAnnotations: NO_ANNOTATIONS,
    },
    ev,
    started,
  );
}

/**
 * A policy cut short by the request's deadline under failurePolicy Ignore admits, as Kubernetes
 * would; unlike an ordinary error it says so, because the request was admitted unchecked.
 */
export function deadlineWarning(
  policy: CompiledPolicy,
  kind: EvaluationErrorKind | undefined,
): readonly string[] {
  return kind === "timeout" && policy.failurePolicy === "Ignore"
    ? [
        `${policy.kind} '${policy.name}' did not finish before the request's deadline and was ignored (failurePolicy Ignore)`,
      ]
    : NO_WARNINGS;
}
