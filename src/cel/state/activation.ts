/**
 * What an evaluation reads: the variables' values, the policy's lazily evaluated `variables`, and
 * the memo of subexpressions shared across one policy evaluation.
 */
import type { CelValue } from "../runtime/values.ts";

/** Values of the policy's `variables`, evaluated lazily on first use. */
export interface VariableResolver {
  /**
   * `index` is the name's position in the environment's `policyVariables`, found when the
   * expression was compiled, so a resolver that keeps its variables in that order need not look
   * the name up on every read (reads inside comprehensions made that lookup a tenth of a review).
   */
  get(name: string, index: number): CelValue;
}

/** The variables an evaluation sees. `variables` resolves `variables.<name>`. */
export interface Activation {
  readonly values: Readonly<Record<string, CelValue>>;
  readonly variables?: VariableResolver;
  /**
   * Values of shared subexpressions (plan/shared.ts) computed so far in this activation, at their
   * places (SharedKeys): the engine gives each policy evaluation one, as long as the policy's
   * shared keys. Without it every expression computes its own.
   */
  readonly memo?: (MemoEntry | undefined)[] | undefined;
  /**
   * A promise that the values of REQUEST_VARIABLES (env/environment.ts) are JSON as JSON.parse or
   * YAML makes it, or as toCel makes of it: plain objects, arrays, strings, numbers, bigints,
   * booleans and null, to any depth. Generated code then tells a JSON map from the evaluator's own
   * values by its type alone (see plan/node.ts Compiled.plain); without the promise a program runs
   * its closures.
   */
  readonly json?: boolean;
}

/** A shared subexpression's value and the cost its evaluation took, charged again on every reuse. */
export class MemoEntry {
  constructor(
    readonly value: CelValue,
    readonly cost: number,
  ) {}
}
