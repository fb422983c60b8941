/**
 * Field selection, `a.b`, and the presence test `has(a.b)`; optional chains (`a.?b`) are in
 * plan/optional.ts and names that look like selections (`variables.x`, `net.IP`) in plan/ident.ts.
 * JSON input is read inline in generated code (plan/json-read.ts); anything else, and a missing
 * field (an error), as the closure reads it (runtime/access.ts).
 */
import { hasField, selectValue } from "../runtime/access.ts";
import type { TypeTag } from "../runtime/tags.ts";
import type { SelectNode } from "../syntax/ast.ts";
import { charge, pathTo } from "./emit.ts";
import type { PlanGen } from "./helpers.ts";
import { planSelectedName } from "./ident.ts";
import { emitFieldRead, emitIsJsonMap, emitIsPlainMap, emitJsonHas, emitPlainRead } from "./json-read.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";
import { planOptionalSelect } from "./optional.ts";

// --- check -----------------------------------------------------------------------------------

/** A field's type is not known; selecting through an optional keeps it optional. */
function selectType(operand: TypeTag): TypeTag {
  return operand === "optional_type" ? "optional_type" : "dyn";
}

// --- plan ------------------------------------------------------------------------------------

export function planSelect(p: PlanContext, e: SelectNode): Compiled {
  const named = planSelectedName(p, e);
  if (named !== undefined) return named;
  const operand = p.plan(e.operand);
  if (e.testOnly) return planHas(operand, e);
  if (e.optional || operand.raw) return planOptionalSelect(operand, e);
  return planField(operand, e);
}

/** `has(a.b)`. */
function planHas(operand: Compiled, e: SelectNode): Compiled {
  const { field, id } = e;
  const op = operand.ev;
  return {
    ev: (f) => hasField(op(f), field, id),
    emit: (g) => {
      const v = emitValue(g, operand);
      const t = g.temp();
      const isMap = operand.plain ? emitIsPlainMap(g, v) : emitIsJsonMap(g, v);
      g.line(
        `${t} = ${isMap} ? ${emitJsonHas(g, v, field)} : ${g.h.hasField}(${v}, ${JSON.stringify(field)}, ${id});`,
      );
      return t;
    },
    type: "bool",
    plain: true,
  };
}

/** `a.b`: a missing field is an error; through an Optional the result stays optional. */
function planField(operand: Compiled, e: SelectNode): Compiled {
  const { field, id } = e;
  const op = operand.ev;
  const key = JSON.stringify(field);
  const path = operand.path;
  const emitSelect = (g: PlanGen, keepArray: boolean): string => {
    g.line(charge(1));
    const v = emitValue(g, operand);
    const t = g.temp();
    // JSON input inline; anything else, and a missing field (an error), as the closure does it.
    const read = keepArray
      ? emitPlainRead(g, v, field, t, true)
      : emitFieldRead(g, operand.plain, v, field, t);
    // A value read before along the same path is taken again; an error is not kept.
    const kept =
      path === undefined
        ? undefined
        : g.pathCache(`${pathTo(path(g), field)}#${keepArray ? "array" : "value"}`);
    if (kept !== undefined) g.line(`if (${kept} !== undefined) ${t} = ${kept}; else {`);
    g.line(`${t} = undefined; ${read}`);
    g.line(`if (${t} === undefined) ${t} = ${g.h.selectValue}(${v}, ${key}, ${id});`);
    if (kept !== undefined) g.line(`${kept} = ${t}; }`);
    return t;
  };
  return {
    ev: (f) => {
      f.st.addCost(1);
      return selectValue(op(f), field, id);
    },
    emit: (g) => emitSelect(g, false),
    ...(operand.plain && { emitList: (g: PlanGen) => emitSelect(g, true) }),
    type: selectType(operand.type),
    plain: operand.plain === true,
    path: path === undefined ? undefined : (g) => pathTo(path(g), field),
  };
}
