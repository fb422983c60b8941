/**
 * Optional chains: `a.?b.?c`, `a.?b.c` (selecting through an optional keeps the chain optional),
 * and `chain.orValue(d)` / `chain.hasValue()` on one. A chain is evaluated raw, its value or ABSENT
 * for none (Compiled.raw), and wrapped in an Optional only where its value is used as one, so a
 * chain allocates no Optional per step. `m[?k]` is an optional chain too (plan/indexing.ts).
 */
import { ABSENT, selectField } from "../runtime/access.ts";
import { type CelValue, Optional } from "../runtime/values.ts";
import type { CallNode, SelectNode } from "../syntax/ast.ts";
import { charge, pathTo } from "./emit.ts";
import type { Emit, PlanGen } from "./helpers.ts";
import { emitFieldRead, emitPlainRead } from "./json-read.ts";
import {
  type Chain,
  type Compiled,
  type Eval,
  emitRawValue,
  emitValue,
  type PlanContext,
  type RawEval,
} from "./node.ts";

// --- raw values and their Optional -------------------------------------------------------------

/** The raw view of an operand that may or may not be an Optional at run time. */
export function maybeOptional(ev: Eval): RawEval {
  return (f) => {
    const v = ev(f);
    if (v instanceof Optional) return v.hasValue() ? v.value() : ABSENT;
    return v;
  };
}

/** `c.raw ?? maybeOptional(c.ev)` in generated code: the raw chain, or the value with any Optional unwrapped. */
export function emitMaybeOptional(g: PlanGen, c: Compiled): string {
  if (c.raw) return emitRawValue(g, c, c.raw);
  const v = emitValue(g, c);
  g.line(`if (${v} instanceof ${g.h.Optional}) ${v} = ${v}.hasValue() ? ${v}.value() : ${g.h.ABSENT};`);
  return v;
}

function wrapOptional(raw: RawEval): Eval {
  return (f) => {
    const r = raw(f);
    return r === ABSENT ? Optional.none : Optional.of(r);
  };
}

/** The Optional an emitted raw value stands for. */
function emitWrapped(g: PlanGen, emitRaw: Emit): string {
  const v = emitRaw(g);
  g.line(`${v} = ${v} === ${g.h.ABSENT} ? ${g.h.Optional}.none : ${g.h.Optional}.of(${v});`);
  return v;
}

/** A node whose value is an Optional, from its raw evaluators (closure and emitter). */
export function optionalNode(raw: RawEval, emitRaw: Emit): Compiled {
  return { ev: wrapOptional(raw), raw, emitRaw, emit: (g) => emitWrapped(g, emitRaw), type: "optional_type" };
}

// --- a chain of selections -----------------------------------------------------------------------

/** `a.?b`, or `a.?b.c` (selecting through an optional keeps the chain optional), as one chain. */
export function planOptionalSelect(operand: Compiled, e: SelectNode): Compiled {
  const { field, id } = e;
  const chain: Chain = operand.chain
    ? {
        base: operand.chain.base,
        baseEmit: operand.chain.baseEmit,
        basePath: operand.chain.basePath,
        plain: operand.chain.plain,
        fields: [...operand.chain.fields, field],
        ids: [...operand.chain.ids, id],
      }
    : {
        base: operand.raw ?? maybeOptional(operand.ev),
        // A plain value is never an Optional to unwrap.
        baseEmit: (g) => (operand.plain ? emitValue(g, operand) : emitMaybeOptional(g, operand)),
        basePath: operand.raw === undefined ? operand.path : undefined,
        plain: operand.raw === undefined && operand.plain === true,
        fields: [field],
        ids: [id],
      };
  const raw = chainEvaluator(chain.base, chain.fields, chain.ids);
  return { ...optionalNode(raw, (g) => emitChain(g, chain, false)), chain };
}

/**
 * A raw chain of selections from `base`, in one closure. The cost is charged up front, all of it, as
 * the nested form charges each step before evaluating its operand.
 */
function chainEvaluator(base: RawEval, fields: readonly string[], ids: readonly number[]): RawEval {
  const n = fields.length;
  return (f) => {
    f.st.addCost(n);
    let v = base(f);
    for (let i = 0; i < n; i++) {
      if (v === ABSENT) return ABSENT;
      const r: CelValue | undefined = selectField(v, fields[i] as string, ids[i] as number);
      v = r === undefined ? ABSENT : r;
    }
    return v;
  };
}

/**
 * A raw optional chain (`a.?b.?c`) in generated code: its value, or ABSENT. With `keepArray`, the
 * chain is plain and the array its last field holds is left unconverted (Compiled.emitList).
 */
function emitChain(g: PlanGen, chain: Chain, keepArray: boolean): string {
  g.line(charge(chain.fields.length));
  const v = chain.baseEmit(g);
  const r = g.temp();
  let path = chain.basePath?.(g);
  chain.fields.forEach((name, i) => {
    const keep = keepArray && i === chain.fields.length - 1;
    const read = keep ? emitPlainRead(g, v, name, r, true) : emitFieldRead(g, chain.plain, v, name, r);
    // Each step's raw value (ABSENT included) is kept when its path repeats; an error is not.
    if (path !== undefined) path = pathTo(path, name);
    const kept = path === undefined ? undefined : g.pathCache(`${path}#${keep ? "chain-array" : "chain"}`);
    if (kept !== undefined) g.line(`if (${kept} !== undefined) ${v} = ${kept}; else {`);
    g.line(`if (${v} !== ${g.h.ABSENT}) {`);
    g.line(`${read} else ${r} = ${g.h.selectField}(${v}, ${JSON.stringify(name)}, ${chain.ids[i]});`);
    g.line(`${v} = ${r} === undefined ? ${g.h.ABSENT} : ${r}; }`);
    if (kept !== undefined) g.line(`${kept} = ${v}; }`);
  });
  return v;
}

// --- orValue and hasValue on a chain -------------------------------------------------------------

/**
 * `chain.orValue(d)` and `chain.hasValue()` on an optional chain read its raw value. Same order of
 * evaluation and the same cost as the library call: receiver, argument, then one unit for the call.
 * Undefined for any other call, or one the environment resolves otherwise.
 */
export function planOptionalAccessor(
  p: PlanContext,
  e: CallNode,
  args: readonly Compiled[],
): Compiled | undefined {
  const target = e.target ? args[0] : undefined;
  const raw = target?.raw;
  if (!target || !raw) return undefined;
  const overloads = p.env.functions.get(e.fn);
  if (e.fn === "orValue" && args.length === 2 && overloads?.some((o) => o.id === "optional_orValue_value"))
    return planOrValue(e, target, raw, args[1] as Compiled);
  if (e.fn === "hasValue" && args.length === 1 && overloads?.some((o) => o.id === "optional_hasValue"))
    return planHasValue(target, raw);
  return undefined;
}

function planOrValue(e: CallNode, target: Compiled, raw: RawEval, dC: Compiled): Compiled {
  const d = dC.ev;
  const chain = target.chain;
  const dE = e.args[0];
  const emptyList = dE?.kind === "list" && dE.elements.length === 0;
  const orDefault = (g: PlanGen, v: string): string => {
    const dv = emitValue(g, dC);
    g.line(`${charge(1)} if (${v} === ${g.h.ABSENT}) ${v} = ${dv};`);
    return v;
  };
  return {
    ev: (f) => {
      const v = raw(f);
      const dv = d(f);
      f.st.addCost(1);
      return v === ABSENT ? dv : v;
    },
    emit: (g) => orDefault(g, emitRawValue(g, target, raw)),
    // Only over a default of `[]`, whose elements (none) the comprehension cannot convert by mistake.
    ...(chain?.plain &&
      emptyList && {
        emitList: (g: PlanGen) => orDefault(g, emitChain(g, chain, true)),
      }),
    type: "dyn",
    plain: chain?.plain === true && dC.plain === true,
  };
}

function planHasValue(target: Compiled, raw: RawEval): Compiled {
  return {
    ev: (f) => {
      const v = raw(f);
      f.st.addCost(1);
      return v !== ABSENT;
    },
    emit: (g) => {
      const v = emitRawValue(g, target, raw);
      const t = g.temp();
      g.line(`${charge(1)} ${t} = ${v} !== ${g.h.ABSENT};`);
      return t;
    },
    type: "bool",
  };
}
