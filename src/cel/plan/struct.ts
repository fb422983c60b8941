/**
 * Struct literals (`Object{spec: Object.spec{...}}`, `JSONPatch{op: ...}`), which mutations build: the
 * type's root name must be one the environment declares; the value is a built map of its fields.
 */
import { newBuiltMap, Optional, setMember } from "../runtime/values.ts";
import type { StructNode } from "../syntax/ast.ts";
import type { TypeTag } from "../runtime/tags.ts";
import type { Compiled, PlanContext } from "./node.ts";

/** Check: the type's root name is declared (Object, JSONPatch); the literal's type. */
function checkStruct(p: PlanContext, e: StructNode): TypeTag {
  const root = e.typeName.split(".")[0] as string;
  if (!p.env.structTypes.has(root))
    p.problem("PE_CEL_UNKNOWN_IDENT", `undeclared reference to '${e.typeName}' (in container '')`, e.id);
  return root === "JSONPatch" ? "JSONPatch" : "Object";
}

export function planStruct(p: PlanContext, e: StructNode): Compiled {
  const type = checkStruct(p, e);
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
