/**
 * The admitter of a cluster-connected `serve`: the engine over the cluster's caches, with
 * `authorizer` checks answered by SubjectAccessReviews.
 *
 * The engine is synchronous (the API server calls its authorizer synchronously too, in-process) and
 * a SAR is a network call. A review whose policies make authorizer checks is evaluated, the checks
 * it made without a known answer are sent as SARs (concurrently, within the review's budget and
 * deadline), and the review is evaluated again with the answers; a check that only the second
 * evaluation reaches (one check's answer decides whether another is made) takes a third, and so on,
 * at most once per SAR the budget allows. Only the last evaluation's decision is used. Reviews whose
 * checks are all answered from the cache, and those whose policies make none, are decided in one
 * synchronous evaluation, as without a cluster. docs/architecture.md says why this and not the others.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import { createAdmitter } from "../engine/admitter.ts";
import type { EngineContext } from "../engine/evaluate.ts";
import type { AdmissionDecision, AdmissionRequest, ReviewOptions, UserInfo } from "../engine/types.ts";
import type { SubjectAccessReviewer } from "./sar.ts";

/** An admitter whose decision may have to wait for the cluster. */
export interface ClusterAdmitter {
  readonly set: CompiledPolicySet;
  review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision | Promise<AdmissionDecision>;
}

export function clusterAdmitter(
  set: CompiledPolicySet,
  ctx: EngineContext,
  reviewer: SubjectAccessReviewer | undefined,
): ClusterAdmitter {
  const plain = createAdmitter(set, ctx);
  const asks =
    reviewer !== undefined && set.policies.some((p) => p.needs.authorizer || p.needs.requestResource);
  if (!asks) return plain;
  return {
    set,
    review(request, options) {
      const session = reviewer.session(request.userInfo);
      const admitter = createAdmitter(set, { ...ctx, authorizer: session });
      const first = admitter.review(request, options);
      if (!session.pending) return first;
      return (async () => {
        let decision = first;
        for (let round = 0; round <= reviewer.budget && session.pending; round++) {
          await session.resolve(options.deadline);
          decision = admitter.review(request, options);
        }
        return decision;
      })();
    },
  };
}

/**
 * The same rounds for any synchronous evaluation (`celgate audit`'s dry runs): `evaluate` runs with
 * a SubjectAccessReview authorizer for `user`, again after each round of answers.
 */
export async function evaluateWithReviews<T>(
  reviewer: SubjectAccessReviewer,
  user: UserInfo,
  ctx: EngineContext,
  deadline: number,
  evaluate: (ctx: EngineContext) => T,
): Promise<T> {
  const session = reviewer.session(user);
  const withAuthorizer = { ...ctx, authorizer: session };
  let result = evaluate(withAuthorizer);
  for (let round = 0; round <= reviewer.budget && session.pending; round++) {
    await session.resolve(deadline);
    result = evaluate(withAuthorizer);
  }
  return result;
}
