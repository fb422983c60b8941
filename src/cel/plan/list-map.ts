/**
 * List and map literals (`[a, ?b]`, `{k: v, ?k2: v2}`). Nothing is checked statically: a map key's
 * type and a repeated key are errors when the literal is evaluated, as in cel-go.
 */
import { describe } from "../library/strings.ts";
import { withPosition } from "../runtime/errors.ts";
import {
  CelError,
  CelMap,
  type CelValue,
  type MapKey,
  newBuiltMap,
  Optional,
  typeName,
  UInt,
} from "../runtime/values.ts";
import type { Expr, MapNode } from "../syntax/ast.ts";
import { charge } from "./emit.ts";
import { builtOnce } from "./literal.ts";
import { type Compiled, type Eval, emitValue, type PlanContext } from "./node.ts";

/** The value of every `{}` literal but a comprehension's accumulator (planMap). */
const EMPTY_MAP: CelValue = Object.freeze(newBuiltMap());

/**
 * A list literal. `mutable` is for a comprehension's initial accumulator, which map() and filter()
 * append to in place (@append): it is built fresh on every evaluation.
 */
export function planList(
  p: PlanContext,
  elements: readonly Expr[],
  optional: ReadonlySet<number>,
  id: number,
  mutable = false,
): Compiled {
  const compiled = elements.map((x) => p.plan(x));
  const ev = compiled.map((c) => c.ev);
  // A list of constants is built once, frozen: CEL values are immutable, and a mutation's result is
  // copied (toJson) before it is applied. `[]` is one too: `.orValue([])` ran on every evaluation,
  // and an allocation on a review's path costs more than its size (fresh memory, and scavenges).
  if (!mutable && optional.size === 0 && elements.every((x) => x.kind === "const")) {
    const constant = Object.freeze(elements.map((x) => (x as { value: CelValue }).value));
    return { ...builtOnce(constant, "list"), plain: compiled.every((c) => c.plain) };
  }
  if (optional.size === 0) {
    return {
      ev: (f) => {
        f.st.addCost(1);
        const out: CelValue[] = new Array(ev.length);
        for (let i = 0; i < ev.length; i++) out[i] = (ev[i] as Eval)(f);
        return out;
      },
      emit: (g) => {
        g.line(charge(1));
        const vals = compiled.map((c) => emitValue(g, c));
        const t = g.temp();
        g.line(`${t} = [${vals.join(", ")}];`);
        return t;
      },
      type: "list",
      plain: compiled.every((c) => c.plain),
    };
  }
  return {
    ev: (f) => {
      f.st.addCost(1);
      const out: CelValue[] = [];
      for (let i = 0; i < ev.length; i++) {
        const v = (ev[i] as Eval)(f);
        if (optional.has(i)) {
          if (!(v instanceof Optional))
            return withPosition(
              new CelError(`cannot initialize optional list element from non-optional value ${describe(v)}`),
              id,
            );
          if (v.hasValue()) out.push(v.value());
        } else out.push(v);
      }
      return out;
    },
    type: "list",
  };
}

/**
 * A map literal. `mutable` is for a comprehension's initial accumulator: the macros that build
 * maps (transformMap...) fill it in place through @mapInsert, which needs a CelMap.
 */
export function planMap(p: PlanContext, e: MapNode, mutable = false): Compiled {
  const entries = e.entries.map((en) => ({
    key: p.plan(en.key).ev,
    compiledValue: p.plan(en.value),
    optional: en.optional,
    id: en.id,
  }));
  const names = e.entries.map((en) =>
    en.key.kind === "const" && typeof en.key.value === "string" ? en.key.value : undefined,
  );
  if (
    !mutable &&
    e.entries.every((en) => !en.optional) &&
    names.every((n) => n !== undefined && n !== "__proto__" && !/^(0|[1-9][0-9]*)$/.test(n)) &&
    new Set(names).size === names.length
  ) {
    // Distinct constant string keys: a plain object, read as a map without copying (like JSON input).
    // Index-like keys would change iteration order, and `__proto__` is not a plain property. `{}`
    // is one too, and one frozen object serves every evaluation (as `[]` does: `list`).
    const keys = names as string[];
    if (keys.length === 0) return builtOnce(EMPTY_MAP, "map");
    const values = entries.map((en) => en.compiledValue.ev);
    return {
      ev: (f) => {
        f.st.addCost(1);
        const m = newBuiltMap();
        for (let i = 0; i < keys.length; i++) m[keys[i] as string] = (values[i] as Eval)(f);
        return m;
      },
      emit: (g) => {
        g.line(charge(1));
        const m = g.temp();
        g.line(`${m} = ${g.h.newBuiltMap}();`);
        entries.forEach((en, i) => {
          g.line(`${m}[${JSON.stringify(keys[i])}] = ${emitValue(g, en.compiledValue)};`);
        });
        return m;
      },
      type: "map",
    };
  }
  return {
    ev: (f) => {
      f.st.addCost(1);
      const m = new CelMap();
      for (const en of entries) {
        const k = en.key(f);
        if (
          !(typeof k === "string" || typeof k === "bigint" || typeof k === "boolean" || k instanceof UInt)
        ) {
          return withPosition(new CelError(`unsupported key type: ${typeName(k)}`), en.id);
        }
        let v = en.compiledValue.ev(f);
        if (en.optional) {
          if (!(v instanceof Optional))
            return withPosition(
              new CelError(
                `cannot initialize optional entry '${describe(k)}' from non-optional value ${describe(v)}`,
              ),
              en.id,
            );
          if (!v.hasValue()) continue;
          v = v.value();
        }
        if (!m.set(k as MapKey, v))
          return withPosition(
            new CelError(`Failed with repeated key: ${String(k instanceof UInt ? k.value : k)}`),
            en.id,
          );
      }
      return m;
    },
    type: "map",
  };
}
