/**
 * Stage 3: evaluates compiled policies against one admission request, with the API server's
 * semantics: match constraints, then the binding's match resources, then params, then
 * matchConditions, then lazily evaluated variables, then validations (or mutations). Every error,
 * whatever its kind, goes through `failurePolicy` in one place: `errorResult`.
 */
// The module's, not the global: reading the global `performance` goes through a lazy getter
// first, a third of a clock read's cost here, and the engine reads the clock per policy.
import { performance } from "node:perf_hooks";
import {
  type Activation,
  type AuthorizerBackend,
  AuthorizerValue,
  ResourceCheck,
  unavailableAuthorizer,
  CelError as CelErrorLike,
  type CelValue,
  EvalState,
  type MemoEntry,
  explainFalse,
  PER_CALL_COST_LIMIT,
  MATCH_CONDITIONS_COST_BUDGET,
  RUNTIME_COST_BUDGET,
  asCelError,
  BUDGET_MESSAGE,
  BUDGET_SPENT,
  DEADLINE_MESSAGE,
  DEADLINE_PASSED,
  startExpression,
  Thrown,
  toJson,
  type VariableResolver,
} from "../cel/index.ts";
import type {
  CompiledBinding,
  CompiledExpression,
  CompiledPolicy,
  CompiledPolicySet,
  CompiledValidatingPolicy,
  CompiledValidation,
  PolicyNeeds,
} from "../compile/policy.ts";
import {
  isAdmissionConfigurationResource,
  type MatchContext,
  PolicyIndex,
  type Unselected,
} from "../match/index.ts";
import type { ValidationAction } from "../policy/types.ts";
import { applyMutation } from "./mutate.ts";
import { findParams, type ParamLookup } from "./params.ts";
import type {
  AdmissionDecision,
  AdmissionRequest,
  EvaluationErrorKind,
  JsonPatchOp,
  PolicyResult,
  TraceStep,
  Violation,
} from "./types.ts";
import { combine, NO_ANNOTATIONS, NO_MUTATION, NO_WARNINGS } from "./decision.ts";
import { appendPatch } from "./patch.ts";

/** What an evaluation may look up besides the request: Namespaces and parameter objects. */
export interface EngineContext {
  /** The Namespace object with this name, if known (for namespaceSelector and namespaceObject). */
  namespace(name: string): Readonly<Record<string, unknown>> | undefined;
  readonly params: ParamLookup;
  /** Answers `authorizer` checks; absent: every check fails with a clear error (failurePolicy applies). */
  readonly authorizer?: AuthorizerBackend;
}

export interface EvaluateOptions {
  readonly deadline: number;
  /** Only policies with this failurePolicy (the webhook's split paths). */
  readonly failurePolicy?: "Fail" | "Ignore";
  /** Also evaluate policies that have no binding, as if bound with validationActions [Deny] (CLI). */
  readonly includeUnbound?: boolean;
  /** Record every step's value in the trace (CLI, REPL); the webhook leaves it off for speed. */
  readonly explain?: boolean;
  /**
   * Record each expression in the results' traces (the default). The webhook turns it off unless
   * explaining: nothing else reads the trace there, and a step costs an object per expression.
   */
  readonly trace?: boolean;
}

const REASON_CODES: Record<string, number> = {
  Unauthorized: 401,
  Forbidden: 403,
  Invalid: 422,
  RequestEntityTooLarge: 413,
};

export function reasonCode(reason: string): number {
  return REASON_CODES[reason] ?? 422;
}

const MAX_MESSAGE_LENGTH = 5 * 1024;
const MAX_AUDIT_VALUE_LENGTH = 10 * 1024;

function userInfoValue(u: AdmissionRequest["userInfo"]): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.username, groups: [...u.groups] };
  if (u.uid) out.uid = u.uid;
  if (u.extra) out.extra = u.extra;
  return out;
}

/** Built key by key: conditional spreads are slow to build in V8, and this runs once per review. */
function requestValue(r: AdmissionRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {
    uid: r.uid,
    kind: r.kind,
    resource: r.resource,
    name: r.name,
    namespace: r.namespace,
    operation: r.operation,
    userInfo: userInfoValue(r.userInfo),
    dryRun: r.dryRun,
    options: r.options,
  };
  if (r.subResource) out.subResource = r.subResource;
  if (r.requestKind) out.requestKind = r.requestKind;
  if (r.requestResource) out.requestResource = r.requestResource;
  if (r.requestSubResource) out.requestSubResource = r.requestSubResource;
  return out;
}

function requestResourceAttributes(r: AdmissionRequest): ResourceCheck["attrs"] {
  const out: { -readonly [K in keyof ResourceCheck["attrs"]]: ResourceCheck["attrs"][K] } = {
    group: r.resource.group,
    resource: r.resource.resource,
  };
  if (r.subResource) out.subresource = r.subResource;
  out.namespace = r.namespace;
  out.name = r.name;
  return out;
}

/**
 * The request's variables as CEL sees them, for one review. `object` and `oldObject` are the JSON
 * as it came (the evaluator converts what it reads, values.ts fromJson). The others are built when
 * the first policy that reads them is evaluated (CompiledPolicy.needs), then shared by the rest.
 * Most policies read only `object`, so nothing else is built for them, and no memo for policies that
 * share nothing (see docs/benchmarks.md).
 */
export class PreparedRequest {
  private requestV: CelValue | undefined;
  private namespaceV: CelValue | undefined;
  private authorizerV: AuthorizerValue | undefined;
  private requestResourceV: ResourceCheck | undefined;
  constructor(
    readonly request: AdmissionRequest,
    private readonly ctx: EngineContext,
  ) {}

  get requestValue(): CelValue {
    this.requestV ??= requestValue(this.request) as CelValue;
    return this.requestV;
  }
  get namespaceObject(): CelValue {
    if (this.namespaceV === undefined) {
      const name = this.request.namespace;
      this.namespaceV = ((name ? this.ctx.namespace(name) : undefined) ?? null) as CelValue;
    }
    return this.namespaceV;
  }
  get authorizer(): AuthorizerValue {
    this.authorizerV ??= new AuthorizerValue(
      this.ctx.authorizer ?? unavailableAuthorizer,
      this.request.userInfo.username,
      this.request.userInfo.groups,
    );
    return this.authorizerV;
  }
  get requestResource(): ResourceCheck {
    this.requestResourceV ??= new ResourceCheck(this.authorizer, requestResourceAttributes(this.request));
    return this.requestResourceV;
  }
  /**
   * The variables of one policy evaluation: every one, written out so each activation has the same
   * shape, and null for those `needs` says no expression reads. `object` is the working object
   * when a mutation has changed it.
   */
  values(needs: PolicyNeeds, params: CelValue, object?: CelValue): Record<string, CelValue> {
    return {
      object: object === undefined ? (this.request.object as CelValue) : object,
      oldObject: this.request.oldObject as CelValue,
      request: needs.request ? this.requestValue : null,
      namespaceObject: needs.namespaceObject ? this.namespaceObject : null,
      authorizer: needs.authorizer ? this.authorizer : null,
      "authorizer.requestResource": needs.requestResource ? this.requestResource : null,
      params,
    };
  }
  /** Every variable, built now: for callers that bind them all (the REPL, the differential test). */
  allValues(): Record<string, CelValue> {
    return this.values(EVERY_VARIABLE, null);
  }
}

/** Needs that build every variable (and no memo). */
const EVERY_VARIABLE: PolicyNeeds = {
  request: true,
  namespaceObject: true,
  authorizer: true,
  requestResource: true,
  memo: 0,
};

export function prepare(request: AdmissionRequest, ctx: EngineContext): PreparedRequest {
  return new PreparedRequest(request, ctx);
}

interface Evaluation {
  readonly trace: TraceStep[];
  /** Whether steps go into the trace (EvaluateOptions.trace, or explaining). */
  readonly recording: boolean;
  readonly state: EvalState;
  readonly explain: boolean;
  /** Expressions started so far (runExpr reads the clock on some of them). */
  expressions: number;
  /** The clock when the evaluation started, which serves as its first expression's deadline check. */
  readonly started: number;
  /**
   * The state's cost at which the current budget runs out. The matchConditions spend from a budget
   * of their own, and the validations (or mutations) then get a whole one, as in Kubernetes.
   */
  budgetEnd: number;
}

const NO_STEPS: TraceStep[] = Object.freeze([]) as unknown as TraceStep[];
/** Per-result lists that are empty in most results, shared rather than built for each (decision.ts). */
const NO_VIOLATIONS: readonly Violation[] = Object.freeze([]);

/** A fresh evaluation: an empty trace, no cost spent, the whole budget ahead. */
function newEvaluation(options: EvaluateOptions, started: number): Evaluation {
  const recording = options.trace !== false || options.explain === true;
  return {
    // Most reviews record no steps: they share one empty trace, which nothing pushes to.
    trace: recording ? [] : NO_STEPS,
    recording,
    state: new EvalState(PER_CALL_COST_LIMIT, options.deadline),
    explain: options.explain ?? false,
    expressions: 0,
    started,
    budgetEnd: RUNTIME_COST_BUDGET,
  };
}

type ExprOutcome =
  | { readonly ok: true; readonly value: CelValue; readonly cost: number }
  | { ok: false; message: string; kind: EvaluationErrorKind; cost: number; cause?: string };

/**
 * Why an expression gave no value. Its message is final and worded as the API server words it:
 * `compilation error: ...`, `expression '<expr>' resulted in error: ...`, or the bare budget message.
 */
class ExprFailure {
  constructor(
    readonly message: string,
    readonly kind: EvaluationErrorKind,
    /** The evaluator's own message, without the expression around it. */
    readonly cause?: string,
  ) {}
}

/**
 * Runs one expression within the per-expression limit and the remaining policy budget: its value,
 * or an ExprFailure. A value comes back as it is, not in a result object: this runs for every
 * validation of every policy a request meets.
 */
function runExpr(ev: Evaluation, expr: CompiledExpression, act: Activation): CelValue | ExprFailure {
  const program = expr.program;
  if (!program)
    return new ExprFailure(
      `compilation error: ${expr.compileError ?? "expression did not compile"}`,
      "compile",
    );
  const st = ev.state;
  // The per-expression rules (cel/state/limits.ts), as the policy's generated sequence applies them.
  const blocked = startExpression(ev, st);
  if (blocked !== undefined)
    return blocked === BUDGET_SPENT ? new ExprFailure(BUDGET_MESSAGE, "cost") : deadlineFailure(expr);
  try {
    return program.run(act, st);
  } catch (e) {
    return thrownFailure(ev, expr, e);
  }
}

/** An expression's thrown error as its failure, read while the state still has its cost limit. */
function thrownFailure(ev: Evaluation, expr: CompiledExpression, e: unknown): ExprFailure {
  const error = asCelError(e);
  if (error.kind === "cost" && ev.state.costLimit >= ev.budgetEnd)
    return new ExprFailure(BUDGET_MESSAGE, "cost");
  return new ExprFailure(
    `expression '${expr.source}' resulted in error: ${error.message}`,
    error.kind,
    error.message,
  );
}

function deadlineFailure(expr: CompiledExpression): ExprFailure {
  return new ExprFailure(`expression '${expr.source}' resulted in error: ${DEADLINE_MESSAGE}`, "timeout");
}

/** An expression's value or failure with the cost it took, as steps and the rarer callers take it. */
function toOutcome(r: CelValue | ExprFailure, cost: number): ExprOutcome {
  return r instanceof ExprFailure
    ? r.cause === undefined
      ? { ok: false, message: r.message, kind: r.kind, cost }
      : { ok: false, message: r.message, kind: r.kind, cost, cause: r.cause }
    : { ok: true, value: r, cost };
}

/** Runs one expression and records it in the trace under its stage and name. */
function runStep(
  ev: Evaluation,
  stage: TraceStep["stage"],
  name: string | number,
  expr: CompiledExpression,
  act: Activation,
): ExprOutcome {
  const before = ev.state.cost;
  const r = toOutcome(runExpr(ev, expr, act), ev.state.cost - before);
  step(ev, stage, name, expr, r);
  return r;
}

type MutableStep = { -readonly [K in keyof TraceStep]: TraceStep[K] };

/** Records a step; values are kept (as JSON) only when explaining. Built without spreads: it is per expression. */
function step(
  ev: Evaluation,
  stage: TraceStep["stage"],
  name: string | number,
  expr: CompiledExpression,
  r: ExprOutcome,
  because?: readonly string[],
): void {
  if (!ev.recording) return;
  // A number (an index) becomes the step's name only here, when a step is kept.
  const s: MutableStep = { stage, name: String(name), expression: expr.source, cost: r.cost };
  if (!r.ok) s.error = r.message;
  else if (ev.explain) s.value = toJson(r.value);
  if (because) s.because = because;
  ev.trace.push(s);
}

/** Lazily evaluates a policy's variables, each at most once, errors surfacing only where used. */
class LazyVariables implements VariableResolver {
  /** Each variable's value, or the failure it ended in; undefined until it is first read. */
  private readonly outcomes: (CelValue | ExprFailure | undefined)[];
  constructor(
    private readonly policy: CompiledPolicy,
    private readonly ev: Evaluation,
    private readonly act: () => Activation,
  ) {
    this.outcomes = new Array(policy.variables.length);
  }
  get(name: string, index: number): CelValue {
    // The compiler's index is the position in policy.variables: compilePolicy gives every
    // expression an environment listing the variables in that order (the parser keeps their names
    // unique). The names are not compared as well: the policy's names are not V8's internalised
    // strings, the compiled literals are, so a comparison would not be a pointer test.
    const i = index >= 0 && index < this.outcomes.length ? index : this.policy.variableIndex.get(name);
    if (i === undefined) throw new CelErrorLike(`no such variable: ${name}`);
    let hit = this.outcomes[i];
    if (hit === undefined) {
      const v = this.policy.variables[i] as CompiledPolicy["variables"][number];
      // The variable runs as its own call, under its own per-call limit (runExpr sets it), as each
      // composited variable is its own program in Kubernetes. Its cost counts towards the budget but
      // not towards the per-call limit of the expression reading it: that limit moves up by as much.
      // Its value is kept as it came (no result object): a Pod Security policy reads a dozen.
      const ev = this.ev;
      const st = ev.state;
      const readerLimit = st.costLimit;
      const before = st.cost;
      hit = runExpr(ev, v.expression, this.act());
      if (ev.recording) step(ev, "variable", name, v.expression, toOutcome(hit, st.cost - before));
      st.costLimit = Math.min(readerLimit + (st.cost - before), ev.budgetEnd);
      this.outcomes[i] = hit;
    }
    // The using expression reports the variable's own failure as its cause, as composition does in Kubernetes.
    if (hit instanceof ExprFailure)
      throw new CelErrorLike(
        hit.cause ?? hit.message,
        hit.kind === "cost" || hit.kind === "timeout" ? hit.kind : "runtime",
      );
    return hit;
  }
}

interface Subject {
  readonly policy: CompiledPolicy;
  readonly binding: CompiledBinding | undefined;
  /** What every result for this subject starts with (built with the subject, not per request). */
  readonly base: ResultBase;
}

function subjectOf(policy: CompiledPolicy, binding: CompiledBinding | undefined): Subject {
  const base: { -readonly [K in keyof ResultBase]: ResultBase[K] } = {
    policy: policy.name,
    policyKind: policy.kind,
  };
  if (binding) base.binding = binding.binding.name;
  return { policy, binding, base };
}

/**
 * Under failurePolicy Fail an error denies: one violation for each of the binding's actions, added
 * to `into` (a new list when there is none yet), which is returned.
 */
function addErrorViolations(
  into: Violation[] | undefined,
  actions: readonly ValidationAction[],
  message: string,
  expressionIndex: number,
): Violation[] {
  const out = into ?? [];
  for (const action of actions) out.push({ message, reason: "Invalid", code: 422, action, expressionIndex });
  return out;
}

/** The one place `failurePolicy` turns an error into a verdict. */
function errorResult(
  base: Omit<
    PolicyResult,
    "outcome" | "violations" | "warnings" | "auditAnnotations" | "trace" | "cost" | "durationMs"
  >,
  subject: Subject,
  kind: EvaluationErrorKind,
  message: string,
  ev: Evaluation,
  started: number,
  expressionIndex = -1,
): PolicyResult {
  const violations =
    subject.policy.failurePolicy === "Fail"
      ? addErrorViolations(undefined, validationActions(subject), message, expressionIndex)
      : NO_VIOLATIONS;
  return finish(
    base,
    {
      outcome: "error",
      errorKind: kind,
      reason: message,
      violations,
      warnings: deadlineWarning(subject.policy, kind),
      auditAnnotations: NO_ANNOTATIONS,
    },
    ev,
    started,
  );
}

/**
 * A policy cut short by the request's deadline under failurePolicy Ignore admits, as Kubernetes
 * would; unlike an ordinary error it says so, because the request was admitted unchecked.
 */
function deadlineWarning(policy: CompiledPolicy, kind: EvaluationErrorKind | undefined): readonly string[] {
  return kind === "timeout" && policy.failurePolicy === "Ignore"
    ? [
        `${policy.kind} '${policy.name}' did not finish before the request's deadline and was ignored (failurePolicy Ignore)`,
      ]
    : NO_WARNINGS;
}

function validationActions(s: Subject): readonly ValidationAction[] {
  const b = s.binding?.binding;
  if (b && b.kind === "ValidatingAdmissionPolicyBinding") return b.validationActions;
  return ["Deny"];
}

/**
 * What a policy's evaluation found: a result without the fields every result shares. An optional
 * field may be given as undefined, which leaves it out of the result.
 */
type Verdict = Pick<PolicyResult, "outcome" | "violations" | "warnings" | "auditAnnotations"> & {
  readonly [K in "errorKind" | "reason" | "validationActions" | "patch"]?: PolicyResult[K] | undefined;
};
type MutableResult = { -readonly [K in keyof PolicyResult]: PolicyResult[K] };

/**
 * The result, built key by key in one order rather than spread together: spreads with optional
 * keys gave every result a shape of its own, and building them was an eighth of a 20-rule review.
 * The order is the one results have always printed in.
 */
function finish(base: ResultBase, v: Verdict, ev: Evaluation, started: number): PolicyResult {
  const r = { policy: base.policy, policyKind: base.policyKind } as MutableResult;
  if (base.binding !== undefined) r.binding = base.binding;
  if (base.param !== undefined) r.param = base.param;
  r.outcome = v.outcome;
  if (v.errorKind !== undefined) r.errorKind = v.errorKind;
  if (v.reason !== undefined) r.reason = v.reason;
  if (v.validationActions !== undefined) r.validationActions = v.validationActions;
  r.violations = v.violations;
  r.warnings = v.warnings;
  r.auditAnnotations = v.auditAnnotations;
  if (v.patch !== undefined) r.patch = v.patch;
  r.trace = ev.trace;
  r.cost = ev.state.cost;
  r.durationMs = performance.now() - started;
  return r;
}

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
function subjects(
  set: CompiledPolicySet,
  kind: CompiledPolicy["kind"],
  options: EvaluateOptions,
  request: AdmissionRequest,
): readonly Subject[] {
  let out: readonly Subject[];
  if (options.includeUnbound || options.explain) {
    const all: Subject[] = [];
    for (const b of set.bindings) if (b.policy.kind === kind) all.push(subjectOf(b.policy, b));
    if (options.includeUnbound)
      for (const p of set.unbound) if (p.kind === kind) all.push(subjectOf(p, undefined));
    out = all;
  } else out = indexOf(set)[kind].candidates(request);
  return options.failurePolicy ? out.filter((s) => s.policy.failurePolicy === options.failurePolicy) : out;
}

/** The skip or error result when a policy's or binding's criteria do not select the request. */
function notMatched(
  what: string,
  m: Unselected | undefined,
  base: ResultBase,
  subject: Subject,
  ev: Evaluation,
  started: number,
): PolicyResult | undefined {
  if (m === undefined) return undefined;
  if (m.status === "not-matched") return skipResult(base, `${what}: ${m.reason}`, ev, started);
  const kind: EvaluationErrorKind = m.errorKind === "namespace-not-found" ? "namespace-not-found" : "runtime";
  return errorResult(base, subject, kind, `failed to configure binding: ${m.message}`, ev, started);
}

/** What the matcher asks of the cluster: the labels of a namespace it may select on. */
function matchContext(ctx: EngineContext): MatchContext {
  return {
    namespaceLabels: (name) => {
      const ns = ctx.namespace(name);
      const labels = (ns?.metadata as { labels?: Record<string, string> } | undefined)?.labels;
      return ns ? (labels ?? {}) : undefined;
    },
  };
}

/**
 * Evaluates one subject (policy + binding) against the request: match, params, then `body` once
 * per param. Adds one result per param (or one skip/error result) to `results`.
 */
function evaluateSubject(
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
    notMatched("matchConstraints", policy.match.check(request, mctx), base, subject, ev, started) ??
    (binding
      ? notMatched("binding matchResources", binding.match.check(request, mctx), base, subject, ev, started)
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
  const found = findParams(ctx.params, paramKind, ref, request.namespace);
  if (found.length === 0) {
    results.push(
      ref.parameterNotFoundAction === "Allow"
        ? skipResult(base, "no params found; parameterNotFoundAction is Allow", ev, started)
        : errorResult(
            base,
            subject,
            "param-not-found",
            "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
            ev,
            started,
          ),
    );
    return;
  }
  found.forEach((p, i) => {
    // Each param is its own evaluation, with its own budget, as each binding-param pair is in Kubernetes.
    const at = i === 0 ? started : performance.now();
    const pev = i === 0 ? ev : newEvaluation(options, at);
    const param = `${p.namespace ? `${p.namespace}/` : ""}${p.name}`;
    results.push(body(p.object as CelValue, pev, at, { ...base, param }));
  });
}

type ResultBase = Pick<PolicyResult, "policy" | "policyKind" | "binding" | "param">;

function skipResult(base: ResultBase, reason: string, ev: Evaluation, started: number): PolicyResult {
  return finish(
    base,
    {
      outcome: "skip",
      reason,
      violations: NO_VIOLATIONS,
      warnings: NO_WARNINGS,
      auditAnnotations: NO_ANNOTATIONS,
    },
    ev,
    started,
  );
}

/** matchConditions as a gate: undefined to go on, else the skip or error result. */
function gateOnMatchConditions(
  subject: Subject,
  ev: Evaluation,
  started: number,
  base: ResultBase,
  act: Activation,
): PolicyResult | undefined {
  const mc = matchConditions(subject.policy, ev, act);
  if (mc.go) return undefined;
  if ("skip" in mc) return skipResult(base, mc.skip, ev, started);
  return errorResult(base, subject, mc.kind, mc.error, ev, started);
}

const GO = { go: true } as const;

/** matchConditions: all true → go on; any false → skip; an error and none false → error. */
function matchConditions(
  policy: CompiledPolicy,
  ev: Evaluation,
  act: Activation,
): typeof GO | { go: false; skip: string } | { go: false; error: string; kind: EvaluationErrorKind } {
  let firstError: { name: string; message: string; kind: EvaluationErrorKind } | undefined;
  ev.budgetEnd = ev.state.cost + MATCH_CONDITIONS_COST_BUDGET;
  for (const mc of policy.matchConditions) {
    const r = runStep(ev, "matchCondition", mc.name, mc.expression, act);
    if (!r.ok) {
      firstError ??= { name: mc.name, message: r.message, kind: r.kind };
      continue;
    }
    if (r.value === false) return { go: false, skip: `matchCondition '${mc.name}' is false` };
    if (r.value !== true)
      firstError ??= {
        name: mc.name,
        message: `matchCondition must evaluate to bool, got ${typeof r.value}`,
        kind: "runtime",
      };
  }
  if (firstError)
    return {
      go: false,
      error: firstError.message,
      kind: firstError.kind,
    };
  ev.budgetEnd = ev.state.cost + RUNTIME_COST_BUDGET;
  return GO;
}

/**
 * The variables of one policy evaluation. A class with the getter on its prototype: an object
 * literal spread from the prepared values with a getter of its own is rebuilt per policy, which
 * the webhook would pay several times per review.
 */
class PolicyActivation implements Activation {
  /**
   * Shared subexpressions' values (cel/shared.ts), for this evaluation's expressions only; none
   * for a policy whose expressions share nothing.
   */
  readonly memo: (MemoEntry | undefined)[] | undefined;
  /**
   * The request's objects are JSON as the webhook's JSON.parse or the CLI's YAML made them, a
   * mutated object is toJson's output (mutate.ts), `request` is built of the decoded request's
   * parts (requestValue), and params and namespaces are loaded resources. One gap: a document
   * that declares `%YAML 1.1` gets that schema's timestamps, binaries and sets (Date, Buffer, Set),
   * which are not JSON; the loaders pass them through as they are.
   */
  readonly json = true;
  constructor(
    readonly values: Readonly<Record<string, CelValue>>,
    private readonly resolver: () => VariableResolver,
    memo: number,
  ) {
    this.memo = memo > 0 ? new Array<MemoEntry | undefined>(memo) : undefined;
  }
  get variables(): VariableResolver {
    return this.resolver();
  }
}

function activation(
  prepared: PreparedRequest,
  needs: PolicyNeeds,
  params: CelValue,
  object: CelValue | undefined,
  vars: () => VariableResolver,
): Activation {
  return new PolicyActivation(prepared.values(needs, params, object), vars, needs.memo);
}

/** For a policy without variables: every name is unknown (the compiler has already said so). */
const NO_VARIABLES: VariableResolver = {
  get(name) {
    throw new CelErrorLike(`no such variable: ${name}`);
  },
};
const noVariables = () => NO_VARIABLES;

/** A validating policy's activation, its variables evaluated lazily against it (when it has any). */
function validationActivation(
  prepared: PreparedRequest,
  policy: CompiledPolicy,
  ev: Evaluation,
  params: CelValue,
): Activation {
  if (policy.variables.length === 0)
    return activation(prepared, policy.needs, params, undefined, noVariables);
  let resolver: VariableResolver | undefined;
  const act = activation(prepared, policy.needs, params, undefined, () => resolver as VariableResolver);
  resolver = new LazyVariables(policy, ev, () => act);
  return act;
}

function messageFor(
  ev: Evaluation,
  v: {
    message: string | undefined;
    messageExpression: CompiledExpression | undefined;
    expression: CompiledExpression;
  },
  act: Activation,
): string {
  const fallback = v.message?.trim() || `failed expression: ${v.expression.source.trim()}`;
  if (!v.messageExpression) return fallback;
  const r = runStep(ev, "messageExpression", "", v.messageExpression, act);
  if (!r.ok || typeof r.value !== "string") return fallback;
  const m = r.value.trim();
  if (m === "" || Buffer.byteLength(m) > MAX_MESSAGE_LENGTH || m.includes("\n")) return fallback;
  return m;
}

/**
 * Each validation's value or failure, in order: undefined when every one was true; else one entry per
 * validation, undefined for those after a cost or deadline failure, which ends the policy. Without
 * a trace the policy's generated sequence runs them (cel/sequence.ts); recording runs them one by one.
 */
function validationOutcomes(
  ev: Evaluation,
  policy: CompiledValidatingPolicy,
  act: Activation,
): (CelValue | ExprFailure | undefined)[] | undefined {
  const validations = policy.validations;
  const sequence = policy.sequence;
  if (!ev.recording && sequence !== undefined && sequence.ready(act)) {
    const out = sequence.run(act, ev.state, ev);
    if (out === undefined) return undefined;
    const outcomes = out as (CelValue | ExprFailure | undefined)[];
    for (let i = 0; i < out.length; i++) {
      const r = out[i];
      if (r === undefined) break;
      const expr = (validations[i] as CompiledValidation).expression;
      if (r instanceof Thrown) outcomes[i] = thrownFailure(ev, expr, r.error);
      else if (r === BUDGET_SPENT) outcomes[i] = new ExprFailure(BUDGET_MESSAGE, "cost");
      else if (r === DEADLINE_PASSED) outcomes[i] = deadlineFailure(expr);
    }
    return outcomes;
  }
  let outcomes: (CelValue | ExprFailure | undefined)[] | undefined;
  for (let i = 0; i < validations.length; i++) {
    const v = validations[i] as CompiledValidation;
    const before = ev.state.cost;
    const r = runExpr(ev, v.expression, act);
    if (ev.recording)
      step(
        ev,
        "validation",
        v.index,
        v.expression,
        toOutcome(r, ev.state.cost - before),
        // Only when explaining: which element and field made it false (re-evaluates its parts).
        ev.explain && r === false && v.expression.program && v.expression.env
          ? explainFalse(v.expression.program.parsed, v.expression.env, act)
          : undefined,
      );
    if (r === true) {
      if (outcomes !== undefined) outcomes[i] = true;
      continue;
    }
    if (outcomes === undefined) {
      outcomes = new Array(validations.length);
      for (let k = 0; k < i; k++) outcomes[k] = true;
    }
    outcomes[i] = r;
    if (r instanceof ExprFailure && (r.kind === "cost" || r.kind === "timeout")) break;
  }
  return outcomes;
}

/** Evaluates the ValidatingAdmissionPolicies that apply to a request. */
export function validate(
  set: CompiledPolicySet,
  request: AdmissionRequest,
  ctx: EngineContext,
  options: EvaluateOptions,
): AdmissionDecision {
  if (isAdmissionConfigurationResource(request)) return combine([], NO_MUTATION);
  const prepared = prepare(request, ctx);
  const mctx = matchContext(ctx);
  const results: PolicyResult[] = [];
  const all = subjects(set, "ValidatingAdmissionPolicy", options, request);
  for (let i = 0; i < all.length; i++) {
    const subject = all[i] as Subject;
    const policy = subject.policy;
    if (policy.kind !== "ValidatingAdmissionPolicy") continue;
    evaluateSubject(subject, request, ctx, mctx, options, results, (params, ev, started, base) => {
      const act = validationActivation(prepared, policy, ev, params);
      const gated = gateOnMatchConditions(subject, ev, started, base, act);
      if (gated) return gated;
      const actions = validationActions(subject);
      let violations: Violation[] | undefined;
      let errored: { kind: EvaluationErrorKind; message: string } | undefined;
      // Every validation runs before any messageExpression, as in Kubernetes.
      const outcomes = validationOutcomes(ev, policy, act);
      if (outcomes !== undefined)
        for (let i = 0; i < outcomes.length; i++) {
          const r = outcomes[i];
          if (r === undefined) break;
          const v = policy.validations[i] as CompiledValidation;
          if (r instanceof ExprFailure) {
            errored ??= { kind: r.kind, message: r.message };
            if (policy.failurePolicy === "Fail")
              violations = addErrorViolations(violations, actions, r.message, v.index);
          } else if (r !== true) {
            const message = messageFor(ev, v, act);
            violations ??= [];
            for (const action of actions)
              violations.push({
                message,
                reason: v.reason,
                code: reasonCode(v.reason),
                action,
                expressionIndex: v.index,
              });
          }
        }
      let auditAnnotations: Record<string, string> | undefined;
      for (const a of policy.auditAnnotations) {
        const r = runStep(ev, "auditAnnotation", a.key, a.expression, act);
        if (!r.ok) {
          errored ??= { kind: r.kind, message: r.message };
          if (policy.failurePolicy === "Fail")
            violations = addErrorViolations(violations, actions, r.message, -1);
          continue;
        }
        // Kubernetes trims the value and leaves an empty one out.
        const value = typeof r.value === "string" ? r.value.trim() : "";
        if (value !== "") {
          auditAnnotations ??= {};
          auditAnnotations[`${policy.name}/${a.key}`] = value.slice(0, MAX_AUDIT_VALUE_LENGTH);
        }
      }
      const outcome = errored ? "error" : violations !== undefined ? "fail" : "pass";
      return finish(
        base,
        {
          outcome,
          errorKind: errored?.kind,
          reason: errored?.message,
          validationActions: actions,
          violations: violations ?? NO_VIOLATIONS,
          warnings: deadlineWarning(policy, errored?.kind),
          auditAnnotations: auditAnnotations ?? NO_ANNOTATIONS,
        },
        ev,
        started,
      );
    });
  }
  return combine(results, NO_MUTATION);
}

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
