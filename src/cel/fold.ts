/**
 * What cel-go's program planner refuses when it builds the program: Kubernetes builds every program
 * with `cel.EvalOptions(cel.OptOptimize)` (apiserver/pkg/cel/environment/base.go), whose decorator
 * (cel-go interpreter/decorators.go decOptimize) folds constants while planning, bottom up:
 *
 * - a list or map literal whose elements (keys and values) are all constants becomes a constant
 *   (maybeBuildListLiteral, maybeBuildMapLiteral);
 * - a call of a type conversion function (overloads.IsTypeConversionFunction: bool, bytes, double,
 *   duration, dyn, int, string, timestamp, type, uint) with one constant argument is evaluated
 *   there and then (maybeOptimizeConstUnary). If that fails, so does planning: the API server
 *   refuses the expression with "program instantiation failed: " and the error
 *   (admission/plugin/cel/compile.go), although it type-checks.
 *
 * So `int('x')`, `uint(-1)`, `string(b'\xff')` and `duration(dyn(1))` never reach a request. This
 * finds the first such failure in the order cel-go plans (post-order, receiver and arguments left
 * to right), by running the conversion with celgate's own run time. Nothing here changes what a
 * program does: a conversion of a non-constant argument runs, and fails, at run time as before.
 */
import { compileParsed } from "./compile.ts";
import type { CelEnvironment } from "./env/environment.ts";
import { CelError, type CelValue } from "./runtime/values.ts";
import { EvalState } from "./state/state.ts";
import { children, type Expr, type ParsedExpression } from "./syntax/ast.ts";

/** overloads.IsTypeConversionFunction. */
const CONVERSIONS: ReadonlySet<string> = new Set([
  "bool",
  "bytes",
  "double",
  "duration",
  "dyn",
  "int",
  "string",
  "timestamp",
  "type",
  "uint",
]);

/** A conversion of constants runs in next to nothing; this only bounds a pathological literal. */
const FOLD_COST_LIMIT = 1_000_000;
const FOLD_TIME_LIMIT_MS = 1_000;

export interface FoldProblem {
  /** The conversion call that fails. */
  readonly id: number;
  /** "program instantiation failed: " and cel-go's error. */
  readonly message: string;
}

/** Whether `e` is a constant once the planner has folded what it folds below it. */
type Folded = { readonly constant: boolean; readonly problem?: FoldProblem };

const NOT_CONSTANT: Folded = { constant: false };
const CONSTANT: Folded = { constant: true };

/**
 * The first type conversion of a constant that fails when the program is built, if any. Call it on
 * an expression the checker accepted, with the environment it will run in.
 */
export function constantConversionProblem(
  parsed: ParsedExpression,
  env: CelEnvironment,
): FoldProblem | undefined {
  // Most expressions call no conversion that can fail: the source says so without a walk.
  if (!MAY_CONVERT.test(parsed.source)) return undefined;
  return fold(parsed.root, parsed, env).problem;
}

/** A call of a conversion that may fail (not dyn or type), as the source could spell it. */
const MAY_CONVERT = /\b(?:bool|bytes|double|duration|int|string|timestamp|uint)\s*\(/;

function fold(e: Expr, parsed: ParsedExpression, env: CelEnvironment): Folded {
  switch (e.kind) {
    case "const":
      return CONSTANT;
    case "list":
    case "map":
    case "call": {
      // Only these fold; their children are walked in cel-go's planning order (syntax/ast.ts children).
      let all = true;
      for (const c of children(e)) {
        const r = fold(c.expr, parsed, env);
        if (r.problem) return r;
        if (!r.constant) all = false;
      }
      if (!all) return NOT_CONSTANT;
      if (e.kind === "list") return e.optionalIndices.size === 0 ? CONSTANT : NOT_CONSTANT;
      if (e.kind === "map") return e.entries.every((x) => !x.optional) ? CONSTANT : NOT_CONSTANT;
      if (e.target !== undefined || e.args.length !== 1 || !CONVERSIONS.has(e.fn)) return NOT_CONSTANT;
      // dyn and type of a constant cannot fail: folded without running them.
      return e.fn === "dyn" || e.fn === "type" ? CONSTANT : convert(e, parsed, env);
    }
    case "ident":
      return NOT_CONSTANT;
    default:
      for (const c of children(e)) {
        const r = fold(c.expr, parsed, env);
        if (r.problem) return r;
      }
      return NOT_CONSTANT;
  }
}

/** Runs one conversion of constants, as maybeOptimizeConstUnary evaluates it. */
function convert(e: Expr, parsed: ParsedExpression, env: CelEnvironment): Folded {
  const program = compileParsed({ source: parsed.source, root: e, offsets: parsed.offsets }, env);
  const state = new EvalState(FOLD_COST_LIMIT, performance.now() + FOLD_TIME_LIMIT_MS);
  try {
    program.run({ values: NO_VALUES }, state);
    return CONSTANT;
  } catch (err) {
    if (!(err instanceof CelError) || err.kind !== "runtime") throw err;
    return {
      constant: false,
      problem: { id: e.id, message: `program instantiation failed: ${err.message}` },
    };
  }
}

const NO_VALUES: Readonly<Record<string, CelValue>> = Object.freeze({});
