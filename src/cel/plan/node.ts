/**
 * What the planner makes of a node, and what planning a node may ask of the planner.
 *
 * Each node kind has one file in plan/ (literal, ident, select, optional, indexing, logic,
 * conditional, equality, membership, call, dispatch, matches, list-map, struct, comprehension,
 * bind) that holds all of its tiers side by side, in this order:
 * - **resolution**: the type tags and overload candidates the closures dispatch on (the type checker,
 *   src/cel/check, has checked the expression before: the planner reports no problems);
 * - **closure**: the evaluation as a closure over a Frame, the tier every node has;
 * - **emitter**: the same evaluation written out as generated code (plan/gen.ts), statement for
 *   statement, where the kind has one.
 */
import type { CelEnvironment } from "../env/environment.ts";
import type { TypeTag } from "../runtime/tags.ts";
import type { ABSENT } from "../runtime/access.ts";
import { CelError, type CelValue } from "../runtime/values.ts";
import type { Activation } from "../state/activation.ts";
import type { EvalState } from "../state/state.ts";
import type { Expr } from "../syntax/ast.ts";
import type { Emit, PlanGen } from "./helpers.ts";

/** What a closure evaluates in: the activation, the slots of loop and bind variables, the state. */
export interface Frame {
  readonly act: Activation;
  readonly slots: CelValue[];
  readonly st: EvalState;
}

/** A node's closure. */
export type Eval = (f: Frame) => CelValue;

/** An optional chain's closure without the Optional wrapper: the value, or ABSENT for none. */
export type RawEval = (f: Frame) => CelValue | typeof ABSENT;

/** A node as planned: its closure, its emitter where it has one, and what its parent may use. */
export interface Compiled {
  readonly ev: Eval;
  readonly type: TypeTag;
  /**
   * For optional chains (`a.?b.?c`, `m[?k]`): the same evaluation without the Optional wrapper, the
   * value or ABSENT. `orValue`/`hasValue` on a chain read it, so a chain allocates no Optional per step.
   */
  readonly raw?: RawEval;
  /**
   * For a raw chain of field selections (`a.?b.?c`, `a.?b.c`): where it starts and the fields it
   * selects, so a longer chain is one evaluator with a loop instead of one closure per field.
   */
  readonly chain?: Chain;
  /** The same evaluation as generated code (plan/gen.ts); absent: the closure is called from there. */
  readonly emit?: Emit;
  /** `raw` as generated code. */
  readonly emitRaw?: Emit;
  /** For `&&` and `||`: the two operands, so `all` and `exists` can emit their predicate alone. */
  readonly operands?: readonly [Compiled, Compiled];
  /**
   * The value comes from JSON input (Activation.json): whatever object it is, or holds as a list
   * element, is a JSON map, never a map the evaluator built nor an instance of a value class. Its
   * fields are then read after a test of its type alone. Once a site has seen many shapes of
   * object, as a server's do, the `constructor` test emitIsJsonMap makes is a lookup in V8's
   * shared cache, a cost worth avoiding on every read.
   */
  readonly plain?: boolean;
  /**
   * For a plain field read, or a default on a plain optional chain: the same evaluation, except that
   * a JSON array read out of a JSON map is left as it came, its elements not yet converted (an
   * integral number not yet an int). For a comprehension, which converts each element as it takes
   * it: converting first meant a pass over the array at every read (half a microsecond of the 20
   * benchmark rules, which read arrays in 7 of their ranges).
   */
  readonly emitList?: Emit;
  /**
   * The value is a field path (none, for the start itself) from a value that stays the same while
   * generated code runs: a JSON root variable's, or a loop element's while the loop is on it. Reads
   * along it are kept for reuse when they repeat (Gen.pathCache).
   */
  readonly path?: ((g: PlanGen) => string) | undefined;
  /** A literal's value. */
  readonly literal?: { readonly value: CelValue };
}

/** A raw chain of field selections (Compiled.chain). */
export interface Chain {
  readonly base: RawEval;
  readonly baseEmit: Emit;
  /** The base's path (Compiled.path), when it has one. */
  readonly basePath?: ((g: PlanGen) => string) | undefined;
  /** The base's value comes from JSON input (Compiled.plain), and so does every field read. */
  readonly plain: boolean;
  readonly fields: readonly string[];
  readonly ids: readonly number[];
}

/** What planning a node may ask of the planner (plan/planner.ts). */
export interface PlanContext {
  readonly env: CelEnvironment;
  /** Top-level variables the expression reads. */
  readonly uses: Set<string>;
  /** Slots of comprehension accumulators, which may hold a HeldError. */
  readonly accumulators: Set<number>;
  /** Slots of loop and bind variables whose values come from JSON input (Compiled.plain). */
  readonly plainSlots: Set<number>;
  /** Slots of comprehension variables (a loop's element, or its index or key). */
  readonly iterSlots: Set<number>;
  /** Plans a child node, sharing it across the policy's expressions where it may be (plan/shared.ts). */
  plan(e: Expr): Compiled;
  /** The slot of a comprehension or bind variable in scope, innermost first. */
  lookupLocal(name: string): number | undefined;
  /** A new slot of the frame. */
  newSlot(): number;
  /** Opens a scope of comprehension or bind variables (name → slot); `closeScope` ends the innermost. */
  openScope(names: Map<string, number>): void;
  closeScope(): void;
}

/** A child's value in generated code: its emitter, or a call of its closure. */
export function emitValue(g: PlanGen, c: Compiled): string {
  return c.emit ? c.emit(g) : g.call(c.ev);
}

/** A child's raw (optional-chain) value in generated code. */
export function emitRawValue(g: PlanGen, c: Compiled, raw: RawEval): string {
  return c.emitRaw ? c.emitRaw(g) : g.call(raw);
}

/** Whether a statically known type admits a tag (either may be `dyn`). */
export function compatible(staticType: TypeTag, tag: TypeTag): boolean {
  return staticType === "dyn" || tag === "dyn" || staticType === tag;
}

/** A node that did not compile (its problem is recorded): evaluating it throws `message`. */
export function failingNode(message: string): Compiled {
  return {
    ev: () => {
      throw new CelError(message);
    },
    type: "dyn",
  };
}
