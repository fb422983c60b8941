/**
 * The messages between the main thread and the slow lane's worker (slow-lane.ts, slow-worker.ts),
 * and the clock they share. Plain data only: everything here crosses a MessagePort.
 */
import type { MessagePort } from "node:worker_threads";
import type { AuthorizationAttributes } from "../../cel/index.ts";
import type { CompileOptions } from "../../compile/policy.ts";
import type { PolicyResult } from "../../engine/types.ts";
import type { ParamKind, ParamRef } from "../../policy/types.ts";
import type { UserInfo } from "../../request/types.ts";
import type { ReviewIdentity, ReviewOutcome, ReviewRoute } from "./review.ts";
import type { Sensitive } from "./redact.ts";

/**
 * How to build a policy set in the worker that is the one the main thread serves: the paths it was
 * loaded from, the fingerprint of the bytes it was parsed from (the worker refuses files that have
 * changed since), and the compile options.
 */
export interface LaneRecipe {
  readonly paths: readonly string[];
  readonly fingerprint: string;
  readonly compile: CompileOptions;
  /** Set when `serve` is connected to a cluster: the worker reads the cluster through the main thread. */
  readonly cluster?: LaneCluster;
}

/**
 * What the worker needs to serve a cluster-connected set: the objects the main thread's set was
 * combined with (`--policies-from-cluster`, as the parser reads them: cluster/policies.ts), and the
 * SubjectAccessReviewer's budget (absent: the set asks no authorizer, or there is no reviewer).
 */
export interface LaneCluster {
  readonly policies?: readonly Readonly<Record<string, unknown>>[];
  readonly sarBudget?: number;
}

/**
 * What the worker asks the main thread about one review of a cluster-connected set, in the middle
 * of evaluating it (the engine is synchronous, so the worker waits for the answer: lane-remote.ts):
 * the lookups of the engine's context over the main thread's caches, and its SubjectAccessReview
 * session's answers.
 */
export type LaneQuestion =
  | { readonly op: "namespace"; readonly name: string }
  | { readonly op: "scopeOf"; readonly apiVersion: string; readonly kind: string }
  | {
      readonly op: "select" | "describeMiss";
      readonly kind: ParamKind;
      readonly ref: ParamRef;
      readonly requestNamespace: string;
    }
  | {
      readonly op: "authorize";
      readonly user: UserInfo;
      readonly attributes: AuthorizationAttributes;
      /**
       * Whether the check is about the request's own user (its groups are that user's, the same
       * array): cluster/sar.ts tells the request's user from a service account's by that identity,
       * which no message keeps.
       */
      readonly own: boolean;
    }
  | { readonly op: "pending" };

/** A question on the lookup port: `seq` pairs it with its reply, `review` is the job's id. */
export interface LaneAsk {
  readonly seq: number;
  readonly review: number;
  readonly question: LaneQuestion;
}

/** The main thread's reply: the value (structured-cloned), or why it could not answer. */
export interface LaneReply {
  readonly seq: number;
  readonly value?: unknown;
  readonly error?: string;
}

export type ToWorker =
  | { readonly type: "load"; readonly version: number; readonly recipe: LaneRecipe }
  | { readonly type: "forget"; readonly version: number }
  /** The SubjectAccessReviews a review's `resolve` asked for have their answers. */
  | { readonly type: "resolved"; readonly review: number; readonly error?: string }
  | {
      readonly type: "review";
      readonly id: number;
      readonly version: number;
      /** The request body: its text, or its bytes (moved, not copied) when it was not decoded. */
      readonly body: string | Uint8Array;
      readonly route: ReviewRoute;
      /** On the shared monotonic clock (sharedClockMs). */
      readonly deadline: number;
      readonly debugging: boolean;
    };

/** What the worker made of a review. */
export type LaneAnswer =
  /** A decision: the encoded reply, and what the metrics and logs say of it. */
  | {
      readonly kind: "reply";
      readonly payload: string;
      readonly allowed: boolean;
      readonly outcome: ReviewOutcome;
      readonly identity: ReviewIdentity;
      /** Each policy's result (with its trace only when debugging), for metrics and the debug log. */
      readonly results: readonly PolicyResult[];
      /** What of the request the debug log's trace must not show (redact.ts). */
      readonly secrets: Sensitive;
    }
  /**
   * The body is not a usable AdmissionReview: HTTP 400 with the reason; or 413, too costly for the
   * worker's heap to decode.
   */
  | { readonly kind: "invalid"; readonly reason: string; readonly status?: 400 | 413 }
  /**
   * The engine failed (it threw, or the worker stopped while the review was in it): the path's
   * failurePolicy as a reply, or HTTP 500 where the path has none or the body was never decoded.
   */
  | {
      readonly kind: "failed";
      readonly error: string;
      readonly identity?: ReviewIdentity;
      readonly payload?: string;
      readonly allowed?: boolean;
    }
  /**
   * The worker does not have the review's policy set (it was forgotten): the main thread reviews
   * it; bytes that moved to the worker come back with the answer.
   */
  | { readonly kind: "unavailable"; readonly body?: Uint8Array };

export type FromWorker =
  | { readonly type: "loaded"; readonly version: number; readonly error?: string }
  /** Ask the cluster about a review's pending authorizer checks, by `deadline` (shared clock). */
  | { readonly type: "resolve"; readonly review: number; readonly deadline: number }
  | { readonly type: "answer"; readonly id: number; readonly answer: LaneAnswer };

/** What the main thread passes at the worker's start. */
export interface LaneWorkerData {
  /** The worker's nice value: above the main thread's, so a costly review yields to the rest. */
  readonly nice: number;
  /** Where the worker asks its LaneAsk questions; the main thread replies there. */
  readonly lookups: MessagePort;
  /** One Int32: the main thread sets it to 1 and notifies when it has replied (Atomics.wait). */
  readonly replied: SharedArrayBuffer;
}

/**
 * Milliseconds on the process's monotonic clock, the same in every thread. Each thread's
 * performance.now() counts from its own start; deadlines cross between threads on this clock.
 */
export const clockOffsetMs: number = Number(process.hrtime.bigint()) / 1e6 - performance.now();

/** A performance.now() time of this thread on the shared clock. */
export const toSharedClock = (perfMs: number): number => perfMs + clockOffsetMs;
/** A time on the shared clock as this thread's performance.now(). */
export const fromSharedClock = (sharedMs: number): number => sharedMs - clockOffsetMs;
