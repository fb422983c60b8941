/**
 * Subexpressions a policy's expressions have in common, so that one evaluation of a policy can
 * reuse a value instead of computing it again: Pod Security style rules each build the same list of
 * every container (`object.spec.containers + object.spec.?initContainers.orValue([]) + ...`), and
 * a rule that tests the whole object inside a loop recomputes it per element.
 *
 * A subexpression is shared when it is a call or a comprehension (a bare field read is cheaper to
 * repeat than to look up), reads only the request's own variables (`object`, `oldObject`,
 * `request`, `params`, `namespaceObject`: fixed for one policy evaluation; `variables` are cached
 * on their own and charged once, `authorizer` is left alone), and stands in two places or more
 * (or in a loop that binds nothing it reads, where one place runs once per element).
 * Two places hold the same subexpression when their canonical keys are equal: the same tree,
 * constants compared by type and value, node ids ignored.
 *
 * The evaluator (`memoized`, below) reuses a value only where that cannot be told from
 * computing it: it charges the cost the first evaluation took, and computes afresh whenever the
 * replayed cost would cross the limit (so a limit error falls where it would have) or the first
 * evaluation failed.
 */
import { MemoEntry } from "../state/activation.ts";
import { children, type Expr } from "../syntax/ast.ts";
import { type Compiled, emitValue } from "./node.ts";
import { REQUEST_VARIABLES } from "../env/environment.ts";
import { CelType, UInt } from "../runtime/values.ts";

let unique = 0;

function constKey(v: unknown): string {
  switch (typeof v) {
    case "bigint":
      return `i${v}`;
    case "number":
      return Object.is(v, -0) ? "d-0" : `d${v}`;
    case "string":
      return `s${JSON.stringify(v)}`;
    case "boolean":
      return v ? "T" : "F";
    default:
      if (v === null) return "N";
      if (v instanceof UInt) return `u${v.value}`;
      if (v instanceof Uint8Array) return `b${Buffer.from(v).toString("hex")}`;
      if (v instanceof CelType) return `t${String(v)}`;
      // Anything else is never equal to another constant: no sharing rather than a wrong one.
      return `?${unique++}`;
  }
}

/** Canonical keys and free variables of the nodes of some expressions, computed once per node. */
export class SubexpressionIndex {
  private readonly keys = new WeakMap<Expr, string>();
  private readonly free = new WeakMap<Expr, ReadonlySet<string>>();

  key(e: Expr): string {
    let k = this.keys.get(e);
    if (k === undefined) {
      k = this.computeKey(e);
      this.keys.set(e, k);
    }
    return k;
  }

  /** Identifiers `e` reads that it does not bind itself. */
  freeIdents(e: Expr): ReadonlySet<string> {
    let f = this.free.get(e);
    if (f === undefined) {
      f = this.computeFree(e);
      this.free.set(e, f);
    }
    return f;
  }

  /** Whether `e` is worth sharing and reads only the request's variables (none of them rebound by `bound`). */
  shareable(e: Expr, bound: (name: string) => boolean): boolean {
    if (e.kind !== "call" && e.kind !== "comprehension") return false;
    const free = this.freeIdents(e);
    if (free.size === 0) return false;
    for (const name of free) if (!REQUEST_VARIABLES.has(name) || bound(name)) return false;
    return true;
  }

  private computeKey(e: Expr): string {
    const k = (x: Expr) => this.key(x);
    switch (e.kind) {
      case "const":
        return constKey(e.value);
      case "ident":
        return `@${e.name}`;
      case "select":
        return `(${k(e.operand)}${e.testOnly ? "?has" : ""}${e.optional ? ".?" : "."}${JSON.stringify(e.field)})`;
      case "call":
        return `(${JSON.stringify(e.fn)}${e.target ? ` ^${k(e.target)}` : ""}${e.args.map((a) => ` ${k(a)}`).join("")})`;
      case "list":
        return `[${e.elements.map((x, i) => `${e.optionalIndices.has(i) ? "?" : ""}${k(x)}`).join(",")}]`;
      case "map":
        return `{${e.entries.map((x) => `${x.optional ? "?" : ""}${k(x.key)}:${k(x.value)}`).join(",")}}`;
      case "struct":
        return `${JSON.stringify(e.typeName)}{${e.fields.map((x) => `${x.optional ? "?" : ""}${JSON.stringify(x.name)}:${k(x.value)}`).join(",")}}`;
      case "comprehension":
        return `(comp ${JSON.stringify([e.macro ?? "", e.iterVar, e.iterVar2 ?? "", e.accuVar])} ${k(e.iterRange)} ${k(e.accuInit)} ${k(e.loopCondition)} ${k(e.loopStep)} ${k(e.result)})`;
      case "bind":
        return `(bind ${JSON.stringify(e.name)} ${k(e.init)} ${k(e.body)})`;
    }
  }

  private computeFree(e: Expr): ReadonlySet<string> {
    if (e.kind === "ident") return new Set([e.name]);
    const out = new Set<string>();
    for (const c of children(e))
      for (const n of this.freeIdents(c.expr)) if (!c.binds.includes(n)) out.add(n);
    return out;
  }

  /**
   * Calls `visit` on every node of `root` with whether a name is bound around it (by an enclosing
   * comprehension or bind), as the compiler's scope will see it, and whether the node is in a
   * comprehension's loop (its condition or step), where it runs once per element.
   */
  walk(root: Expr, visit: (e: Expr, bound: (name: string) => boolean, inLoop: boolean) => void): void {
    const scopes: (readonly string[])[] = [];
    const bound = (name: string) => scopes.some((s) => s.includes(name));
    let loops = 0;
    const go = (e: Expr): void => {
      visit(e, bound, loops > 0);
      for (const c of children(e)) {
        scopes.push(c.binds);
        if (c.perElement) loops++;
        go(c.expr);
        if (c.perElement) loops--;
        scopes.pop();
      }
    };
    go(root);
  }
}

/**
 * The subexpressions one policy's expressions share, by canonical key, each with its place in the
 * policy's memo: 0, 1, 2 and so on, so that an evaluation's memo is a short array. (A Map keyed by
 * numbers cost a twentieth of a 20-rule review in lookups.)
 */
export type SharedKeys = ReadonlyMap<string, number>;

/**
 * The canonical keys of the shareable subexpressions that stand in two places or more across
 * `roots`, or in a loop (where one place runs once per element, and nothing it reads changes).
 */
export function sharedKeys(roots: readonly Expr[], index = new SubexpressionIndex()): SharedKeys {
  const seen = new Map<string, number>();
  for (const root of roots)
    index.walk(root, (e, bound, inLoop) => {
      if (!index.shareable(e, bound)) return;
      const k = index.key(e);
      seen.set(k, (seen.get(k) ?? 0) + (inLoop ? 2 : 1));
    });
  const out = new Map<string, number>();
  for (const [k, n] of seen) if (n >= 2) out.set(k, out.size);
  return out;
}

/** What the planner needs to share subexpressions: their keys' memo places, and the index that keys the tree. */
export interface SharedSubexpressions {
  /** Canonical key → its place in the policy's memo, for the keys to share in this expression. */
  readonly ids: ReadonlyMap<string, number>;
  readonly index: SubexpressionIndex;
}

/**
 * The node as planned, or its shared form when it is a subexpression this expression shares.
 * `bound` says whether a name is a comprehension or bind variable around the node.
 */
export function sharedForm(
  shared: SharedSubexpressions,
  e: Expr,
  c: Compiled,
  bound: (name: string) => boolean,
): Compiled {
  if (!shared.index.shareable(e, bound)) return c;
  const id = shared.ids.get(shared.index.key(e));
  // An optional chain's raw view has no memoized twin: such nodes compute their own.
  return id === undefined || c.raw !== undefined || c.chain !== undefined ? c : memoized(c, id);
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
