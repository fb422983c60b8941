/**
 * The review routes: `/validate` and `/mutate`, and the split paths that serve only the policies of
 * one failurePolicy. Each turns an AdmissionReview into a call on the engine (one phase, as the API
 * server calls a mutating and a validating webhook separately) and its decision into the reply.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AdmissionDecision } from "../../engine/types.ts";
import { decodeAdmissionReview, encodeAdmissionReview } from "../admission/codec.ts";
import type { ReviewAdmitter, ReviewOptions } from "./admitter.ts";
import type { ReviewBatcher } from "./batch.ts";
import { deadlineFor, requestTimeoutMs } from "./deadline.ts";
import { elapsedMs, INTERNAL_ERROR_MESSAGE, problem, type RecordInvalid } from "./http.ts";
import { outcomeOf, type ReviewOutcome, type WebhookMetrics } from "./metrics.ts";
import type { ReviewLogWriter, ServerLogging } from "./review-log.ts";
import type { ServerLog } from "./server-log.ts";

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

/** pino's levels at or below debug, when the explain trace is worth its cost. */
export function isDebugging(logging: ServerLogging | false): boolean {
  return logging !== false && (logging.level === "debug" || logging.level === "trace");
}

/** What every review route shares: the engine, and where its answers are counted and logged. */
export interface ReviewContext {
  /** Called once per request; hot reload swaps what it returns, and a request keeps the one it got. */
  readonly admitter: () => ReviewAdmitter;
  readonly metrics: WebhookMetrics;
  readonly log: ServerLog;
  /** Names and kinds only: object contents can hold secrets and do not belong in info logs. */
  readonly logReview: ReviewLogWriter | undefined;
  /** The level is fixed for the server's life; pino's level getter cost a little on every review. */
  readonly debugging: boolean;
  readonly defaultTimeoutMs: number;
  readonly batcher: ReviewBatcher;
  readonly recordInvalid: RecordInvalid;
}

/**
 * What to answer when the engine throws or returns something unusable: the path's failurePolicy,
 * as the API server would apply it had the call failed. Never allowed on a Fail path.
 */
function failureDecision(failurePolicy: "Fail" | "Ignore"): AdmissionDecision {
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

/**
 * The handler of one review route: decode, review (in the turn's batch), encode, count and log.
 * Written out in one piece, as the order of its steps is the contract: the engine's decision is
 * encoded, counted and logged as it was made, and an engine that throws is answered by the path's
 * failurePolicy where the path has one, else by a 500 the API server's own failurePolicy decides.
 */
export function reviewHandler(route: ReviewRoute, c: ReviewContext) {
  const { metrics, log, logReview, debugging, defaultTimeoutMs, batcher, recordInvalid } = c;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const decoded = decodeAdmissionReview(request.body);
    if (!decoded.ok) {
      recordInvalid(request);
      return reply.code(400).send(problem(400, decoded.error.reason));
    }
    const { apiVersion, request: admission } = decoded.value;
    const timeout = (request.query as Record<string, unknown> | undefined)?.timeout;
    // Key by key, as the engine and codec build their per-review objects (no conditional spreads).
    const options: { -readonly [K in keyof ReviewOptions]: ReviewOptions[K] } = {
      phase: route.phase,
      deadline: deadlineFor(request.celgateStart, requestTimeoutMs(timeout, defaultTimeoutMs)),
    };
    if (route.failurePolicy !== undefined) options.failurePolicy = route.failurePolicy;
    // Only the debug log reads a trace; without it the engine records none.
    if (debugging) options.explain = true;
    else options.trace = false;
    const mutating = route.phase === "mutate";
    const encodeOptions = { mutating, operation: admission.operation };

    let outcome: ReviewOutcome;
    let decision: AdmissionDecision | undefined;
    let body: ReturnType<typeof encodeAdmissionReview>;
    try {
      decision = await batcher.review(c.admitter(), admission, options);
      body = encodeAdmissionReview(apiVersion, admission.uid, decision, encodeOptions);
      outcome = outcomeOf(decision, mutating);
    } catch (e) {
      log.error({ err: e, uid: admission.uid, path: route.path }, "admission review failed");
      decision = undefined;
      outcome = "error";
      if (route.failurePolicy === undefined) {
        // No policy of our own to apply: a failed call lets the API server apply the webhook's.
        metrics.recordReview(route.path, admission.operation, outcome, elapsedMs(request) / 1000);
        return reply.code(500).send(problem(500, INTERNAL_ERROR_MESSAGE));
      }
      body = encodeAdmissionReview(
        apiVersion,
        admission.uid,
        failureDecision(route.failurePolicy),
        encodeOptions,
      );
    }
    const seconds = elapsedMs(request) / 1000;
    metrics.recordReview(route.path, admission.operation, outcome, seconds, decision);
    logReview?.({
      uid: admission.uid,
      path: route.path,
      kind: admission.kind.kind,
      namespace: admission.namespace,
      name: admission.name,
      operation: admission.operation,
      allowed: body.response.allowed,
      outcome,
      durationMs: Math.round(seconds * 1e6) / 1e3,
    });
    // The explain trace holds expression values, which may come from the object: debug level only.
    if (decision && debugging) logTrace(log, admission.uid, decision);
    return reply.code(200).send(body);
  };
}

/** Each policy's trace of one review, at debug level. */
function logTrace(log: ServerLog, uid: string, decision: AdmissionDecision): void {
  log.debug(
    {
      uid,
      results: decision.results.map((r) => ({
        policy: r.policy,
        binding: r.binding,
        param: r.param,
        outcome: r.outcome,
        reason: r.reason,
        trace: r.trace,
      })),
    },
    "admission review trace",
  );
}
