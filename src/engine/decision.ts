/**
 * Combines per-policy results into the one decision every adapter renders. Enforcement lives
 * here and only here: Deny denies, Warn warns, Audit annotates — as the API server's validating
 * dispatcher does, the first denial gives the status, and every violation stays in the results.
 */
import { VALIDATION_FAILURE_ANNOTATION } from "./constants.ts";
import type { AdmissionDecision, JsonPatchOp, PolicyResult } from "./types.ts";

function label(r: PolicyResult): string {
  return r.binding
    ? `${r.policyKind} '${r.policy}' with binding '${r.binding}'`
    : `${r.policyKind} '${r.policy}'`;
}

/**
 * The denial status. Mutating policies are denied through Kubernetes' generic policy error, worded
 * `policy 'p' with binding 'b' denied request: ...` with 403 and reason Invalid.
 */
function denial(
  r: PolicyResult,
  v: { code: number; reason: string; message: string },
): NonNullable<AdmissionDecision["status"]> {
  if (r.policyKind === "MutatingAdmissionPolicy") {
    const who = r.binding ? `policy '${r.policy}' with binding '${r.binding}'` : `policy '${r.policy}'`;
    return { code: 403, reason: "Invalid", message: `${who} denied request: ${v.message}` };
  }
  return { code: v.code, reason: v.reason, message: `${label(r)} denied request: ${v.message}` };
}

/** What a decision without a mutation passes as `mutation`. */
export const NO_MUTATION: { readonly patch?: readonly JsonPatchOp[]; readonly patchedObject?: unknown } =
  Object.freeze({});

/**
 * Empty lists and maps in results and decisions, shared rather than built for each: allocations on
 * a review's path cost more than their size (they write fresh memory and bring scavenges closer).
 */
export const NO_WARNINGS: readonly string[] = Object.freeze([]);
export const NO_ANNOTATIONS: Readonly<Record<string, string>> = Object.freeze({});

export function combine(
  results: readonly PolicyResult[],
  mutation: { readonly patch?: readonly JsonPatchOp[]; readonly patchedObject?: unknown },
): AdmissionDecision {
  let status: AdmissionDecision["status"];
  let warnings: string[] | undefined;
  let auditAnnotations: Record<string, string> | undefined;
  /** Which binding set each annotation: params of one binding join their values, other bindings cannot overwrite. */
  let setBy: Map<string, string> | undefined;
  let auditFailures: unknown[] | undefined;
  let cost = 0;
  // This runs once per review over every policy's result, most with nothing to annotate or warn:
  // what only an annotation or a warning needs is built only when there is one.
  for (const r of results) {
    cost += r.cost;
    // A for-in sets up an enumeration even over the shared empty map: skip it for that one.
    if (r.auditAnnotations !== NO_ANNOTATIONS)
      for (const k in r.auditAnnotations) {
        const val = r.auditAnnotations[k] as string;
        const owner = `${r.policy}\u0000${r.binding ?? ""}`;
        setBy ??= new Map();
        auditAnnotations ??= {};
        const prev = setBy.get(k);
        if (prev === undefined) {
          auditAnnotations[k] = val;
          setBy.set(k, owner);
        } else if (prev === owner && auditAnnotations[k] !== val) {
          auditAnnotations[k] = `${auditAnnotations[k]}, ${val}`;
        }
      }
    if (r.warnings.length > 0) {
      warnings ??= [];
      for (const w of r.warnings) warnings.push(w);
    }
    for (const v of r.violations) {
      if (v.action === "Deny") {
        status ??= denial(r, v);
      } else if (v.action === "Warn") {
        warnings ??= [];
        warnings.push(`Validation failed for ${label(r)}: ${v.message}`);
      } else {
        auditFailures ??= [];
        auditFailures.push({
          message: v.message,
          policy: r.policy,
          binding: r.binding,
          expressionIndex: v.expressionIndex,
          validationActions: r.validationActions ?? ["Audit"],
        });
      }
    }
  }
  if (auditFailures !== undefined) {
    auditAnnotations ??= {};
    auditAnnotations[VALIDATION_FAILURE_ANNOTATION] = JSON.stringify(auditFailures);
  }
  // Built key by key rather than with conditional spreads, which V8 builds slowly; this runs once
  // per review. The key order is the one decisions have always printed in.
  const decision = { allowed: status === undefined } as {
    -readonly [K in keyof AdmissionDecision]: AdmissionDecision[K];
  };
  if (status) decision.status = status;
  decision.warnings =
    warnings === undefined ? NO_WARNINGS : warnings.length > 1 ? [...new Set(warnings)] : warnings;
  decision.auditAnnotations = auditAnnotations ?? NO_ANNOTATIONS;
  if (mutation.patch && mutation.patch.length > 0) {
    decision.patch = mutation.patch;
    decision.patchedObject = mutation.patchedObject;
  }
  decision.results = results;
  decision.cost = cost;
  return decision;
}
