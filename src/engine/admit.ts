/**
 * The admission chain, as the API server runs it: mutating policies first (reinvoking those with
 * `reinvocationPolicy: IfNeeded` once when a later policy changed the object), then validating
 * policies on the object the mutations made. `serve`, `eval`, `test`, the REPL and the library
 * all come through here; the webhook asks for one phase per call, because the API server calls
 * its mutating and its validating webhooks separately.
 *
 * What comes back is what the engine found, not a verdict: decision.ts's `decide` enforces it.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { AdmissionRequest } from "../request/types.ts";
import type { EngineContext } from "./context.ts";
import { mutate } from "./mutating.ts";
import type { Admission, AdmitOptions } from "./types.ts";
import { validate } from "./validating.ts";

/**
 * How long an offline request (`eval`, `test`, the REPL, the library) may take through all its
 * policies: the API server's longest webhook timeout.
 */
export const OFFLINE_DEADLINE_MS = 30_000;

/** Runs `options.phase`, or the whole chain. Never throws for bad policies or requests. */
export function admit(
  set: CompiledPolicySet,
  request: AdmissionRequest,
  ctx: EngineContext,
  options: AdmitOptions,
): Admission {
  if (options.phase === "validate") return validate(set, request, ctx, options);
  if (options.phase === "mutate") return mutate(set, request, ctx, options);
  const mutated = mutate(set, request, ctx, options);
  const object = (mutated.patchedObject as AdmissionRequest["object"] | undefined) ?? request.object;
  const validated = validate(set, { ...request, object }, ctx, options);
  const chain: { -readonly [K in keyof Admission]: Admission[K] } = {
    results: [...mutated.results, ...validated.results],
  };
  if (mutated.patch !== undefined) {
    chain.patch = mutated.patch;
    chain.patchedObject = mutated.patchedObject;
  }
  return chain;
}
