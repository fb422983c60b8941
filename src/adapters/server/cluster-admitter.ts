/**
 * The admitter of a cluster-connected `serve`: the engine over the cluster's caches (Namespaces,
 * params, and with `--policies-from-cluster` the cluster's own policies), with `authorizer` checks
 * answered by SubjectAccessReviews. A review whose policies make no authorizer checks, or whose
 * checks the cache answers, is decided synchronously by the same Admitter as without a cluster;
 * one that must ask the cluster answers with a promise (cluster/reviews.ts says how the rounds go).
 *
 * With a slow lane, each set is also built in the lane's worker, under a version number, and a
 * review still running when its slice ends moves there; the worker reads the cluster through this
 * thread (lane-remote.ts), with this set's context and reviewer (lane-lookups.ts).
 */
import type { CompiledPolicySet } from "../../compile/policy.ts";
import type { EngineContext } from "../../engine/context.ts";
import type { AdmissionDecision } from "../../engine/types.ts";
import type { ClusterLink } from "../../cluster/link.ts";
import { type AuthorizerSessions, asksAuthorizer, evaluateWithReviews } from "../../cluster/reviews.ts";
import { createAdmitter, type ReviewAdmitter } from "./admitter.ts";
import type { SlowLane } from "./slow-lane.ts";

/** An admitter whose decision may have to wait for the cluster. */
export interface ClusterAdmitter extends ReviewAdmitter {
  readonly set: CompiledPolicySet;
}

/** Whether the deadline cut a policy short. */
function cutShort(decision: AdmissionDecision): boolean {
  return decision.results.some((r) => r.errorKind === "timeout");
}

export function clusterAdmitter(
  set: CompiledPolicySet,
  ctx: EngineContext,
  reviewer: AuthorizerSessions | undefined,
): ClusterAdmitter {
  const plain = createAdmitter(set, ctx);
  if (reviewer === undefined || !asksAuthorizer(set)) return plain;
  return {
    set,
    review(request, options) {
      return evaluateWithReviews(
        reviewer,
        request.userInfo,
        ctx,
        // Read when each round starts: the review's own deadline, once its slice is over (batch.ts).
        () => options.deadline,
        (withAuthorizer) => createAdmitter(set, withAuthorizer).review(request, options),
        // A first run cut short at its slice is evaluated again in the lane: no SARs for it here.
        // Later rounds cost about what the first did, which fit in the slice.
        (first) => performance.now() > options.deadline && cutShort(first),
      );
    },
  };
}

/** What the admitter of a connected set is built from: the set's files, and where they were read. */
export interface ConnectedSource {
  readonly set: CompiledPolicySet;
  readonly paths: readonly string[];
  readonly fingerprint: string;
}

/**
 * The admitter for a policy set from the files, over what the cluster link knows; with a lane, the
 * same set is built there as `version`, and the admitter carries that number.
 */
export function clusterAdmitterFor(
  link: ClusterLink,
  files: ConnectedSource,
  lane?: { readonly lane: SlowLane; readonly version: number },
): ClusterAdmitter {
  const { set, context, clusterPolicies } = link.serving(files.set);
  const admitter = clusterAdmitter(set, context, link.reviewer);
  if (lane === undefined) return admitter;
  const asks = asksAuthorizer(set);
  lane.lane.load(
    lane.version,
    {
      paths: files.paths,
      fingerprint: files.fingerprint,
      cluster: {
        ...(clusterPolicies ? { policies: clusterPolicies } : {}),
        ...(asks ? { sarBudget: link.reviewer.budget } : {}),
      },
    },
    { context, ...(asks ? { reviewer: link.reviewer } : {}) },
  );
  return { ...admitter, set: admitter.set, review: admitter.review, laneVersion: lane.version };
}
