/**
 * Rendering of dry-run results (`celgate eval`, and later the REPL and test runner): one entry per
 * (resource, policy, binding, param), as JSON, YAML or an aligned table with mutation diffs and
 * explain traces. Nothing here decides anything; the engine's results are only laid out.
 */
import fastJsonPatch from "fast-json-patch";
import { stringify as yamlStringify } from "yaml";
import type { AdmissionDecision, JsonPatchOp, PolicyResult, TraceStep } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import { plural } from "./diagnostics.ts";
import { lineDiff } from "./diff.ts";

/** Which object a result is about. */
import type { DefaultedField, ResourceRef } from "../../engine/request.ts";

export type { DefaultedField, ResourceRef };

/** Everything the policies said about one resource: mutations first, then validations. */
export interface ResourceEvaluation {
  readonly resource: ResourceRef;
  /** The object as given, before any mutation; null for DELETE. */
  readonly original: unknown;
  readonly results: readonly PolicyResult[];
  readonly allowed: boolean;
  /** The first denial, as the API server would report it. */
  readonly denial?: string;
  readonly warnings: readonly string[];
  /** What the API server's defaulting changed, paths from `object.`/`oldObject.` (shown with explain). */
  readonly defaulted?: readonly DefaultedField[];
}

/** What `eval` and the REPL show for one resource: the chain's decision on its request. */
export function resourceEvaluation(
  resource: ResourceRef,
  request: AdmissionRequest,
  decision: AdmissionDecision,
): ResourceEvaluation {
  const out: { -readonly [K in keyof ResourceEvaluation]: ResourceEvaluation[K] } = {
    resource,
    original: request.operation === "DELETE" ? request.oldObject : request.object,
    results: decision.results,
    allowed: decision.allowed,
    warnings: decision.warnings,
  };
  if (decision.status) out.denial = decision.status.message;
  return out;
}

export interface ResultEntry {
  readonly resource: ResourceRef;
  readonly policy: string;
  readonly policyKind: PolicyResult["policyKind"];
  /** null: the policy has no binding and was evaluated as if bound with validationActions [Deny]. */
  readonly binding: string | null;
  readonly param?: string;
  readonly outcome: PolicyResult["outcome"];
  readonly violations: readonly {
    readonly message: string;
    readonly reason: string;
    readonly code: number;
    readonly action: string;
    readonly expressionIndex: number;
  }[];
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** Mutations only: the operations this policy contributed, and the object after them. */
  readonly patch?: readonly JsonPatchOp[];
  readonly patched?: unknown;
  /** Why the policy was skipped. */
  readonly reason?: string;
  readonly error?: string;
  readonly errorKind?: string;
  /** With --explain. */
  readonly trace?: readonly TraceStep[];
  /** With --explain: the fields the API server's defaulting set in the resource's objects. */
  readonly defaulted?: readonly DefaultedField[];
}

export const UNBOUND_BINDING_NOTE = "no binding: evaluated as if bound with validationActions [Deny]";

function label(r: PolicyResult): string {
  return r.binding
    ? `${r.policyKind} '${r.policy}' with binding '${r.binding}'`
    : `${r.policyKind} '${r.policy}'`;
}

function apply(doc: unknown, patch: readonly JsonPatchOp[]): unknown {
  try {
    // The patch is cloned too: fast-json-patch inserts an `add`'s value itself, which a later
    // operation into it (the defaults of an added container) would then change in the decision.
    return fastJsonPatch.applyPatch(
      fastJsonPatch.deepClone(doc),
      fastJsonPatch.deepClone(patch) as fastJsonPatch.Operation[],
      false,
      false,
    ).newDocument;
  } catch {
    return undefined;
  }
}

/** The entries for one resource, each mutation's `patched` being the object after it. */
export function resultEntries(ev: ResourceEvaluation, options: { explain?: boolean } = {}): ResultEntry[] {
  let working: unknown = ev.original;
  return ev.results.map((r) => {
    let mutation: { patch?: readonly JsonPatchOp[]; patched?: unknown } = {};
    if (r.policyKind === "MutatingAdmissionPolicy" && r.patch) {
      const next = working === undefined ? undefined : apply(working, r.patch);
      working = next;
      mutation = { patch: r.patch, ...(next === undefined ? {} : { patched: next }) };
    }
    const warnings = [
      ...r.warnings,
      ...r.violations
        .filter((v) => v.action === "Warn")
        .map((v) => `Validation failed for ${label(r)}: ${v.message}`),
    ];
    return {
      resource: ev.resource,
      policy: r.policy,
      policyKind: r.policyKind,
      binding: r.binding ?? null,
      ...(r.param !== undefined ? { param: r.param } : {}),
      outcome: r.outcome,
      violations: r.violations.map((v) => ({
        message: v.message,
        reason: v.reason,
        code: v.code,
        action: v.action,
        expressionIndex: v.expressionIndex,
      })),
      warnings,
      auditAnnotations: r.auditAnnotations,
      ...mutation,
      ...(r.outcome === "skip" && r.reason !== undefined ? { reason: r.reason } : {}),
      ...(r.outcome === "error" && r.reason !== undefined ? { error: r.reason } : {}),
      ...(r.outcome === "error" && r.errorKind !== undefined ? { errorKind: r.errorKind } : {}),
      ...(options.explain ? { trace: r.trace } : {}),
      ...(options.explain && ev.defaulted?.length ? { defaulted: ev.defaulted } : {}),
    };
  });
}

export function formatResultsJson(
  evs: readonly ResourceEvaluation[],
  options: { explain?: boolean } = {},
): string {
  return `${JSON.stringify(
    evs.flatMap((e) => resultEntries(e, options)),
    null,
    2,
  )}\n`;
}

export function formatResultsYaml(
  evs: readonly ResourceEvaluation[],
  options: { explain?: boolean } = {},
): string {
  // Entries share their resource object; aliases (&a1/*a1) would be correct YAML but hard to read.
  return yamlStringify(
    evs.flatMap((e) => resultEntries(e, options)),
    { aliasDuplicateObjects: false, lineWidth: 0 },
  );
}

/** `Deployment default/web`, `Namespace prod`. */
export function resourceLabel(r: ResourceRef): string {
  const name = r.name === "" ? "(no name)" : r.name;
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${name}`;
}

/** Violations not already on the row: after the first of a failure; for an error, the denials failurePolicy Fail adds. */
function extraViolations(e: ResultEntry): ResultEntry["violations"] {
  if (e.outcome === "fail") return e.violations.slice(1);
  if (e.outcome === "error") return e.violations.filter((v) => v.message !== e.error);
  return e.violations;
}

function rowMessage(e: ResultEntry): string {
  switch (e.outcome) {
    case "fail": {
      const v = e.violations[0];
      return v ? `[${v.action}] ${v.message}` : "";
    }
    case "error": {
      // failurePolicy Fail turns the error into denials; Ignore lets the request through.
      const actions = [...new Set(e.violations.map((v) => v.action))];
      const verdict = actions.length > 0 ? `[${actions.join(", ")}] ` : "[ignored] ";
      return `${verdict}${e.error ?? ""}`;
    }
    case "skip":
      return e.reason ?? "";
    case "pass":
      if (e.patch === undefined) return "";
      return e.patch.length === 0
        ? "no change"
        : `mutated: ${plural(e.patch.length, "operation", "operations")}`;
  }
}

function compact(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? "undefined" : s;
}

/** `object.spec.replicas = 1`, `object.spec.sessionAffinityConfig removed`. */
function defaultedLine(f: DefaultedField): string {
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

function traceLines(steps: readonly TraceStep[], defaulted: readonly DefaultedField[] = []): string[] {
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

function mutationLines(e: ResultEntry, before: unknown): string[] {
  if (!e.patch || e.patch.length === 0) return [];
  if (e.patched !== undefined) {
    const opts = { aliasDuplicateObjects: false, lineWidth: 0 } as const;
    const diff = lineDiff(yamlStringify(before ?? null, opts), yamlStringify(e.patched, opts));
    if (diff) return diff;
  }
  return e.patch.map((op) => `${op.op} ${op.path}${"value" in op ? ` ${compact(op.value)}` : ""}`);
}

function pad(s: string, width: number): string {
  return s + " ".repeat(Math.max(0, width - [...s].length));
}

/**
 * The table for people: one aligned row per result, the extra violations, mutation diffs and (with
 * explain) traces indented under their row, then each resource's verdict and a summary line.
 */
export function formatResultsTable(
  evs: readonly ResourceEvaluation[],
  options: { explain?: boolean } = {},
): string {
  const entries = evs.map((ev) => ({
    ev,
    entries: resultEntries(ev, { explain: options.explain ?? false }),
  }));
  // The PARAM column only when some policy has params, to keep the common table narrow.
  const withParams = entries.some((x) => x.entries.some((e) => e.param !== undefined));
  const header = ["RESOURCE", "POLICY", "BINDING", ...(withParams ? ["PARAM"] : []), "OUTCOME", "MESSAGE"];
  const rows: { cells: string[]; extra: string[] }[] = [];
  let anyUnbound = false;
  for (const { ev, entries: list } of entries) {
    let before: unknown = ev.original;
    for (const e of list) {
      if (e.binding === null) anyUnbound = true;
      const extra = [
        ...extraViolations(e).map((v) => `[${v.action}] ${v.message}`),
        ...mutationLines(e, before),
        ...(e.trace ? traceLines(e.trace, e.defaulted) : []),
      ];
      if (e.patched !== undefined) before = e.patched;
      rows.push({
        cells: [
          resourceLabel(e.resource),
          e.policy,
          e.binding ?? "(none)*",
          ...(withParams ? [e.param ?? "-"] : []),
          e.outcome,
          rowMessage(e),
        ],
        extra,
      });
    }
  }
  const out: string[] = [];
  if (rows.length === 0) out.push("no policies to evaluate");
  else {
    const widths = header.map((h, i) =>
      Math.max([...h].length, ...rows.map((r) => [...(r.cells[i] ?? "")].length)),
    );
    const line = (cells: readonly string[]) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i] ?? 0)))
        .join("  ")
        .trimEnd();
    out.push(line(header));
    for (const r of rows) {
      out.push(line(r.cells));
      for (const x of r.extra) out.push(`    ${x}`);
    }
  }
  if (anyUnbound) out.push(`* ${UNBOUND_BINDING_NOTE}`);
  out.push("");
  for (const ev of evs) {
    if (options.explain && ev.defaulted?.length) {
      out.push(`${resourceLabel(ev.resource)}: the API server's defaults set:`);
      for (const f of ev.defaulted) out.push(`    ${defaultedLine(f)}`);
    }
    for (const w of ev.warnings) out.push(`Warning: ${resourceLabel(ev.resource)}: ${w}`);
    if (!ev.allowed) out.push(`${resourceLabel(ev.resource)}: denied: ${ev.denial ?? "denied"}`);
  }
  const denied = evs.filter((e) => !e.allowed).length;
  const errors = evs.flatMap((e) => e.results).filter((r) => r.outcome === "error").length;
  out.push(
    `${plural(evs.length, "resource", "resources")}: ${evs.length - denied} allowed, ${denied} denied${errors ? `, ${plural(errors, "evaluation error", "evaluation errors")}` : ""}`,
  );
  return `${out.join("\n")}\n`;
}
