/**
 * The validating phase: every ValidatingAdmissionPolicy that applies to a request, its validations
 * (all of them before any messageExpression, as in Kubernetes) and its audit annotations.
 */
import {
  type Activation,
  BUDGET_MESSAGE,
  BUDGET_SPENT,
  type CelValue,
  DEADLINE_PASSED,
  explainFalse,
  Thrown,
  typeName,
} from "../cel/index.ts";
import type {
  CompiledExpression,
  CompiledPolicySet,
  CompiledValidatingPolicy,
  CompiledValidation,
} from "../compile/policy.ts";
import { isAdmissionConfigurationResource } from "../match/index.ts";
import type { AdmissionRequest } from "../request/types.ts";
import { type EngineContext, matchContext } from "./context.ts";
import {
  deadlineFailure,
  type Evaluation,
  endsPolicy,
  ExprFailure,
  runExpr,
  runStep,
  step,
  thrownFailure,
  toOutcome,
} from "./evaluate.ts";
import { auditAnnotationViolations, errorResult, errorViolations, errorWarnings } from "./failure-policy.ts";
import { gateOnMatchConditions } from "./match-conditions.ts";
import { type PreparedRequest, prepare } from "./prepare.ts";
import {
  finish,
  NO_ANNOTATIONS,
  NO_RESULTS,
  NO_VIOLATIONS,
  type ResultBase,
  type Subject,
  validationActions,
} from "./results.ts";
import { evaluateSubject, subjects } from "./subjects.ts";
import type { Admission, EvaluateOptions, EvaluationErrorKind, PolicyResult, Violation } from "./types.ts";
import { expressionActivation, validationActivation } from "./variables.ts";

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
/** dispatcher.go's maxAuditAnnotationValueLength, in bytes of UTF-8 (Go's `value[:n]`). */
const MAX_AUDIT_VALUE_LENGTH = 10 * 1024;

/**
 * The first `max` bytes of `text`'s UTF-8, as Go's `value[:max]` cuts a string. A character cut in
 * two leaves bytes that are not UTF-8, which the API server's JSON encoding (audit log, webhook
 * reply) writes as U+FFFD each: so does this.
 */
function truncateBytes(text: string, max: number): string {
  if (text.length * 3 <= max) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  let end = max;
  // Back to the start of the character the cut falls in; its bytes before the cut become U+FFFD.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8") + "\ufffd".repeat(max - end);
}

function messageFor(
  ev: Evaluation,
  v: {
    message: string | undefined;
    messageExpression: CompiledExpression | undefined;
    expression: CompiledExpression;
  },
  act: () => Activation,
): string {
  const fallback = v.message?.trim() || `failed expression: ${v.expression.source.trim()}`;
  if (!v.messageExpression) return fallback;
  const r = runStep(ev, "messageExpression", "", v.messageExpression, act());
  if (!r.ok || typeof r.value !== "string") return fallback;
  const m = r.value.trim();
  if (m === "" || Buffer.byteLength(m) > MAX_MESSAGE_LENGTH || m.includes("\n")) return fallback;
  return m;
}

/**
 * Each validation's value or failure, in order: undefined when every one was true; else one entry per
 * validation, undefined for those after the budget spent or the deadline passed, which end the policy
 * (an expression over its own per-call limit fails alone, as in Kubernetes). Without
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
      if (r instanceof Thrown) outcomes[i] = thrownFailure(ev, expr, r.error, r.budgetBound);
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
    if (r instanceof ExprFailure && endsPolicy(r)) break;
  }
  return outcomes;
}

/** Evaluates the ValidatingAdmissionPolicies that apply to a request: each one's result, no verdict. */
export function validate(
  set: CompiledPolicySet,
  request: AdmissionRequest,
  ctx: EngineContext,
  options: EvaluateOptions,
): Admission {
  if (isAdmissionConfigurationResource(request)) return NO_RESULTS;
  const prepared = prepare(request, ctx);
  const mctx = matchContext(ctx);
  const results: PolicyResult[] = [];
  const all = subjects(set, "ValidatingAdmissionPolicy", options, request);
  for (let i = 0; i < all.length; i++) {
    const subject = all[i] as Subject;
    const policy = subject.policy;
    if (policy.kind !== "ValidatingAdmissionPolicy") continue;
    evaluateSubject(subject, request, ctx, mctx, options, results, (params, ev, started, base) =>
      validatePolicy(subject, policy, prepared, params, ev, started, base),
    );
  }
  return { results };
}

/** What a policy's audit annotations gave: the values to publish, and the errors. */
interface Annotated {
  values: Record<string, string> | undefined;
  errored: { kind: EvaluationErrorKind; message: string } | undefined;
  readonly errors: { readonly message: string; readonly typeError: boolean }[];
}

const NOT_ANNOTATED: Annotated = Object.freeze({ values: undefined, errored: undefined, errors: [] });

/**
 * A policy's audit annotations (validator.go): a string is trimmed and an empty one left out, as is
 * null; any other type is an error whatever the failurePolicy; a failure is an error under Fail.
 */
function auditAnnotationsOf(ev: Evaluation, policy: CompiledValidatingPolicy, act: Activation): Annotated {
  // Most policies have none: they share one empty answer rather than allocate one per review.
  if (policy.auditAnnotations.length === 0) return NOT_ANNOTATED;
  const out: Annotated = { values: undefined, errored: undefined, errors: [] };
  for (const a of policy.auditAnnotations) {
    const r = runStep(ev, "auditAnnotation", a.key, a.expression, act);
    if (!r.ok) {
      out.errored ??= { kind: r.kind, message: r.message };
      out.errors.push({ message: r.message, typeError: false });
      continue;
    }
    if (r.value === null) continue;
    if (typeof r.value !== "string") {
      const message = `valueExpression '${a.expression.source}' resulted in unsupported return type: ${typeName(r.value)}. Return type must be either string or null.`;
      out.errored ??= { kind: "runtime", message };
      out.errors.push({ message, typeError: true });
      continue;
    }
    const value = r.value.trim();
    if (value === "") continue;
    out.values ??= {};
    out.values[`${policy.name}/${a.key}`] = truncateBytes(value, MAX_AUDIT_VALUE_LENGTH);
  }
  return out;
}

/** One validating policy's evaluation for one param: matchConditions, validations, audit annotations. */
function validatePolicy(
  subject: Subject,
  policy: CompiledValidatingPolicy,
  prepared: PreparedRequest,
  params: CelValue,
  ev: Evaluation,
  started: number,
  base: ResultBase,
): PolicyResult {
  const act = validationActivation(prepared, policy, ev, params);
  // messageExpressions and audit annotations see no authorizer (expressionActivation); built once, when first needed.
  let exprAct: Activation | undefined;
  const messageAct = () => {
    exprAct ??= expressionActivation(prepared, policy, ev, params, act);
    return exprAct;
  };
  const gated = gateOnMatchConditions(subject, ev, started, base, act);
  if (gated) return gated;
  const actions = validationActions(subject);
  let violations: Violation[] | undefined;
  let errored: { kind: EvaluationErrorKind; message: string } | undefined;
  // Every validation runs before any messageExpression, as in Kubernetes.
  const outcomes = validationOutcomes(ev, policy, act);
  // The policy's budget running out ends its evaluation as one error, whatever the validations
  // before it found, and no audit annotation is evaluated: validator.go returns a single decision
  // (index 0) when the validations' ForInput fails.
  const spent = outcomes?.find((r) => r instanceof ExprFailure && r.message === BUDGET_MESSAGE);
  if (spent !== undefined) return errorResult(base, subject, "cost", BUDGET_MESSAGE, ev, started, 0);
  if (outcomes !== undefined)
    for (let i = 0; i < outcomes.length; i++) {
      const r = outcomes[i];
      if (r === undefined) break;
      const v = policy.validations[i] as CompiledValidation;
      if (r instanceof ExprFailure) {
        errored ??= { kind: r.kind, message: r.message };
        violations = errorViolations(violations, policy, actions, r.message, v.index);
      } else if (r !== true) {
        const message = messageFor(ev, v, messageAct);
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
  const annotated = auditAnnotationsOf(ev, policy, policy.auditAnnotations.length > 0 ? messageAct() : act);
  if (annotated.errored) {
    errored ??= annotated.errored;
    for (const e of annotated.errors)
      violations = auditAnnotationViolations(violations, policy, e.message, e.typeError);
  }
  const auditAnnotations = annotated.values;
  const outcome = errored ? "error" : violations !== undefined ? "fail" : "pass";
  return finish(
    base,
    {
      outcome,
      errorKind: errored?.kind,
      reason: errored?.message,
      validationActions: actions,
      violations: violations ?? NO_VIOLATIONS,
      warnings: errorWarnings(policy, errored?.kind),
      auditAnnotations: auditAnnotations ?? NO_ANNOTATIONS,
    },
    ev,
    started,
  );
}
