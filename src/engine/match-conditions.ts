/**
 * A policy's matchConditions, as a gate before its validations or mutations: all true goes on, any
 * false skips, an error with none false is an error that failurePolicy decides. They spend from a
 * budget of their own.
 */
import { type Activation, MATCH_CONDITIONS_COST_BUDGET, RUNTIME_COST_BUDGET } from "../cel/index.ts";
import type { CompiledPolicy } from "../compile/policy.ts";
import { type Evaluation, runStep } from "./evaluate.ts";
import { errorResult } from "./failure-policy.ts";
import { type ResultBase, type Subject, skipResult } from "./results.ts";
import type { EvaluationErrorKind, PolicyResult } from "./types.ts";

/** matchConditions as a gate: undefined to go on, else the skip or error result. */
export function gateOnMatchConditions(
  subject: Subject,
  ev: Evaluation,
  started: number,
  base: ResultBase,
  act: Activation,
): PolicyResult | undefined {
  const mc = matchConditions(subject.policy, ev, act);
  if (mc.go) return undefined;
  if ("skip" in mc) return skipResult(base, mc.skip, ev, started);
  // validator.go returns the matchConditions' error as the only decision, index 0.
  return errorResult(base, subject, mc.kind, mc.error, ev, started, 0);
}

const GO = { go: true } as const;

/** matchConditions: all true → go on; any false → skip; an error and none false → error. */
function matchConditions(
  policy: CompiledPolicy,
  ev: Evaluation,
  act: Activation,
): typeof GO | { go: false; skip: string } | { go: false; error: string; kind: EvaluationErrorKind } {
  let firstError: { name: string; message: string; kind: EvaluationErrorKind } | undefined;
  ev.budgetEnd = ev.state.cost + MATCH_CONDITIONS_COST_BUDGET;
  for (const mc of policy.matchConditions) {
    const r = runStep(ev, "matchCondition", mc.name, mc.expression, act);
    if (!r.ok) {
      firstError ??= { name: mc.name, message: r.message, kind: r.kind };
      continue;
    }
    if (r.value === false) return { go: false, skip: `matchCondition '${mc.name}' is false` };
    if (r.value !== true)
      firstError ??= {
        name: mc.name,
        message: `matchCondition must evaluate to bool, got ${typeof r.value}`,
        kind: "runtime",
      };
  }
  if (firstError)
    return {
      go: false,
      error: firstError.message,
      kind: firstError.kind,
    };
  ev.budgetEnd = ev.state.cost + RUNTIME_COST_BUDGET;
  return GO;
}
