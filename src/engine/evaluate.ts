/**
 * One policy evaluation's running state, and one expression run within its limits: the per-call
 * cost limit, the policy's budget and the request's deadline. An expression gives a value or an
 * ExprFailure worded as the API server words it; what a failure means is failure-policy.ts's job.
 */
import {
  type Activation,
  asCelError,
  type CelValue,
  EvalState,
  PER_CALL_COST_LIMIT,
  RUNTIME_COST_BUDGET,
  BUDGET_MESSAGE,
  BUDGET_SPENT,
  DEADLINE_MESSAGE,
  startExpression,
  toJson,
} from "../cel/index.ts";
import type { CompiledExpression } from "../compile/policy.ts";
import type { EvaluateOptions, EvaluationErrorKind, TraceStep } from "./types.ts";

export interface Evaluation {
  readonly trace: TraceStep[];
  /** Whether steps go into the trace (EvaluateOptions.trace, or explaining). */
  readonly recording: boolean;
  readonly state: EvalState;
  readonly explain: boolean;
  /** Expressions started so far (runExpr reads the clock on some of them). */
  expressions: number;
  /** The clock when the evaluation started, which serves as its first expression's deadline check. */
  readonly started: number;
  /**
   * The state's cost at which the current budget runs out. The matchConditions spend from a budget
   * of their own, and the validations (or mutations) then get a whole one, as in Kubernetes.
   */
  budgetEnd: number;
}

const NO_STEPS: TraceStep[] = Object.freeze([]) as unknown as TraceStep[];

/** A fresh evaluation: an empty trace, no cost spent, the whole budget ahead. */
export function newEvaluation(options: EvaluateOptions, started: number): Evaluation {
  const recording = options.trace !== false || options.explain === true;
  return {
    // Most reviews record no steps: they share one empty trace, which nothing pushes to.
    trace: recording ? [] : NO_STEPS,
    recording,
    state: new EvalState(PER_CALL_COST_LIMIT, options.deadline),
    explain: options.explain ?? false,
    expressions: 0,
    started,
    budgetEnd: RUNTIME_COST_BUDGET,
  };
}

export type ExprOutcome =
  | { readonly ok: true; readonly value: CelValue; readonly cost: number }
  | { ok: false; message: string; kind: EvaluationErrorKind; cost: number; cause?: string };

/**
 * Why an expression gave no value. Its message is final and worded as the API server words it:
 * `compilation error: ...`, `expression '<expr>' resulted in error: ...`, or the bare budget message.
 */
export class ExprFailure {
  constructor(
    readonly message: string,
    readonly kind: EvaluationErrorKind,
    /** The evaluator's own message, without the expression around it. */
    readonly cause?: string,
  ) {}
}

/**
 * Runs one expression within the per-expression limit and the remaining policy budget: its value,
 * or an ExprFailure. A value comes back as it is, not in a result object: this runs for every
 * validation of every policy a request meets.
 */
export function runExpr(ev: Evaluation, expr: CompiledExpression, act: Activation): CelValue | ExprFailure {
  const program = expr.program;
  if (!program)
    return new ExprFailure(
      `compilation error: ${expr.compileError ?? "expression did not compile"}`,
      "compile",
    );
  const st = ev.state;
  // The per-expression rules (cel/state/limits.ts), as the policy's generated sequence applies them.
  const blocked = startExpression(ev, st);
  if (blocked !== undefined)
    return blocked === BUDGET_SPENT ? new ExprFailure(BUDGET_MESSAGE, "cost") : deadlineFailure(expr);
  try {
    return program.run(act, st);
  } catch (e) {
    return thrownFailure(ev, expr, e);
  }
}

/**
 * An expression's thrown error as its failure; `budgetBound` is whether its cost limit was the
 * budget's end (by default read from the state, which must then still have its cost limit).
 */
export function thrownFailure(
  ev: Evaluation,
  expr: CompiledExpression,
  e: unknown,
  budgetBound = ev.state.costLimit >= ev.budgetEnd,
): ExprFailure {
  const error = asCelError(e);
  if (error.kind === "cost" && budgetBound) return new ExprFailure(BUDGET_MESSAGE, "cost");
  return new ExprFailure(
    `expression '${expr.source}' resulted in error: ${error.message}`,
    error.kind,
    error.message,
  );
}

/**
 * Whether a failure ends the policy's evaluation: the budget spent or the deadline passed. An
 * expression over its own per-call limit fails alone (Kubernetes' activation.go goes on to the next).
 */
export function endsPolicy(r: ExprFailure): boolean {
  return r.kind === "timeout" || (r.kind === "cost" && r.message === BUDGET_MESSAGE);
}

export function deadlineFailure(expr: CompiledExpression): ExprFailure {
  return new ExprFailure(`expression '${expr.source}' resulted in error: ${DEADLINE_MESSAGE}`, "timeout");
}

/** An expression's value or failure with the cost it took, as steps and the rarer callers take it. */
export function toOutcome(r: CelValue | ExprFailure, cost: number): ExprOutcome {
  return r instanceof ExprFailure
    ? r.cause === undefined
      ? { ok: false, message: r.message, kind: r.kind, cost }
      : { ok: false, message: r.message, kind: r.kind, cost, cause: r.cause }
    : { ok: true, value: r, cost };
}

/** Runs one expression and records it in the trace under its stage and name. */
export function runStep(
  ev: Evaluation,
  stage: TraceStep["stage"],
  name: string | number,
  expr: CompiledExpression,
  act: Activation,
): ExprOutcome {
  const before = ev.state.cost;
  const r = toOutcome(runExpr(ev, expr, act), ev.state.cost - before);
  step(ev, stage, name, expr, r);
  return r;
}

type MutableStep = { -readonly [K in keyof TraceStep]: TraceStep[K] };

/** Records a step; values are kept (as JSON) only when explaining. Built without spreads: it is per expression. */
export function step(
  ev: Evaluation,
  stage: TraceStep["stage"],
  name: string | number,
  expr: CompiledExpression,
  r: ExprOutcome,
  because?: readonly string[],
): void {
  if (!ev.recording) return;
  // A number (an index) becomes the step's name only here, when a step is kept.
  const s: MutableStep = { stage, name: String(name), expression: expr.source, cost: r.cost };
  if (!r.ok) s.error = r.message;
  else if (ev.explain) s.value = toJson(r.value);
  if (because) s.because = because;
  ev.trace.push(s);
}
