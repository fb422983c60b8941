/**
 * Constants, and literals built once at compile time. A constant's type is its value's; nothing
 * else is checked.
 */
import { type CelValue, typeName } from "../runtime/values.ts";
import type { TypeTag } from "../runtime/tags.ts";
import type { ConstNode } from "../syntax/ast.ts";
import { charge } from "./emit.ts";
import type { Compiled } from "./node.ts";

export function planConst(e: ConstNode): Compiled {
  const v = e.value;
  return {
    ev: () => v,
    emit: (g) => {
      const t = g.temp();
      g.line(`${t} = ${g.constant(v)};`);
      return t;
    },
    type: typeName(v),
    plain: v === null || typeof v !== "object",
    literal: { value: v },
  };
}

export /** A literal whose value is built once: each evaluation charges what building it would and returns it. */
function builtOnce(value: CelValue, type: TypeTag): Compiled {
  return {
    ev: (f) => {
      f.st.addCost(1);
      return value;
    },
    emit: (g) => {
      const t = g.temp();
      g.line(`${charge(1)} ${t} = ${g.constant(value)};`);
      return t;
    },
    type,
  };
}
