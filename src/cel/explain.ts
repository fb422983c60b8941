/**
 * Why a boolean expression came out false, in words a policy author can act on: which operand of
 * an `&&` chain, which element of an `all`, and the values that made the comparison fail:
 *
 *   containers[1] (name: "sidecar"): c.securityContext.privileged != true is false: c.securityContext.privileged = true
 *
 * It walks the syntax tree and evaluates sub-expressions again (each compiled on its own, with
 * comprehension variables declared as `dyn` and bound in the activation). This is for people
 * reading a denial, so it is bounded (evaluations, cost, time, lines) and never throws.
 */
import type { ComprehensionNode, Expr, ParsedExpression } from "./syntax/ast.ts";
import { compileParsed } from "./compile.ts";
import type { Activation } from "./state/activation.ts";
import { EvalState } from "./state/state.ts";
import { type CelEnvironment, createEnvironment } from "./env/environment.ts";
import { toJson } from "./input.ts";
import { CelError, CelMap, type CelValue, isPlainMap, mapEntries, mapGet, UInt } from "./runtime/values.ts";

export interface ExplainLimits {
  /** Sub-expression evaluations allowed in one explanation. */
  readonly maxEvaluations?: number;
  /** Failing elements of one `all` reported before "and N more". */
  readonly maxElements?: number;
  /** Reasons returned at most. */
  readonly maxReasons?: number;
  /** CEL cost units for all evaluations of one explanation together. */
  readonly costLimit?: number;
  /** Wall-clock time for one explanation, ms. */
  readonly timeoutMs?: number;
}

const DEFAULTS: Required<ExplainLimits> = {
  maxEvaluations: 400,
  maxElements: 5,
  maxReasons: 20,
  costLimit: 1_000_000,
  timeoutMs: 1_000,
};

/** Longest rendering of one value in a reason; objects are cut with an ellipsis. */
const MAX_VALUE_CHARS = 120;

type Outcome =
  | { readonly ok: true; readonly value: CelValue }
  | { readonly ok: false; readonly error: string };

class Exhausted extends Error {}

/** Comprehension and bind variables bound at the current point of the walk. */
type Scope = ReadonlyMap<string, CelValue>;

/**
 * The reasons `parsed` evaluates to false under `env` and `activation`: one line per cause, most
 * specific first within each operand. Empty when the expression is not false (true, or not a bool).
 * An expression that fails gives one reason naming the failure. Never throws.
 */
export function explainFalse(
  parsed: ParsedExpression,
  env: CelEnvironment,
  activation: Activation,
  limits: ExplainLimits = {},
): string[] {
  const x = new Explainer(parsed, env, activation, { ...DEFAULTS, ...limits });
  try {
    const root = x.eval(parsed.root, new Map());
    if (!root.ok) return [`${renderExpr(parsed.root)} failed: ${root.error}`];
    if (root.value !== false) return [];
    x.why(parsed.root, new Map(), "");
  } catch (e) {
    if (!(e instanceof Exhausted)) x.add(`(explanation stopped: internal error: ${String(e)})`);
    else x.add("(explanation stopped: too much to evaluate)");
  }
  return x.reasons;
}

class Explainer {
  readonly reasons: string[] = [];
  private evaluations = 0;
  private readonly state: EvalState;
  private readonly envs = new Map<string, CelEnvironment>();

  constructor(
    private readonly parsed: ParsedExpression,
    private readonly env: CelEnvironment,
    private readonly activation: Activation,
    private readonly limits: Required<ExplainLimits>,
  ) {
    this.state = new EvalState(limits.costLimit, performance.now() + limits.timeoutMs);
  }

  add(reason: string): void {
    if (this.reasons.length < this.limits.maxReasons) this.reasons.push(reason);
    else if (this.reasons.length === this.limits.maxReasons) this.reasons.push("(more reasons not shown)");
  }

  /** The environment with the scope's names declared as `dyn`, built once per set of names. */
  private envFor(scope: Scope): CelEnvironment {
    if (scope.size === 0) return this.env;
    const names = [...scope.keys()].sort();
    const key = names.join("\u0000");
    let env = this.envs.get(key);
    if (!env) {
      env = createEnvironment({
        variables: {
          ...Object.fromEntries(this.env.variables),
          ...Object.fromEntries(names.map((n) => [n, "dyn"])),
        },
        ...(this.env.policyVariables ? { policyVariables: [...this.env.policyVariables] } : {}),
        structTypes: [...this.env.structTypes],
        extras: this.env.extras,
      });
      this.envs.set(key, env);
    }
    return env;
  }

  /** Evaluates one sub-expression in the scope; errors are outcomes, running out of budget throws. */
  eval(e: Expr, scope: Scope): Outcome {
    if (++this.evaluations > this.limits.maxEvaluations || performance.now() > this.state.deadline)
      throw new Exhausted();
    // A part of an expression that type-checked: planning it finds no problem.
    const program = compileParsed({ ...this.parsed, root: e }, this.envFor(scope));
    const act: Activation =
      scope.size === 0
        ? this.activation
        : {
            values: { ...this.activation.values, ...Object.fromEntries(scope) },
            ...(this.activation.variables ? { variables: this.activation.variables } : {}),
          };
    try {
      return { ok: true, value: program.run(act, this.state) };
    } catch (err) {
      if (err instanceof CelError && (err.kind === "cost" || err.kind === "timeout")) throw new Exhausted();
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Adds the reasons `e` (known to be false) is false, each line prefixed with `prefix`. */
  why(e: Expr, scope: Scope, prefix: string): void {
    if (e.kind === "call" && !e.target) {
      switch (e.fn) {
        case "_&&_":
          this.operands(flatten(e, "_&&_"), scope, prefix, false);
          return;
        case "_||_":
          this.operands(flatten(e, "_||_"), scope, prefix, true);
          return;
        case "_?_:_": {
          const [c, t, f] = e.args as [Expr, Expr, Expr];
          const cond = this.eval(c, scope);
          if (!cond.ok || typeof cond.value !== "boolean") {
            this.leaf(e, scope, prefix);
            return;
          }
          this.why(cond.value ? t : f, scope, `${prefix}${renderExpr(c)} is ${cond.value}, so `);
          return;
        }
      }
    }
    if (e.kind === "comprehension") {
      this.comprehension(e, scope, prefix);
      return;
    }
    if (e.kind === "bind") {
      const init = this.eval(e.init, scope);
      if (!init.ok) {
        this.add(`${prefix}${renderExpr(e.init)} failed: ${init.error}`);
        return;
      }
      this.why(e.body, new Map([...scope, [e.name, init.value]]), prefix);
      return;
    }
    this.leaf(e, scope, prefix);
    return;
  }

  /**
   * The false operands of an `&&` chain, or (for `||`, where all are false) every operand but the
   * absence guards: in `!has(c.x) || c.x.y`, that `c.x` is present is no news; `c.x.y` is the cause.
   */
  private operands(ops: readonly Expr[], scope: Scope, prefix: string, or: boolean): void {
    const failing: { e: Expr; error?: string }[] = [];
    for (const op of ops) {
      const r = this.eval(op, scope);
      if (!r.ok) failing.push({ e: op, error: r.error });
      else if (r.value === false) failing.push({ e: op });
    }
    // A false operand decides the chain, and errors beside it are absorbed (`has(x) && x.y`): not causes.
    const decided = failing.some((f) => f.error === undefined)
      ? failing.filter((f) => f.error === undefined)
      : failing;
    const shown =
      or && decided.some((f) => !isAbsenceGuard(f.e)) ? decided.filter((f) => !isAbsenceGuard(f.e)) : decided;
    for (const f of shown) {
      if (f.error !== undefined) this.add(`${prefix}${renderExpr(f.e)} failed: ${f.error}`);
      else this.why(f.e, scope, prefix);
    }
  }

  private comprehension(e: ComprehensionNode, scope: Scope, prefix: string): void {
    const pred = predicate(e);
    if (
      pred === undefined ||
      (e.macro !== "all" && e.macro !== "exists" && e.macro !== "exists_one" && e.macro !== "existsOne")
    ) {
      this.leaf(e, scope, prefix);
      return;
    }
    const range = this.eval(e.iterRange, scope);
    if (!range.ok) {
      this.add(`${prefix}${renderExpr(e.iterRange)} failed: ${range.error}`);
      return;
    }
    const items = elements(range.value, e.iterVar2 !== undefined);
    if (!items) {
      this.leaf(e, scope, prefix);
      return;
    }
    if (e.macro === "exists") {
      const empty = items.length === 0 ? ` (${renderExpr(e.iterRange)} is empty)` : "";
      this.add(`${prefix}no element of ${renderExpr(e.iterRange)} satisfies ${renderExpr(pred)}${empty}`);
      return;
    }
    if (e.macro === "exists_one" || e.macro === "existsOne") {
      let n = 0;
      for (const item of items) {
        const r = this.eval(pred, bindItem(scope, e, item));
        if (r.ok && r.value === true) n++;
      }
      this.add(
        `${prefix}${n} elements of ${renderExpr(e.iterRange)} satisfy ${renderExpr(pred)}, not exactly one`,
      );
      return;
    }
    const label = rangeLabel(e.iterRange);
    let failing = 0;
    for (const item of items) {
      const inner = bindItem(scope, e, item);
      const r = this.eval(pred, inner);
      if (r.ok && r.value === true) continue;
      failing++;
      if (failing > this.limits.maxElements) continue;
      const at = `${prefix}${label}${item.label}: `;
      if (!r.ok) this.add(`${at}${renderExpr(pred)} failed: ${r.error}`);
      else if (r.value === false) this.why(pred, inner, at);
      else this.add(`${at}${renderExpr(pred)} is ${showValue(r.value)}, not a bool`);
    }
    if (failing > this.limits.maxElements)
      this.add(`${prefix}and ${failing - this.limits.maxElements} more elements of ${label}`);
  }

  /** A comparison, call or reference: the expression and the values of its non-constant operands. */
  private leaf(e: Expr, scope: Scope, prefix: string): void {
    if (e.kind === "select" && e.testOnly) {
      // The fields that are there, rather than the whole map: a misspelt field stands out.
      const r = this.eval(e.operand, scope);
      const keys =
        r.ok && (r.value instanceof CelMap || isPlainMap(r.value))
          ? [...mapEntries(r.value)].map(([k]) => k)
          : undefined;
      if (keys) {
        const list =
          keys.length === 0 ? "no fields" : `fields ${shorten(keys.map((k) => String(k)).join(", "))}`;
        this.add(`${prefix}${renderExpr(e)} is false: ${renderExpr(e.operand)} has ${list}`);
        return;
      }
    }
    const shown = operandsOf(e)
      .filter((op) => !isLiteral(op))
      .map((op) => {
        const r = this.eval(op, scope);
        return `${renderExpr(op)} ${r.ok ? `= ${showValue(r.value)}` : `failed: ${r.error}`}`;
      });
    this.add(`${prefix}${renderExpr(e)} is false${shown.length > 0 ? `: ${shown.join(", ")}` : ""}`);
  }
}

function flatten(e: Expr, fn: string): Expr[] {
  if (e.kind === "call" && !e.target && e.fn === fn) return e.args.flatMap((a) => flatten(a, fn));
  return [e];
}

/** `!has(x.f)`: the usual guard before a field is read. */
function isAbsenceGuard(e: Expr): boolean {
  return e.kind === "call" && e.fn === "!_" && e.args[0]?.kind === "select" && e.args[0].testOnly;
}

/** The predicate of an `all`/`exists`/`exists_one` expansion (see syntax/parse.ts and the parser's macros). */
function predicate(e: ComprehensionNode): Expr | undefined {
  const step = e.loopStep;
  if (step.kind !== "call") return undefined;
  if (e.macro === "all" || e.macro === "exists") return step.args[1];
  if (e.macro === "exists_one" || e.macro === "existsOne") return step.args[0];
  return undefined;
}

interface Item {
  readonly first: CelValue;
  readonly second: CelValue;
  /** `[1] (name: "sidecar")` or `["key"]`. */
  readonly label: string;
}

/** The iteration of a comprehension: list elements (or index and element), map keys (or key and value). */
function elements(range: CelValue, two: boolean): Item[] | undefined {
  if (Array.isArray(range)) {
    return range.map((v: CelValue, i) => ({
      first: two ? BigInt(i) : v,
      second: two ? v : null,
      label: `[${i}]${nameOf(v)}`,
    }));
  }
  if (range instanceof CelMap || isPlainMap(range)) {
    return [...mapEntries(range)].map(([k, v]) => ({
      first: k,
      second: two ? v : null,
      label: `[${showValue(k)}]`,
    }));
  }
  return undefined;
}

function nameOf(v: CelValue): string {
  if (!(v instanceof CelMap || isPlainMap(v))) return "";
  const name = mapGet(v, "name");
  return typeof name === "string" ? ` (name: ${JSON.stringify(name)})` : "";
}

function bindItem(scope: Scope, e: ComprehensionNode, item: Item): Scope {
  const next = new Map(scope);
  next.set(e.iterVar, item.first);
  if (e.iterVar2 !== undefined) next.set(e.iterVar2, item.second);
  return next;
}

/** `object.spec.containers` → `containers`: the name people know the list by. */
function rangeLabel(e: Expr): string {
  if (e.kind === "select" && !e.testOnly) return e.field;
  if (e.kind === "ident") return e.name;
  return renderExpr(e);
}

/** The sub-expressions whose values explain a leaf; `!x` shows what `x` is made of. */
function operandsOf(e: Expr): readonly Expr[] {
  switch (e.kind) {
    case "call": {
      if (e.fn === "!_" && !e.target) {
        const inner = e.args[0] as Expr;
        return inner.kind === "call" || (inner.kind === "select" && inner.testOnly)
          ? operandsOf(inner)
          : [inner];
      }
      return e.target ? [e.target, ...e.args] : e.args;
    }
    case "select":
      // `has(a.b)` false: show what `a` holds.
      return e.testOnly ? [e.operand] : [];
    default:
      return [];
  }
}

function isLiteral(e: Expr): boolean {
  switch (e.kind) {
    case "const":
      return true;
    case "list":
      return e.elements.every(isLiteral);
    case "map":
      return e.entries.every((en) => isLiteral(en.key) && isLiteral(en.value));
    default:
      return false;
  }
}

/** A value as JSON, shortened: reasons are one line each. */
export function showValue(v: CelValue): string {
  let s: string;
  try {
    s = JSON.stringify(toJson(v)) ?? "null";
  } catch {
    s = String(v);
  }
  if (v instanceof UInt) s = `${v.value}u`;
  return shorten(s);
}

function shorten(s: string): string {
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS - 1)}…` : s;
}

// ---------------------------------------------------------------------------------------------
// Rendering a syntax tree back to CEL text

const BINARY: Readonly<Record<string, { readonly op: string; readonly prec: number }>> = {
  "_||_": { op: "||", prec: 2 },
  "_&&_": { op: "&&", prec: 3 },
  "_==_": { op: "==", prec: 4 },
  "_!=_": { op: "!=", prec: 4 },
  "_<_": { op: "<", prec: 4 },
  "_<=_": { op: "<=", prec: 4 },
  "_>_": { op: ">", prec: 4 },
  "_>=_": { op: ">=", prec: 4 },
  "@in": { op: "in", prec: 4 },
  "_+_": { op: "+", prec: 5 },
  "_-_": { op: "-", prec: 5 },
  "_*_": { op: "*", prec: 6 },
  "_/_": { op: "/", prec: 6 },
  "_%_": { op: "%", prec: 6 },
};

const TERNARY_PREC = 1;
const UNARY_PREC = 7;
const PRIMARY_PREC = 8;

function precedence(e: Expr): number {
  if (e.kind !== "call" || e.target) return PRIMARY_PREC;
  if (e.fn === "_?_:_") return TERNARY_PREC;
  if (e.fn === "!_" || e.fn === "-_") return UNARY_PREC;
  return BINARY[e.fn]?.prec ?? PRIMARY_PREC;
}

function wrap(e: Expr, min: number): string {
  const s = renderExpr(e);
  return precedence(e) < min ? `(${s})` : s;
}

function renderConst(v: CelValue): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return Number.isInteger(v) ? v.toFixed(1) : String(v);
  if (v instanceof UInt) return `${v.value}u`;
  if (v instanceof Uint8Array) return `b${JSON.stringify(Buffer.from(v).toString("latin1"))}`;
  return v === null ? "null" : String(v);
}

/** CEL source for a syntax tree, with macros shown as written (`xs.all(x, p)`). */
export function renderExpr(e: Expr): string {
  switch (e.kind) {
    case "const":
      return renderConst(e.value);
    case "ident":
      return e.name;
    case "select": {
      const inner = `${wrap(e.operand, PRIMARY_PREC)}${e.optional ? ".?" : "."}${e.field}`;
      return e.testOnly ? `has(${inner})` : inner;
    }
    case "call":
      return renderCall(e);
    case "list":
      return `[${e.elements.map((x, i) => `${e.optionalIndices.has(i) ? "?" : ""}${renderExpr(x)}`).join(", ")}]`;
    case "map":
      return `{${e.entries.map((en) => `${en.optional ? "?" : ""}${renderExpr(en.key)}: ${renderExpr(en.value)}`).join(", ")}}`;
    case "struct":
      return `${e.typeName}{${e.fields.map((f) => `${f.optional ? "?" : ""}${f.name}: ${renderExpr(f.value)}`).join(", ")}}`;
    case "comprehension":
      return renderComprehension(e);
    case "bind":
      return `cel.bind(${e.name}, ${renderExpr(e.init)}, ${renderExpr(e.body)})`;
  }
}

function renderCall(e: Extract<Expr, { kind: "call" }>): string {
  const a = e.args;
  if (!e.target) {
    const bin = BINARY[e.fn];
    if (bin && a.length === 2) {
      // Left-associative: a right operand of the same precedence needs parentheses.
      return `${wrap(a[0] as Expr, bin.prec)} ${bin.op} ${wrap(a[1] as Expr, bin.prec + 1)}`;
    }
    switch (e.fn) {
      case "!_":
        return `!${wrap(a[0] as Expr, UNARY_PREC)}`;
      case "-_":
        return `-${wrap(a[0] as Expr, UNARY_PREC)}`;
      case "_?_:_":
        return `${wrap(a[0] as Expr, TERNARY_PREC + 1)} ? ${wrap(a[1] as Expr, TERNARY_PREC + 1)} : ${wrap(a[2] as Expr, TERNARY_PREC)}`;
      case "_[_]":
        return `${wrap(a[0] as Expr, PRIMARY_PREC)}[${renderExpr(a[1] as Expr)}]`;
      case "_[?_]":
        return `${wrap(a[0] as Expr, PRIMARY_PREC)}[?${renderExpr(a[1] as Expr)}]`;
    }
  }
  const args = a.map(renderExpr).join(", ");
  return e.target ? `${wrap(e.target, PRIMARY_PREC)}.${e.fn}(${args})` : `${e.fn}(${args})`;
}

function renderComprehension(e: ComprehensionNode): string {
  const range = wrap(e.iterRange, PRIMARY_PREC);
  const vars = e.iterVar2 !== undefined ? `${e.iterVar}, ${e.iterVar2}` : e.iterVar;
  const pred = predicate(e);
  if (pred) return `${range}.${e.macro}(${vars}, ${renderExpr(pred)})`;
  const step = e.loopStep;
  // map / filter / transformList: `@append(accu, v)`, possibly under `filter ? ... : accu`.
  if (step.kind === "call" && step.fn === "_?_:_" && !step.target) {
    const [cond, then] = step.args as [Expr, Expr];
    if (then.kind === "call" && then.fn === "@append") {
      const value = then.args[1] as Expr;
      if (e.macro === "filter") return `${range}.filter(${vars}, ${renderExpr(cond)})`;
      return `${range}.${e.macro ?? "map"}(${vars}, ${renderExpr(cond)}, ${renderExpr(value)})`;
    }
  }
  if (step.kind === "call" && step.fn === "@append" && !step.target)
    return `${range}.${e.macro ?? "map"}(${vars}, ${renderExpr(step.args[1] as Expr)})`;
  return `${range}.${e.macro ?? "comprehension"}(${vars}, …)`;
}
