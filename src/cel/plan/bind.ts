/** `cel.bind(name, init, body)` (and the `optMap`/`optFlatMap` macros): `init` in a slot `body` reads. */
import type { BindNode } from "../syntax/ast.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";

export function planBind(p: PlanContext, e: BindNode): Compiled {
  const init = p.plan(e.init);
  const slot = p.newSlot();
  if (init.plain) p.plainSlots.add(slot);
  p.openScope(new Map([[e.name, slot]]));
  const body = p.plan(e.body);
  p.closeScope();
  return {
    ev: (f) => {
      f.slots[slot] = init.ev(f);
      return body.ev(f);
    },
    emit: (g) => {
      g.line(`${g.slot(slot)} = ${emitValue(g, init)};`);
      return emitValue(g, body);
    },
    type: body.type,
    plain: body.plain === true,
  };
}
