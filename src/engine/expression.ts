/**
 * Compiling and evaluating one free-standing expression, as `celgate expr` and the library do: the
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
  PER_CALL_COST_LIMIT,
  run,
  toCel,
  typeName,
} from "../cel/index.ts";

/** What evaluating one expression gave, in a form every output can render. */
export type ExpressionOutcome =
  | { readonly ok: true; readonly value: CelValue; readonly type: string }
  | {
      readonly ok: false;
      readonly stage: "compile" | "eval" | "input";
      /** The error in one message (compile errors are cel-go's rendered form, as kubectl shows them). */
      readonly error: string;
      /** For people: `ERROR: <input>:1:5: ...` with the expression and a caret, when a position is known. */
      readonly rendered?: string;
    };

/**
 * The environments an expression can be evaluated in, as the API server builds them:
 * - `validating`: a ValidatingAdmissionPolicy's (every admission variable);
 * - `mutating`: a MutatingAdmissionPolicy's, which adds the `Object` and `JSONPatch` types and
 *   `jsonpatch.escapeKey` (admission/plugin/policy/mutating/compilation.go);
 * - `match`: a webhook's matchConditions (admission/plugin/webhook/matchconditions), which see
 *   `object`, `oldObject`, `request` and `authorizer`, and no `params` or `namespaceObject`.
 * A policy's own matchConditions see its kind's environment without `variables`.
 */
export const EXPRESSION_CONTEXTS = ["validating", "mutating", "match"] as const;
export type ExpressionContext = (typeof EXPRESSION_CONTEXTS)[number];

const MATCH_VARIABLES: readonly (keyof typeof ADMISSION_VARIABLES)[] = [
  "object",
  "oldObject",
  "request",
  "authorizer",
  "authorizer.requestResource",
];

/** The declared admission variables and struct types of a context's environment. */
export function contextEnvironment(context: ExpressionContext): {
  readonly variables: Readonly<
    Record<string, (typeof ADMISSION_VARIABLES)[keyof typeof ADMISSION_VARIABLES]>
  >;
  readonly structTypes?: readonly string[];
} {
  if (context === "match")
    return { variables: Object.fromEntries(MATCH_VARIABLES.map((n) => [n, ADMISSION_VARIABLES[n]])) };
  if (context === "mutating") return { variables: ADMISSION_VARIABLES, structTypes: ["Object", "JSONPatch"] };
  return { variables: ADMISSION_VARIABLES };
}

/** The admission variables bound to null when not given (`authorizer` has no JSON form). */
const NULLABLE_VARIABLES = ["object", "oldObject", "request", "params", "namespaceObject"] as const;

/** Wall-clock bound for one expression; the cost limit usually stops runaway expressions first. */
const EXPRESSION_TIMEOUT_MS = 10_000;

/**
 * Evaluates `source` with JSON bindings. Never throws: compile errors (all of them, rendered with a
 * caret) and evaluation errors (with a caret where the failing call is known) are outcomes.
 */
export function evaluateExpression(
  source: string,
  bindings: Readonly<Record<string, unknown>>,
  extras: CelExtras = {},
  context: ExpressionContext = "validating",
): ExpressionOutcome {
  const extraNames = Object.keys(bindings).filter((k) => !(k in ADMISSION_VARIABLES));
  const { variables, structTypes } = contextEnvironment(context);
  const env = createEnvironment({
    variables: { ...variables, ...Object.fromEntries(extraNames.map((k) => [k, "dyn"])) },
    extras,
    ...(structTypes ? { structTypes } : {}),
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
