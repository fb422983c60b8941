/**
 * What the engine gives out: per-policy results and the decision made from them, plain data that
 * every adapter (webhook, CLI, REPL) renders without re-deciding anything. What it takes in, the
 * admission request, is in request/types.ts.
 */
import type { ValidationAction } from "../policy/types.ts";

// The request types moved below match/ and engine/; re-exported for the modules that still name
// them from here (suite/types.ts and suite/parse.ts, which another change is rewriting).
export type {
  AdmissionRequest,
  GroupVersionKind,
  GroupVersionResource,
  UserInfo,
} from "../request/types.ts";

/** One JSON Patch operation (RFC 6902). */
export interface JsonPatchOp {
  readonly op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

/**
 * Why an evaluation did not produce a verdict; `failurePolicy` decides what that means. The last
 * three are configuration errors of the policy or binding (a paramRef that cannot apply, params that
 * a Deny paramRef cannot find, a selector that does not parse, a namespace that cannot be found),
 * which the API server denies under Fail whatever the binding's validationActions.
 */
export type EvaluationErrorKind =
  | "compile"
  | "runtime"
  | "cost"
  | "timeout"
  | "internal"
  | "configuration"
  | "param-not-found"
  | "namespace-not-found";

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

/**
 * What the engine found about one request: every policy's result, and what the mutations made of
 * the object. It holds no verdict: decision.ts turns it into one, at the edge that answers.
 */
export interface Admission {
  readonly results: readonly PolicyResult[];
  /** From the original object to the mutated one; absent when nothing changed. */
  readonly patch?: readonly JsonPatchOp[];
  /** The object after all mutations; absent when nothing changed. */
  readonly patchedObject?: unknown;
}

/**
 * What a request's policies decided, as the API server would enforce their results (decision.ts):
 * Deny denies, Warn warns, Audit annotates.
 */
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

/** How the engine evaluates a request's policies. */
export interface EvaluateOptions {
  /**
   * When evaluation must stop and answer by failurePolicy, on the monotonic clock (`performance.now()`
   * ms): a wall-clock deadline would move with every adjustment of the system time.
   */
  readonly deadline: number;
  /** Only the pairs routed to the split path with this failurePolicy (policy/routing.ts). */
  readonly failurePolicy?: "Fail" | "Ignore";
  /**
   * Also evaluate policies that have no binding, as if bound with validationActions [Deny]. Only on
   * explicit request (`--include-unbound`): the API server evaluates a policy only through a binding.
   */
  readonly includeUnbound?: boolean;
  /**
   * Walk every binding, so each one that does not apply gives a skip result saying why (the dry
   * runs); the webhook takes only the index's candidates. Either way the same pairs decide.
   */
  readonly allBindings?: boolean;
  /** Record every step's value in the trace (CLI, REPL); the webhook leaves it off for speed. */
  readonly explain?: boolean;
  /**
   * Record each expression in the results' traces (the default). The webhook turns it off unless
   * explaining: nothing else reads the trace there, and a step costs an object per expression.
   */
  readonly trace?: boolean;
  /**
   * Apply the API server's defaults again to an object a mutation changed, as it does after each
   * mutation (engine/redefault.ts). The offline commands and the library turn it on (off with
   * `--no-defaults`: the objects as written); the webhook leaves it off, as the API server defaults
   * its patched object itself (docs/architecture.md says what that leaves out).
   */
  readonly defaults?: boolean;
}

/** How `admit` runs: one phase or the whole chain, and how it evaluates. */
export interface AdmitOptions extends EvaluateOptions {
  /**
   * One phase, as the API server calls a mutating and a validating webhook separately: `mutate`
   * runs the MutatingAdmissionPolicies, `validate` the ValidatingAdmissionPolicies. Absent: the
   * whole chain, mutations first and validations on what they made.
   */
  readonly phase?: "validate" | "mutate";
}
