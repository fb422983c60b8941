/**
 * Evaluation with `authorizer` checks answered by SubjectAccessReviews, for any synchronous
 * evaluation: the webhook's review (adapters/server/cluster-admitter.ts) and `celgate audit`'s dry
 * runs.
 *
 * The engine is synchronous (the API server calls its authorizer synchronously too, in-process) and
 * a SAR is a network call. An evaluation whose policies make authorizer checks runs once; the checks
 * it made without a known answer are sent as SARs (concurrently, within the budget and deadline),
 * and it runs again with the answers; a check that only the second run reaches (one check's answer
 * decides whether another is made) takes a third, and so on, at most once per SAR the budget allows.
 * Only the last run's result is used. An evaluation whose checks are all answered from the cache,
 * and one whose policies make none, is decided in one synchronous run, as without a cluster.
 * docs/architecture.md says why this and not the others.
 */
import type { AuthorizerBackend } from "../cel/index.ts";
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { EngineContext } from "../engine/context.ts";
import type { UserInfo } from "../request/types.ts";

/**
 * One evaluation's authorizer whose unknown answers are asked for afterwards: a SubjectAccessReview
 * session (sar.ts), or, in the slow lane's worker, one that asks the main thread's session.
 */
export interface AuthorizerSession extends AuthorizerBackend {
  /** Whether some check has no answer yet. */
  readonly pending: boolean;
  /** Asks for every pending check's answer, by `deadline` (performance.now() of this thread). */
  resolve(deadline: number): Promise<void>;
}

/** What answers authorizer checks across evaluations: SubjectAccessReviewer is one. */
export interface AuthorizerSessions {
  /** Most SARs one review may send: a review is evaluated at most once more than this. */
  readonly budget: number;
  session(user: UserInfo): AuthorizerSession;
}

/** Whether any policy of `set` may ask the authorizer, so that evaluating it may wait for SARs. */
export function asksAuthorizer(set: CompiledPolicySet): boolean {
  return set.policies.some((p) => p.needs.authorizer || p.needs.requestResource);
}

/**
 * `evaluate` with a SubjectAccessReview authorizer for `user`, again after each round of answers.
 * Synchronous (a plain value) when the first run asked nothing the cache could not answer, and when
 * `final` says the first run is the answer already (a run cut short at a time slice, which the
 * caller evaluates again elsewhere: no SubjectAccessReview is sent for it). `deadline` is read
 * when each round starts, so a caller may move it between rounds (batch.ts restores a review's own
 * deadline after its slice).
 */
export function evaluateWithReviews<T>(
  reviewer: AuthorizerSessions,
  user: UserInfo,
  ctx: EngineContext,
  deadline: number | (() => number),
  evaluate: (ctx: EngineContext) => T,
  final?: (first: T) => boolean,
): T | Promise<T> {
  const session = reviewer.session(user);
  const withAuthorizer: EngineContext = { ...ctx, authorizer: session };
  const first = evaluate(withAuthorizer);
  if (!session.pending || final?.(first)) return first;
  const by = typeof deadline === "number" ? () => deadline : deadline;
  return (async () => {
    // The rounds start once the caller has the promise: a caller that lends the review a shorter
    // deadline for its first run (batch.ts, a time slice) restores the review's own when the call
    // returns, and the first SubjectAccessReviews must be bounded by that one, not the slice's end.
    await undefined;
    let result = first;
    for (let round = 0; round <= reviewer.budget && session.pending; round++) {
      await session.resolve(by());
      result = evaluate(withAuthorizer);
    }
    return result;
  })();
}
