/**
 * `math.greatest(...)` and `math.least(...)`, which cel-go's math extension (ext/math.go) defines
 * as macros over `math.@max` and `math.@min`: one argument (a number, or a list literal of
 * numbers) and two arguments are passed as they are, three or more as one list literal. The
 * macros' own argument checks are parse errors in cel-go; here they are reported with the same
 * texts when the call is checked.
 */
import type { CallNode, Expr } from "../syntax/ast.ts";
import { UInt } from "../runtime/values.ts";
import type { FunctionDecl } from "./decls/index.ts";
import type { CheckEnv } from "./env.ts";
import { type CelType, DYN, ERROR, listOf } from "./types.ts";
import { isAssignable, type Mapping, mostGeneral } from "./unify.ts";

/** What the macro needs of the checker (checker.ts implements it; named here to keep the import one-way). */
export interface MacroChecker {
  readonly env: CheckEnv;
  readonly types: Map<number, CelType>;
  readonly functions: Map<number, string>;
  readonly mapping: Mapping;
  check(e: Expr): void;
  typeOf(e: Expr): CelType;
  report(id: number, message: string): void;
  checkGlobalCall(e: CallNode, name: string, args: readonly Expr[]): void;
  resolveOrError(
    e: CallNode,
    f: FunctionDecl,
    target: Expr | undefined,
    args: readonly Expr[],
    argTypes?: readonly CelType[],
  ): void;
}

/** isNumericArgType: a number literal, or anything but a literal or an aggregate. */
function isNumericArg(e: Expr): boolean {
  switch (e.kind) {
    case "const":
      return typeof e.value === "bigint" || typeof e.value === "number" || e.value instanceof UInt;
    case "list":
    case "map":
    case "struct":
      return false;
    default:
      return true;
  }
}

function isNumericListLiteral(e: Expr): boolean {
  return e.kind === "list" && e.elements.length > 0 && e.elements.every(isNumericArg);
}

/** Checks `math.greatest/least(...)` as cel-go's macro expands it; false if `e` is not such a call. */
export function checkMathMacro(c: MacroChecker, e: CallNode): boolean {
  if (e.target?.kind !== "ident" || e.target.name !== "math") return false;
  if (e.fn !== "greatest" && e.fn !== "least") return false;
  const label = `math.${e.fn}()`;
  const fn = e.fn === "greatest" ? "math.@max" : "math.@min";
  const args = e.args;
  const fail = (at: Expr, text: string): true => {
    for (const a of args) c.check(a);
    c.report(at.id, text);
    c.types.set(e.id, ERROR);
    return true;
  };
  if (args.length === 0) return fail(e.target, `${label} requires at least one argument`);
  if (args.length === 1) {
    const [only] = args as [Expr];
    if (!isNumericListLiteral(only) && !isNumericArg(only))
      return fail(only, `${label} invalid single argument value`);
    c.checkGlobalCall(e, fn, args);
    return true;
  }
  const bad = args.find((a) => !isNumericArg(a));
  if (bad) return fail(bad, `${label} simple literal arguments must be numeric`);
  if (args.length === 2) {
    c.checkGlobalCall(e, fn, args);
    return true;
  }
  // Three or more: the macro passes one list literal, typed as checkCreateList types it.
  let elems: CelType | undefined;
  for (const a of args) {
    c.check(a);
    const t = c.typeOf(a);
    if (elems === undefined) elems = t;
    else elems = isAssignable(c.mapping, elems, t) ? mostGeneral(elems, t) : DYN;
  }
  const f = c.env.functions.get(fn);
  if (!f) return fail(e.target, `undeclared reference to '${fn}' (in container '')`);
  c.functions.set(e.id, fn);
  c.resolveOrError(e, f, undefined, args, [listOf(elems ?? DYN)]);
  return true;
}
