/**
 * A review answered by a policy set as `serve` answers it, without HTTP: a recorded review on the
 * path that answered it (its phase and, on a split path, its failurePolicy), through the same
 * admitter, options and reply encoding as the webhook (server/admitter.ts, server/review.ts), so
 * that replaying a recording with the set that served it changes nothing. A review from elsewhere
 * (an AdmissionReview file, an audit event, a resource) names no path: it gets the whole chain,
 * mutating policies then validating ones on the result, as the API server calls both webhooks,
 * with the mutating reply's patch.
 */
import { performance } from "node:perf_hooks";
import type { CompiledPolicySet } from "../../../compile/policy.ts";
import { admit } from "../../../engine/admit.ts";
import { contextFromSet, type EngineContext } from "../../../engine/context.ts";
import { decide } from "../../../engine/decision.ts";
import type { AdmissionDecision, PolicyResult } from "../../../engine/types.ts";
import { encodeAdmissionReview } from "../../admission/codec.ts";
import { type Admitter, serveAdmitter } from "../../server/admitter.ts";
import { sensitiveOf } from "../../server/redact.ts";
import { decisionOf, type RecordedDecision } from "../../server/recording.ts";
import {
  failureReplyFor,
  INTERNAL_ERROR_MESSAGE,
  REVIEW_ROUTES,
  replyFor,
  reviewOptions,
} from "../../server/review.ts";
import type { ReplayItem } from "./sources.ts";

/** The time one review may take, as the API server's default webhook timeout gives serve. */
const REVIEW_TIMEOUT_MS = 10_000;

/** What a set answered: the reply as the API server reads it, and each policy's result. */
export interface Answer {
  readonly decision: RecordedDecision;
  readonly results: readonly PolicyResult[];
}

/** A policy set ready to answer reviews as serve (without a cluster connection) would. */
export class Answerer {
  private readonly admitter: Admitter & { readonly set: CompiledPolicySet };
  private readonly ctx: EngineContext;

  constructor(set: CompiledPolicySet) {
    this.admitter = serveAdmitter(set);
    // The lookups serveAdmitter builds, for the whole chain too.
    this.ctx = contextFromSet(set, { assumeNamespaces: true });
  }

  answer(item: ReplayItem): Answer {
    const s = sensitiveOf(item.request);
    const deadline = performance.now() + REVIEW_TIMEOUT_MS;
    const review = { apiVersion: item.apiVersion, request: item.request };
    const route = REVIEW_ROUTES.find((r) => r.path === item.path);
    if (route === undefined) {
      const decision = decide(admit(this.admitter.set, item.request, this.ctx, { deadline, trace: false }));
      const reply = encodeAdmissionReview(item.apiVersion, item.request.uid, decision, {
        mutating: true,
        operation: item.request.operation,
      });
      return { decision: decisionOf(reply.response, s), results: decision.results };
    }
    let decision: AdmissionDecision;
    try {
      decision = this.admitter.review(item.request, reviewOptions(route, deadline, false));
      return {
        decision: decisionOf(replyFor(route, review, decision).body.response, s),
        results: decision.results,
      };
    } catch {
      // As serve answers an engine that throws: the path's failurePolicy, or HTTP 500.
      const failure = failureReplyFor(route, review);
      const response = failure?.response ?? {
        uid: item.request.uid,
        allowed: false,
        status: { code: 500, message: INTERNAL_ERROR_MESSAGE },
      };
      return { decision: decisionOf(response, s), results: [] };
    }
  }
}
