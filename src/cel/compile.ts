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
import { planList, planMap } from "./plan/list-map.ts";
import { planConst } from "./plan/literal.ts";
import { planStruct } from "./plan/struct.ts";
import { planIdent } from "./plan/ident.ts";
import { planSelect } from "./plan/select.ts";
import { planCall } from "./plan/call.ts";
import { planBind } from "./plan/bind.ts";
import { planComprehension } from "./plan/comprehension.ts";
import { type Compiled, type CompileProblem, emitValue, type PlanContext } from "./plan/node.ts";

export type { CompileProblem } from "./plan/node.ts";
import { HELPERS, type PlanGen } from "./plan/helpers.ts";
import { codegenMode } from "./configure.ts";
import type { Expr, ParsedExpression } from "./syntax/ast.ts";
import type { CelEnvironment } from "./env/environment.ts";
import type { TypeTag } from "./library/types.ts";
import type { SubexpressionIndex } from "./shared.ts";
import type { CelValue } from "./runtime/values.ts";
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
        return planComprehension(this, e);
      case "bind":
        return planBind(this, e);
    }
  }
}
