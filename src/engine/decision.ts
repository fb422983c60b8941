/**
 * Enforcement: turns what the engine found (per-policy results with their violations and the
 * binding's validationActions) into the one decision every adapter renders. Deny denies, Warn
 * warns, Audit annotates, as the API server's validating dispatcher does (kubernetes
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go): the first
 * denial gives the status, and every violation stays in the results.
 *
 * The evaluator never calls this; the edges that answer do: the webhook (per phase), `eval`,
 * `test`, the REPL and the library's `admit`, so they cannot disagree.
 */
import { VALIDATION_FAILURE_ANNOTATION } from "./constants.ts";
import { NO_ANNOTATIONS, NO_WARNINGS } from "./results.ts";
import type { Admission, AdmissionDecision, PolicyResult } from "./types.ts";

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
  // A StatusError (an InternalError) reaches the client as it is, without the policy's name.
  if (v.reason === "InternalError") return { code: v.code, reason: v.reason, message: v.message };
  if (r.policyKind === "MutatingAdmissionPolicy") {
    const who = r.binding ? `policy '${r.policy}' with binding '${r.binding}'` : `policy '${r.policy}'`;
    return { code: 403, reason: "Invalid", message: `${who} denied request: ${v.message}` };
  }
  return { code: v.code, reason: v.reason, message: `${label(r)} denied request: ${v.message}` };
}

/**
 * Adds one policy's audit annotation to what the request publishes, as validating/dispatcher.go's
 * auditAnnotationCollector does: the values a policy's bindings and params give one key are kept in
 * order, a value already there is not added again, and several are joined with ", ". (Keys carry
 * their policy's name, so different policies never share one.)
 */
function collect(values: Map<string, string[]>, key: string, value: string): void {
  const seen = values.get(key);
  if (seen === undefined) values.set(key, [value]);
  else if (!seen.includes(value)) seen.push(value);
}

/** The decision on what the engine found about one request (one phase, or the whole chain). */
export function decide(admission: Admission): AdmissionDecision {
  const results = admission.results;
  let status: AdmissionDecision["status"];
  let warnings: string[] | undefined;
  let annotationValues: Map<string, string[]> | undefined;
  let auditFailure: string | undefined;
  let cost = 0;
  // This runs once per review over every policy's result, most with nothing to annotate or warn:
  // what only an annotation or a warning needs is built only when there is one.
  for (const r of results) {
    cost += r.cost;
    // A for-in sets up an enumeration even over the shared empty map: skip it for that one.
    if (r.auditAnnotations !== NO_ANNOTATIONS)
      for (const k in r.auditAnnotations) {
        annotationValues ??= new Map();
        collect(annotationValues, k, r.auditAnnotations[k] as string);
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
        // Each Audit violation publishes a one-element list under the same key, and the API
        // server's admission attributes refuse to overwrite an annotation with another value
        // (admission/attributes.go AddAnnotation): the first one is what the audit event holds.
        auditFailure ??= JSON.stringify([
          {
            message: v.message,
            policy: r.policy,
            binding: r.binding,
            expressionIndex: v.expressionIndex,
            validationActions: r.validationActions ?? ["Audit"],
          },
        ]);
      }
    }
  }
  let auditAnnotations: Record<string, string> | undefined;
  if (annotationValues !== undefined) {
    auditAnnotations = {};
    for (const [k, values] of annotationValues) auditAnnotations[k] = values.join(", ");
  }
  if (auditFailure !== undefined) {
    auditAnnotations ??= {};
    auditAnnotations[VALIDATION_FAILURE_ANNOTATION] = auditFailure;
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
  if (admission.patch && admission.patch.length > 0) {
    decision.patch = admission.patch;
    decision.patchedObject = admission.patchedObject;
  }
  decision.results = results;
  decision.cost = cost;
  return decision;
}
