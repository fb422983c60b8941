/**
 * The AST validators Kubernetes runs after type-checking (cel-go cel/validator.go and
 * ext/formatting.go, enabled by environment/base.go), and the checks the API server makes when it
 * builds the program: a constant regular expression is compiled then (library/regex.go,
 * interpreter/optimizations.go).
 *
 * cel-go runs validators only on an expression that type-checks, in the order the environment
 * registered them, and builds the program only when they all pass; so do these.
 */
import { children, type Expr, type CallNode, type ListNode, type MapNode } from "../syntax/ast.ts";
import { parseDuration, parseTimestamp, timestampFromSeconds } from "../library/time.ts";
import { validateRegex } from "../regex/index.ts";
import { checkStringFormat } from "./format-validator.ts";
import * as msg from "./messages.ts";
import { type CelType, DYN, isEquivalentType } from "./types.ts";
import { functionName, type ValidatorContext } from "./validator-context.ts";
import type { ValidatorName } from "./versions.ts";

/** Whether a call keeps its receiver: not a namespaced function (`optional.of`) resolved from it. */
function isMemberCall(ctx: ValidatorContext, e: CallNode): boolean {
  return e.target !== undefined && !ctx.functions.has(e.id);
}

/** Every node with whether an enclosing call is named `format` (exempt from homogeneity). */
function walk(
  root: Expr,
  visit: (e: Expr, inFormat: boolean) => void,
  isFormat: (e: CallNode) => boolean,
): void {
  const go = (e: Expr, inFormat: boolean): void => {
    visit(e, inFormat);
    const below = inFormat || (e.kind === "call" && isFormat(e));
    for (const c of children(e)) go(c.expr, below);
  };
  go(root, false);
}

function typeOf(ctx: ValidatorContext, e: Expr): CelType {
  return ctx.types.get(e.id) ?? DYN;
}

/** The value type of an optional list element or map entry. */
function optionalValue(t: CelType): CelType {
  return t.params[0] ?? t;
}

/** ValidateHomogeneousAggregateLiterals: each element, key and value of a literal of the first one's type. */
function homogeneousList(ctx: ValidatorContext, e: ListNode): void {
  let first: CelType | undefined;
  for (let i = 0; i < e.elements.length; i++) {
    const x = e.elements[i] as Expr;
    let t = typeOf(ctx, x);
    if (e.optionalIndices.has(i)) t = optionalValue(t);
    if (first === undefined) first = t;
    else if (!isEquivalentType(first, t)) {
      ctx.report(x.id, msg.typeMismatch(first, t), "cel.validator.homogeneous_literals");
      break;
    }
  }
}

function homogeneousMap(ctx: ValidatorContext, e: MapNode): void {
  let keyType: CelType | undefined;
  let valueType: CelType | undefined;
  for (const entry of e.entries) {
    const k = typeOf(ctx, entry.key);
    let v = typeOf(ctx, entry.value);
    if (entry.optional) v = optionalValue(v);
    if (keyType === undefined || valueType === undefined) {
      keyType = k;
      valueType = v;
      continue;
    }
    if (!isEquivalentType(keyType, k))
      ctx.report(entry.key.id, msg.typeMismatch(keyType, k), "cel.validator.homogeneous_literals");
    if (!isEquivalentType(valueType, v))
      ctx.report(entry.value.id, msg.typeMismatch(valueType, v), "cel.validator.homogeneous_literals");
  }
}

/** Whether `duration(<literal>)` evaluates; cel-go evaluates the call to find out. */
function validDuration(v: unknown): boolean {
  if (typeof v !== "string") return false; // duration(int) is declared but fails when run
  try {
    parseDuration(v);
    return true;
  } catch {
    return false;
  }
}

function validTimestamp(v: unknown): boolean {
  try {
    if (typeof v === "string") parseTimestamp(v);
    else if (typeof v === "bigint") timestampFromSeconds(v);
    else return false;
    return true;
  } catch {
    return false;
  }
}

function validRegex(v: unknown): boolean {
  return typeof v === "string" && validateRegex(v) === undefined;
}

/** The validators that look at one call's first argument (cel-go's formatValidator). */
const LITERAL_VALIDATORS: readonly {
  readonly name: ValidatorName;
  readonly fn: string;
  readonly valid: (v: unknown) => boolean;
}[] = [
  { name: "cel.validator.duration", fn: "duration", valid: validDuration },
  { name: "cel.validator.timestamp", fn: "timestamp", valid: validTimestamp },
  // cel-go checks the first argument of every `matches` call: the pattern of `s.matches(p)`, but the
  // subject of `matches(s, p)`, whose pattern only the program builder compiles.
  { name: "cel.validator.matches", fn: "matches", valid: validRegex },
];

/** Runs the enabled validators in Kubernetes' order. */
export function runValidators(ctx: ValidatorContext): void {
  const on = ctx.validators;
  const formatExempt = on.has("cel.validator.string_format");
  const isFormat = (e: CallNode) => formatExempt && functionName(ctx, e) === "format";
  const lists: ListNode[] = [];
  const maps: MapNode[] = [];
  const calls: [CallNode, boolean][] = [];
  walk(
    ctx.root,
    (e, inFormat) => {
      if (e.kind === "list" && !inFormat) lists.push(e);
      else if (e.kind === "map" && !inFormat) maps.push(e);
      else if (e.kind === "call") calls.push([e, inFormat]);
    },
    isFormat,
  );
  if (on.has("cel.validator.homogeneous_literals")) {
    for (const l of lists) homogeneousList(ctx, l);
    for (const m of maps) homogeneousMap(ctx, m);
  }
  for (const v of LITERAL_VALIDATORS) {
    if (!on.has(v.name)) continue;
    for (const [call] of calls) {
      const arg = call.args[0];
      if (functionName(ctx, call) !== v.fn || arg?.kind !== "const") continue;
      if (!v.valid(arg.value)) ctx.report(arg.id, `invalid ${v.fn} argument`, v.name);
    }
  }
  if (on.has("cel.validator.string_format")) {
    for (const [call] of calls) checkStringFormat(ctx, call);
  }
}

const REGEX_FUNCTIONS: ReadonlySet<string> = new Set(["matches", "find", "findAll"]);

/**
 * What building the program rejects: a constant pattern of `matches`, `find` or `findAll` that does
 * not compile (the pattern is the second argument counting the receiver). The API server reports
 * "program instantiation failed: " and Go's regexp error; the message here is Go's error.
 */
export function checkProgram(ctx: ValidatorContext): void {
  if (!ctx.validators.has("kubernetes.program.regex")) return;
  walk(
    ctx.root,
    (e) => {
      if (e.kind !== "call" || !REGEX_FUNCTIONS.has(functionName(ctx, e))) return;
      const pattern = isMemberCall(ctx, e) ? e.args[0] : e.args[1];
      if (pattern?.kind !== "const" || typeof pattern.value !== "string") return;
      const problem = validateRegex(pattern.value);
      if (problem !== undefined) ctx.report(pattern.id, problem, "kubernetes.program.regex");
    },
    () => false,
  );
}
