/**
 * The review routes: `/validate` and `/mutate`, and the split paths that serve only the policies of
 * one failurePolicy. Each turns an AdmissionReview into a call on the engine (one phase, as the API
 * server calls a mutating and a validating webhook separately) and its decision into the reply.
 *
 * A review runs on the main thread, in its turn's batch (batch.ts), within a time slice when a slow
 * lane can take it: one still running when its slice ends, or whose body is too large to parse
 * here (body.ts), is answered by the slow lane's worker (slow-lane.ts) while the main thread goes
 * on with the others.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AdmissionDecision, PolicyResult } from "../../engine/types.ts";
import { type DecodedReview, decodeAdmissionReview } from "../admission/codec.ts";
import { type BodyProblem, parseReviewText } from "../admission/json-text.ts";
import type { ReviewAdmitter } from "./admitter.ts";
import { type ReviewBatcher, SLICED } from "./batch.ts";
import { UNPARSED } from "./body.ts";
import { deadlineFor, requestTimeoutMs } from "./deadline.ts";
import { elapsedMs, problem, type RecordInvalid } from "./http.ts";
import type { LaneAnswer } from "./lane-protocol.ts";
import type { WebhookMetrics } from "./metrics.ts";
import type { Recorder } from "./recorder.ts";
import { NOTHING_SENSITIVE, redactResults, type Sensitive, sensitiveOf } from "./redact.ts";
import {
  failureReplyFor,
  INTERNAL_ERROR_MESSAGE,
  type ReviewIdentity,
  type ReviewOutcome,
  type ReviewRoute,
  replyFor,
  reviewOptions,
} from "./review.ts";
import type { ReviewLogWriter, ServerLogging } from "./review-log.ts";
import type { ServerLog } from "./server-log.ts";
import type { SlowLane } from "./slow-lane.ts";

export { REVIEW_PATHS, REVIEW_ROUTES, type ReviewRoute } from "./review.ts";

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
  /** Whether answers must ask the client to reconnect elsewhere (the server is draining or closing). */
  readonly draining: () => boolean;
  /** Log the debug trace's values as they are, credentials and Secrets included (redact.ts). */
  readonly logValues: boolean;
  /** Where slow reviews go; absent, every review runs here to its deadline. */
  readonly lane: SlowLane | undefined;
  /** How long a review may hold the main thread before it moves to the lane. */
  readonly sliceMs: number;
  /** `serve --record`: where a sample of the answered reviews goes (recorder.ts). */
  readonly recorder: Recorder | undefined;
}

/**
 * Counts and logs a finished review. Positional, not an object of fields: this runs for every
 * review. `sensitive` (what of the request the trace must not show) matters only to the debug log.
 */
function record(
  c: ReviewContext,
  request: FastifyRequest,
  route: ReviewRoute,
  who: ReviewIdentity,
  outcome: ReviewOutcome,
  allowed: boolean,
  results: readonly PolicyResult[] | undefined,
  sensitive: Sensitive = NOTHING_SENSITIVE,
): void {
  const seconds = elapsedMs(request) / 1000;
  c.metrics.recordReview(route.path, who.operation, outcome, seconds);
  // Guarded because the results come from the engine and a metric must never fail a review.
  if (Array.isArray(results)) c.metrics.recordPolicyResults(results);
  c.logReview?.({
    uid: who.uid,
    path: route.path,
    kind: who.kind.kind,
    namespace: who.namespace,
    name: who.name,
    operation: who.operation,
    allowed,
    outcome,
    durationMs: Math.round(seconds * 1e6) / 1e3,
  });
  // The explain trace holds expression values, which may come from the object: debug level only.
  if (c.debugging && results !== undefined) logTrace(c, who.uid, results, sensitive);
}

/**
 * The handler of one review route: decode, review (in the turn's batch, or in the slow lane),
 * encode, count and log. The order of the steps is the contract: the engine's decision is encoded,
 * counted and logged as it was made, and an engine that fails is answered by the path's
 * failurePolicy where the path has one, else by a 500 the API server's own failurePolicy decides.
 */
export function reviewHandler(route: ReviewRoute, c: ReviewContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const admitter = c.admitter();
    const timeout = (request.query as Record<string, unknown> | undefined)?.timeout;
    const deadline = deadlineFor(request.celgateStart, requestTimeoutMs(timeout, c.defaultTimeoutMs));
    const version = admitter.laneVersion;
    const lane =
      c.lane !== undefined && version !== undefined && c.lane.accepts(version) ? c.lane : undefined;

    const recording = c.recorder?.sampled() === true;
    let body = request.body;
    if (body === UNPARSED) {
      let raw = request.celgateBody;
      if (lane !== undefined) {
        c.metrics.recordOffload("large_body");
        // The bytes move to the worker: a recording keeps a copy of them.
        const kept = recording && Buffer.isBuffer(raw) ? Buffer.from(raw) : raw;
        const answer = await toLane(lane, version as number, request, route, deadline, c.debugging);
        if (answer.kind !== "unavailable")
          return answerFromLane(c, route, request, reply, answer, recording, kept);
        // The bytes moved to the worker and came back.
        if (answer.body !== undefined)
          raw = Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
      }
      // No lane for this policy set: parsed here after all.
      body = parseHere(raw);
    }
    const decoded = body instanceof Unparsable ? undefined : decodeAdmissionReview(body);
    if (decoded === undefined || !decoded.ok) {
      c.recordInvalid(request);
      const refused = decoded === undefined ? (body as Unparsable).problem : undefined;
      const status = refused?.status ?? 400;
      const reason = decoded === undefined ? (refused?.reason ?? "") : decoded.error.reason;
      return reply.code(status).send(problem(status, reason));
    }
    const review = decoded.value;
    const options = reviewOptions(route, deadline, c.debugging);
    let decision: AdmissionDecision | typeof SLICED;
    try {
      const slice = lane === undefined ? 0 : c.sliceMs;
      decision = await c.batcher.review(admitter, review.request, options, slice);
      // Cut at its slice. A review that is slow by nature goes to the lane. But a slice can also
      // end for reasons of the moment (a garbage collection, the first compile of a policy's
      // code, the process held off its CPU), and a review that is cheap after all must not wait
      // behind a costly one in the lane: while the lane is busy, it gets one more, longer slice here.
      if (decision === SLICED && lane !== undefined && !lane.idle())
        decision = await c.batcher.review(admitter, review.request, options, slice * RETRY_SLICE_FACTOR);
      if (decision === SLICED) {
        c.metrics.recordOffload("slice");
        const answer = await toLane(
          lane as SlowLane,
          version as number,
          request,
          route,
          deadline,
          c.debugging,
        );
        if (answer.kind !== "unavailable")
          return answerFromLane(c, route, request, reply, answer, recording, request.celgateBody);
        // The lane cannot take it after all: here, to its own deadline.
        decision = await c.batcher.review(admitter, review.request, options);
      }
    } catch (e) {
      return answerFailure(c, route, request, reply, review, e);
    }
    return answerDecision(c, route, request, reply, review, decision as AdmissionDecision, recording);
  };
}

/** The size of a request's body as read, for the recorder's queue bound. */
function bodyBytes(body: string | Buffer | null): number {
  return body === null ? 0 : typeof body === "string" ? body.length : body.byteLength;
}

function toLane(
  lane: SlowLane,
  version: number,
  request: FastifyRequest,
  route: ReviewRoute,
  deadline: number,
  debugging: boolean,
): Promise<LaneAnswer> {
  return lane.submit({ version, body: request.celgateBody ?? "", route, deadline, debugging });
}

/** How much longer the second slice of a review cut at its first is, when the lane is busy. */
const RETRY_SLICE_FACTOR = 4;

/** A body that parseHere refused, and why. */
class Unparsable {
  constructor(readonly problem: BodyProblem) {}
}

/** A body the parser left for the slow lane, parsed on the main thread when there is none. */
function parseHere(raw: string | Buffer | null): unknown {
  const parsed = parseReviewText(typeof raw === "string" ? raw : (raw ?? Buffer.alloc(0)).toString("utf8"));
  return parsed.ok ? parsed.value : new Unparsable(parsed.error);
}

function send(c: ReviewContext, reply: FastifyReply, payload: unknown): FastifyReply {
  // The drain may have begun while this review waited or ran.
  if (c.draining()) reply.header("connection", "close");
  return reply.code(200).send(payload);
}

function answerDecision(
  c: ReviewContext,
  route: ReviewRoute,
  request: FastifyRequest,
  reply: FastifyReply,
  review: DecodedReview,
  decision: AdmissionDecision,
  recording: boolean,
): FastifyReply {
  let answer: ReturnType<typeof replyFor>;
  try {
    answer = replyFor(route, review, decision);
  } catch (e) {
    // The engine returned something that is not a decision.
    return answerFailure(c, route, request, reply, review, e);
  }
  const sensitive = c.debugging ? sensitiveOf(review.request) : NOTHING_SENSITIVE;
  record(
    c,
    request,
    route,
    review.request,
    answer.outcome,
    answer.body.response.allowed,
    decision.results,
    sensitive,
  );
  const sent = send(c, reply, answer.body);
  if (recording)
    c.recorder?.offer({
      path: route.path,
      apiVersion: review.apiVersion,
      request: review.request,
      reply: answer.body,
      bytes: bodyBytes(request.celgateBody),
    });
  return sent;
}

function answerFailure(
  c: ReviewContext,
  route: ReviewRoute,
  request: FastifyRequest,
  reply: FastifyReply,
  review: DecodedReview,
  error: unknown,
): FastifyReply {
  c.log.error({ err: error, uid: review.request.uid, path: route.path }, "admission review failed");
  const failure = failureReplyFor(route, review);
  record(c, request, route, review.request, "error", failure?.response.allowed ?? false, undefined);
  // No policy of our own to apply: a failed call lets the API server apply the webhook's.
  if (failure === undefined) return reply.code(500).send(problem(500, INTERNAL_ERROR_MESSAGE));
  return send(c, reply, failure);
}

/** The slow lane's answer, counted, logged and sent as a review answered here would be. */
function answerFromLane(
  c: ReviewContext,
  route: ReviewRoute,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Exclude<LaneAnswer, { kind: "unavailable" }>,
  recording: boolean,
  body: string | Buffer | null,
): FastifyReply {
  if (answer.kind === "invalid") {
    c.recordInvalid(request);
    const status = answer.status ?? 400;
    return reply.code(status).send(problem(status, answer.reason));
  }
  const unknown: ReviewIdentity = {
    uid: "",
    kind: { kind: "" },
    namespace: "",
    name: "",
    operation: "unknown",
  };
  if (answer.kind === "failed") {
    c.log.error(
      { err: answer.error, uid: answer.identity?.uid, path: route.path },
      "admission review failed",
    );
    record(c, request, route, answer.identity ?? unknown, "error", answer.allowed ?? false, undefined);
    if (answer.payload === undefined) return reply.code(500).send(problem(500, INTERNAL_ERROR_MESSAGE));
    return send(c, reply.type("application/json; charset=utf-8"), answer.payload);
  }
  record(c, request, route, answer.identity, answer.outcome, answer.allowed, answer.results, answer.secrets);
  const sent = send(c, reply.type("application/json; charset=utf-8"), answer.payload);
  if (recording && body !== null)
    c.recorder?.offer({ path: route.path, body, reply: answer.payload, bytes: bodyBytes(body) });
  return sent;
}

/** Each policy's trace of one review, at debug level; values redacted unless asked for (redact.ts). */
function logTrace(c: ReviewContext, uid: string, results: readonly PolicyResult[], hide: Sensitive): void {
  const shown = c.logValues ? results : redactResults(results, hide);
  c.log.debug(
    {
      uid,
      results: shown.map((r) => ({
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
