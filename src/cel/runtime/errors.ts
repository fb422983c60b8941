/**
 * Evaluation errors with their positions, and the errors no operator absorbs. An error gets the id
 * of the node that failed (its position in messages) where the evaluator catches it; `&&`, `||`,
 * `@not_strictly_false` and the comprehensions absorb evaluation errors, but never the cost limit's
 * or the deadline's.
 */
import { CelError, type CelValue, typeName } from "./values.ts";

/** Whether `e` is the cost limit's or the deadline's error, which stops the whole expression. */
export function isLimitError(e: unknown): boolean {
  return e instanceof CelError && (e.kind === "cost" || e.kind === "timeout");
}

/**
 * A comprehension accumulator may hold an error, as in cel-go: `exists` keeps going after an
 * element errors, and a later true element absorbs the error. Reading the accumulator rethrows it.
 */
export class HeldError {
  constructor(readonly error: unknown) {}
}

/** The error `withPosition` throws, for code that holds it instead (a comprehension's accumulator). */
export function errorAt(e: unknown, id: number): CelError {
  if (e instanceof CelError) {
    if (e.exprId === undefined) e.exprId = id;
    return e;
  }
  // A library bug must not escape as a crash of the request: report it as an evaluation error.
  const err = new CelError(`internal error: ${e instanceof Error ? e.message : String(e)}`);
  err.exprId = id;
  return err;
}

/** Throws `e` positioned at node `id` (unless it has a position already). */
export function withPosition(e: unknown, id: number): never {
  throw errorAt(e, id);
}

/** What a comprehension over something other than a list or a map fails with. */
export function rangeError(r: CelValue): CelError {
  return new CelError(
    `expression of type '${typeName(r)}' cannot be range of a comprehension (must be list, map, or dynamic)`,
  );
}
