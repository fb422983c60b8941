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

/**
 * What a comprehension over something other than a list or a map fails with at run time, in
 * cel-go's words (interpreter/interpretable.go evalFold): `got '%T', expected iterable type` with
 * one variable, `unsupported comprehension range type: %T` with two; %T is the Go type of the
 * value.
 */
export function rangeError(r: CelValue, twoVariables: boolean): CelError {
  const t = goTypeOf(r);
  return new CelError(
    twoVariables ? `unsupported comprehension range type: ${t}` : `got '${t}', expected iterable type`,
  );
}

/** Go's %T of cel-go's value for `v` (common/types), for the values that are neither list nor map. */
function goTypeOf(v: CelValue): string {
  const name = typeName(v);
  const GO: Readonly<Record<string, string>> = {
    bool: "types.Bool",
    bytes: "types.Bytes",
    double: "types.Double",
    "google.protobuf.Duration": "types.Duration",
    "google.protobuf.Timestamp": "types.Timestamp",
    int: "types.Int",
    null_type: "types.Null",
    optional_type: "*types.Optional",
    string: "types.String",
    type: "*types.Type",
    uint: "types.Uint",
  };
  return GO[name] ?? name;
}
