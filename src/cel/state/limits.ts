/**
 * The rules around each expression of a policy evaluation, as the API server applies them
 * (k8s.io/apiserver/pkg/apis/cel/config.go for the limits; the validator's loop in
 * k8s.io/apiserver/pkg/admission/plugin/cel for the budget message): stated once, here, and taken
 * as they are by both ways the engine runs expressions, one by one through engine/evaluate.ts
 * `runExpr` and written out together as a policy's generated sequence (cel/sequence.ts).
 *
 * Before an expression starts (`startExpression`): the policy's budget must not be spent, the
 * deadline is read at its first expression (against the clock read when the policy started) and
 * every 16th after it, and the expression gets the per-call cost limit, or what is left of the
 * budget if that is less. While it runs, any error it throws is caught as its outcome (`Thrown`),
 * and a cost or deadline error ends the policy.
 *
 * A generated sequence is one large function, in which V8 inlines no call of `startExpression`: it
 * takes the same checks written out (`writeStartExpression`, beside the function), and the sequence
 * tests hold the two forms to the same outcomes.
 */
// The module's, not the global: reading the global `performance` goes through a lazy getter
// first, a third of a clock read's cost here.
import { performance } from "node:perf_hooks";
import { isLimitError } from "../runtime/errors.ts";

/** Kubernetes' cost limit for one expression (k8s.io/apiserver/pkg/apis/cel/config.go PerCallLimit). */
export const PER_CALL_COST_LIMIT = 1_000_000;
/** Kubernetes' cost budget for one policy evaluation (RuntimeCELCostBudget). */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** The matchConditions of one binding evaluation have a budget of their own. */
export const MATCH_CONDITIONS_COST_BUDGET = 2_500_000;

/** What an expression that cannot start because the budget is spent says, as the API server words it. */
export const BUDGET_MESSAGE =
  "validation failed due to running out of cost budget, no further validation rules will be run";
/** The error of an expression stopped at its cost limit. */
export const COST_LIMIT_MESSAGE = "operation cancelled: actual cost limit exceeded";
/** The error of an expression stopped at the deadline, or not started because it had passed. */
export const DEADLINE_MESSAGE = "operation cancelled: evaluation deadline exceeded";

/** What the rules read and advance of a policy evaluation (engine/evaluate.ts Evaluation). */
export interface ExpressionClock {
  /** Expressions started so far in this evaluation; the deadline is read at every 16th. */
  expressions: number;
  /** The clock when the evaluation started: the deadline check of its first expression. */
  readonly started: number;
  /** The state's cost at which the budget runs out. */
  readonly budgetEnd: number;
}

/** What the rules read and set of the evaluation's state (state.ts EvalState). */
export interface LimitedState {
  readonly cost: number;
  costLimit: number;
  readonly deadline: number;
}

/** An expression not started because the budget was spent; it ends the policy. */
export const BUDGET_SPENT: unique symbol = Symbol("budget spent");
/** An expression not started because the deadline had passed; it ends the policy. */
export const DEADLINE_PASSED: unique symbol = Symbol("deadline passed");

/**
 * The checks before one expression, and its cost limit: undefined when it may run, with
 * `st.costLimit` set for it; else why it may not, which ends the policy. `limit` is the per-call
 * cost limit.
 */
export function startExpression(
  clock: ExpressionClock,
  st: LimitedState,
  limit: number = PER_CALL_COST_LIMIT,
): typeof BUDGET_SPENT | typeof DEADLINE_PASSED | undefined {
  if (st.cost >= clock.budgetEnd) return BUDGET_SPENT;
  // A clock read costs as much as a short expression; expressions without loops cannot run long,
  // so the deadline is read at a policy's first expression (the clock read when the policy
  // started) and every 16th after it, and loops read it themselves (EvalState.tick).
  const n = clock.expressions++;
  if ((n & 15) === 0 && (n === 0 ? clock.started : performance.now()) > st.deadline) return DEADLINE_PASSED;
  st.costLimit = Math.min(st.cost + limit, clock.budgetEnd);
  return undefined;
}

/** The clock, for generated code (which reaches module-scoped functions only as helpers). */
export function now(): number {
  return performance.now();
}

/** What generated code names, for `writeStartExpression`. */
export interface StartExpressionNames {
  /** The ExpressionClock and the state. */
  readonly clock: string;
  readonly st: string;
  /** A variable the code may assign (the expression's ordinal). */
  readonly count: string;
  /** The helpers BUDGET_SPENT, DEADLINE_PASSED and now, as the code names them. */
  readonly budgetSpent: string;
  readonly deadlinePassed: string;
  readonly now: string;
  /** A statement that ends the run, the expression not started for the reason named. */
  readonly halt: (why: string) => string;
}

/** `startExpression(clock, st, limit)` as statements of generated code, check for check. */
export function writeStartExpression(n: StartExpressionNames, limit: number): string[] {
  const { clock, st, count } = n;
  return [
    `if (${st}.cost >= ${clock}.budgetEnd) ${n.halt(n.budgetSpent)}`,
    `${count} = ${clock}.expressions++;`,
    `if ((${count} & 15) === 0 && (${count} === 0 ? ${clock}.started : ${n.now}()) > ${st}.deadline) ${n.halt(n.deadlinePassed)}`,
    `${st}.costLimit = Math.min(${st}.cost + ${limit}, ${clock}.budgetEnd);`,
  ];
}

/**
 * An expression that threw: its error; whether its cost limit was the budget's end (`budgetBound`:
 * a cost error then means the budget is spent); and whether the error ends the policy, which the
 * budget spent and the deadline passed do. An expression over its own per-call limit fails alone
 * and the next ones run, as in Kubernetes (admission/plugin/cel/activation.go).
 */
export class Thrown {
  readonly halts: boolean;
  constructor(
    readonly error: unknown,
    readonly budgetBound: boolean,
  ) {
    this.halts = isLimitError(error) && ((error as { kind?: unknown }).kind === "timeout" || budgetBound);
  }
}
