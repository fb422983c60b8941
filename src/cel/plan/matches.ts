/**
 * `s.matches('<constant>')` (and `matches(s, '<constant>')`) with the pattern compiled at compile
 * time. The library's `matches` overloads (library/std.ts) serve every other form.
 */
import type { CelRegex } from "../library/types.ts";
import { matchesCost } from "../library/std.ts";
import { compileRegex } from "../regex/index.ts";
import { codePointLength, hasSurrogate } from "../runtime/code-points.ts";
import { withPosition } from "../runtime/errors.ts";
import { type CelValue, noSuchOverload } from "../runtime/values.ts";
import type { EvalState } from "../state/state.ts";
import type { CallNode } from "../syntax/ast.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";

/**
 * `s.matches('<constant>')`: the pattern is compiled once, here, instead of being looked up in the
 * regex cache on every call. Same checks, order and cost as the library overload; a pattern that
 * does not compile takes the ordinary path, so its error surfaces when the call runs, as before.
 */
export function planConstantMatches(
  p: PlanContext,
  e: CallNode,
  args: readonly Compiled[],
): Compiled | undefined {
  const member = e.target !== undefined;
  const node = member ? e.args[0] : e.args[1];
  if (e.fn !== "matches" || args.length !== 2 || node?.kind !== "const" || typeof node.value !== "string")
    return undefined;
  const overload = p.env.functions
    .get("matches")
    ?.find((o) => o.member === member && o.args[0] === "string" && o.args[1] === "string");
  if (!overload) return undefined;
  const pattern = node.value;
  let re: CelRegex;
  try {
    re = compileRegex(pattern);
  } catch {
    return undefined;
  }
  const subjectC = args[0] as Compiled;
  const subject = subjectC.ev;
  // The member overload is priced by size (its cost is matchesCost); the global form costs 1.
  const priced = overload.cost !== undefined;
  const patternSize = codePointLength(pattern);
  const id = e.id;
  const test = (s: CelValue, st: EvalState): boolean => {
    try {
      if (typeof s !== "string") throw noSuchOverload("matches", [s, pattern]);
      // One scan for surrogates serves the cost and the test: without any, the size in code
      // points is the length, and the pattern's size is known already.
      if (hasSurrogate(s)) {
        st.addCost(priced ? 1 + matchesCost(codePointLength(s), patternSize) : 1);
        return re.test(s, st);
      }
      st.addCost(priced ? 1 + matchesCost(s.length, patternSize) : 1);
      return re.testWithoutSurrogates(s, st);
    } catch (err) {
      return withPosition(err, id);
    }
  };
  return {
    ev: (f) => test(subject(f), f.st),
    emit: (g) => {
      const v = emitValue(g, subjectC);
      const t = g.temp();
      g.line(`${t} = ${g.constant(test)}(${v}, st);`);
      return t;
    },
    type: "bool",
  };
}
