/** The conditional operator `c ? a : b`: a condition that is not a bool is an error at its position. */
import { withPosition } from "../runtime/errors.ts";
import type { TypeTag } from "../runtime/tags.ts";
import { noSuchOverloadBare } from "../runtime/values.ts";
import type { CallNode } from "../syntax/ast.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";

// --- check -----------------------------------------------------------------------------------

/** The branches' type when they agree, else `dyn`. */
function conditionalType(whenTrue: TypeTag, whenFalse: TypeTag): TypeTag {
  return whenTrue === whenFalse ? whenTrue : "dyn";
}

// --- plan ------------------------------------------------------------------------------------

export function planConditional(_p: PlanContext, e: CallNode, args: readonly Compiled[]): Compiled {
  const [cond, whenTrue, whenFalse] = args as readonly [Compiled, Compiled, Compiled];
  const c = cond.ev;
  const t = whenTrue.ev;
  const el = whenFalse.ev;
  const id = e.id;
  return {
    ev: (f) => {
      const cv = c(f);
      if (cv === true) return t(f);
      if (cv === false) return el(f);
      return withPosition(noSuchOverloadBare(), id);
    },
    emit: (g) => {
      const res = g.temp();
      const cv = emitValue(g, cond);
      g.line(`if (${cv} === true) {`);
      g.line(`${res} = ${emitValue(g, whenTrue)};`);
      g.line(`} else if (${cv} === false) {`);
      g.line(`${res} = ${emitValue(g, whenFalse)};`);
      g.line(`} else ${g.h.withPosition}(${g.h.noSuchOverloadBare}(), ${id});`);
      return res;
    },
    type: conditionalType(whenTrue.type, whenFalse.type),
    plain: whenTrue.plain === true && whenFalse.plain === true,
  };
}
