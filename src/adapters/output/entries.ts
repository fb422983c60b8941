/**
 * Dry-run results as data: what the policies said about one resource (a ResourceEvaluation), one
 * entry per (policy, binding, param) evaluation, and the per-resource report `eval -o json|yaml`
 * prints (the decision, then every entry). Nothing here decides anything; the engine's results and
 * decision.ts's decision are only laid out.
 */
import fastJsonPatch from "fast-json-patch";
import { stringify as yamlStringify } from "yaml";
import type { DefaultedField, ResourceRef } from "../../engine/request.ts";
import type { AdmissionDecision, JsonPatchOp, PolicyResult, TraceStep } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import { stringifyJson } from "../../request/json-deep.ts";

export type { DefaultedField, ResourceRef };

/** Everything the policies said about one resource: mutations first, then validations. */
export interface ResourceEvaluation {
  readonly resource: ResourceRef;
  /** The object as given, before any mutation; null for DELETE. */
  readonly original: unknown;
  readonly results: readonly PolicyResult[];
  readonly allowed: boolean;
  /** The first denial's message, as the API server would report it. */
  readonly denial?: string;
  /** The first denial's status: code, reason and message. */
  readonly status?: AdmissionDecision["status"];
  readonly warnings: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  /** From the original object to the mutated one; absent when no mutation changed it. */
  readonly patch?: readonly JsonPatchOp[];
  /** The object after every mutation; absent when no mutation changed it. */
  readonly mutated?: unknown;
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
    auditAnnotations: decision.auditAnnotations,
  };
  if (decision.status) {
    out.denial = decision.status.message;
    out.status = decision.status;
  }
  if (decision.patch && decision.patch.length > 0) {
    out.patch = decision.patch;
    out.mutated = decision.patchedObject;
  }
  return out;
}

export interface ResultEntry {
  readonly resource: ResourceRef;
  readonly policy: string;
  readonly policyKind: PolicyResult["policyKind"];
  /** null: the policy has no binding and was evaluated as if bound with validationActions [Deny]. */
  readonly binding: string | null;
  readonly param?: string;
  /**
   * A mutating policy's second run, in the reinvocation pass (`reinvocationPolicy: IfNeeded`, after
   * a later policy changed the object).
   */
  readonly reinvocation?: true;
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

/**
 * Which mutating results belong to the reinvocation pass. The engine runs every subject once, then
 * the IfNeeded ones again (engine/mutating.ts), so a (policy, binding, param) seen before is a
 * second run.
 */
function reinvocations(results: readonly PolicyResult[]): boolean[] {
  const seen = new Set<string>();
  return results.map((r) => {
    if (r.policyKind !== "MutatingAdmissionPolicy") return false;
    const key = `${r.policy}\u0000${r.binding ?? ""}\u0000${r.param ?? ""}`;
    if (seen.has(key)) return true;
    seen.add(key);
    return false;
  });
}

/** The entries for one resource, each mutation's `patched` being the object after it. */
export function resultEntries(ev: ResourceEvaluation, options: { explain?: boolean } = {}): ResultEntry[] {
  let working: unknown = ev.original;
  const again = reinvocations(ev.results);
  return ev.results.map((r, i) => {
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
      ...(again[i] ? { reinvocation: true as const } : {}),
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

/** What the API server would answer about one resource (decision.ts's decision, as data). */
export interface DecisionReport {
  readonly allowed: boolean;
  readonly status?: { readonly code: number; readonly reason: string; readonly message: string };
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** The JSON Patch from the object as admitted to the mutated one; absent when nothing changed. */
  readonly patch?: readonly JsonPatchOp[];
}

/** One resource in `eval -o json|yaml`: which it is, the decision on it, and every policy's entry. */
export interface ResourceReport {
  readonly resource: ResourceRef;
  readonly decision: DecisionReport;
  /** With --explain: the fields the API server's defaulting set. */
  readonly defaulted?: readonly DefaultedField[];
  /** Every evaluation, skipped ones included (only the table hides those). */
  readonly results: readonly Omit<ResultEntry, "resource" | "defaulted">[];
}

export function resourceReport(ev: ResourceEvaluation, options: { explain?: boolean } = {}): ResourceReport {
  const decision: DecisionReport = {
    allowed: ev.allowed,
    ...(ev.status ? { status: ev.status } : {}),
    warnings: ev.warnings,
    auditAnnotations: ev.auditAnnotations ?? {},
    ...(ev.patch ? { patch: ev.patch } : {}),
  };
  return {
    resource: ev.resource,
    decision,
    ...(options.explain && ev.defaulted?.length ? { defaulted: ev.defaulted } : {}),
    results: resultEntries(ev, { explain: options.explain ?? false }).map(
      ({ resource: _resource, defaulted: _defaulted, ...entry }) => entry,
    ),
  };
}

export function formatResultsJson(
  evs: readonly ResourceEvaluation[],
  options: { explain?: boolean } = {},
): string {
  // A patch or an object may hold an int64 beyond 2^53 (a bigint), written as its digits.
  return `${stringifyJson(
    evs.map((e) => resourceReport(e, options)),
    2,
  )}\n`;
}

export function formatResultsYaml(
  evs: readonly ResourceEvaluation[],
  options: { explain?: boolean } = {},
): string {
  // Reports share objects (a status, a patch); aliases (&a1/*a1) would be correct YAML but hard to read.
  return yamlStringify(
    evs.map((e) => resourceReport(e, options)),
    { aliasDuplicateObjects: false, lineWidth: 0 },
  );
}
