/**
 * The policy loop's subjects: which (policy, binding) pairs a request meets, each checked against
 * its match constraints, its binding's match resources and its params before its body runs once
 * per param.
 */
// The module's, not the global: reading the global `performance` goes through a lazy getter
// first, a third of a clock read's cost here, and the engine reads the clock per policy.
import { performance } from "node:perf_hooks";
import type { CelValue } from "../cel/index.ts";
import type { CompiledPolicy, CompiledPolicySet } from "../compile/policy.ts";
import { type MatchContext, PolicyIndex, type Unselected } from "../match/index.ts";
import type { AdmissionRequest } from "../request/types.ts";
import type { EngineContext } from "./context.ts";
import { type Evaluation, newEvaluation } from "./evaluate.ts";
import { errorResult } from "./failure-policy.ts";
import { collectParams, describeParamMiss } from "./params.ts";
import { type ResultBase, type Subject, skipResult, subjectOf } from "./results.ts";
import type { EvaluateOptions, EvaluationErrorKind, PolicyResult } from "./types.ts";

interface SetIndex {
  readonly ValidatingAdmissionPolicy: PolicyIndex<Subject>;
  readonly MutatingAdmissionPolicy: PolicyIndex<Subject>;
}

/** Built on first use per compiled set; a reload brings a new set and so a new index. */
const indexes = new WeakMap<CompiledPolicySet, SetIndex>();

function indexOf(set: CompiledPolicySet): SetIndex {
  let ix = indexes.get(set);
  if (!ix) {
    const build = (kind: CompiledPolicy["kind"]) =>
      new PolicyIndex<Subject>(
        set.bindings
          .filter((b) => b.policy.kind === kind)
          .map((b) => ({
            value: subjectOf(b.policy, b),
            constraints: b.policy.policy.matchConstraints,
            bindingResources: b.binding.matchResources,
          })),
      );
    ix = {
      ValidatingAdmissionPolicy: build("ValidatingAdmissionPolicy"),
      MutatingAdmissionPolicy: build("MutatingAdmissionPolicy"),
    };
    indexes.set(set, ix);
  }
  return ix;
}

/**
 * The subjects to evaluate, in binding order. The webhook takes only the index's candidates, so a
 * request pays for the policies that can match it. Dry runs and explanations walk every binding, so
 * each one that does not apply reports why (a skip result naming the rule that did not match).
 */
export function subjects(
  set: CompiledPolicySet,
  kind: CompiledPolicy["kind"],
  options: EvaluateOptions,
  request: AdmissionRequest,
): readonly Subject[] {
  let out: readonly Subject[];
  if (options.allBindings || options.includeUnbound || options.explain) {
    const all: Subject[] = [];
    for (const b of set.bindings) if (b.policy.kind === kind) all.push(subjectOf(b.policy, b));
    if (options.includeUnbound)
      for (const p of set.unbound) if (p.kind === kind) all.push(subjectOf(p, undefined));
    out = all;
  } else out = indexOf(set)[kind].candidates(request);
  return options.failurePolicy ? out.filter((s) => s.route === options.failurePolicy) : out;
}

/**
 * The skip or error result when a policy's or binding's criteria do not select the request. An error
 * (a selector that does not parse, a namespace that cannot be found) is a configuration error, which
 * the API server reports as `failed to configure policy: ...` for the policy's matchConstraints and
 * `failed to configure binding: ...` for the binding's matchResources (validating/dispatcher.go).
 */
function notMatched(
  level: "policy" | "binding",
  m: Unselected | undefined,
  base: ResultBase,
  subject: Subject,
  ev: Evaluation,
  started: number,
): PolicyResult | undefined {
  if (m === undefined) return undefined;
  const what = level === "policy" ? "matchConstraints" : "binding matchResources";
  if (m.status === "not-matched") return skipResult(base, `${what}: ${m.reason}`, ev, started);
  const kind: EvaluationErrorKind =
    m.errorKind === "namespace-not-found" ? "namespace-not-found" : "configuration";
  // A policy-level error is reported without the binding, as the API server reports it.
  const at = level === "policy" ? policyLevel(base) : base;
  return errorResult(at, subject, kind, `failed to configure ${level}: ${m.message}`, ev, started);
}

function policyLevel(base: ResultBase): ResultBase {
  return { policy: base.policy, policyKind: base.policyKind };
}

/**
 * Evaluates one subject (policy + binding) against the request: match, params, then `body` once
 * per param. Adds one result per param (or one skip/error result) to `results`.
 */
export function evaluateSubject(
  subject: Subject,
  request: AdmissionRequest,
  ctx: EngineContext,
  mctx: MatchContext,
  options: EvaluateOptions,
  results: PolicyResult[],
  body: (params: CelValue, ev: Evaluation, started: number, base: ResultBase) => PolicyResult,
): void {
  const started = performance.now();
  const { policy, binding } = subject;
  const base = subject.base;
  const ev = newEvaluation(options, started);
  if (!policy.policy.matchConstraints) {
    results.push(skipResult(base, "policy has no matchConstraints", ev, started));
    return;
  }
  const unmatched =
    notMatched("policy", policy.match.check(request, mctx), base, subject, ev, started) ??
    (binding
      ? notMatched("binding", binding.match.check(request, mctx), base, subject, ev, started)
      : undefined);
  if (unmatched) {
    results.push(unmatched);
    return;
  }
  const paramKind = policy.policy.paramKind;
  const ref = binding?.binding.paramRef;
  // No paramRef: Kubernetes evaluates once with params null (the generic policy dispatcher).
  if (!paramKind || !ref) {
    results.push(body(null, ev, started, base));
    return;
  }
  const found = collectParams(ctx.params, paramKind, ref, request.namespace);
  // The denial keeps the API server's words; what was looked up goes only into the result's
  // reason, which people read offline and in the server's logs, never in the response.
  if (!found.ok) {
    const message = `failed to configure binding: ${found.error.message}`;
    const looked =
      found.error.kind === "param-not-found"
        ? describeParamMiss(ctx.params, paramKind, ref, request.namespace)
        : undefined;
    results.push(errorResult(base, subject, found.error.kind, message, ev, started, -1, looked));
    return;
  }
  if (found.value.length === 0) {
    const looked = describeParamMiss(ctx.params, paramKind, ref, request.namespace);
    results.push(
      skipResult(base, `no params found; parameterNotFoundAction is Allow; ${looked}`, ev, started),
    );
    return;
  }
  found.value.forEach((p, i) => {
    // Each param is its own evaluation, with its own budget, as each binding-param pair is in Kubernetes.
    const at = i === 0 ? started : performance.now();
    const pev = i === 0 ? ev : newEvaluation(options, at);
    const param = `${p.namespace ? `${p.namespace}/` : ""}${p.name}`;
    results.push(body(p.object as CelValue, pev, at, { ...base, param }));
  });
}
