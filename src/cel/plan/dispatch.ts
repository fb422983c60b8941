/**
 * Overload dispatch: choosing among a function's overloads by the arguments' run-time types (the
 * candidates the call's check left, in the environment's order), charging the chosen overload's
 * cost and applying it, with the call's position on any error. Both tiers are here: the closure
 * and the applier it shares with generated code that calls it, and the choice written out at a
 * call site (emitDispatch), which must pick the same overload at the same cost.
 */
import { withPosition } from "../runtime/errors.ts";
import { codePointLength } from "../runtime/code-points.ts";
import { hasTag, type TypeTag } from "../runtime/tags.ts";
import { type CelValue, noSuchOverload } from "../runtime/values.ts";
import type { EvalState } from "../state/state.ts";
import type { Overload } from "../library/types.ts";
import { stringConcatCost } from "../library/std.ts";
import { charge } from "./emit.ts";
import type { PlanGen } from "./helpers.ts";
import { emitIsJsonMap } from "./json-read.ts";
import { type Compiled, type Eval, emitValue } from "./node.ts";

/**
 * A call of `name` whose check (plan/call.ts resolveCall) left `candidates`, with its planned
 * arguments and result type.
 */
export function planDispatch(
  name: string,
  id: number,
  args: readonly Compiled[],
  candidates: readonly Overload[],
  type: TypeTag,
): Compiled {
  const apply = applier(name, id, args.length, candidates);
  return {
    ev: dispatchClosure(
      name,
      id,
      args.map((a) => a.ev),
      candidates,
    ),
    ...(apply && {
      emit: (g: PlanGen) => {
        const vals = args.map((a) => emitValue(g, a));
        const inline = emitDispatch(g, name, id, candidates, vals, args);
        if (inline !== undefined) return inline;
        const t = g.temp();
        g.line(`${t} = ${g.constant(apply)}(${[...vals, "st"].join(", ")});`);
        return t;
      },
    }),
    type,
    // Adding JSON values gives a number, a string or a list of their elements.
    plain: name === "_+_" && args.every((a) => a.plain),
  };
}

// --- run time --------------------------------------------------------------------------------

/**
 * A call's closure: the arguments evaluated in order, then the first overload whose argument tags
 * match (the applier for one or two arguments), its cost charged, its implementation applied.
 */
function dispatchClosure(
  name: string,
  id: number,
  args: readonly Eval[],
  candidates: readonly Overload[],
): Eval {
  type Fn = (...a: unknown[]) => CelValue;
  type CostFn = (...a: unknown[]) => number;
  const pick = (vals: CelValue[]): Overload => {
    for (const o of candidates) {
      let ok = true;
      for (let i = 0; i < vals.length; i++) {
        if (!hasTag(vals[i] as CelValue, o.args[i] as TypeTag)) {
          ok = false;
          break;
        }
      }
      if (ok) return o;
    }
    throw noSuchOverload(name, vals);
  };
  const invoke = (o: Overload, vals: CelValue[], st: EvalState): CelValue => {
    st.addCost(o.cost ? 1 + (o.cost as unknown as CostFn)(...vals) : 1);
    return (o.impl as unknown as Fn)(...vals, st);
  };
  // One or two arguments (nearly every call): evaluated here, then the same applier generated
  // code calls, which tries the overloads in order without building an argument array.
  const apply = applier(name, id, args.length, candidates) as
    | ((...a: [CelValue, EvalState] | [CelValue, CelValue, EvalState]) => CelValue)
    | undefined;
  if (apply && args.length === 1) {
    const [a0] = args as [Eval];
    return (f) => apply(a0(f), f.st);
  }
  if (apply && args.length === 2) {
    const [a0, a1] = args as [Eval, Eval];
    return (f) => {
      const v0 = a0(f);
      return apply(v0, a1(f), f.st);
    };
  }
  switch (args.length) {
    case 0:
      return (f) => {
        try {
          return invoke(pick([]), [], f.st);
        } catch (e) {
          return withPosition(e, id);
        }
      };
    default:
      return (f) => {
        const v = args.map((a) => a(f));
        try {
          return invoke(pick(v), v, f.st);
        } catch (e) {
          return withPosition(e, id);
        }
      };
  }
}

type Applier = (...a: never[]) => CelValue;

/**
 * A function called on argument values already computed, for generated code: the same overload
 * choice, cost and error position as the dispatching closure once it has evaluated the arguments.
 * Arities other than one and two are left to the closure.
 */
function applier(
  name: string,
  id: number,
  arity: number,
  candidates: readonly Overload[],
): Applier | undefined {
  type Fn = (...a: unknown[]) => CelValue;
  type CostFn = (...a: unknown[]) => number;
  const tags0 = candidates.map((o) => o.args[0] as TypeTag);
  const tags1 = candidates.map((o) => o.args[1] as TypeTag);
  if (arity === 1)
    return (v0: CelValue, st: EvalState): CelValue => {
      try {
        for (let i = 0; i < candidates.length; i++) {
          const t = tags0[i] as TypeTag;
          if (t !== "dyn" && !hasTag(v0, t)) continue;
          const o = candidates[i] as Overload;
          st.addCost(o.cost ? 1 + (o.cost as unknown as CostFn)(v0) : 1);
          return (o.impl as unknown as Fn)(v0, st);
        }
        throw noSuchOverload(name, [v0]);
      } catch (e) {
        return withPosition(e, id);
      }
    };
  if (arity === 2)
    return (v0: CelValue, v1: CelValue, st: EvalState): CelValue => {
      try {
        for (let i = 0; i < candidates.length; i++) {
          const t0 = tags0[i] as TypeTag;
          const t1 = tags1[i] as TypeTag;
          if ((t0 !== "dyn" && !hasTag(v0, t0)) || (t1 !== "dyn" && !hasTag(v1, t1))) continue;
          const o = candidates[i] as Overload;
          st.addCost(o.cost ? 1 + (o.cost as unknown as CostFn)(v0, v1) : 1);
          return (o.impl as unknown as Fn)(v0, v1, st);
        }
        throw noSuchOverload(name, [v0, v1]);
      } catch (e) {
        return withPosition(e, id);
      }
    };
  return undefined;
}

// --- generated code ----------------------------------------------------------------------------

/** A type check in generated code: inline for the common tags, else through hasTag. */
function emitTagCheck(g: PlanGen, v: string, tag: TypeTag): string | undefined {
  switch (tag) {
    case "dyn":
      return undefined;
    case "int":
      return `typeof ${v} === "bigint"`;
    case "double":
      return `typeof ${v} === "number"`;
    case "string":
      return `typeof ${v} === "string"`;
    case "bool":
      return `typeof ${v} === "boolean"`;
    case "null_type":
      return `${v} === null`;
    case "list":
      return `Array.isArray(${v})`;
    case "map":
      // JSON input first, without the prototype lookup isPlainMap makes (see emitIsJsonMap).
      return `((${emitIsJsonMap(g, v)}) || ${v} instanceof ${g.h.CelMap} || ${g.h.isPlainMap}(${v}))`;
    case "uint":
      return `${v} instanceof ${g.h.UInt}`;
    case "bytes":
      return `${v} instanceof Uint8Array`;
    default:
      return `${g.h.hasTag}(${v}, ${JSON.stringify(tag)})`;
  }
}

/** Tags no other tag's check accepts a value of: each has its own typeof or Array.isArray test or class. */
const EXCLUSIVE_TAGS: ReadonlySet<TypeTag> = new Set<TypeTag>([
  "int",
  "double",
  "string",
  "bool",
  "null_type",
  "list",
  "uint",
  "bytes",
]);

/** What a failing check of this tag costs in emitTagCheck's code: typeof tests, then classes, then lookups. */
function checkRank(tag: TypeTag): number {
  switch (tag) {
    case "int":
    case "double":
    case "string":
    case "bool":
    case "null_type":
      return 0;
    case "list":
      return 1;
    case "uint":
    case "bytes":
      return 2;
    case "map":
      return 3;
    default:
      return 4;
  }
}

/** True when no list of values can match both: at some argument both tags are exclusive and differ. */
function disjointOverloads(a: Overload, b: Overload): boolean {
  return a.args.some((t, k) => {
    const u = b.args[k];
    return u !== undefined && t !== u && EXCLUSIVE_TAGS.has(t) && EXCLUSIVE_TAGS.has(u);
  });
}

/**
 * The candidates in the order their written-out checks are cheapest to fail, where the order cannot
 * change the overload a call picks: one moves ahead of another only when no arguments match both.
 * `_+_` on two lists otherwise failed its int, uint, double, string and bytes checks first, two of
 * them instanceof tests that walk an array's prototype chain.
 */
function cheapestChecksFirst(candidates: readonly Overload[]): readonly Overload[] {
  if (candidates.some((o) => o.args.includes("dyn"))) return candidates;
  const rank = (o: Overload): number => checkRank(o.args[0] as TypeTag);
  const out = [...candidates];
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0; j--) {
      const before = out[j - 1] as Overload;
      const after = out[j] as Overload;
      if (rank(after) >= rank(before) || !disjointOverloads(before, after)) break;
      out[j - 1] = after;
      out[j] = before;
    }
  }
  return out;
}

/**
 * Overloads past which a call site keeps calling the shared applier rather than having its own
 * overload choice written out: a bound on generated code size. Today's most overloaded functions,
 * the comparison operators, have 14; writing out every one measured as well as writing out six.
 */
const MAX_INLINE_OVERLOADS = 16;

/** The int-int ordering overloads (std.ts orderingFn), as JavaScript operators on BigInts. */
const INT_ORDER: Readonly<Record<string, string>> = {
  less_int64: "<",
  less_equals_int64: "<=",
  greater_int64: ">",
  greater_equals_int64: ">=",
};

/**
 * A call of one or two arguments with the overload choice written out at its site: the applier's
 * checks (reordered only where no call can pick another overload, see cheapestChecksFirst), the
 * same cost and error position. The applier is one function for every
 * call, so V8 sees every overload's implementation called from it and calls none of them quickly;
 * written out, each site calls the few it meets directly. Undefined when there are too many
 * overloads to write out.
 */
function emitDispatch(
  g: PlanGen,
  name: string,
  id: number,
  candidates: readonly Overload[],
  vals: readonly string[],
  nodes: readonly Compiled[],
): string | undefined {
  if (candidates.length > MAX_INLINE_OVERLOADS || (vals.length !== 1 && vals.length !== 2)) return undefined;
  const t = g.temp();
  const args = vals.join(", ");
  // `k in m` on a map of JSON input or one the evaluator built (`orValue({})`), the common case
  // in policies (`'cpu' in c.resources.limits`): the applier's own test for such a map, then the
  // member test, without calling the cost function and the applier. Same cost: the base unit.
  const inMap =
    name === "@in" && vals.length === 2 && candidates.length === 1 && candidates[0]?.id === "in_dyn";
  g.line("try {");
  if (inMap) {
    const [x, m] = vals as [string, string];
    g.line(
      `if (${g.h.isPlainMap}(${m})) { ${charge(1)} ${t} = typeof ${x} === "string" && ${g.h.hasOwn}(${m}, ${x}); }`,
    );
  }
  let open = true;
  let concatSize: string | undefined;
  for (const [i, o] of cheapestChecksFirst(candidates).entries()) {
    const checks = vals.flatMap((v, k) => emitTagCheck(g, v, o.args[k] as TypeTag) ?? []);
    const sized = o.id === "add_string" ? concatSizeCode(g, vals, nodes) : undefined;
    if (sized?.exact) concatSize = sized.size;
    const cost = sized
      ? `${sized.size} = ${sized.sum}; st.addCost(1 + ${g.constant(stringConcatCost)}(${sized.size}));`
      : o.cost
        ? `st.addCost(1 + ${g.constant(o.cost)}(${args}));`
        : charge(1);
    const cond = checks.length === 0 ? "true" : checks.join(" && ");
    // Two ints (BigInts) order as JavaScript orders them: the comparison is written out.
    const intOrder = INT_ORDER[o.id];
    const apply =
      intOrder !== undefined && vals.length === 2
        ? `${vals[0]} ${intOrder} ${vals[1]}`
        : `${g.constant(o.impl)}(${args}, st)`;
    g.line(`${i === 0 && !inMap ? "" : "else "}if (${cond}) { ${cost} ${t} = ${apply}; }`);
    // An overload that takes any arguments ends the choice, as in the applier's loop.
    if (checks.length === 0) {
      open = false;
      break;
    }
  }
  if (open) g.line(`else throw ${g.h.noSuchOverload}(${JSON.stringify(name)}, [${args}]);`);
  g.line(`} catch (err) { ${g.h.withPosition}(err, ${id}); }`);
  // Set only where the result is a string, which only that overload makes: a concatenation onto
  // the result reads it only once its own test has found a string.
  if (concatSize !== undefined) g.stringSizes.set(t, concatSize);
  return t;
}

/**
 * A string concatenation's operand sizes in code points, as code, when one of them is known without
 * counting: a literal's, or a concatenation's, counted as it was made. The cost function counted
 * both operands every time, and for `'containers[' + c.name + ']'` that was four counts, one of a
 * cons string (`'containers[' + c.name`) that had to be flattened to be counted. Now it counts
 * `c.name` alone. `exact` says whether the sum is also the
 * result's size: it is not when the left operand ends in a high surrogate and the right begins with
 * a low one (they make one code point), so one operand must be a literal that rules that out at
 * its end.
 */
function concatSizeCode(
  g: PlanGen,
  vals: readonly string[],
  nodes: readonly Compiled[],
): { size: string; sum: string; exact: boolean } | undefined {
  const [left, right] = nodes;
  const [a, b] = vals;
  if (left === undefined || right === undefined || a === undefined || b === undefined) return undefined;
  const literal = (n: Compiled, end: "first" | "last"): { size: number; safe: boolean } | undefined => {
    const v = n.literal?.value;
    if (typeof v !== "string") return undefined;
    const edge = v.length === 0 ? 0 : v.charCodeAt(end === "first" ? 0 : v.length - 1);
    return { size: codePointLength(v), safe: edge < 0xd800 || edge > 0xdfff };
  };
  const l = literal(left, "last");
  const r = literal(right, "first");
  const known = (lit: { size: number } | undefined, val: string): string | undefined =>
    lit !== undefined ? String(lit.size) : g.stringSizes.get(val);
  const kl = known(l, a);
  const kr = known(r, b);
  if (kl === undefined && kr === undefined) return undefined;
  const count = (val: string) => `${g.constant(codePointLength)}(${val})`;
  return {
    size: g.temp(),
    sum: `${kl ?? count(a)} + ${kr ?? count(b)}`,
    exact: l?.safe === true || r?.safe === true,
  };
}
