/**
 * What the engine takes in and gives out. The admission request mirrors admission.k8s.io/v1
 * AdmissionRequest (v1beta1 has the same shape); the decision is plain data that every adapter
 * (webhook, CLI, REPL) renders without re-deciding anything.
 */
import type { Operation, ValidationAction } from "../policy/types.ts";

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

type JsonObject = Readonly<Record<string, unknown>>;

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  readonly requestKind?: GroupVersionKind;
  readonly requestResource?: GroupVersionResource;
  readonly requestSubResource?: string;
  readonly name: string;
  readonly namespace: string;
  readonly operation: Operation;
  readonly userInfo: UserInfo;
  /** `null` when absent (DELETE has no object; CREATE has no oldObject). */
  readonly object: JsonObject | null;
  readonly oldObject: JsonObject | null;
  readonly dryRun: boolean;
  readonly options: JsonObject | null;
}

/** One JSON Patch operation (RFC 6902). */
export interface JsonPatchOp {
  readonly op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

/** Why an evaluation did not produce a verdict; `failurePolicy` decides what that means. */
export type EvaluationErrorKind =
  | "compile"
  | "runtime"
  | "cost"
  | "timeout"
  | "param-not-found"
  | "namespace-not-found"
  | "internal";

export type PolicyOutcome = "pass" | "fail" | "skip" | "error";

export interface Violation {
  readonly message: string;
  /** metav1.StatusReason: Invalid, Forbidden, Unauthorized, RequestEntityTooLarge. */
  readonly reason: string;
  readonly code: number;
  readonly action: ValidationAction;
  /** Index into spec.validations. */
  readonly expressionIndex: number;
}

/** One step of the explain trace: a condition, variable, validation or mutation, with what it gave. */
export interface TraceStep {
  readonly stage:
    | "matchCondition"
    | "variable"
    | "validation"
    | "messageExpression"
    | "auditAnnotation"
    | "mutation";
  /** The name (conditions, variables) or index (validations, mutations) of the step. */
  readonly name: string;
  readonly expression: string;
  readonly value?: unknown;
  readonly error?: string;
  readonly cost: number;
  /** For a failed validation: the sub-expressions that made it false, e.g. the list element and field. */
  readonly because?: readonly string[];
}

/** The result of one (policy, binding, param) evaluation. */
export interface PolicyResult {
  readonly policy: string;
  readonly policyKind: "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy";
  /** Absent when the policy was evaluated without a binding (CLI default binding). */
  readonly binding?: string;
  /** The binding's validationActions (validating policies), as the audit annotation reports them. */
  readonly validationActions?: readonly ValidationAction[];
  /** `namespace/name` of the param object, when the policy has params. */
  readonly param?: string;
  readonly outcome: PolicyOutcome;
  /** Why the policy was skipped or errored, in words. */
  readonly reason?: string;
  readonly errorKind?: EvaluationErrorKind;
  readonly violations: readonly Violation[];
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** For mutations: the operations this policy contributed. */
  readonly patch?: readonly JsonPatchOp[];
  readonly trace: readonly TraceStep[];
  readonly cost: number;
  readonly durationMs: number;
}

/** What the engine decided about one admission request. */
export interface AdmissionDecision {
  readonly allowed: boolean;
  /** Present when denied: the HTTP code, reason and message as the API server would return them. */
  readonly status?: { readonly code: number; readonly reason: string; readonly message: string };
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** From the original object to the mutated one; absent when nothing changed. */
  readonly patch?: readonly JsonPatchOp[];
  /** The object after all mutations; absent when nothing changed. */
  readonly patchedObject?: unknown;
  readonly results: readonly PolicyResult[];
  readonly cost: number;
}

/** Which policies a review evaluates: the webhook's path decides. */
export interface ReviewOptions {
  /** `validate` runs ValidatingAdmissionPolicies, `mutate` runs MutatingAdmissionPolicies. */
  readonly phase: "validate" | "mutate";
  /** Only the pairs routed to the split path with this failurePolicy (policy/routing.ts); absent: all. */
  readonly failurePolicy?: "Fail" | "Ignore";
  /**
   * When evaluation must stop and answer by failurePolicy, on the monotonic clock (`performance.now()`
   * ms): a wall-clock deadline would move with every adjustment of the system time.
   */
  readonly deadline: number;
  /** Record values and `because` reasons in the trace (costs time; the webhook asks at debug level). */
  readonly explain?: boolean;
  /** Record each expression in the results' traces (default true; explaining records regardless). */
  readonly trace?: boolean;
}

/** What the webhook asks of the engine. Implementations never throw for bad policies or requests. */
export interface Admitter {
  review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision;
}
