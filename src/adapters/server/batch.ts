/**
 * Reviews run in batches: every review whose request arrived in one turn of the event loop runs
 * back to back, once that turn's I/O is done (setImmediate), instead of each between its own
 * request's TLS, HTTP and JSON parsing and its reply's encoding and encryption.
 *
 * Why: a review is a few microseconds of the engine's code and data, and each of those phases pushes
 * them out of the CPU caches: served one at a time, a review costs the server several times what the
 * same review costs run twice in a row. Batched, the reviews of a turn share warm caches, and so do
 * the parsing before them and the replies after them (docs/benchmarks.md has the served A/B).
 *
 * What it costs: a request that arrives alone waits for the rest of its turn's I/O (none), so it
 * is reviewed in the same turn as before. In a busy turn a review waits for the ones queued before
 * it; the engine is synchronous, so it waited for them before too, only in a different order. The
 * deadline still counts from the request's arrival, and the engine checks it as it runs. A review
 * that waits for the cluster (a SubjectAccessReview, cluster-admitter.ts) runs its synchronous part
 * in the batch and answers with a promise, so it holds up no other review of the turn.
 *
 * A review may be given a slice: how long it may hold the event loop. One that runs past it is cut
 * short and handed back (SLICED) to the slow lane (slow-lane.ts), so the reviews behind it are not
 * kept waiting for it.
 */
import { performance } from "node:perf_hooks";
import type { AdmissionDecision } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import type { ReviewAdmitter } from "./admitter.ts";
import type { MutableReviewOptions } from "./review.ts";

/** A review that was still running when its slice ended; the caller moves it to the slow lane. */
export const SLICED: unique symbol = Symbol("celgate.sliced");

interface QueuedReview {
  readonly admitter: ReviewAdmitter;
  readonly request: AdmissionRequest;
  readonly options: MutableReviewOptions;
  /** How long the review may run here before it is cut short and handed back as SLICED; 0: no limit. */
  readonly sliceMs: number;
  readonly resolve: (decision: AdmissionDecision | Promise<AdmissionDecision> | typeof SLICED) => void;
  readonly reject: (error: unknown) => void;
}

export interface ReviewBatcher {
  /**
   * The admitter's decision on `request`, once this turn's queued reviews have run; SLICED when
   * `sliceMs` is above 0 and the review had not finished after that long (its result is thrown
   * away). Rejects as `review` throws.
   */
  review(
    admitter: ReviewAdmitter,
    request: AdmissionRequest,
    options: MutableReviewOptions,
    sliceMs?: number,
  ): Promise<AdmissionDecision | typeof SLICED>;
}

/** Whether the request's deadline cut a policy short. */
function cutShort(decision: AdmissionDecision): boolean {
  for (const r of decision.results) if (r.errorKind === "timeout") return true;
  return false;
}

/**
 * Runs one queued review. A sliced one runs with its deadline brought forward to the slice's end;
 * if that cut a policy short, the decision is not this request's (its own deadline had not come),
 * and it is handed back as SLICED to be evaluated again where it can run to its real deadline.
 * A decision that waits for the cluster (a promise) is passed on as it is: its first run finished
 * within the slice (one cut short there is returned as it is, cluster-admitter.ts), and it reads
 * the request's own deadline again, restored here, when its later rounds start.
 */
function run(q: QueuedReview): void {
  const deadline = q.options.deadline;
  const sliceEnd = q.sliceMs > 0 ? performance.now() + q.sliceMs : Number.POSITIVE_INFINITY;
  if (sliceEnd < deadline) q.options.deadline = sliceEnd;
  let decision: AdmissionDecision | Promise<AdmissionDecision>;
  try {
    decision = q.admitter.review(q.request, q.options);
  } catch (e) {
    q.reject(e);
    return;
  } finally {
    q.options.deadline = deadline;
  }
  if (decision instanceof Promise) q.resolve(decision);
  // Every deadline check compares the clock with the slice's end, so none failed before it.
  else if (sliceEnd < deadline && performance.now() > sliceEnd && cutShort(decision)) q.resolve(SLICED);
  else q.resolve(decision);
}

export function createReviewBatcher(): ReviewBatcher {
  let queue: QueuedReview[] = [];
  const flush = (): void => {
    const batch = queue;
    queue = [];
    for (const q of batch) run(q);
  };
  return {
    review(admitter, request, options, sliceMs = 0) {
      return new Promise((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ admitter, request, options, sliceMs, resolve, reject });
      });
    },
  };
}
