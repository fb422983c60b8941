/**
 * A policy's validations as one generated function (or a few, for a long list), run one after
 * another under the engine's per-expression rules (state/limits.ts): `startExpression`'s checks
 * before each (the budget, the deadline on every 16th expression, the per-call cost limit), written
 * out by `writeStartExpression`, and an error caught for each as its `Thrown` outcome.
 *
 * Run one by one, each validation cost the engine a call through its program's `run`, a call of its
 * own generated function (megamorphic: one site calls every program) and that function's setup
 * (docs/benchmarks.md has the figures). Written as one function, the validations also keep the policy's shared values in one frame.
 *
 * The engine (engine/evaluate.ts) reads the outcomes exactly as it reads the loop's: a value, or a
 * failure it words itself. Every validation runs before any messageExpression, as in Kubernetes.
 */
import { codegenMode } from "./configure.ts";
import { emitProgram, type Program, programSlots } from "./compile.ts";
import { Gen } from "./plan/gen.ts";
import { HELPERS } from "./plan/helpers.ts";
import type { Activation } from "./state/activation.ts";
import {
  BUDGET_SPENT,
  DEADLINE_PASSED,
  type ExpressionClock,
  now,
  Thrown,
  writeStartExpression,
} from "./state/limits.ts";
import type { EvalState } from "./state/state.ts";
import type { CelValue } from "./runtime/values.ts";
import { WeakCache } from "./weak-cache.ts";

/** What the sequence reads and advances of the engine's evaluation (state/limits.ts). */
export type SequenceClock = ExpressionClock;

/**
 * One validation's outcome. The outcomes of a run: undefined when every validation was true, else
 * one entry per validation, undefined for those after one that ended the policy.
 */
export type SequenceOutcome = CelValue | Thrown | typeof BUDGET_SPENT | typeof DEADLINE_PASSED;

type Chunk = (
  act: Activation,
  st: EvalState,
  slots: CelValue[],
  clock: SequenceClock,
  out: SequenceOutcome[] | undefined,
) => SequenceOutcome[] | undefined;

interface GeneratedChunk {
  readonly run: Chunk;
  /** Index of the chunk's last program. */
  readonly last: number;
  /** Length of the slots array its closures read (0: it keeps them in locals). */
  readonly slots: number;
}

/**
 * Generated code past roughly this many characters goes into a new function. V8 optimizes none
 * over `--max-optimized-bytecode-size` (configure.ts raises it), and a smaller function is compiled
 * sooner and runs no slower than one large function or one function per validation.
 */
const CHUNK_CHARS = 40_000;

/** The outcomes once a first validation was not true: the ones before it were. */
function passedBefore(n: number, i: number): SequenceOutcome[] {
  const out = new Array<SequenceOutcome>(n);
  for (let k = 0; k < i; k++) out[k] = true;
  return out;
}

/** Records a validation that could not start, which ends the policy. */
function haltAt(
  out: SequenceOutcome[] | undefined,
  n: number,
  i: number,
  why: typeof BUDGET_SPENT | typeof DEADLINE_PASSED,
): SequenceOutcome[] {
  const o = out ?? passedBefore(n, i);
  o[i] = why;
  return o;
}

/** What a sequence's code calls: the nodes' helpers and the per-expression rules. */
const SEQUENCE_HELPERS = {
  ...HELPERS,
  BUDGET_SPENT,
  DEADLINE_PASSED,
  now,
  Thrown,
  haltAt,
  passedBefore,
};

type SequenceGen = Gen<typeof SEQUENCE_HELPERS>;

const NO_SLOTS: CelValue[] = [];

/**
 * Writes programs [from, to) into `g`, each under the per-expression rules (state/limits.ts) that
 * engine/evaluate.ts runExpr applies to one expression; `limit` is the per-call cost limit.
 */
function emitChunk(
  g: SequenceGen,
  programs: readonly Program[],
  from: number,
  to: number,
  limit: number,
): void {
  const n = programs.length;
  const count = g.temp();
  const r = g.temp();
  for (let i = from; i < to; i++) {
    // Each program's loop variables are its own; root variables' paths are shared by all.
    g.program = i;
    const start = writeStartExpression(
      {
        clock: "C",
        st: "st",
        count,
        budgetSpent: g.h.BUDGET_SPENT,
        deadlinePassed: g.h.DEADLINE_PASSED,
        now: g.h.now,
        halt: (why) => `return ${g.h.haltAt}(out, ${n}, ${i}, ${why});`,
      },
      limit,
    );
    for (const line of start) g.line(line);
    g.line("try {");
    const v = emitProgram(programs[i] as Program, g);
    g.line(`${r} = ${v};`);
    g.line(`} catch (err) { ${r} = new ${g.h.Thrown}(err, st.costLimit >= C.budgetEnd); }`);
    g.line(
      `if (${r} !== true) { if (out === undefined) out = ${g.h.passedBefore}(${n}, ${i}); out[${i}] = ${r}; if (${r} instanceof ${g.h.Thrown} && ${r}.halts) return out; }`,
    );
    g.line(`else if (out !== undefined) out[${i}] = true;`);
  }
}

/** A chunk's programs, [from, to), and its first writing. */
interface FirstWriting {
  readonly from: number;
  readonly to: number;
  readonly first: SequenceGen;
}

/**
 * The chunks, written a first time: programs are added to one until its code passes CHUNK_CHARS.
 * That writing also tells whether the chunk calls closures and which paths it reads more than once.
 */
function firstWritings(programs: readonly Program[], limit: number): FirstWriting[] {
  const chunks: FirstWriting[] = [];
  let from = 0;
  let g = new Gen(SEQUENCE_HELPERS, false);
  for (let i = 0; i < programs.length; i++) {
    emitChunk(g, programs, i, i + 1, limit);
    if (g.size >= CHUNK_CHARS || i === programs.length - 1) {
      chunks.push({ from, to: i + 1, first: g });
      from = i + 1;
      g = new Gen(SEQUENCE_HELPERS, false);
    }
  }
  return chunks;
}

function generateChunk(
  programs: readonly Program[],
  { from, to, first }: FirstWriting,
  limit: number,
): { chunk: GeneratedChunk; assumesJson: boolean } {
  // As for one program (compile.ts generate): written again, with the slots in locals when the code
  // calls no closure, and the paths read more than once kept (across the programs, for the root
  // variables': `object.spec` is read by most Pod Security rules).
  const localSlots = !first.callsClosures;
  const g = new Gen(SEQUENCE_HELPERS, localSlots, first.pathReadCounts);
  emitChunk(g, programs, from, to, limit);
  let slots = 0;
  if (!localSlots)
    for (let i = from; i < to; i++) slots = Math.max(slots, programSlots(programs[i] as Program));
  const run = g.buildFunction<Chunk>("sequence", "C, out", ["return out;"]);
  return { chunk: { run, last: to - 1, slots }, assumesJson: g.assumesJson };
}

/** A number for each program a sequence was asked for, to key the sequences by. */
const programIds = new WeakMap<Program, number>();
let nextProgramId = 0;
/** Held weakly, as cel/index.ts holds programs: a sequence lives as long as a policy that runs it. */
const sequences = new WeakCache<ProgramSequence>();

/**
 * The sequence of these programs, shared by every policy that runs the same ones: compiled programs
 * are shared by source (cel/index.ts), so a policy set loaded again (a reload, or the same policy in
 * another set) finds its sequences generated and optimized already instead of writing them anew and
 * waiting for TurboFan to optimize them again on its background thread.
 */
export function sequenceOf(programs: readonly Program[], limit: number): ProgramSequence {
  let key = `${limit}`;
  for (const p of programs) {
    let id = programIds.get(p);
    if (id === undefined) {
      id = nextProgramId++;
      programIds.set(p, id);
    }
    key += `,${id}`;
  }
  let sequence = sequences.get(key);
  if (sequence === undefined) {
    sequence = new ProgramSequence(programs, limit);
    sequences.set(key, sequence);
  }
  return sequence;
}

/**
 * Programs that run in order against one activation, each under its own per-call cost limit, as a
 * policy's validations do. Before it is generated (lazily, as a program is: configure.ts) or when it
 * cannot be, `ready` says no and the engine runs the programs one by one.
 */
export class ProgramSequence {
  private chunks: readonly GeneratedChunk[] | undefined;
  private pending: boolean;
  private asks = 0;
  /** Whether the generated code holds the activation to its promise of JSON input. */
  private needsJson = false;

  constructor(
    private readonly programs: readonly Program[],
    /** The per-call cost limit each program runs under (below the budget's end). */
    private readonly limit: number,
  ) {
    this.pending = programs.length > 0;
  }

  /** How many functions the sequence was generated as: 0 until it is (or if it cannot be). */
  get functions(): number {
    return this.chunks?.length ?? 0;
  }

  /** Whether `run` may serve this activation; in lazy mode the second ask generates the code. */
  ready(act: Activation): boolean {
    // Asked every time: a sequence is shared by policies (sequenceOf), and "never" holds for all.
    const mode = codegenMode();
    if (mode === "never") return false;
    if (this.pending) {
      if (mode === "always" || ++this.asks >= 2) {
        this.pending = false;
        this.generate(mode === "always");
      }
    }
    return this.chunks !== undefined && (!this.needsJson || act.json === true);
  }

  /** Runs every program until one ends the policy; see SequenceOutcome. Only once `ready`. */
  run(act: Activation, st: EvalState, clock: SequenceClock): SequenceOutcome[] | undefined {
    const chunks = this.chunks as readonly GeneratedChunk[];
    let out: SequenceOutcome[] | undefined;
    for (const c of chunks) {
      out = c.run(act, st, c.slots > 0 ? new Array<CelValue>(c.slots) : NO_SLOTS, clock, out);
      // An ended policy leaves its later outcomes empty: the rest of the chunks do not run.
      if (out !== undefined && out[c.last] === undefined) break;
    }
    return out;
  }

  private generate(strict: boolean): void {
    try {
      const chunks: GeneratedChunk[] = [];
      for (const writing of firstWritings(this.programs, this.limit)) {
        const { chunk, assumesJson } = generateChunk(this.programs, writing, this.limit);
        chunks.push(chunk);
        if (assumesJson) this.needsJson = true;
      }
      this.chunks = chunks;
    } catch (e) {
      // As compile.ts generate: `new Function` refused leaves the programs to run one by one; any
      // other failure is a bug in an emitter, which tests ("always") must see.
      if (strict && !(e instanceof EvalError)) throw e;
    }
  }
}
