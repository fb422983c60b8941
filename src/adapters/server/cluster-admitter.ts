/**
 * The admitter of a cluster-connected `serve`: the engine over the cluster's caches (Namespaces,
 * params, and with `--policies-from-cluster` the cluster's own policies), with `authorizer` checks
 * answered by SubjectAccessReviews. A review whose policies make no authorizer checks, or whose
 * checks the cache answers, is decided synchronously by the same Admitter as without a cluster;
 * one that must ask the cluster answers with a promise (cluster/reviews.ts says how the rounds go).
 */
import type { CompiledPolicySet } from "../../compile/policy.ts";
import type { EngineContext } from "../../engine/context.ts";
import type { ClusterLink } from "../../cluster/link.ts";
import { asksAuthorizer, evaluateWithReviews } from "../../cluster/reviews.ts";
import type { SubjectAccessReviewer } from "../../cluster/sar.ts";
import { createAdmitter, type ReviewAdmitter } from "./admitter.ts";

/** An admitter whose decision may have to wait for the cluster. */
export interface ClusterAdmitter extends ReviewAdmitter {
  readonly set: CompiledPolicySet;
}

export function clusterAdmitter(
  set: CompiledPolicySet,
  ctx: EngineContext,
  reviewer: SubjectAccessReviewer | undefined,
): ClusterAdmitter {
  const plain = createAdmitter(set, ctx);
  if (reviewer === undefined || !asksAuthorizer(set)) return plain;
  return {
    set,
    review(request, options) {
      return evaluateWithReviews(reviewer, request.userInfo, ctx, options.deadline, (withAuthorizer) =>
        createAdmitter(set, withAuthorizer).review(request, options),
      );
    },
  };
}

/** The admitter for a policy set from the files, over what the cluster link knows. */
export function clusterAdmitterFor(link: ClusterLink, files: CompiledPolicySet): ClusterAdmitter {
  const { set, context } = link.serving(files);
  return clusterAdmitter(set, context, link.reviewer);
}
