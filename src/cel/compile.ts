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
import { planIdent } from "./plan/ident.ts";
import { planSelect } from "./plan/select.ts";
import { planCall } from "./plan/call.ts";
import { type Compiled, type CompileProblem, emitValue, type PlanContext } from "./plan/node.ts";

export type { CompileProblem } from "./plan/node.ts";
import { HELPERS, type PlanGen } from "./plan/helpers.ts";
import { codegenMode } from "./configure.ts";
import type { ComprehensionNode, Expr, ParsedExpression } from "./syntax/ast.ts";
import type { CelEnvironment } from "./env/environment.ts";
import type { TypeTag } from "./library/types.ts";
import type { SubexpressionIndex } from "./shared.ts";
import { HeldError, isLimitError, rangeError, withPosition } from "./runtime/errors.ts";
import { CelMap, type CelValue, isPlainMap, mapGet, mapKeys } from "./runtime/values.ts";
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
        return planCall(this, e);
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
