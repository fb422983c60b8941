/**
 * One review from decoded request to encoded reply, without HTTP: the part of the review routes
 * that the main thread and the slow lane's worker (slow-worker.ts) share, so that a review answered
 * on either gives the same bytes. No fastify here: the worker does not load it.
 */
import type { AdmissionDecision } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import { type AdmissionReviewReply, type DecodedReview, encodeAdmissionReview } from "../admission/codec.ts";
import type { ReviewOptions } from "./admitter.ts";

export interface ReviewRoute {
  readonly path: string;
  readonly phase: ReviewOptions["phase"];
  readonly failurePolicy?: "Fail" | "Ignore";
}

export const REVIEW_ROUTES: readonly ReviewRoute[] = [
  { path: "/validate", phase: "validate" },
  { path: "/validate/fail", phase: "validate", failurePolicy: "Fail" },
  { path: "/validate/ignore", phase: "validate", failurePolicy: "Ignore" },
  { path: "/mutate", phase: "mutate" },
  { path: "/mutate/fail", phase: "mutate", failurePolicy: "Fail" },
  { path: "/mutate/ignore", phase: "mutate", failurePolicy: "Ignore" },
];
export const REVIEW_PATHS = new Set(REVIEW_ROUTES.map((r) => r.path));

export const INTERNAL_ERROR_MESSAGE = "celgate internal error";

/**
 * What one review ended as, for `celgate_admission_requests_total`: a verdict, `error` when the
 * engine failed, `invalid` when the request itself was unusable (400, 413, 415, 429).
 */
export type ReviewOutcome = "allowed" | "denied" | "error" | "patched" | "invalid";

/** The outcome label for a decision: patched wins over allowed so mutation rates are visible. */
export function outcomeOf(decision: AdmissionDecision, mutating: boolean): ReviewOutcome {
  if (!decision.allowed) return "denied";
  if (mutating && decision.patch !== undefined && decision.patch.length > 0) return "patched";
  return "allowed";
}

export type MutableReviewOptions = { -readonly [K in keyof ReviewOptions]: ReviewOptions[K] };

/** The engine's options for a review on `route`, built key by key (no conditional spreads: per review). */
export function reviewOptions(
  route: ReviewRoute,
  deadline: number,
  debugging: boolean,
): MutableReviewOptions {
  const options: MutableReviewOptions = { phase: route.phase, deadline };
  if (route.failurePolicy !== undefined) options.failurePolicy = route.failurePolicy;
  // Only the debug log reads a trace; without it the engine records none.
  if (debugging) options.explain = true;
  else options.trace = false;
  return options;
}

/**
 * What to answer when the engine throws or returns something unusable: the path's failurePolicy,
 * as the API server would apply it had the call failed. Never allowed on a Fail path.
 */
export function failureDecision(failurePolicy: "Fail" | "Ignore"): AdmissionDecision {
  const base = { auditAnnotations: {}, results: [], cost: 0 };
  if (failurePolicy === "Ignore") {
    return {
      ...base,
      allowed: true,
      warnings: [`${INTERNAL_ERROR_MESSAGE}; allowed because failurePolicy is Ignore`],
    };
  }
  return {
    ...base,
    allowed: false,
    status: { code: 500, reason: "InternalError", message: INTERNAL_ERROR_MESSAGE },
    warnings: [],
  };
}

/** The reply to the engine's decision, and the outcome it counts as. */
export function replyFor(
  route: ReviewRoute,
  review: DecodedReview,
  decision: AdmissionDecision,
): { readonly body: AdmissionReviewReply; readonly outcome: ReviewOutcome } {
  const mutating = route.phase === "mutate";
  const body = encodeAdmissionReview(review.apiVersion, review.request.uid, decision, {
    mutating,
    operation: review.request.operation,
  });
  return { body, outcome: outcomeOf(decision, mutating) };
}

/**
 * The reply when the engine failed: the path's failurePolicy as a decision, or undefined on a path
 * without one, which answers HTTP 500 so the API server applies the webhook's own.
 */
export function failureReplyFor(route: ReviewRoute, review: DecodedReview): AdmissionReviewReply | undefined {
  if (route.failurePolicy === undefined) return undefined;
  return encodeAdmissionReview(review.apiVersion, review.request.uid, failureDecision(route.failurePolicy), {
    mutating: route.phase === "mutate",
    operation: review.request.operation,
  });
}

/**
 * What the review log and the metrics say of a request: its names and kinds, never its contents.
 * An AdmissionRequest is one; the slow lane sends just these fields back.
 */
export interface ReviewIdentity {
  readonly uid: string;
  readonly kind: { readonly kind: string };
  readonly namespace: string;
  readonly name: string;
  readonly operation: string;
}

export function identityOf(request: AdmissionRequest): ReviewIdentity {
  return {
    uid: request.uid,
    kind: { kind: request.kind.kind },
    namespace: request.namespace,
    name: request.name,
    operation: request.operation,
  };
}
