/**
 * Coverage of one expression (`celgate test --coverage`): which of the nodes its author wrote were
 * evaluated, and which outcomes its branches took. The planner hands each node it plans to
 * `instrument` (planner.ts), which wraps the node's closure with a counter; an expression compiled
 * without coverage is planned as before, so serving pays nothing for it.
 *
 * What counts:
 * - a **node**: every node of the source except constants (a constant is evaluated when its parent
 *   is), and except the parts a macro's expansion adds (the accumulator, its initial value, the
 *   loop condition, the step around the predicate): the predicate and the range count, as written;
 * - a **branch**: both outcomes of `&&` and `||`; the condition of `?:` true and false (an `optMap`
 *   is one, its optional present and absent); a comprehension's range empty and not empty; the
 *   outcome of `all`, `exists` and `exists_one` true and false; an optional selection (`a.?b`,
 *   `m[?k]`) present and absent; and the expression's own value true and false, when it is a bool.
 *
 * An instrumented node keeps only its closure (and its raw form, for optional chains, which changes
 * what its parent plans): no generated code, no fused chain, no shared subexpressions, so that every
 * node that runs is counted. Values, errors and costs are those of the closures, which the tiers'
 * differential tests hold equal to the generated code's.
 */
import { ABSENT } from "../runtime/access.ts";
import { type CelValue, isMap, mapSize, Optional } from "../runtime/values.ts";
import type { CallNode, ComprehensionNode, Expr, ParsedExpression } from "../syntax/ast.ts";
import type { Compiled, Eval, RawEval } from "./node.ts";

/** What the planner asks of a coverage recorder (planner.ts). */
export interface CoverageHook {
  instrument(e: Expr, c: Compiled): Compiled;
}

/** A branch's kind, and so the names of its two outcomes. */
export type BranchKind = "logic" | "condition" | "optMap" | "range" | "quantifier" | "optional" | "result";

/** The names of each kind's outcomes, first and second. */
export const OUTCOMES: Readonly<Record<BranchKind, readonly [string, string]>> = {
  logic: ["true", "false"],
  condition: ["true", "false"],
  optMap: ["present", "absent"],
  range: ["non-empty", "empty"],
  quantifier: ["true", "false"],
  optional: ["present", "absent"],
  result: ["true", "false"],
};

/** One counted thing of an expression, with how often it was evaluated or taken. */
export interface CoveragePoint {
  readonly kind: "node" | "branch";
  /** The node it belongs to, and that node's source offset (UTF-16 units). */
  readonly id: number;
  readonly offset: number | undefined;
  /** For a branch: its kind and which outcome (0 the first of OUTCOMES, 1 the second). */
  readonly branch?: BranchKind;
  readonly outcome?: 0 | 1;
  readonly hits: number;
  /** For a node: the nearest counted node it stands in (none for the root). */
  readonly parent?: number | undefined;
}

/** What to record after a node's value is known. */
type After = (v: CelValue | typeof ABSENT) => void;

/** Counters of one expression's nodes and branches; filled by the closures `instrument` wraps. */
export class ExpressionCoverage implements CoverageHook {
  /** Node ids counted, in source order of discovery, with their counters. */
  private readonly nodes = new Map<number, { hits: number; parent: number | undefined }>();
  /** Branches by node id and kind: the two outcomes' counters. */
  private readonly branches = new Map<string, Counters>();
  /**
   * Nodes the planner planned. One it resolves with its parent (`variables` in `variables.x`) is
   * never planned on its own: it runs when its parent does, and is not counted apart.
   */
  private readonly planned = new Set<number>();
  /** What each node's value tells a branch (its own, or its parent's). */
  private readonly afters = new Map<number, After[]>();

  /** `booleanResult`: the expression's value is a bool (its checked type), whose two outcomes count. */
  constructor(
    readonly parsed: ParsedExpression,
    booleanResult: boolean,
  ) {
    const root = parsed.root;
    this.walk(root, undefined);
    // The root's value is its `&&`'s or its `all`'s outcome when it is one: counted once.
    const own = [...this.branches.values()].some(
      (b) => b.id === root.id && (b.kind === "logic" || b.kind === "quantifier"),
    );
    if (booleanResult && !own)
      this.addBranch(root.id, "result", (v, b) => outcome(b, v === true, v === false));
  }

  /** Every point, nodes first then branches, each in the order the walk met them. */
  points(): CoveragePoint[] {
    const offsets = this.parsed.offsets;
    const out: CoveragePoint[] = [];
    for (const [id, n] of this.nodes)
      if (this.planned.has(id))
        out.push({ kind: "node", id, offset: offsets.get(id), hits: n.hits, parent: n.parent });
    for (const b of this.branches.values())
      if (this.planned.has(b.from))
        for (const o of [0, 1] as const)
          out.push({
            kind: "branch",
            id: b.id,
            offset: offsets.get(b.id),
            branch: b.kind,
            outcome: o,
            hits: b.hits[o],
          });
    return out;
  }

  /** Adds another run's counters of the same source (the same policy loaded by two suites). */
  add(other: ExpressionCoverage): void {
    for (const [id, n] of other.nodes) {
      const mine = this.nodes.get(id);
      if (mine) mine.hits += n.hits;
    }
    for (const [key, b] of other.branches) {
      const mine = this.branches.get(key);
      if (mine) {
        mine.hits[0] += b.hits[0];
        mine.hits[1] += b.hits[1];
      }
    }
  }

  instrument(e: Expr, c: Compiled): Compiled {
    this.planned.add(e.id);
    const node = this.nodes.get(e.id);
    const afters = this.afters.get(e.id);
    if (node === undefined && afters === undefined) return c;
    const after = afters === undefined ? undefined : afters.length === 1 ? afters[0] : all(afters);
    const ev = counted(c.ev, node, after);
    const raw = c.raw === undefined ? undefined : counted(c.raw, node, after);
    return raw === undefined ? { ev, type: c.type } : { ev, raw, type: c.type };
  }

  // --- which nodes and branches an expression has --------------------------------------------------

  private walk(e: Expr, parent: number | undefined): void {
    if (e.kind !== "const") this.nodes.set(e.id, { hits: 0, parent });
    const me = e.kind === "const" ? parent : e.id;
    switch (e.kind) {
      case "const":
      case "ident":
        return;
      case "select":
        if (e.optional) this.addBranch(e.id, "optional", present);
        this.walk(e.operand, me);
        return;
      case "call":
        this.walkCall(e, parent);
        return;
      case "list":
        for (const x of e.elements) this.walk(x, me);
        return;
      case "map":
        for (const x of e.entries) {
          this.walk(x.key, me);
          this.walk(x.value, me);
        }
        return;
      case "struct":
        for (const x of e.fields) this.walk(x.value, me);
        return;
      case "comprehension":
        this.walkComprehension(e);
        return;
      case "bind":
        this.walk(e.init, me);
        this.walk(e.body, me);
        return;
    }
  }

  private walkCall(e: CallNode, parent: number | undefined): void {
    const opt = optMapParts(e);
    if (opt !== undefined) {
      // An `optMap`/`optFlatMap` as its author wrote it: the receiver, the body, present or absent.
      this.nodes.delete(e.id);
      this.addBranchAt(opt.receiver.id, e.id, "optMap", present);
      this.walk(opt.receiver, parent);
      this.walk(opt.body, parent);
      return;
    }
    if (e.fn === "_&&_" || e.fn === "_||_")
      this.addBranch(e.id, "logic", (v, b) => outcome(b, v === true, v === false));
    if (e.fn === "_[?_]") this.addBranch(e.id, "optional", present);
    if (e.fn === "_?_:_") {
      const cond = e.args[0] as Expr;
      this.addBranchAt(cond.id, e.id, "condition", (v, b) => outcome(b, v === true, v === false));
    }
    if (e.target) this.walk(e.target, e.id);
    for (const a of e.args) this.walk(a, e.id);
  }

  private walkComprehension(e: ComprehensionNode): void {
    this.addBranchAt(e.iterRange.id, e.id, "range", (v, b) => {
      const n = Array.isArray(v) ? v.length : isMap(v as CelValue) ? mapSize(v as never) : undefined;
      if (n !== undefined) b.hits[n > 0 ? 0 : 1]++;
    });
    if (e.macro === "all" || e.macro === "exists" || e.macro === "exists_one" || e.macro === "existsOne")
      this.addBranch(e.id, "quantifier", (v, b) => outcome(b, v === true, v === false));
    this.walk(e.iterRange, e.id);
    for (const part of macroParts(e)) this.walk(part, e.id);
  }

  /** A branch of node `id` whose outcome is read from that node's own value. */
  private addBranch(
    id: number,
    kind: BranchKind,
    record: (v: CelValue | typeof ABSENT, b: Counters) => void,
  ): void {
    this.addBranchAt(id, id, kind, record);
  }

  /** A branch of node `owner` whose outcome is read from node `from`'s value (a condition, a range). */
  private addBranchAt(
    from: number,
    owner: number,
    kind: BranchKind,
    record: (v: CelValue | typeof ABSENT, b: Counters) => void,
  ): void {
    const key = `${owner}:${kind}`;
    if (this.branches.has(key)) return;
    const b: Counters = { id: owner, from, kind, hits: [0, 0] };
    this.branches.set(key, b);
    const list = this.afters.get(from) ?? [];
    list.push((v) => record(v, b));
    this.afters.set(from, list);
  }
}

/** A branch: the node it belongs to, its kind, its two outcomes' counters. */
interface Counters {
  readonly id: number;
  /** The node whose value decides the outcome. */
  readonly from: number;
  readonly kind: BranchKind;
  readonly hits: [number, number];
}

function outcome(b: Counters, first: boolean, second: boolean): void {
  if (first) b.hits[0]++;
  else if (second) b.hits[1]++;
}

function present(v: CelValue | typeof ABSENT, b: Counters): void {
  if (v === ABSENT) b.hits[1]++;
  else if (v instanceof Optional) b.hits[v.hasValue() ? 0 : 1]++;
  else b.hits[0]++;
}

function all(afters: readonly After[]): After {
  return (v) => {
    for (const a of afters) a(v);
  };
}

/** A closure (or raw closure) that counts its node and hands its value on. */
function counted<F extends Eval | RawEval>(
  inner: F,
  node: { hits: number } | undefined,
  after: After | undefined,
): F {
  if (after === undefined) {
    const n = node as { hits: number };
    return ((f) => {
      n.hits++;
      return inner(f);
    }) as F;
  }
  return ((f) => {
    if (node) node.hits++;
    const v = inner(f);
    after(v);
    return v;
  }) as F;
}

// --- the parts of an expansion its author wrote ------------------------------------------------------

/** The author's parts of a macro's loop: the predicate, the filter, the transform (parse.ts's expansions). */
function macroParts(e: ComprehensionNode): Expr[] {
  const step = e.loopStep;
  if (step.kind !== "call") return [];
  if ((step.fn === "_&&_" || step.fn === "_||_") && isAccu(step.args[0], e)) return [step.args[1] as Expr];
  if (step.fn === "_?_:_") {
    const [cond, then] = step.args as [Expr, Expr, Expr];
    if (e.macro === "filter") return [cond];
    const value = appended(then, e);
    return value === undefined ? [cond] : [cond, value];
  }
  const value = appended(step, e);
  return value === undefined ? [] : [value];
}

/** The value an `@append`/`@mapInsert` step adds to the accumulator. */
function appended(step: Expr, e: ComprehensionNode): Expr | undefined {
  if (step.kind !== "call" || (step.fn !== "@append" && step.fn !== "@mapInsert")) return undefined;
  if (!isAccu(step.args[0], e)) return undefined;
  return step.args[step.args.length - 1];
}

function isAccu(x: Expr | undefined, e: ComprehensionNode): boolean {
  return x?.kind === "ident" && x.name === e.accuVar;
}

/** `r.optMap(v, body)` / `r.optFlatMap(v, body)` as parse.ts expands it: its receiver and body. */
function optMapParts(e: CallNode): { receiver: Expr; body: Expr } | undefined {
  if (e.fn !== "_?_:_") return undefined;
  const [cond, some, none] = e.args as [Expr, Expr, Expr];
  if (cond.kind !== "call" || cond.fn !== "hasValue" || cond.target === undefined) return undefined;
  if (none.kind !== "call" || none.fn !== "optional.none" || none.args.length !== 0) return undefined;
  const bind = some.kind === "call" && some.fn === "optional.of" ? some.args[0] : some;
  if (bind?.kind !== "bind") return undefined;
  return { receiver: cond.target, body: bind.body };
}
