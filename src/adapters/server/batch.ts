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
 */
import type { AdmissionDecision } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import type { ReviewAdmitter, ReviewOptions } from "./admitter.ts";

interface QueuedReview {
  readonly admitter: ReviewAdmitter;
  readonly request: AdmissionRequest;
  readonly options: ReviewOptions;
  readonly resolve: (decision: AdmissionDecision | Promise<AdmissionDecision>) => void;
  readonly reject: (error: unknown) => void;
}

export interface ReviewBatcher {
  /** The admitter's decision on `request`, once this turn's queued reviews have run. Rejects as `review` throws. */
  review(
    admitter: ReviewAdmitter,
    request: AdmissionRequest,
    options: ReviewOptions,
  ): Promise<AdmissionDecision>;
}

export function createReviewBatcher(): ReviewBatcher {
  let queue: QueuedReview[] = [];
  const flush = (): void => {
    const batch = queue;
    queue = [];
    for (const q of batch) {
      let decision: AdmissionDecision | Promise<AdmissionDecision>;
      try {
        decision = q.admitter.review(q.request, q.options);
      } catch (e) {
        q.reject(e);
        continue;
      }
      q.resolve(decision);
    }
  };
  return {
    review(admitter, request, options) {
      return new Promise((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ admitter, request, options, resolve, reject });
      });
    },
  };
}
