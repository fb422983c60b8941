/** Rendering of single CEL values and expression errors, for `celgate expr` and the REPL. */
import { type CelValue, toJson, typeName } from "../../cel/index.ts";
import type { ExpressionOutcome } from "../../engine/expression.ts";

/** `{"value": V, "type": T}` or `{"error": E, "stage": S}`: the `-o json` and `--batch` line. */
export function expressionJson(o: ExpressionOutcome): Record<string, unknown> {
  return o.ok ? { value: toJson(o.value), type: o.type } : { error: o.error, stage: o.stage };
}

/**
 * The value as indented JSON with its CEL type after it: `3 (int)`, `"a" (string)`, and for lists
 * and maps the type after the closing bracket.
 */
export function renderValue(value: CelValue, type: string = typeName(value)): string {
  return `${JSON.stringify(toJson(value), null, 2)} (${type})`;
}

/** The text output of `celgate expr`: the value and type, or the error with its caret. */
export function renderExpressionOutcome(o: ExpressionOutcome): string {
  if (o.ok) return `${renderValue(o.value, o.type)}\n`;
  const text = o.rendered ?? (o.error.startsWith("ERROR: ") ? o.error : `ERROR: ${o.error}`);
  return `${text}\n`;
}
