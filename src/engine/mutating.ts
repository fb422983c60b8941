/**
 * The mutating phase: every MutatingAdmissionPolicy that applies, in order, each seeing what the
 * ones before it made, with reinvocation; the patch is built as the mutations apply.
 */
import type { CelValue, VariableResolver } from "../cel/index.ts";
import type { CompiledMutatingPolicy, CompiledPolicySet } from "../compile/policy.ts";
import { isAdmissionConfigurationResource } from "../match/index.ts";
import type { AdmissionRequest } from "../request/types.ts";
import { type EngineContext, matchContext } from "./context.ts";
import { type Evaluation, runStep } from "./evaluate.ts";
import { errorResult } from "./failure-policy.ts";
import { gateOnMatchConditions } from "./match-conditions.ts";
import { type KindMerge, kindMerge } from "./kind-schemas.ts";
import { applyMutation } from "./mutate.ts";
import { appendPatch } from "./patch.ts";
import { defaultAfterMutation } from "./redefault.ts";
import { type PreparedRequest, prepare } from "./prepare.ts";
import {
  finish,
  NO_ANNOTATIONS,
  NO_RESULTS,
  NO_VIOLATIONS,
  NO_WARNINGS,
  type ResultBase,
  type Subject,
} from "./results.ts";
import { evaluateSubject, subjects } from "./subjects.ts";
import type { Admission, EvaluateOptions, JsonPatchOp, PolicyResult } from "./types.ts";
import { activation, LazyVariables } from "./variables.ts";

/** The object as the mutations so far have made it, and the patch that got it there. */
interface Working {
  object: Record<string, unknown>;
  readonly patch: JsonPatchOp[];
  /** The schema the request's kind merges and is checked against. */
  kind: KindMerge | undefined;
  /** An InternalError ended the phase: upstream returns it at once, no later policy runs. */
  aborted: boolean;
}

/**
 * Evaluates the MutatingAdmissionPolicies that apply, in order, each seeing the previous result:
 * each one's result and the mutation they made together, no verdict.
 */
export function mutate(
  set: CompiledPolicySet,
  request: AdmissionRequest,
  ctx: EngineContext,
  options: EvaluateOptions,
): Admission {
  if (
    isAdmissionConfigurationResource(request) ||
    request.operation === "DELETE" ||
    request.operation === "CONNECT" ||
    request.object === null
  ) {
    return NO_RESULTS;
  }
  // Mutations never change an object in place (they copy what they change), so the request's
  // object is the starting point as it is, and the patch is the concatenation of what each did.
  const working: Working = { object: request.object, patch: [], kind: undefined, aborted: false };
  const redefault = options.defaults === true;
  const prepared = prepare(request, ctx);
  const mctx = matchContext(ctx);
  const results: PolicyResult[] = [];
  const all = subjects(set, "MutatingAdmissionPolicy", options, request);
  if (all.length > 0) working.kind = kindMerge(set, request.kind);
  const runSubject = (subject: Subject): boolean => {
    const policy = subject.policy;
    if (policy.kind !== "MutatingAdmissionPolicy" || working.aborted) return false;
    let changed = false;
    // The request as this policy sees it: copied (a spread of every field) only once a mutation changed the object.
    const seen = working.object === request.object ? request : { ...request, object: working.object };
    evaluateSubject(subject, seen, ctx, mctx, options, results, (params, ev, started, base) => {
      const r = mutatePolicy(subject, policy, prepared, working, params, ev, started, base, redefault);
      if (r.patch !== undefined && r.patch.length > 0) changed = true;
      return r;
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
  return working.patch.length > 0
    ? { results, patch: working.patch, patchedObject: working.object }
    : { results };
}

/**
 * One mutating policy's evaluation for one param: matchConditions, then each mutation applied to
 * the working object, which the next one sees. Its result's patch is what this policy did.
 */
function mutatePolicy(
  subject: Subject,
  policy: CompiledMutatingPolicy,
  prepared: PreparedRequest,
  working: Working,
  params: CelValue,
  ev: Evaluation,
  started: number,
  base: ResultBase,
  redefault: boolean,
): PolicyResult {
  let resolver: VariableResolver | undefined;
  // The working object is JSON throughout (mutations apply JSON), which CEL reads as it is.
  let object = working.object as CelValue;
  const act = () => activation(prepared, policy.needs, params, object, () => resolver as VariableResolver);
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
    const applied = applyMutation(working.object, m.patchType, r.value, working.kind);
    if (!applied.ok) {
      if (applied.error.kind === "internal") working.aborted = true;
      return errorResult(base, subject, applied.error.kind, applied.error.message, ev, started, m.index);
    }
    if (applied.value.ops.length === 0) continue;
    working.object = applied.value.object;
    appendPatch(ops, applied.value.ops, working.object);
    appendPatch(working.patch, applied.value.ops, working.object);
    // The API server defaults the object again after each mutation (redefault.ts).
    const defaulted = redefault ? defaultAfterMutation(working.object) : undefined;
    if (defaulted !== undefined) {
      working.object = defaulted.object;
      appendPatch(ops, defaulted.ops, working.object);
      appendPatch(working.patch, defaulted.ops, working.object);
    }
    if (i < mutations.length - 1) {
      object = working.object as CelValue;
      current = act();
    }
  }
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
}
