/**
 * What the debug trace may show of a request's values. At `--log-level debug` each policy's trace is
 * logged with the values its expressions produced, and those come from the object under review. By
 * default they are redacted where they are likely to be secret:
 * - every value, explanation and error of a review of a Secret (its `data` and `stringData`, and
 *   anything computed from them);
 * - the value of a step whose expression reads a field named like a credential (`password`,
 *   `token`, `secret`, `apiKey`, ...), and any member of that name inside a value;
 * - the `because` lines that name such a field, from their first ` = ` on.
 * `serve --log-values` logs them as they are.
 */
import type { PolicyResult, TraceStep } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";

export const REDACTED = "[redacted]";

/** Field and key names that usually hold credentials. */
const CREDENTIAL =
  /pass(word|wd|phrase)|secret|token|credential|api[-_]?key|private[-_]?key|access[-_]?key|client[-_]?key|(?<![a-z])auth(?![a-z])|authorization|bearer|cookie|dockerconfig|session[-_]?key|signing[-_]?key/i;

export function namesCredential(text: string): boolean {
  return CREDENTIAL.test(text);
}

/** Whether the request's object is a Secret (core/v1), whose every value is redacted. */
export function isSecretRequest(request: AdmissionRequest): boolean {
  const kinds = [request.kind, request.requestKind];
  return kinds.some((k) => k !== undefined && k.group === "" && k.kind === "Secret");
}

/** `value` with every member named like a credential replaced, at any depth. */
export function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[k] = namesCredential(k) ? REDACTED : redactValue(v);
  return out;
}

function redactStep(step: TraceStep, secret: boolean): TraceStep {
  const out: { -readonly [K in keyof TraceStep]: TraceStep[K] } = { ...step };
  if (secret) {
    if ("value" in step) out.value = REDACTED;
    if (step.error !== undefined) out.error = REDACTED;
    if (step.because !== undefined) out.because = [REDACTED];
    return out;
  }
  if ("value" in step) out.value = namesCredential(step.expression) ? REDACTED : redactValue(step.value);
  if (step.because !== undefined)
    out.because = step.because.map((line) => {
      if (!namesCredential(line)) return line;
      const at = line.indexOf(" = ");
      return at === -1 ? REDACTED : `${line.slice(0, at)} = ${REDACTED}`;
    });
  return out;
}

/** The results' traces as the debug log may show them (see the module comment); `secret`: the object is a Secret. */
export function redactResults(results: readonly PolicyResult[], secret: boolean): readonly PolicyResult[] {
  return results.map((r) => ({ ...r, trace: r.trace.map((s) => redactStep(s, secret)) }));
}
