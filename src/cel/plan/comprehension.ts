/**
 * Comprehensions: the loop every iterating macro expands to (`all`, `exists`, `map`, `filter`...),
 * and `@append`, the step of `map()` and `filter()`.
 */
import type { CelValue } from "../runtime/values.ts";
import type { CallNode } from "../syntax/ast.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";

/** `@append(accu, x)`: appends to the accumulator in place (the list literal it starts as is built fresh). */
export function planAppend(_p: PlanContext, _e: CallNode, args: readonly Compiled[]): Compiled {
  const [accuC, xC] = args as readonly [Compiled, Compiled];
  const accu = accuC.ev;
  const x = xC.ev;
  return {
    ev: (f) => {
      const list = accu(f) as CelValue[];
      list.push(x(f));
      return list;
    },
    // The step of map() and filter(): without it their whole body would run as closures.
    emit: (g) => {
      const list = emitValue(g, accuC);
      g.line(`${list}.push(${emitValue(g, xC)});`);
      return list;
    },
    type: "list",
  };
}
