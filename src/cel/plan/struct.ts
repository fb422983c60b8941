/**
 * Struct literals (`Object{spec: Object.spec{...}}`, `JSONPatch{op: ...}`), which mutations build: the
 * type's root name must be one the environment declares; the value is a built map of its fields.
 */
import { newBuiltMap, Optional, setMember } from "../runtime/values.ts";
import type { StructNode } from "../syntax/ast.ts";
import type { TypeTag } from "../runtime/tags.ts";
import { type Compiled, failingNode, type PlanContext } from "./node.ts";

/** The literal's type tag (the checker resolved its type name). */
function structTag(e: StructNode): TypeTag {
  return e.typeName.split(".")[0] === "JSONPatch" ? "JSONPatch" : "Object";
}

export function planStruct(p: PlanContext, e: StructNode): Compiled {
  // A type the environment does not declare, which only an unchecked expression can name.
  if (!p.env.structTypes.has(e.typeName.split(".")[0] as string))
    return failingNode(`unknown type: ${e.typeName}`);
  const type = structTag(e);
  const fields = e.fields.map((fl) => ({
    name: fl.name,
    value: p.plan(fl.value).ev,
    optional: fl.optional,
  }));
  return {
    ev: (f) => {
      f.st.addCost(1);
      const out = newBuiltMap();
      for (const fl of fields) {
        let v = fl.value(f);
        if (fl.optional) {
          if (!(v instanceof Optional) || !v.hasValue()) continue;
          v = v.value();
        }
        setMember(out, fl.name, v);
      }
      return out;
    },
    type,
  };
}
