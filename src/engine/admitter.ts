/**
 * The engine behind the webhook: one immutable compiled set, with the lookups it needs, answering
 * reviews. A reload builds a new Admitter; the server swaps the reference, so every request sees
 * one whole set.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import { contextFromSet, type EngineContext } from "./context.ts";
import { mutate } from "./mutating.ts";
import { validate } from "./validating.ts";
import type { AdmissionDecision, Admitter, ReviewOptions } from "./types.ts";
import type { AdmissionRequest } from "../request/types.ts";

export function createAdmitter(
  set: CompiledPolicySet,
  ctx: EngineContext = contextFromSet(set),
): Admitter & { readonly set: CompiledPolicySet } {
  return {
    set,
    review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision {
      // ReviewOptions are EvaluateOptions (deadline, failurePolicy, explain, trace) plus the phase.
      return options.phase === "mutate"
        ? mutate(set, request, ctx, options)
        : validate(set, request, ctx, options);
    },
  };
}
