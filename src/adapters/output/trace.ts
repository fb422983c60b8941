/**
 * The explain lines under a result: each step of the trace with its value and cost, the `because`
 * lines that say which element made a validation false, and the fields the API server's defaults
 * set that a failed expression names.
 */
import type { TraceStep } from "../../engine/types.ts";
import type { DefaultedField } from "./entries.ts";
import { stringifyJson } from "../../request/json-deep.ts";

export function compact(v: unknown): string {
  return v === undefined ? "undefined" : stringifyJson(v);
}

/** `object.spec.replicas = 1`, `object.spec.sessionAffinityConfig removed`. */
export function defaultedLine(f: DefaultedField): string {
  return f.removed ? `${f.path} removed` : `${f.path} = ${compact(f.value)}`;
}

/** The field a defaulted path ends in: `imagePullPolicy`, `kubernetes.io/metadata.name`. */
function lastField(path: string): string {
  const m = /(?:\.([A-Za-z_$][\w$]*)|\["((?:[^"\\]|\\.)*)"\])(?:\[\d+\])*$/.exec(path);
  return m?.[1] ?? m?.[2] ?? path;
}

/**
 * The defaulted fields a failed or erring expression names (as `.field`, `?.field` or a quoted map
 * key): a hint that the decision read a value the manifest did not set.
 */
function defaultedNamed(expression: string, defaulted: readonly DefaultedField[]): DefaultedField[] {
  return defaulted.filter((f) => {
    const name = lastField(f.path);
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(?:\\.|\\?\\.)${escaped}(?![\\w$])|['"]${escaped}['"]`).test(expression);
  });
}

export function traceLines(steps: readonly TraceStep[], defaulted: readonly DefaultedField[] = []): string[] {
  return steps.flatMap((s) => {
    const name = /^\d+$/.test(s.name) ? `[${s.name}]` : s.name ? ` '${s.name}'` : "";
    const result = s.error !== undefined ? `error: ${s.error}` : compact(s.value);
    const head = `${s.stage}${name}: ${s.expression.trim().replace(/\s*\n\s*/g, " ")} → ${result} (cost ${s.cost})`;
    const decisive = s.error !== undefined || s.value === false;
    const reads = decisive ? defaultedNamed(s.expression, defaulted) : [];
    return [
      head,
      ...(s.because ?? []).map((b) => `  because ${b}`),
      ...reads.map((f) => `  names a field the API server defaulted: ${defaultedLine(f)}`),
    ];
  });
}
