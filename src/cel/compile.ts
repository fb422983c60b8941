/**
 * The CEL compiler: checks a parsed expression against an environment (undeclared variables,
 * unknown functions, wrong argument counts or types, result type) and turns it into a tree of
 * JavaScript closures. Every expression is compiled once; evaluation never parses or resolves.
 *
 * Semantics follow cel-go as Kubernetes configures it: `&&`, `||` and the `all`/`exists` macros
 * absorb errors when another operand decides the result; int arithmetic is checked for int64
 * overflow; equality is heterogeneous; selecting through an optional keeps the chain optional.
 */
import { Gen, type GeneratedEval } from "./plan/gen.ts";
import { charge, elementPath, rethrowLimits } from "./plan/emit.ts";
import { planList, planMap } from "./plan/list-map.ts";
import { planConst } from "./plan/literal.ts";
import { planStruct } from "./plan/struct.ts";
import { planIdent, qualifiedName } from "./plan/ident.ts";
import { planOptionalAccessor } from "./plan/optional.ts";
import { planSelect } from "./plan/select.ts";
import { planAppend } from "./plan/comprehension.ts";
import { planConditional } from "./plan/conditional.ts";
import { planEquality } from "./plan/equality.ts";
import { planIndex, planOptionalIndex } from "./plan/indexing.ts";
import { planAndOr, planNot, planNotStrictlyFalse } from "./plan/logic.ts";
import { emitIsJsonMap } from "./plan/json-read.ts";
import {
  type Compiled,
  type CompileProblem,
  compatible,
  type Eval,
  emitValue,
  type PlanContext,
} from "./plan/node.ts";

export type { CompileProblem } from "./plan/node.ts";
import { HELPERS, type PlanGen } from "./plan/helpers.ts";
import { codegenMode } from "./configure.ts";
import type { CallNode, ComprehensionNode, Expr, ParsedExpression } from "./syntax/ast.ts";
import type { CelEnvironment } from "./env/environment.ts";
import type { CelRegex, Overload, TypeTag } from "./library/types.ts";
import { codePointLength, hasSurrogate } from "./runtime/code-points.ts";
import { matchesCost, stringConcatCost } from "./library/std.ts";
import { compileRegex } from "./regex.ts";
import type { SubexpressionIndex } from "./shared.ts";
import { HeldError, isLimitError, rangeError, withPosition } from "./runtime/errors.ts";
import { hasTag } from "./runtime/tags.ts";
import {
  CelError,
  CelMap,
  type CelValue,
  isPlainMap,
  mapGet,
  mapKeys,
  noSuchOverload,
} from "./runtime/values.ts";
import { type Activation, MemoEntry } from "./state/activation.ts";
import type { EvalState } from "./state/state.ts";

/** A compiled expression. `run` throws CelError; index.ts wraps it into a result. */
export interface Program {
  readonly parsed: ParsedExpression;
  /**
   * Whether the program now runs as generated code (codegen.ts) rather than closures; given an
   * activation, whether a run with it does: generated code that relies on Activation.json leaves an
   * activation without that promise to the closures.
   */
  generated(act?: Pick<Activation, "json">): boolean;
  /** The statically known result type, or `dyn`. */
  readonly type: TypeTag;
  /** Top-level variables the expression reads (so callers convert only those inputs). */
  readonly uses: ReadonlySet<string>;
  run(act: Activation, st: EvalState): CelValue;
}

/** Plans an operator call whose arguments are planned already. */
type BuiltinPlanner = (p: PlanContext, e: CallNode, args: readonly Compiled[]) => Compiled;

/** Operators with their own evaluation rules, by function name. */
const BUILTINS: ReadonlyMap<string, BuiltinPlanner> = new Map([
  ["_&&_", planAndOr],
  ["_||_", planAndOr],
  ["!_", planNot],
  ["_?_:_", planConditional],
  ["@not_strictly_false", planNotStrictlyFalse],
  ["_==_", planEquality],
  ["_!=_", planEquality],
  ["_[_]", planIndex],
  ["_[?_]", planOptionalIndex],
  ["@append", planAppend],
]);

/** Compiles a parsed expression. Returns the program and every problem found (none means it is good). */
export function compileParsed(
  parsed: ParsedExpression,
  env: CelEnvironment,
  shared?: SharedSubexpressions,
): { program: Program; problems: CompileProblem[] } {
  const c = new Compiler(parsed, env, shared);
  const root = c.plan(parsed.root);
  const nslots = c.slotCount;
  const uses = c.uses;
  let gen: GeneratedEval<Activation, EvalState> | undefined;
  // Whether the program may still switch to generated code, and how often it has run (codegen.ts).
  let pending = root.emit !== undefined;
  let runs = 0;
  // Whether the generated code holds the activation to its promise of JSON input (Activation.json).
  let needsJson = false;
  // Slots the generated code reads from the frame: none when it keeps them in locals.
  let genSlots = nslots;
  const program: Program = {
    parsed,
    type: root.type,
    uses,
    run(act: Activation, st: EvalState): CelValue {
      if (pending) {
        const mode = codegenMode();
        if (mode === "always" || (mode === "lazy" && ++runs >= 2)) {
          pending = false;
          const generated = generate(root, mode === "always");
          if (generated) {
            ({ ev: gen, needsJson } = generated);
            if (generated.localSlots) genSlots = 0;
          }
        }
      }
      // Generated code takes the activation and state as they are: a frame object per run is
      // built only by code that calls closures, which read it.
      if (gen !== undefined && (!needsJson || act.json === true))
        return gen(act, st, genSlots ? new Array<CelValue>(genSlots) : NO_SLOTS);
      return root.ev({ act, slots: nslots ? new Array<CelValue>(nslots) : [], st });
    },
    generated: (act) => gen !== undefined && (act === undefined || !needsJson || act.json === true),
  };
  roots.set(program, { root, slots: nslots });
  return { program, problems: c.problems };
}

/** Each program's compiled root and slot count, for writing several programs as one function. */
const roots = new WeakMap<Program, { readonly root: Compiled; readonly slots: number }>();

/**
 * Writes a program's evaluation into `g`, as its own generated function would have it; returns the
 * variable holding its value. For code that runs several programs in one function (sequence.ts).
 */
export function emitProgram(program: Program, g: PlanGen): string {
  const r = roots.get(program);
  if (!r) throw new Error("emitProgram: not a compiled program");
  return emitValue(g, r.root);
}

/** The frame slots a program's closures may read: the length of `S` its generated code needs. */
export function programSlots(program: Program): number {
  return roots.get(program)?.slots ?? 0;
}

/** The frame's slots for generated code that keeps them in locals: it never touches them. */
const NO_SLOTS: CelValue[] = [];

/** The root as one generated function; undefined if it cannot be built here (then the closures serve). */
function generate(
  root: Compiled,
  strict: boolean,
): { ev: GeneratedEval<Activation, EvalState>; needsJson: boolean; localSlots: boolean } | undefined {
  if (!root.emit) return undefined;
  try {
    const first = new Gen(HELPERS, false);
    root.emit(first);
    // Written again: with locals for the slots when the code calls no closure (the only other reader
    // of its slots), so V8 keeps loop variables in registers instead of storing each into the
    // frame's array; and with the paths the first
    // writing read more than once kept in locals (Gen.pathCache).
    const localSlots = !first.callsClosures;
    const g = new Gen(HELPERS, localSlots, first.pathReadCounts);
    const v = root.emit(g);
    return { ev: g.build<Activation, EvalState>(v), needsJson: g.assumesJson, localSlots };
  } catch (e) {
    // `new Function` refused (--disallow-code-generation-from-strings): the closures serve. Anything
    // else is a bug in an emitter, which tests ("always") must see; a server keeps the closures.
    if (strict && !(e instanceof EvalError)) throw e;
    return undefined;
  }
}

/**
 * `all` (false) or `exists` (true) as the parser expands them, by the value that decides it: the
 * accumulator starts at the other one, the loop runs while it does not hold the decisive value, each
 * step is `accu && pred` (`accu || pred`), and the result is the accumulator. Undefined for any
 * other comprehension.
 */
function shortCircuitMacro(e: ComprehensionNode): boolean | undefined {
  const decisive = e.macro === "exists" ? true : e.macro === "all" ? false : undefined;
  if (decisive === undefined) return undefined;
  const isAccu = (x: Expr | undefined) => x?.kind === "ident" && x.name === e.accuVar;
  const cond = e.loopCondition;
  const condArg = cond.kind === "call" && cond.fn === "@not_strictly_false" ? cond.args[0] : undefined;
  const step = e.loopStep;
  const shaped =
    e.accuInit.kind === "const" &&
    e.accuInit.value === !decisive &&
    (decisive
      ? condArg?.kind === "call" && condArg.fn === "!_" && isAccu(condArg.args[0])
      : isAccu(condArg)) &&
    step.kind === "call" &&
    step.fn === (decisive ? "_||_" : "_&&_") &&
    !step.target &&
    isAccu(step.args[0]) &&
    isAccu(e.result);
  return shaped ? decisive : undefined;
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

/** Members of a constant string list up to which generated code compares `x in [...]` one by one. */
const MAX_COMPARED_MEMBERS = 8;

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

/** What compileParsed needs to share subexpressions: their keys' memo places, and the index that keys the tree. */
export interface SharedSubexpressions {
  /** Canonical key → its place in the policy's memo, for the keys to share in this expression. */
  readonly ids: ReadonlyMap<string, number>;
  readonly index: SubexpressionIndex;
}

/**
 * A shared subexpression: its value comes from the activation's memo when an earlier expression (or
 * an earlier pass of a loop) computed it, and that evaluation's cost is charged again, so a reuse
 * costs what computing it would have. If the replayed cost would pass the limit it computes afresh,
 * so the limit error falls where it would have; a failed evaluation is not kept.
 */
function memoized(inner: Compiled, id: number): Compiled {
  const compute = inner.ev;
  return {
    ev: (f) => {
      const memo = f.act.memo;
      if (memo === undefined) return compute(f);
      const st = f.st;
      const hit = memo[id];
      if (hit !== undefined && st.cost + hit.cost <= st.costLimit) {
        st.cost += hit.cost;
        return hit.value;
      }
      const before = st.cost;
      const v = compute(f);
      if (hit === undefined) memo[id] = new MemoEntry(v, st.cost - before);
      return v;
    },
    emit: (g) => {
      const memo = g.temp();
      const hit = g.temp();
      const before = g.temp();
      const out = g.temp();
      g.line(`${memo} = A.memo; ${hit} = ${memo} === undefined ? undefined : ${memo}[${id}];`);
      g.line(
        `if (${hit} !== undefined && st.cost + ${hit}.cost <= st.costLimit) { st.cost += ${hit}.cost; ${out} = ${hit}.value; } else {`,
      );
      g.line(`${before} = st.cost;`);
      const v = emitValue(g, inner);
      g.line(
        `${out} = ${v}; if (${memo} !== undefined && ${hit} === undefined) ${memo}[${id}] = new ${g.h.MemoEntry}(${out}, st.cost - ${before}); }`,
      );
      return out;
    },
    type: inner.type,
    plain: inner.plain === true,
  };
}

class Compiler implements PlanContext {
  readonly problems: CompileProblem[] = [];
  readonly uses = new Set<string>();
  slotCount = 0;
  /** Comprehension and bind variables in scope: name → slot. */
  private scope: Map<string, number>[] = [];
  readonly accumulators = new Set<number>();
  readonly plainSlots = new Set<number>();
  readonly iterSlots = new Set<number>();

  constructor(
    private readonly parsed: ParsedExpression,
    readonly env: CelEnvironment,
    private readonly shared?: SharedSubexpressions,
  ) {}

  problem(code: CompileProblem["code"], message: string, id: number): void {
    this.problems.push({ code, message, offset: this.parsed.offsets.get(id) });
  }

  lookupLocal(name: string): number | undefined {
    for (let i = this.scope.length - 1; i >= 0; i--) {
      const slot = this.scope[i]?.get(name);
      if (slot !== undefined) return slot;
    }
    return undefined;
  }

  newSlot(): number {
    return this.slotCount++;
  }

  openScope(names: Map<string, number>): void {
    this.scope.push(names);
  }

  closeScope(): void {
    this.scope.pop();
  }

  plan(e: Expr): Compiled {
    const c = this.compileNode(e);
    const shared = this.shared;
    if (shared === undefined || !shared.index.shareable(e, (name) => this.lookupLocal(name) !== undefined))
      return c;
    const id = shared.ids.get(shared.index.key(e));
    // An optional chain's raw view has no memoized twin: such nodes compute their own.
    return id === undefined || c.raw !== undefined || c.chain !== undefined ? c : memoized(c, id);
  }

  private compileNode(e: Expr): Compiled {
    switch (e.kind) {
      case "const":
        return planConst(e);
      case "ident":
        return planIdent(this, e.name, e.id);
      case "select":
        return planSelect(this, e);
      case "call":
        return this.call(e);
      case "list":
        return planList(this, e.elements, e.optionalIndices, e.id);
      case "map":
        return planMap(this, e);
      case "struct":
        return planStruct(this, e);
      case "comprehension":
        return this.comprehension(e);
      case "bind": {
        const init = this.plan(e.init);
        const slot = this.newSlot();
        if (init.plain) this.plainSlots.add(slot);
        this.openScope(new Map([[e.name, slot]]));
        const body = this.plan(e.body);
        this.closeScope();
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
    }
  }

  private call(e: CallNode): Compiled {
    const builtin = e.target ? undefined : BUILTINS.get(e.fn);
    if (builtin !== undefined) return this.builtin(e, builtin);
    const list = e.args[1];
    if (
      e.fn === "@in" &&
      !e.target &&
      list?.kind === "list" &&
      list.elements.length > 0 &&
      list.optionalIndices.size === 0 &&
      list.elements.every((x) => x.kind === "const" && typeof x.value === "string")
    ) {
      // `x in ['a', 'b']`: a Set lookup for strings; other types compare as CEL does (never equal to a string).
      // cel-go charges a membership test one unit per list element.
      const cost = Math.max(1, list.elements.length);
      const members = new Set(list.elements.map((x) => (x as { value: string }).value));
      const needleC = this.plan(e.args[0] as Expr);
      const needle = needleC.ev;
      return {
        ev: (f) => {
          f.st.addCost(cost);
          const x = needle(f);
          return typeof x === "string" && members.has(x);
        },
        emit: (g) => {
          g.line(charge(cost));
          const x = emitValue(g, needleC);
          const t = g.temp();
          // A few members are compared in turn: a Set hashes the needle, and a string read from a
          // new request has no hash yet.
          const test =
            members.size <= MAX_COMPARED_MEMBERS
              ? `(${[...members].map((m) => `${x} === ${JSON.stringify(m)}`).join(" || ")})`
              : `${g.constant(members)}.has(${x})`;
          g.line(`${t} = typeof ${x} === "string" && ${test};`);
          return t;
        },
        type: "bool",
      };
    }
    // `ns.fn(args)` where `ns` is not a variable: the global function `ns.fn` (optional.of, math.greatest...).
    if (e.target) {
      const q = qualifiedName(e.target);
      if (
        q !== undefined &&
        this.lookupLocal(q.split(".")[0] as string) === undefined &&
        !this.env.variables.has(q.split(".")[0] as string)
      ) {
        const qualified = `${q}.${e.fn}`;
        if (this.env.functions.has(qualified))
          return this.function(
            qualified,
            e.id,
            e.args.map((a) => this.plan(a)),
            false,
          );
      }
    }
    if (e.target && e.fn === "bind" && qualifiedName(e.target) === "cel") {
      this.problem(
        "PE_CEL_UNKNOWN_FUNCTION",
        "cel.bind is not available: Kubernetes does not enable it (allow it with --cel-extras bind, or the celgate.dev/cel-extras annotation on the policy)",
        e.id,
      );
    }
    const args = e.target
      ? [this.plan(e.target), ...e.args.map((a) => this.plan(a))]
      : e.args.map((a) => this.plan(a));
    return (
      planOptionalAccessor(this, e, args) ??
      this.constantRegex(e, args) ??
      this.function(e.fn, e.id, args, e.target !== undefined)
    );
  }

  /**
   * `s.matches('<constant>')`: the pattern is compiled once, here, instead of being looked up in the
   * regex cache on every call. Same checks, order and cost as the library overload; a pattern that
   * does not compile takes the ordinary path, so its error surfaces when the call runs, as before.
   */
  private constantRegex(e: CallNode, args: readonly Compiled[]): Compiled | undefined {
    const member = e.target !== undefined;
    const node = member ? e.args[0] : e.args[1];
    if (e.fn !== "matches" || args.length !== 2 || node?.kind !== "const" || typeof node.value !== "string")
      return undefined;
    const overload = this.env.functions
      .get("matches")
      ?.find((o) => o.member === member && o.args[0] === "string" && o.args[1] === "string");
    if (!overload) return undefined;
    const pattern = node.value;
    let re: CelRegex;
    try {
      re = compileRegex(pattern);
    } catch {
      return undefined;
    }
    const subjectC = args[0] as Compiled;
    const subject = subjectC.ev;
    // The member overload is priced by size (its cost is matchesCost); the global form costs 1.
    const priced = overload.cost !== undefined;
    const patternSize = codePointLength(pattern);
    const id = e.id;
    const test = (s: CelValue, st: EvalState): boolean => {
      try {
        if (typeof s !== "string") throw noSuchOverload("matches", [s, pattern]);
        // One scan for surrogates serves the cost and the test: without any, the size in code
        // points is the length, and the pattern's size is known already.
        if (hasSurrogate(s)) {
          st.addCost(priced ? 1 + matchesCost(codePointLength(s), patternSize) : 1);
          return re.test(s);
        }
        st.addCost(priced ? 1 + matchesCost(s.length, patternSize) : 1);
        return re.testWithoutSurrogates(s);
      } catch (err) {
        return withPosition(err, id);
      }
    };
    return {
      ev: (f) => test(subject(f), f.st),
      emit: (g) => {
        const v = emitValue(g, subjectC);
        const t = g.temp();
        g.line(`${t} = ${g.constant(test)}(${v}, st);`);
        return t;
      },
      type: "bool",
    };
  }

  private function(name: string, id: number, args: Compiled[], member: boolean): Compiled {
    const all = this.env.functions.get(name);
    if (!all) {
      this.problem("PE_CEL_UNKNOWN_FUNCTION", `undeclared reference to '${name}' (in container '')`, id);
      return {
        ev: () => {
          throw new CelError(`undeclared reference to '${name}'`);
        },
        type: "dyn",
      };
    }
    const types = args.map((a) => a.type);
    const byArity = all.filter((o) => o.member === member && o.args.length === args.length);
    const candidates = byArity.filter((o) => o.args.every((t, i) => compatible(types[i] as TypeTag, t)));
    if (candidates.length === 0) {
      const sig = member ? `${types[0]}.(${types.slice(1).join(", ")})` : `(${types.join(", ")})`;
      const msg =
        byArity.length === 0 && all.every((o) => o.member !== member)
          ? `undeclared reference to '${name}' (in container '')${member ? ": it is not a method; call it as a function" : ": it is a method; call it as receiver." + name + "(...)"}`
          : `found no matching overload for '${name}' applied to '${sig}'`;
      this.problem("PE_CEL_UNKNOWN_FUNCTION", msg, id);
      return {
        ev: () => {
          throw new CelError(msg);
        },
        type: "dyn",
      };
    }
    const resultTypes = new Set(candidates.map((o) => o.result));
    const type = resultTypes.size === 1 ? (candidates[0] as Overload).result : "dyn";
    const apply = applier(name, id, args.length, candidates);
    return {
      ev: this.dispatch(
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

  private dispatch(name: string, id: number, args: Eval[], candidates: Overload[]): Eval {
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

  /** Operators with their own evaluation rules (short-circuit, error absorption, equality). */
  private builtin(e: CallNode, plan: BuiltinPlanner): Compiled {
    return plan(
      this,
      e,
      e.args.map((a) => this.plan(a)),
    );
  }

  private comprehension(e: ComprehensionNode): Compiled {
    const rangeC = this.plan(e.iterRange);
    const range = rangeC.ev;
    const accuInit = e.accuInit;
    const initC =
      accuInit.kind === "map"
        ? planMap(this, accuInit, true)
        : accuInit.kind === "list"
          ? planList(this, accuInit.elements, accuInit.optionalIndices, accuInit.id, true)
          : this.plan(accuInit);
    const init = initC.ev;
    const accuSlot = this.newSlot();
    this.accumulators.add(accuSlot);
    const v1 = this.newSlot();
    const v2 = e.iterVar2 !== undefined ? this.newSlot() : -1;
    const accuScope = new Map([[e.accuVar, accuSlot]]);
    const iterScope = new Map([[e.iterVar, v1]]);
    if (e.iterVar2 !== undefined) iterScope.set(e.iterVar2, v2);
    this.iterSlots.add(v1);
    if (v2 >= 0) this.iterSlots.add(v2);
    // A plain list's elements, a plain map's keys (strings) and its values are plain.
    if (rangeC.plain) for (const v of [v1, v2]) if (v >= 0) this.plainSlots.add(v);
    this.openScope(accuScope);
    this.openScope(iterScope);
    const condC = this.plan(e.loopCondition);
    const cond = condC.ev;
    const stepC = this.plan(e.loopStep);
    const step = stepC.ev;
    this.closeScope();
    const result = this.plan(e.result);
    this.closeScope();
    const two = v2 >= 0;
    const id = e.id;
    const macro = e.macro;
    const decisive = shortCircuitMacro(e);
    const pred = decisive === undefined ? undefined : stepC.operands?.[1];
    const resultType =
      macro === "all" || macro === "exists" || macro === "exists_one" || macro === "existsOne"
        ? "bool"
        : macro === "map" || macro === "filter" || macro === "transformList"
          ? "list"
          : result.type;
    return {
      ev: (f) => {
        const r = range(f);
        const slots = f.slots;
        const st = f.st;
        slots[accuSlot] = init(f);
        // The loop body is written out (not a per-evaluation closure): it runs for every element.
        if (Array.isArray(r)) {
          for (let i = 0; i < r.length; i++) {
            st.tick();
            st.addCost(1);
            if (two) {
              slots[v1] = BigInt(i);
              slots[v2] = r[i] as CelValue;
            } else slots[v1] = r[i] as CelValue;
            if (cond(f) !== true) break;
            try {
              slots[accuSlot] = step(f);
            } catch (err) {
              if (isLimitError(err)) throw err;
              (slots as unknown[])[accuSlot] = new HeldError(err);
            }
          }
        } else if (r instanceof CelMap || isPlainMap(r)) {
          for (const k of mapKeys(r)) {
            st.tick();
            st.addCost(1);
            slots[v1] = k;
            // Only when the macro names the value: reading one out of a JSON map converts it.
            if (two) slots[v2] = mapGet(r, k) as CelValue;
            if (cond(f) !== true) break;
            try {
              slots[accuSlot] = step(f);
            } catch (err) {
              if (isLimitError(err)) throw err;
              (slots as unknown[])[accuSlot] = new HeldError(err);
            }
          }
        } else {
          return withPosition(rangeError(r), id);
        }
        return result.ev(f);
      },
      emit: (g) => {
        // A JSON array straight from its map: each element is converted as the loop takes it.
        const r = rangeC.emitList ? rangeC.emitList(g) : emitValue(g, rangeC);
        // `all`/`exists`: the accumulator is a local boolean and the first error, not a slot.
        const res = pred ? g.temp() : "";
        const held = pred ? g.temp() : "";
        if (pred) g.line(`${res} = ${!decisive}; ${held} = undefined;`);
        else g.line(`${g.slot(accuSlot)} = ${emitValue(g, initC)};`);
        const loop = g.label();
        const i = g.temp();
        const keys = g.temp();
        const k = g.temp();
        const raw = rangeC.emitList ? g.temp() : "";
        const element = (slot: string): string =>
          raw
            ? `${raw} = ${r}[${i}]; if (typeof ${raw} === "number" || ${raw} === undefined || Array.isArray(${raw})) ${raw} = ${g.h.fromJson}(${raw}); ${slot} = ${raw};`
            : `${slot} = ${r}[${i}];`;
        // One loop for lists and maps (a map's keys are listed first), so the body is written once.
        g.line(`${keys} = undefined;`);
        g.line(
          `if (!Array.isArray(${r})) { if (${r} instanceof ${g.h.CelMap} || ${g.h.isPlainMap}(${r})) ${keys} = [...${g.h.mapKeys}(${r})]; else ${g.h.withPosition}(${g.h.rangeError}(${r}), ${id}); }`,
        );
        g.line(
          `${loop}: for (${i} = 0; ${i} < (${keys} === undefined ? ${r}.length : ${keys}.length); ${i}++) {`,
        );
        g.line(`st.tick(); ${charge(1)}`);
        g.line(`if (${keys} === undefined) {`);
        g.line(two ? `${g.slot(v1)} = BigInt(${i}); ${element(g.slot(v2))}` : element(g.slot(v1)));
        g.line(
          `} else { ${k} = ${keys}[${i}]; ${g.slot(v1)} = ${k};${two ? ` ${g.slot(v2)} = ${g.h.mapGet}(${r}, ${k});` : ""} }`,
        );
        // The paths read from the previous element are not this one's.
        g.resetPaths(elementPath(g, v1));
        if (two) g.resetPaths(elementPath(g, v2));
        if (pred) {
          // What the condition and `accu && pred` (`accu || pred`) come to, the accumulator being
          // the neutral value, the decisive one, or an error: the loop stops at the decisive value,
          // which absorbs any error; else the first error (or a non-bool's) is the result.
          g.line(`if (${res} === ${decisive}) break ${loop};`);
          g.line("try {");
          const p = emitValue(g, pred);
          g.line(
            `} catch (err) { ${rethrowLimits(g)} if (${held} === undefined) ${held} = err; continue ${loop}; }`,
          );
          g.line(`if (${p} === ${decisive}) ${res} = ${decisive};`);
          g.line(
            `else if (typeof ${p} !== "boolean" && ${held} === undefined) ${held} = ${g.h.errorAt}(${g.h.noSuchOverload}("${decisive ? "_||_" : "_&&_"}", [${!decisive}, ${p}]), ${e.loopStep.id});`,
          );
          g.line("}");
          g.line(`if (${res} !== ${decisive} && ${held} !== undefined) throw ${held};`);
          return res;
        }
        // The closure's body: the condition, then the step, whose error the accumulator holds.
        const c = emitValue(g, condC);
        g.line(`if (${c} !== true) break ${loop};`);
        g.line("try {");
        g.line(`${g.slot(accuSlot)} = ${emitValue(g, stepC)};`);
        g.line(`} catch (err) { ${rethrowLimits(g)} ${g.slot(accuSlot)} = new ${g.h.HeldError}(err); }`);
        g.line("}");
        return emitValue(g, result);
      },
      type: resultType,
    };
  }
}
