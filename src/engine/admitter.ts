/**
 * The engine behind the webhook: one immutable compiled set, with the lookups it needs, answering
 * reviews. A reload builds a new Admitter; the server swaps the reference, so every request sees
 * one whole set.
 */
import type { AuthorizerBackend } from "../cel/index.ts";
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { ResourceObject } from "../policy/types.ts";
import { type EngineContext, mutate, validate } from "./evaluate.ts";
import { paramLookup } from "./params.ts";
import type { AdmissionDecision, Admitter, ReviewOptions } from "./types.ts";
import type { AdmissionRequest } from "../request/types.ts";

export interface ContextOptions {
  readonly authorizer?: AuthorizerBackend;
  /**
   * Offline (eval, test, repl): a namespace no file defines is taken to exist with only the label
   * the API server puts on every Namespace, `kubernetes.io/metadata.name`. The webhook leaves this
   * off, so a selector on a namespace it cannot see is an error that failurePolicy decides.
   */
  readonly assumeNamespaces?: boolean;
}

/** Namespaces and params come from loaded files: the same lookups for `eval`, `test` and `serve`. */
export function contextFromResources(
  resources: readonly ResourceObject[],
  options: ContextOptions = {},
): EngineContext {
  const namespaces = new Map<string, Readonly<Record<string, unknown>>>();
  for (const r of resources)
    if (r.apiVersion === "v1" && r.kind === "Namespace") namespaces.set(r.name, r.object);
  const assumed = (name: string) => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
  });
  return {
    namespace: (name) => namespaces.get(name) ?? (options.assumeNamespaces ? assumed(name) : undefined),
    params: paramLookup(resources),
    ...(options.authorizer ? { authorizer: options.authorizer } : {}),
  };
}

export function contextFromSet(set: CompiledPolicySet, options: ContextOptions = {}): EngineContext {
  return contextFromResources(set.resources, options);
}

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
