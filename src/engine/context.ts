/**
 * What an evaluation may look up besides the request: Namespaces, parameter objects and the
 * authorizer. `eval`, `test`, `repl` and `serve` build it the same way, from loaded resources.
 */
import type { AuthorizerBackend } from "../cel/index.ts";
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { MatchContext } from "../match/index.ts";
import type { ResourceObject } from "../policy/types.ts";
import { type ParamLookup, paramLookup } from "./params.ts";

/** What an evaluation may look up besides the request: Namespaces and parameter objects. */
export interface EngineContext {
  /** The Namespace object with this name, if known (for namespaceSelector and namespaceObject). */
  namespace(name: string): Readonly<Record<string, unknown>> | undefined;
  readonly params: ParamLookup;
  /** Answers `authorizer` checks; absent: every check fails with a clear error (failurePolicy applies). */
  readonly authorizer?: AuthorizerBackend;
}

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

/** What the matcher asks of the cluster: the labels of a namespace it may select on. */
export function matchContext(ctx: EngineContext): MatchContext {
  return {
    namespaceLabels: (name) => {
      const ns = ctx.namespace(name);
      const labels = (ns?.metadata as { labels?: Record<string, string> } | undefined)?.labels;
      return ns ? (labels ?? {}) : undefined;
    },
  };
}
