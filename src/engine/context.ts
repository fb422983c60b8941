/**
 * What an evaluation may look up besides the request: Namespaces, parameter objects and the
 * authorizer. `eval`, `test`, `repl` and `serve` build it the same way, from loaded resources, each
 * stored as the API server stores what it is given (kube/stored.ts), once, when they load.
 */
import type { AuthorizerBackend } from "../cel/index.ts";
import type { CompiledPolicySet } from "../compile/policy.ts";
import { storedObject } from "../kube/stored.ts";
import type { MatchContext } from "../match/index.ts";
import type { ResourceObject } from "../policy/types.ts";
import { type ParamLookup, paramLookup } from "./params.ts";

/** What an evaluation may look up besides the request: Namespaces and parameter objects. */
export interface EngineContext {
  /**
   * The stored Namespace object with this name, if known (for namespaceSelector and
   * namespaceObject, which is built from it: prepare.ts).
   */
  namespace(name: string): Readonly<Record<string, unknown>> | undefined;
  readonly params: ParamLookup;
  /** Answers `authorizer` checks; absent: every check fails with a clear error (failurePolicy applies). */
  readonly authorizer?: AuthorizerBackend;
}

export interface ContextOptions {
  readonly authorizer?: AuthorizerBackend;
  /**
   * A namespace no file defines is taken to exist, as a Namespace created with nothing but its name
   * (so with the `kubernetes.io/metadata.name` label the API server puts on every Namespace): in a
   * cluster a request's namespace always exists, the NamespaceLifecycle plugin sees to it. Without
   * it, a selector on a namespace no file defines is an error that failurePolicy decides.
   */
  readonly assumeNamespaces?: boolean;
  /**
   * The request's Namespace given on its own (`eval --namespace-object`, a test case's
   * `namespaceObject`, the REPL's `:namespace`): it wins over a Namespace of that name in the files.
   */
  readonly namespaceObject?: Readonly<Record<string, unknown>>;
  /**
   * Store Namespaces and params with the API server's defaults and create strategy (default true;
   * `--no-defaults` turns it off, and they are used as written).
   */
  readonly defaults?: boolean;
}

function nameOf(o: Readonly<Record<string, unknown>>): string | undefined {
  const meta = o.metadata as { name?: unknown } | undefined;
  return typeof meta?.name === "string" && meta.name !== "" ? meta.name : undefined;
}

/** Namespaces and params come from loaded files: the same lookups for `eval`, `test`, `repl` and `serve`. */
export function contextFromResources(
  resources: readonly ResourceObject[],
  options: ContextOptions = {},
): EngineContext {
  const store = { defaults: options.defaults ?? true };
  const namespaces = new Map<string, Readonly<Record<string, unknown>>>();
  for (const r of resources)
    if (r.apiVersion === "v1" && r.kind === "Namespace")
      namespaces.set(r.name, storedObject(r.object, "Cluster", store));
  const assumed = new Map<string, Readonly<Record<string, unknown>>>();
  const assume = (name: string) => {
    let ns = assumed.get(name);
    if (!ns) {
      const created = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
      // Even as written, an assumed Namespace has the label the API server always sets.
      ns = store.defaults
        ? storedObject(created, "Cluster")
        : { ...created, metadata: { name, labels: { "kubernetes.io/metadata.name": name } } };
      assumed.set(name, ns);
    }
    return ns;
  };
  const ctx: EngineContext = {
    namespace: (name) => namespaces.get(name) ?? (options.assumeNamespaces ? assume(name) : undefined),
    params: paramLookup(resources, store),
    ...(options.authorizer ? { authorizer: options.authorizer } : {}),
  };
  return options.namespaceObject ? withNamespaceObject(ctx, options.namespaceObject, store) : ctx;
}

/**
 * `ctx` with the request's Namespace given on its own (see ContextOptions.namespaceObject), stored
 * as the API server stores it; a Namespace without a name changes nothing.
 */
export function withNamespaceObject(
  ctx: EngineContext,
  namespaceObject: Readonly<Record<string, unknown>>,
  options: { readonly defaults?: boolean } = {},
): EngineContext {
  const name = nameOf(namespaceObject);
  if (name === undefined) return ctx;
  const stored = storedObject(namespaceObject, "Cluster", options);
  return { ...ctx, namespace: (n) => (n === name ? stored : ctx.namespace(n)) };
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
