/**
 * The engine behind the webhook: one immutable compiled set, with the lookups it needs, answering
 * reviews. A reload builds a new Admitter; the server swaps the reference, so every request sees
 * one whole set.
 */
import type { AuthorizerBackend } from "../cel/index.ts";
import type { CompiledPolicySet } from "../compile/policy.ts";
import { type EngineContext, mutate, validate } from "./evaluate.ts";
import { paramLookup } from "./params.ts";
import type { AdmissionDecision, AdmissionRequest, Admitter, ReviewOptions } from "./types.ts";

/** Namespaces and params come from the loaded files (offline) — the same lookups `eval` uses. */
export function contextFromSet(
  set: CompiledPolicySet,
  extra: { authorizer?: AuthorizerBackend } = {},
): EngineContext {
  const namespaces = new Map<string, Readonly<Record<string, unknown>>>();
  for (const r of set.resources)
    if (r.apiVersion === "v1" && r.kind === "Namespace") namespaces.set(r.name, r.object);
  return {
    namespace: (name) => namespaces.get(name),
    params: paramLookup(set.resources),
    ...(extra.authorizer ? { authorizer: extra.authorizer } : {}),
  };
}

export function createAdmitter(
  set: CompiledPolicySet,
  ctx: EngineContext = contextFromSet(set),
): Admitter & { readonly set: CompiledPolicySet } {
  return {
    set,
    review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision {
      const opts = {
        deadline: options.deadline,
        ...(options.failurePolicy ? { failurePolicy: options.failurePolicy } : {}),
      };
      return options.phase === "mutate" ? mutate(set, request, ctx, opts) : validate(set, request, ctx, opts);
    },
  };
}
