/**
 * `x in ['a', 'b']`, membership in a list of string constants: a Set lookup (or a few comparisons)
 * instead of the library's `@in`, which compares with every element. Any other `in` is a call of
 * the library's overloads (plan/dispatch.ts writes `k in map` out in place).
 */
import type { CallNode, Expr } from "../syntax/ast.ts";
import { charge } from "./emit.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";

/** Members of a constant string list up to which generated code compares `x in [...]` one by one. */
const MAX_COMPARED_MEMBERS = 8;

/** The membership test, when `e` is one of a value in a non-empty list of string constants; else undefined. */
export function planMembership(p: PlanContext, e: CallNode): Compiled | undefined {
  const list = e.args[1];
  if (
    e.fn !== "@in" ||
    e.target ||
    list?.kind !== "list" ||
    list.elements.length === 0 ||
    list.optionalIndices.size !== 0 ||
    !list.elements.every((x) => x.kind === "const" && typeof x.value === "string")
  )
    return undefined;
  // Strings are looked up; other types compare as CEL does (never equal to a string).
  // cel-go charges a membership test one unit per list element.
  const cost = Math.max(1, list.elements.length);
  const members = new Set(list.elements.map((x) => (x as { value: string }).value));
  const needleC = p.plan(e.args[0] as Expr);
  const needle = needleC.ev;
  return {
    ev: (f) => {
      f.st.addCost(cost);
      const x = needle(f);
      return typeof x === "string" && members.has(x);
    },
    emit: (g) => {
      g.line(charge(cost));
      const x = emitValue(g, needleC);
      const t = g.temp();
      // A few members are compared in turn: a Set hashes the needle, and a string read from a
      // new request has no hash yet.
      const test =
        members.size <= MAX_COMPARED_MEMBERS
          ? `(${[...members].map((m) => `${x} === ${JSON.stringify(m)}`).join(" || ")})`
          : `${g.constant(members)}.has(${x})`;
      g.line(`${t} = typeof ${x} === "string" && ${test};`);
      return t;
    },
    type: "bool",
  };
}
