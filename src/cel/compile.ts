/**
 * The CEL compiler's driver: a parsed expression the type checker (check/) accepted becomes a
 * Program. The planner (plan/planner.ts) turns it into a tree of closures, each node with the emitter of its
 * generated form where it has one. A program runs its closures at first and switches to one
 * generated function (written twice: `generate`) when it runs again, as the codegen mode says
 * (configure.ts). Every expression is compiled once; evaluation never parses or resolves.
 *
 * Semantics follow cel-go as Kubernetes configures it: `&&`, `||` and the `all`/`exists` macros
 * absorb errors when another operand decides the result; int arithmetic is checked for int64
 * overflow; equality is heterogeneous; selecting through an optional keeps the chain optional.
 */
import { Gen, type GeneratedEval } from "./plan/gen.ts";
import { HELPERS, type PlanGen } from "./plan/helpers.ts";
import type { CoverageHook } from "./plan/coverage.ts";
import { type Compiled, emitValue } from "./plan/node.ts";
import { Planner } from "./plan/planner.ts";
import type { SharedSubexpressions } from "./plan/shared.ts";
import { codegenMode } from "./configure.ts";
import type { ParsedExpression } from "./syntax/ast.ts";
import type { CelEnvironment } from "./env/environment.ts";
import type { TypeTag } from "./library/types.ts";
import type { CelValue } from "./runtime/values.ts";
import type { Activation } from "./state/activation.ts";
import type { EvalState } from "./state/state.ts";

/** A compiled expression. `run` throws CelError; index.ts wraps it into a result. */
export interface Program {
  readonly parsed: ParsedExpression;
  /**
   * Whether the program now runs as generated code (plan/gen.ts) rather than closures; given an
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

/** Compiles a parsed expression, which the type checker accepted (index.ts compile checks it first). */
export function compileParsed(
  parsed: ParsedExpression,
  env: CelEnvironment,
  shared?: SharedSubexpressions,
  /** Counts what runs (plan/coverage.ts): the nodes keep only their closures, never generated code. */
  coverage?: CoverageHook,
): Program {
  const c = new Planner(env, shared, coverage);
  const root = c.plan(parsed.root);
  const nslots = c.slotCount;
  const uses = c.uses;
  let gen: GeneratedEval<Activation, EvalState> | undefined;
  // Whether the program may still switch to generated code, and how often it has run (configure.ts).
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
  return program;
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
