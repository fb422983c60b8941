/**
 * What the debug trace may show of a request's values. At `--log-level debug` each policy's trace is
 * logged with the values its expressions produced, and those come from the object under review. The
 * evaluator does not track where a value came from, so redaction is conservative, in three layers:
 * - a Secret's review: every value, explanation and error is replaced;
 * - a step that reads a sensitive place, directly or through a variable that does: its value and
 *   its explanation lines. Sensitive places are fields named `data`, `stringData`, `binaryData`
 *   (a Secret's or ConfigMap's contents, and a param ConfigMap's), `env` (container environment
 *   values) and fields named like a credential (`password`, `token`, `secret`, `apiKey`, ...);
 * - whatever is left: every string in the trace (values at any depth, explanations, errors, reasons)
 *   that holds one of the request's sensitive values (ConfigMap data, env values, credential-named
 *   fields, in object and oldObject) has it replaced, however an expression moved it, and a member
 *   named like a credential is replaced inside any value.
 * A value that an expression transforms (upper-cased, split, decoded) without naming a sensitive
 * place is the one case these miss. `serve --log-values` logs the trace as it is.
 *
 * `serve --record` (recorder.ts) keeps the reviews it receives with the same rules, applied to the
 * review instead of a trace (redactRequest, redactResponse): a Secret's `data` and `stringData`
 * values, every sensitive value wherever a string holds it (a `last-applied-configuration`
 * annotation, a message), and every member named like a credential.
 */
import type { JsonPatchOp, PolicyResult, TraceStep } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";

type JsonObject = Readonly<Record<string, unknown>>;

export const REDACTED = "[redacted]";

/** Field and key names that usually hold credentials. */
const CREDENTIAL =
  /pass(word|wd|phrase)|secret|token|credential|api[-_]?key|private[-_]?key|access[-_]?key|client[-_]?key|(?<![a-z])auth(?![a-z])|authorization|bearer|cookie|dockerconfig|session[-_]?key|signing[-_]?key/i;

export function namesCredential(text: string): boolean {
  return CREDENTIAL.test(text);
}

/** Field names whose contents are sensitive (module comment), as an expression names them. */
const SENSITIVE_FIELD = /(?<![\w$])(?:data|stringData|binaryData|env)(?![\w$])/;

/** Whether the request's object is a Secret (core/v1), whose every value is redacted. */
export function isSecretRequest(request: AdmissionRequest): boolean {
  const kinds = [request.kind, request.requestKind];
  return kinds.some((k) => k !== undefined && k.group === "" && k.kind === "Secret");
}

/** What of a request the debug trace must not show; plain data, so it crosses to the log from the slow lane. */
export interface Sensitive {
  /** The object is a Secret: nothing of its trace is shown. */
  readonly secret: boolean;
  /**
   * The request's sensitive string values (module comment), replaced wherever they appear; for a
   * Secret, its data and stringData values, each also as it reads inside JSON text.
   */
  readonly values: readonly string[];
}

export const NOTHING_SENSITIVE: Sensitive = { secret: false, values: [] };

/**
 * The request's sensitive values: ConfigMap data and binaryData values, env lists' values, and
 * credential-named fields' string values, in object and oldObject. One pass over each object with
 * an explicit stack: linear in its size, whatever its depth.
 */
export function sensitiveOf(request: AdmissionRequest): Sensitive {
  if (isSecretRequest(request)) return { secret: true, values: secretValues(request) };
  const values = new Set<string>();
  const configMap = request.kind.group === "" && request.kind.kind === "ConfigMap";
  // `env`: a container's environment list, whose items' `value`s are sensitive (not their names).
  type Mode = "plain" | "sensitive" | "env" | "envItem";
  const stack: { readonly node: unknown; readonly mode: Mode }[] = [];
  for (const o of [request.object, request.oldObject]) {
    if (o === null) continue;
    stack.push({ node: o, mode: "plain" });
    // A ConfigMap's contents (its data is walked twice: linear still).
    if (configMap) for (const k of ["data", "binaryData"]) stack.push({ node: o[k], mode: "sensitive" });
  }
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { node, mode } = item;
    if (typeof node === "string") {
      if (mode === "sensitive" && node !== "") values.add(node);
    } else if (Array.isArray(node)) {
      const inner = mode === "env" ? "envItem" : mode === "sensitive" ? "sensitive" : "plain";
      for (const v of node) stack.push({ node: v, mode: inner });
    } else if (node !== null && typeof node === "object") {
      for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
        const sensitive = mode === "sensitive" || namesCredential(k) || (mode === "envItem" && k === "value");
        stack.push({ node: v, mode: sensitive ? "sensitive" : k === "env" ? "env" : "plain" });
      }
    }
  }
  return { secret: false, values: [...values] };
}

/** The keys of a Secret whose values are its contents. */
const SECRET_CONTENTS = ["data", "stringData"] as const;

/**
 * A Secret's data and stringData values, in object and oldObject; each also as JSON text writes it
 * (quotes, newlines and backslashes escaped), as a `last-applied-configuration` annotation holds it.
 */
function secretValues(request: AdmissionRequest): string[] {
  const values = new Set<string>();
  for (const o of [request.object, request.oldObject]) {
    if (o === null) continue;
    for (const key of SECRET_CONTENTS) {
      const contents = o[key];
      if (contents === null || typeof contents !== "object" || Array.isArray(contents)) continue;
      for (const v of Object.values(contents)) {
        if (typeof v !== "string" || v === "") continue;
        values.add(v);
        const escaped = JSON.stringify(v).slice(1, -1);
        if (escaped !== v) values.add(escaped);
      }
    }
  }
  return [...values];
}

/** Values this short are replaced only where a string is exactly one of them, not inside others. */
const SHORTEST_INSIDE = 4;

/** `text` with every sensitive value in it replaced. */
function scrubString(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of values) {
    if (v.length < SHORTEST_INSIDE) {
      if (out === v) return REDACTED;
    } else if (out.includes(v)) out = out.split(v).join(REDACTED);
  }
  return out;
}

/** `value` with every member named like a credential replaced, and every sensitive value, at any depth. */
export function redactValue(value: unknown, values: readonly string[] = []): unknown {
  if (typeof value === "string") return scrubString(value, values);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, values));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[scrubString(k, values)] = namesCredential(k) ? REDACTED : redactValue(v, values);
  return out;
}

/** Whether an expression reads a sensitive place, or a variable in `tainted`. */
function readsSensitive(expression: string, tainted: ReadonlySet<string>): boolean {
  if (SENSITIVE_FIELD.test(expression) || namesCredential(expression)) return true;
  for (const m of expression.matchAll(/variables\s*\.\s*([A-Za-z_][\w]*)/g))
    if (tainted.has(m[1] as string)) return true;
  return false;
}

/**
 * The variables of a trace whose values come from a sensitive place, directly or through another
 * variable: repeated until nothing changes, since a variable may read one listed after it.
 */
function taintedVariables(trace: readonly TraceStep[]): Set<string> {
  const tainted = new Set<string>();
  const variables = trace.filter((s) => s.stage === "variable");
  for (let changed = true; changed; ) {
    changed = false;
    for (const v of variables)
      if (!tainted.has(v.name) && readsSensitive(v.expression, tainted)) {
        tainted.add(v.name);
        changed = true;
      }
  }
  return tainted;
}

function redactStep(step: TraceStep, tainted: ReadonlySet<string>, s: Sensitive): TraceStep {
  const out: { -readonly [K in keyof TraceStep]: TraceStep[K] } = { ...step };
  if (s.secret) {
    if ("value" in step) out.value = REDACTED;
    if (step.error !== undefined) out.error = REDACTED;
    if (step.because !== undefined) out.because = [REDACTED];
    return out;
  }
  const reads = readsSensitive(step.expression, tainted);
  if ("value" in step) out.value = reads ? REDACTED : redactValue(step.value, s.values);
  if (step.error !== undefined) out.error = scrubString(step.error, s.values);
  if (step.because !== undefined)
    out.because = step.because.map((line) => {
      // An explanation line is `subexpression = value`: the subexpression is policy text.
      const at = line.indexOf(" = ");
      if (reads || namesCredential(line)) return at === -1 ? REDACTED : `${line.slice(0, at)} = ${REDACTED}`;
      return scrubString(line, s.values);
    });
  return out;
}

/** The results' traces as the debug log may show them (see the module comment). */
export function redactResults(results: readonly PolicyResult[], s: Sensitive): readonly PolicyResult[] {
  return results.map((r) => {
    const tainted = taintedVariables(r.trace);
    return {
      ...r,
      ...(r.reason !== undefined ? { reason: s.secret ? REDACTED : scrubString(r.reason, s.values) } : {}),
      trace: r.trace.map((step) => redactStep(step, tainted, s)),
    };
  });
}

/** `object` with a Secret's contents replaced, key by key (the keys stay: policies test for them). */
function withoutSecretContents(object: JsonObject | null): JsonObject | null {
  if (object === null) return null;
  const out: Record<string, unknown> = { ...object };
  for (const key of SECRET_CONTENTS) {
    const contents = object[key];
    if (contents === null || typeof contents !== "object" || Array.isArray(contents)) continue;
    out[key] = Object.fromEntries(Object.keys(contents).map((k) => [k, REDACTED]));
  }
  return out as JsonObject;
}

/**
 * The request as `serve --record` keeps it (module comment): a Secret's contents replaced, every
 * sensitive value replaced wherever it appears, every member named like a credential replaced.
 */
export function redactRequest(
  request: AdmissionRequest,
  s: Sensitive = sensitiveOf(request),
): AdmissionRequest {
  const emptied = s.secret
    ? {
        ...request,
        object: withoutSecretContents(request.object),
        oldObject: withoutSecretContents(request.oldObject),
      }
    : request;
  const out = redactValue(emptied, s.values) as AdmissionRequest;
  const extra = request.userInfo.extra;
  if (extra === undefined) return out;
  // The user's extra values stay lists of strings, as the AdmissionReview decoder requires of them.
  const kept: Record<string, readonly string[]> = {};
  for (const [k, v] of Object.entries(extra))
    kept[scrubString(k, s.values)] = namesCredential(k) ? [REDACTED] : v.map((x) => scrubString(x, s.values));
  return { ...out, userInfo: { ...out.userInfo, extra: kept } };
}

/**
 * A JSON Patch as `serve --record` keeps it: values scrubbed as redactValue scrubs them, and the
 * whole value of an operation whose path ends in a credential-named member (or, for a Secret, in
 * its contents) replaced.
 */
export function redactPatch(ops: readonly JsonPatchOp[], s: Sensitive): JsonPatchOp[] {
  return ops.map((op) => {
    if (!("value" in op)) return { ...op, path: scrubString(op.path, s.values) };
    const last = op.path.slice(op.path.lastIndexOf("/") + 1);
    const inSecret = s.secret && /^\/(?:data|stringData)(?:\/|$)/.test(op.path);
    const value = namesCredential(last) || inSecret ? REDACTED : redactValue(op.value, s.values);
    return { ...op, path: scrubString(op.path, s.values), value };
  });
}

/** A reply's texts (message, warnings, audit annotations) with every sensitive value replaced. */
export function redactText(text: string, s: Sensitive): string {
  return scrubString(text, s.values);
}
