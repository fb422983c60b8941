/**
 * Calls: which planner a call goes to (an operator with its own rules, membership in a constant
 * list, a namespaced function, orValue/hasValue on an optional chain, `matches` with a constant
 * pattern, or overload dispatch), and for an ordinary call the overloads its name, form (global or
 * member), arity and argument tags admit, and its result tag.
 */
import type { CelEnvironment } from "../env/environment.ts";
import type { Overload } from "../library/types.ts";
import type { TypeTag } from "../runtime/tags.ts";
import type { CallNode } from "../syntax/ast.ts";
import { planAppend } from "./comprehension.ts";
import { planConditional } from "./conditional.ts";
import { planDispatch } from "./dispatch.ts";
import { planEquality } from "./equality.ts";
import { qualifiedName } from "./ident.ts";
import { planIndex, planOptionalIndex } from "./indexing.ts";
import { planAndOr, planNot, planNotStrictlyFalse } from "./logic.ts";
import { planConstantMatches } from "./matches.ts";
import { planMembership } from "./membership.ts";
import { type Compiled, compatible, failingNode, type PlanContext } from "./node.ts";
import { planOptionalAccessor } from "./optional.ts";

/** Plans an operator call whose arguments are planned already. */
type OperatorPlanner = (p: PlanContext, e: CallNode, args: readonly Compiled[]) => Compiled;

/** Operators with their own evaluation rules (short-circuit, error absorption, equality), by name. */
const OPERATORS: ReadonlyMap<string, OperatorPlanner> = new Map([
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

// --- resolution ------------------------------------------------------------------------------

/**
 * The overloads an ordinary call may dispatch to and its result tag, or why none: the type checker
 * (src/cel/check) refused such calls already, so a failure here is a run-time error.
 */
export type Resolution =
  | { readonly ok: true; readonly candidates: readonly Overload[]; readonly type: TypeTag }
  | { readonly ok: false; readonly error: string };

/** The overloads of `name` a call of this form, arity and static argument tags may dispatch to. */
export function resolveCall(
  env: CelEnvironment,
  name: string,
  member: boolean,
  types: readonly TypeTag[],
): Resolution {
  const all = env.functions.get(name);
  if (!all) return { ok: false, error: `undeclared reference to '${name}'` };
  const byArity = all.filter((o) => o.member === member && o.args.length === types.length);
  const candidates = byArity.filter((o) => o.args.every((t, i) => compatible(types[i] as TypeTag, t)));
  if (candidates.length === 0) {
    const sig = member ? `${types[0]}.(${types.slice(1).join(", ")})` : `(${types.join(", ")})`;
    return { ok: false, error: `found no matching overload for '${name}' applied to '${sig}'` };
  }
  const resultTypes = new Set(candidates.map((o) => o.result));
  const type = resultTypes.size === 1 ? (candidates[0] as Overload).result : "dyn";
  return { ok: true, candidates, type };
}

// --- plan ------------------------------------------------------------------------------------

export function planCall(p: PlanContext, e: CallNode): Compiled {
  const operator = e.target ? undefined : OPERATORS.get(e.fn);
  if (operator !== undefined)
    return operator(
      p,
      e,
      e.args.map((a) => p.plan(a)),
    );
  const membership = planMembership(p, e);
  if (membership !== undefined) return membership;
  const namespaced = planNamespaced(p, e);
  if (namespaced !== undefined) return namespaced;
  const args = e.target ? [p.plan(e.target), ...e.args.map((a) => p.plan(a))] : e.args.map((a) => p.plan(a));
  return (
    planOptionalAccessor(p, e, args) ??
    planConstantMatches(p, e, args) ??
    planFunction(p, e.fn, e.id, args, e.target !== undefined)
  );
}

/**
 * `ns.fn(args)` where `ns` is not a variable: the global function `ns.fn` (optional.of,
 * math.greatest...), when the environment has one; else undefined.
 */
function planNamespaced(p: PlanContext, e: CallNode): Compiled | undefined {
  if (!e.target) return undefined;
  const q = qualifiedName(e.target);
  if (q === undefined) return undefined;
  const root = q.split(".")[0] as string;
  if (p.lookupLocal(root) !== undefined || p.env.variables.has(root)) return undefined;
  const qualified = `${q}.${e.fn}`;
  if (!p.env.functions.has(qualified)) return undefined;
  return planFunction(
    p,
    qualified,
    e.id,
    e.args.map((a) => p.plan(a)),
    false,
  );
}

/** An ordinary call: checked against the environment's overloads, then dispatched among them. */
function planFunction(
  p: PlanContext,
  name: string,
  id: number,
  args: readonly Compiled[],
  member: boolean,
): Compiled {
  const r = resolveCall(
    p.env,
    name,
    member,
    args.map((a) => a.type),
  );
  if (!r.ok) return failingNode(r.error);
  return planDispatch(name, id, args, r.candidates, r.type);
}
