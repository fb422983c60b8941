/**
 * The engine as the webhook sees it: one immutable compiled set, with the lookups it needs,
 * answering reviews of one phase each (the API server calls mutating and validating webhooks
 * separately). A review is the engine's admission chain for that phase, then the enforcement
 * step every adapter uses (engine/decision.ts). A reload builds a new Admitter; the server swaps
 * the reference, so every request sees one whole set.
 */
import type { CompiledPolicySet } from "../../compile/policy.ts";
import { admit } from "../../engine/admit.ts";
import { contextFromSet, type EngineContext } from "../../engine/context.ts";
import { decide } from "../../engine/decision.ts";
import type { AdmissionDecision, AdmitOptions } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";

/**
 * Which policies a review evaluates (the webhook's path decides: its phase, and on the split paths
 * its failurePolicy) and how: the deadline, and whether to trace or explain.
 */
export interface ReviewOptions extends Omit<AdmitOptions, "phase" | "includeUnbound" | "allBindings"> {
  /** `validate` runs ValidatingAdmissionPolicies, `mutate` runs MutatingAdmissionPolicies. */
  readonly phase: "validate" | "mutate";
}

/** What the webhook asks of the engine. Implementations never throw for bad policies or requests. */
export interface Admitter {
  review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision;
  /**
   * The slow lane's version of this admitter's policy set, when the lane can build the same one
   * (slow-lane.ts): only then may a review move there.
   */
  readonly laneVersion?: number;
}

/**
 * The admitter `serve` answers with. Without a cluster connection it sees Namespaces only through
 * the policy files; a namespace it does not know is taken to have the one label the API server sets
 * on every Namespace (`kubernetes.io/metadata.name`), which is what selectors such as "not
 * kube-system" use. The slow lane's worker builds the same from the same set.
 */
export function serveAdmitter(
  set: CompiledPolicySet,
  laneVersion?: number,
): Admitter & { readonly set: CompiledPolicySet } {
  const admitter = createAdmitter(set, contextFromSet(set, { assumeNamespaces: true }));
  return laneVersion === undefined ? admitter : { ...admitter, laneVersion };
}

/**
 * What the server asks for a decision: an Admitter, or one whose decision may wait for the cluster
 * (authorizer checks answered by SubjectAccessReviews, cluster-admitter.ts), which then answers
 * with a promise.
 */
export interface ReviewAdmitter {
  review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision | Promise<AdmissionDecision>;
  /** As Admitter's: set only where the slow lane can build the same policy set. */
  readonly laneVersion?: number;
}

export function createAdmitter(
  set: CompiledPolicySet,
  ctx: EngineContext = contextFromSet(set),
): Admitter & { readonly set: CompiledPolicySet } {
  return {
    set,
    review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision {
      return decide(admit(set, request, ctx, options));
    },
  };
}
