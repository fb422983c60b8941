/**
 * Compiling and evaluating one free-standing expression, as `celgate expr` (and the REPL) do: the
 * admission variables are always declared (bound to null unless given, as the API server binds
 * `oldObject` on CREATE), any other binding becomes a `dyn` variable of its own.
 */
import {
  ADMISSION_VARIABLES,
  type CelExtras,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  EXTRA_NAMES,
  PER_CALL_COST_LIMIT,
  run,
  toCel,
  typeName,
} from "../../cel/index.ts";
import { err, ok, type Result } from "../../result.ts";
import type { ExpressionOutcome } from "../output/value.ts";

/** The admission variables bound to null when not given (`authorizer` has no JSON form). */
const NULLABLE_VARIABLES = ["object", "oldObject", "request", "params", "namespaceObject"] as const;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Wall-clock bound for one expression; the cost limit usually stops runaway expressions first. */
const EXPRESSION_TIMEOUT_MS = 10_000;

/** Checks the names of extra variables: they must be CEL identifiers. */
export function checkVariableNames(vars: Readonly<Record<string, unknown>>): Result<void, string> {
  const bad = Object.keys(vars).filter((k) => !IDENTIFIER.test(k));
  return bad.length === 0
    ? ok(undefined)
    : err(`variable names must be CEL identifiers: ${bad.map((b) => JSON.stringify(b)).join(", ")}`);
}

/** `bind,math` → the extras; `all` and `none` too. */
export function parseExtras(text: string): Result<CelExtras, string> {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const extras: Record<string, boolean> = {};
  for (const n of names) {
    if (n === "all") for (const e of EXTRA_NAMES) extras[e] = true;
    else if (n === "none") continue;
    else if ((EXTRA_NAMES as readonly string[]).includes(n)) extras[n] = true;
    else return err(`unknown CEL extra '${n}'; expected some of ${EXTRA_NAMES.join(", ")} (or all, none)`);
  }
  return ok(extras);
}

/**
 * Evaluates `source` with JSON bindings. Never throws: compile errors (all of them, rendered with a
 * caret) and evaluation errors (with a caret where the failing call is known) are outcomes.
 */
export function evaluateExpression(
  source: string,
  bindings: Readonly<Record<string, unknown>>,
  extras: CelExtras = {},
): ExpressionOutcome {
  const extraNames = Object.keys(bindings).filter((k) => !(k in ADMISSION_VARIABLES));
  const env = createEnvironment({
    variables: { ...ADMISSION_VARIABLES, ...Object.fromEntries(extraNames.map((k) => [k, "dyn"])) },
    extras,
  });
  const compiled = compile(source, env);
  if (!compiled.ok) {
    const rendered = compiled.problems.map((p) => p.rendered).join("\n");
    return { ok: false, stage: "compile", error: rendered, rendered };
  }
  const values: Record<string, CelValue> = {};
  for (const name of NULLABLE_VARIABLES) values[name] = null;
  for (const [k, v] of Object.entries(bindings)) values[k] = toCel(v);
  const state = new EvalState(PER_CALL_COST_LIMIT, performance.now() + EXPRESSION_TIMEOUT_MS);
  const r = run(compiled.program, { values }, state);
  if (!r.ok) return { ok: false, stage: "eval", error: r.error.message, rendered: r.error.rendered };
  return { ok: true, value: r.value, type: typeName(r.value) };
}
