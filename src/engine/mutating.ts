/**
 * The mutating phase: every MutatingAdmissionPolicy that applies, in order, each seeing what the
 * ones before it made, with reinvocation; the patch is built as the mutations apply.
 */
import type { CelValue, VariableResolver } from "../cel/index.ts";
import type { CompiledPolicySet } from "../compile/policy.ts";
import { isAdmissionConfigurationResource } from "../match/index.ts";
import type { AdmissionRequest } from "../request/types.ts";
import { type EngineContext, matchContext } from "./context.ts";
import { combine, NO_ANNOTATIONS, NO_MUTATION, NO_WARNINGS } from "./decision.ts";
import { runStep } from "./evaluate.ts";
import { errorResult } from "./failure-policy.ts";
import { gateOnMatchConditions } from "./match-conditions.ts";
import { applyMutation } from "./mutate.ts";
import { appendPatch } from "./patch.ts";
import { prepare } from "./prepare.ts";
import { finish, NO_VIOLATIONS, type Subject } from "./results.ts";
import { evaluateSubject, subjects } from "./subjects.ts";
import type { AdmissionDecision, EvaluateOptions, JsonPatchOp, PolicyResult } from "./types.ts";
import { activation, LazyVariables } from "./variables.ts";

/** Evaluates the MutatingAdmissionPolicies that apply, in order, each seeing the previous result. */
export function mutate(
  set: CompiledPolicySet,
  request: AdmissionRequest,
  ctx: EngineContext,
  options: EvaluateOptions,
): AdmissionDecision {
  if (
    isAdmissionConfigurationResource(request) ||
    request.operation === "DELETE" ||
    request.operation === "CONNECT" ||
    request.object === null
  ) {
    return combine([], NO_MUTATION);
  }
  // Mutations never change an object in place (they copy what they change), so the request's
  // object is the starting point as it is, and the patch is the concatenation of what each did.
  let working: Record<string, unknown> = request.object;
  const patch: JsonPatchOp[] = [];
  const prepared = prepare(request, ctx);
  const mctx = matchContext(ctx);
  // The working object is JSON throughout (mutations apply JSON), which CEL reads as it is.
  const objectValue = (): CelValue => working as CelValue;
  const results: PolicyResult[] = [];
  const all = subjects(set, "MutatingAdmissionPolicy", options, request);
  const runSubject = (subject: Subject): boolean => {
    const policy = subject.policy;
    if (policy.kind !== "MutatingAdmissionPolicy") return false;
    let changed = false;
    // The request as this policy sees it: copied (a spread of every field) only once a mutation changed the object.
    const seen = working === request.object ? request : { ...request, object: working };
    evaluateSubject(subject, seen, ctx, mctx, options, results, (params, ev, started, base) => {
      let resolver: VariableResolver | undefined;
      let object = objectValue();
      const act = () =>
        activation(prepared, policy.needs, params, object, () => resolver as VariableResolver);
      let current = act();
      resolver = new LazyVariables(policy, ev, () => current);
      const gated = gateOnMatchConditions(subject, ev, started, base, current);
      if (gated) return gated;
      const ops: JsonPatchOp[] = [];
      const mutations = policy.mutations;
      for (let i = 0; i < mutations.length; i++) {
        const m = mutations[i] as (typeof mutations)[number];
        const r = runStep(ev, "mutation", m.index, m.expression, current);
        // An error ends the policy; what its earlier mutations did stays, as in the API server,
        // where each patch is applied to the versioned object as it comes.
        if (!r.ok) {
          return errorResult(base, subject, r.kind, r.message, ev, started, m.index);
        }
        const applied = applyMutation(working, m.patchType, r.value);
        if (!applied.ok) {
          return errorResult(base, subject, "runtime", applied.error, ev, started, m.index);
        }
        if (applied.value.ops.length === 0) continue;
        working = applied.value.object;
        appendPatch(ops, applied.value.ops, working);
        appendPatch(patch, applied.value.ops, working);
        if (i < mutations.length - 1) {
          object = objectValue();
          current = act();
        }
      }
      if (ops.length > 0) changed = true;
      return finish(
        base,
        {
          outcome: "pass",
          violations: NO_VIOLATIONS,
          warnings: NO_WARNINGS,
          auditAnnotations: NO_ANNOTATIONS,
          patch: ops,
        },
        ev,
        started,
      );
    });
    return changed;
  };
  const changedBy: boolean[] = all.map(runSubject);
  // reinvocationPolicy IfNeeded: run again once when a policy after it changed the object.
  const anyChange = changedBy.some(Boolean);
  if (anyChange) {
    all.forEach((s, i) => {
      if (
        s.policy.kind === "MutatingAdmissionPolicy" &&
        s.policy.policy.reinvocationPolicy === "IfNeeded" &&
        changedBy.slice(i + 1).some(Boolean)
      ) {
        runSubject(s);
      }
    });
  }
  return combine(results, patch.length > 0 ? { patch, patchedObject: working } : NO_MUTATION);
}
