/**
 * The messages between the main thread and the slow lane's worker (slow-lane.ts, slow-worker.ts),
 * and the clock they share. Plain data only: everything here crosses a MessagePort.
 */
import type { CompileOptions } from "../../compile/policy.ts";
import type { PolicyResult } from "../../engine/types.ts";
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
}

export type ToWorker =
  | { readonly type: "load"; readonly version: number; readonly recipe: LaneRecipe }
  | { readonly type: "forget"; readonly version: number }
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
  /** The body is not a usable AdmissionReview: HTTP 400 with the reason. */
  | { readonly kind: "invalid"; readonly reason: string }
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
  | { readonly type: "answer"; readonly id: number; readonly answer: LaneAnswer };

/** What the main thread passes at the worker's start. */
export interface LaneWorkerData {
  /** The worker's nice value: above the main thread's, so a costly review yields to the rest. */
  readonly nice: number;
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
