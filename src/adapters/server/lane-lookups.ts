/**
 * The main thread's side of the slow lane's lookups (lane-remote.ts says why the worker asks rather
 * than keeping copies): the questions a worker asks about a review of a cluster-connected set are
 * answered from the context and SubjectAccessReview reviewer that set serves with here, through
 * the same calls the engine makes on this thread, so a review reads the same objects and gets the
 * same authorizer answers wherever it runs.
 */
import type { AuthorizerSession, AuthorizerSessions } from "../../cluster/reviews.ts";
import type { EngineContext } from "../../engine/context.ts";
import { collectParams, describeParamMiss } from "../../engine/params.ts";
import type { UserInfo } from "../../request/types.ts";
import type { LaneAsk, LaneQuestion, LaneReply } from "./lane-protocol.ts";

/** What a cluster-connected set serves with on the main thread: its context, and its reviewer. */
export interface LaneHost {
  readonly context: EngineContext;
  readonly reviewer?: AuthorizerSessions;
}

interface HostedReview {
  readonly host: LaneHost;
  /** The review's SubjectAccessReview session, from its first authorizer check, and its user. */
  session?: AuthorizerSession;
  user?: UserInfo;
}

export class LaneLookups {
  private readonly reviews = new Map<number, HostedReview>();

  /** Review `review` (a job's id) reads through `host` until `end`. */
  begin(review: number, host: LaneHost): void {
    this.reviews.set(review, { host });
  }

  end(review: number): void {
    this.reviews.delete(review);
  }

  clear(): void {
    this.reviews.clear();
  }

  /** The reply to one question; an error reply when the review is not hosted or the lookup threw. */
  answer(ask: LaneAsk): LaneReply {
    const hosted = this.reviews.get(ask.review);
    if (hosted === undefined) return { seq: ask.seq, error: "the review is no longer hosted" };
    try {
      return { seq: ask.seq, value: this.lookup(hosted, ask.question) };
    } catch (e) {
      return { seq: ask.seq, error: e instanceof Error ? e.message : String(e) };
    }
  }

  private lookup(hosted: HostedReview, q: LaneQuestion): unknown {
    const ctx = hosted.host.context;
    switch (q.op) {
      case "namespace":
        return ctx.namespace(q.name);
      case "scopeOf":
        return ctx.params.scopeOf(q.apiVersion, q.kind);
      case "select":
        return collectParams(ctx.params, q.kind, q.ref, q.requestNamespace);
      case "describeMiss":
        return describeParamMiss(ctx.params, q.kind, q.ref, q.requestNamespace);
      case "authorize": {
        const reviewer = hosted.host.reviewer;
        if (reviewer === undefined) throw new Error("this policy set has no SubjectAccessReviewer");
        if (hosted.session === undefined || hosted.user === undefined) {
          hosted.user = q.user;
          hosted.session = reviewer.session(q.user);
        }
        // The request's own user is told apart by identity (sar.ts): give its checks that identity again.
        const attributes = q.own ? { ...q.attributes, groups: hosted.user.groups } : q.attributes;
        return hosted.session.authorize(attributes);
      }
      case "pending":
        return hosted.session?.pending ?? false;
    }
  }

  /** Sends the review's pending SubjectAccessReviews; resolves once they are answered. */
  async resolve(review: number, deadline: number): Promise<void> {
    await this.reviews.get(review)?.session?.resolve(deadline);
  }
}
