/**
 * Optional chains: `a.?b.?c`, `a.?b.c` (selecting through an optional keeps the chain optional),
 * `chain.hasValue()` on one, and `x.orValue(d)` / `x.or(y)`, short-circuiting, on any receiver. A
 * chain is evaluated raw, its value or ABSENT for none (Compiled.raw), and wrapped in an Optional
 * only where its value is used as one, so a chain allocates no Optional per step. `m[?k]` is an
 * optional chain too (plan/indexing.ts).
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
  compatible,
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

// --- hasValue on a chain; or and orValue --------------------------------------------------------

/**
 * `chain.hasValue()` on an optional chain reads its raw value, with the same order of evaluation and
 * the same cost as the library call: receiver, then one unit for the call. `x.orValue(d)` and
 * `x.or(y)` on any receiver the optional library's overloads admit are planned as cel-go evaluates
 * them (planOrValue, planOr). Undefined for any other call, or one the environment resolves otherwise.
 */
export function planOptionalAccessor(
  p: PlanContext,
  e: CallNode,
  args: readonly Compiled[],
): Compiled | undefined {
  const target = e.target ? args[0] : undefined;
  if (!target) return undefined;
  const overloads = p.env.functions.get(e.fn);
  const declares = (id: string) => overloads?.some((o) => o.id === id) === true;
  const other = args[1];
  if (args.length === 2 && other !== undefined && compatible(target.type, "optional_type")) {
    if (e.fn === "orValue" && declares("optional_orValue_value")) {
      const d = e.args[0];
      return planOrValue(target, other, d?.kind === "list" && d.elements.length === 0);
    }
    if (e.fn === "or" && declares("optional_or_optional") && compatible(other.type, "optional_type"))
      return planOr(target, other);
  }
  const raw = target.raw;
  if (raw && e.fn === "hasValue" && args.length === 1 && declares("optional_hasValue"))
    return planHasValue(target, raw);
  return undefined;
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

/**
 * `x.orValue(d)` and `x.or(y)`, evaluated as cel-go v0.26 evaluates them (cel/library.go
 * evalOptionalOrValue, evalOptionalOr, which decorateOptionalOr puts in place of a call the checker
 * resolved to optional_orValue_value / optional_or_optional): the receiver first; the argument only
 * when the receiver is optional.none(); a receiver that is not an optional at all (a `dyn` value
 * holding a map or a list) is the result unchanged. The decorated node is no call, so cel-go's cost
 * tracker charges nothing for it: only its operands cost. Kubernetes keeps this behaviour up to 1.36
 * (cel-go v0.28 makes a non-optional receiver `no such overload`; Kyverno's OrValueCompatEnvOptions
 * keeps the old one on purpose).
 */
function planOrValue(target: Compiled, dC: Compiled, emptyListDefault: boolean): Compiled {
  const d = dC.ev;
  const raw = target.raw;
  const chain = target.chain;
  if (raw !== undefined) {
    // On an optional chain: its raw value, ABSENT for none.
    const orDefault = (g: PlanGen, v: string): string => {
      g.line(`if (${v} === ${g.h.ABSENT}) {`);
      const dv = emitValue(g, dC);
      g.line(`${v} = ${dv}; }`);
      return v;
    };
    return {
      ev: (f) => {
        const v = raw(f);
        return v === ABSENT ? d(f) : v;
      },
      emit: (g) => orDefault(g, emitRawValue(g, target, raw)),
      // Only over a default of `[]`, whose elements (none) the comprehension cannot convert by mistake.
      ...(chain?.plain &&
        emptyListDefault && {
          emitList: (g: PlanGen) => orDefault(g, emitChain(g, chain, true)),
        }),
      type: "dyn",
      plain: chain?.plain === true && dC.plain === true,
    };
  }
  const x = target.ev;
  return {
    ev: (f) => {
      const v = x(f);
      if (!(v instanceof Optional)) return v;
      return v.hasValue() ? v.value() : d(f);
    },
    emit: (g) => {
      const v = emitValue(g, target);
      const t = g.temp();
      g.line(`if (${v} instanceof ${g.h.Optional}) { if (${v}.hasValue()) ${t} = ${v}.value(); else {`);
      const dv = emitValue(g, dC);
      g.line(`${t} = ${dv}; } } else ${t} = ${v};`);
      return t;
    },
    type: "dyn",
    // A plain receiver is never an Optional: it is the result, and the default is not evaluated.
    plain: target.plain === true,
  };
}

function planOr(target: Compiled, other: Compiled): Compiled {
  const x = target.ev;
  const y = other.ev;
  return {
    ev: (f) => {
      const v = x(f);
      return v instanceof Optional && !v.hasValue() ? y(f) : v;
    },
    emit: (g) => {
      const v = emitValue(g, target);
      const t = g.temp();
      g.line(`if (${v} instanceof ${g.h.Optional} && !${v}.hasValue()) {`);
      const o = emitValue(g, other);
      g.line(`${t} = ${o}; } else ${t} = ${v};`);
      return t;
    },
    type: "optional_type",
  };
}
