/** Pieces of generated code that several node kinds write. */
import type { PlanGen } from "./helpers.ts";

/**
 * Generated code for `st.addCost(n)`: the sum and the test written out (the method is called only
 * to throw, with the cost already over the limit): a few percent on the selinux rule.
 */
export function charge(n: number): string {
  return `if ((st.cost += ${n}) > st.costLimit) st.addCost(0);`;
}

/** Code that rethrows cost and deadline errors, which no operator absorbs (runtime/errors.ts isLimitError). */
export function rethrowLimits(g: PlanGen): string {
  return `if (err instanceof ${g.h.CelError} && (err.kind === "cost" || err.kind === "timeout")) throw err;`;
}

/** The path of a field of the value at `path` (Compiled.path). */
export function pathTo(path: string, field: string): string {
  return `${path}/${JSON.stringify(field)}`;
}

/** The path of a loop variable's value: its slot's, in the program being written. */
export function elementPath(g: PlanGen, slot: number): string {
  return `element:${g.program}:${slot}`;
}
