/**
 * `==` and `!=`: CEL's heterogeneous equality (runtime/equality.ts celEquals), never an error; the
 * generated code compares with `===` where a literal operand makes that exact.
 */
import { celEquals } from "../runtime/equality.ts";
import type { CallNode, Expr } from "../syntax/ast.ts";
import { charge } from "./emit.ts";
import type { PlanGen } from "./helpers.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";

export function planEquality(_p: PlanContext, e: CallNode, args: readonly Compiled[]): Compiled {
  const [left, right] = args as readonly [Compiled, Compiled];
  const l = left.ev;
  const r = right.ev;
  const eq = e.fn === "_==_";
  return {
    ev: (f) => {
      f.st.addCost(1);
      return celEquals(l(f), r(f)) === eq;
    },
    emit: (g) => {
      g.line(charge(1));
      const lv = emitValue(g, left);
      const rv = emitValue(g, right);
      const t = g.temp();
      g.line(`${t} = ${emitEquals(g, lv, rv, e.args[0] as Expr, e.args[1] as Expr)} === ${eq};`);
      return t;
    },
    type: "bool",
  };
}

/**
 * `l == r` in generated code. Against a string or bool literal only that same primitive is equal,
 * so `===` decides; against an int literal a bigint (how JSON integers are read) compares with
 * `===` and anything else goes through celEquals' numeric rules. Otherwise celEquals.
 */
function emitEquals(g: PlanGen, lv: string, rv: string, l: Expr, r: Expr): string {
  const literal =
    r.kind === "const"
      ? { v: rv, other: lv, value: r.value }
      : l.kind === "const"
        ? { v: lv, other: rv, value: l.value }
        : undefined;
  if (literal !== undefined) {
    const { v, other, value } = literal;
    if (typeof value === "string" || typeof value === "boolean") return `(${other} === ${v})`;
    if (typeof value === "bigint")
      return `(typeof ${other} === "bigint" ? ${other} === ${v} : ${g.h.celEquals}(${other}, ${v}))`;
  }
  return `${g.h.celEquals}(${lv}, ${rv})`;
}
