/**
 * The parameter objects a binding's paramRef selects, as the generic policy dispatcher's
 * `CollectParams` finds them in the cluster (kubernetes staging/src/k8s.io/apiserver/pkg/admission/
 * plugin/policy/generic/policy_dispatcher.go): in the param kind's scope, by name or by label
 * selector, with the configuration errors it reports in its words. The rules are stated once, in
 * `collectFrom`: the loaded files are read through it here, and a cluster cache (src/cluster/
 * state.ts), which alone knows whether a kind is served and listed yet, calls it from its `select`.
 */
import { type KindScope, KindScopes, type Scope } from "../kube/scope.ts";
import { storedNamespace, storedObject } from "../kube/stored.ts";
import { compileLabelSelector, objectLabels } from "../match/index.ts";
import type { ParamKind, ParamRef, ResourceObject } from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";
import { ParamIndex, type ParamObjects, type StoredParam } from "./param-index.ts";

export type { ParamObjects, StoredParam } from "./param-index.ts";

export interface ParamLookup {
  /** Objects of this apiVersion and kind, indexed (param-index.ts). */
  ofKind(apiVersion: string, kind: string): ParamObjects;
  /** The scope of a kind: built in, from a CustomResourceDefinition among the resources, or assumed. */
  scopeOf(apiVersion: string, kind: string): KindScope;
  /**
   * A lookup that knows whether a kind is served and its objects listed yet (a cluster cache)
   * answers a paramRef itself, through `collectFrom`: the params, or why none can be collected.
   */
  select?(
    kind: ParamKind,
    ref: ParamRef,
    requestNamespace: string,
  ): Result<readonly StoredParam[], ParamError>;
  /** Objects of this kind in each apiVersion, for saying what a failed lookup nearly found. */
  ofKindAnyVersion?(kind: string): readonly ParamObjects[];
  /**
   * A lookup whose objects are elsewhere words a miss itself: the slow lane's worker asks the main
   * thread, which holds the caches, for describeParamMiss's words.
   */
  describeMiss?(kind: ParamKind, ref: ParamRef, requestNamespace: string): string;
}

export interface ParamLookupOptions {
  /** Store the objects with the API server's defaults (default true; `--no-defaults` turns it off). */
  readonly defaults?: boolean;
}

const EMPTY = new ParamIndex();

/** The resources as stored params, indexed by apiVersion and kind. Built once, when the resources load. */
export function paramLookup(
  resources: readonly ResourceObject[],
  options: ParamLookupOptions = {},
): ParamLookup {
  const scopes = KindScopes.from(resources.map((r) => r.object));
  const byKind = new Map<string, ParamIndex>();
  const byKindAnyVersion = new Map<string, ParamIndex[]>();
  for (const r of resources) {
    const object = storedObject(r.object, scopes.of(r.apiVersion, r.kind).scope, options);
    const key = `${r.apiVersion}/${r.kind}`;
    let index = byKind.get(key);
    if (!index) {
      index = new ParamIndex();
      byKind.set(key, index);
      const versions = byKindAnyVersion.get(r.kind);
      if (versions) versions.push(index);
      else byKindAnyVersion.set(r.kind, [index]);
    }
    // Two objects of one namespace and name: the later one, as a second apply replaces the first.
    index.set({
      apiVersion: r.apiVersion,
      name: r.name,
      namespace: storedNamespace(object),
      labels: objectLabels(object) ?? {},
      object,
    });
  }
  return {
    ofKind: (apiVersion, kind) => byKind.get(`${apiVersion}/${kind}`) ?? EMPTY,
    scopeOf: (apiVersion, kind) => scopes.of(apiVersion, kind),
    ofKindAnyVersion: (kind) => byKindAnyVersion.get(kind) ?? [],
  };
}

/** Why a binding's params could not be collected: a configuration error of the binding. */
export interface ParamError {
  /** `param-not-found`: none found and parameterNotFoundAction is Deny; else the paramRef cannot apply. */
  readonly kind: "param-not-found" | "configuration";
  readonly message: string;
}

/** A configuration error of the binding, in CollectParams' words. */
export const paramConfigError = (message: string) => err<ParamError>({ kind: "configuration", message });

/** Where CollectParams reads one param kind's objects: its lister (an informer's, or the files'). */
export interface ParamSource {
  readonly scope: Scope;
  /**
   * Why the kind's objects cannot be read yet (an informer that has not synced), in CollectParams'
   * words; it is checked after the namespace rule, as CollectParams checks it.
   */
  readonly unavailable?: string;
  /** The kind's object of this name in `namespace` ("" for a cluster-scoped kind). */
  named(namespace: string, name: string): StoredParam | undefined;
  /** The kind's objects in `namespace`. */
  inNamespace(namespace: string): Iterable<StoredParam>;
}

/**
 * The params of one binding for a request in `requestNamespace` ("" for a cluster-scoped resource),
 * or the configuration error CollectParams returns, in its words. An empty list means none was found
 * and parameterNotFoundAction is Allow: the binding is not evaluated.
 */
export function collectParams(
  lookup: ParamLookup,
  kind: ParamKind,
  ref: ParamRef,
  requestNamespace: string,
): Result<readonly StoredParam[], ParamError> {
  if (lookup.select) return lookup.select(kind, ref, requestNamespace);
  return collectFrom(filesSource(lookup, kind), ref, requestNamespace);
}

/** The loaded files as a ParamSource: every object of the kind is known, in its stored scope. */
export function filesSource(lookup: ParamLookup, kind: ParamKind): ParamSource {
  const objects = lookup.ofKind(kind.apiVersion, kind.kind);
  return {
    scope: lookup.scopeOf(kind.apiVersion, kind.kind).scope,
    named: (namespace, name) => objects.named(namespace, name),
    inNamespace: (namespace) => objects.inNamespace(namespace),
  };
}

/** CollectParams over one source: the namespace it looks in, then by name or selector. */
export function collectFrom(
  source: ParamSource,
  ref: ParamRef,
  requestNamespace: string,
): Result<readonly StoredParam[], ParamError> {
  const refNamespace = ref.namespace ?? "";
  let namespace = "";
  if (source.scope === "Namespaced") {
    namespace = refNamespace !== "" ? refNamespace : requestNamespace;
    // You must supply a namespace if your matcher can possibly match a cluster-scoped resource.
    if (namespace === "")
      return paramConfigError(
        "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
      );
  }
  if (source.unavailable !== undefined) return paramConfigError(source.unavailable);
  if (source.scope === "Cluster" && refNamespace !== "")
    return paramConfigError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`");
  let found: readonly StoredParam[];
  const name = ref.name ?? "";
  if (name !== "") {
    if (ref.selector) return paramConfigError("paramRef.name and paramRef.selector are mutually exclusive");
    const one = source.named(namespace, name);
    found = one ? [one] : [];
  } else if (ref.selector) {
    const selector = compileLabelSelector(ref.selector);
    if (!selector.ok) return paramConfigError(selector.error.message);
    const matched: StoredParam[] = [];
    for (const p of source.inNamespace(namespace)) if (selector.value.matches(p.labels)) matched.push(p);
    found = matched;
  } else {
    return paramConfigError("one of name or selector must be provided");
  }
  if (found.length === 0 && ref.parameterNotFoundAction === "Deny")
    return err({
      kind: "param-not-found",
      message: "no params found for policy binding with `Deny` parameterNotFoundAction",
    });
  return ok(found);
}

function objectName(p: Pick<StoredParam, "namespace" | "name">): string {
  return p.namespace ? `${p.namespace}/${p.name}` : p.name;
}

/**
 * Objects a selector's hint examines at most: enough for the words ("at least N match elsewhere"),
 * and a bound on what a miss costs however many objects are cached.
 */
const HINT_SCAN_LIMIT = 100;

/** The objects of `kinds` that `matches`, counted (the first three kept), through the label index. */
function matchingElsewhere(
  kinds: readonly ParamObjects[],
  selector: NonNullable<ParamRef["selector"]>,
  matches: (labels: Readonly<Record<string, string>>) => boolean,
): { readonly count: number; readonly first: StoredParam[]; readonly partial: boolean } {
  const first: StoredParam[] = [];
  let count = 0;
  let examined = 0;
  let partial = false;
  for (const objects of kinds) {
    if (partial) break;
    const narrowed = objects.candidates(selector);
    const everything = narrowed === undefined && selector.matchExpressions.length === 0;
    if (everything) count += objects.size;
    for (const p of narrowed ?? objects.all()) {
      if (everything) {
        if (first.length >= 3) break;
        first.push(p);
        continue;
      }
      if (++examined > HINT_SCAN_LIMIT) {
        partial = true;
        break;
      }
      if (!matches(p.labels)) continue;
      count++;
      if (first.length < 3) first.push(p);
    }
  }
  return { count, first, partial };
}

/**
 * What a lookup that found nothing looked for, and what it nearly found: `ReplicaLimit
 * default/limit (rules.example.com/v1)`, then an object of that name in another namespace or of
 * another apiVersion. Only for the words of the result's reason; the lookup itself is collectFrom,
 * whose namespace rule this follows (it is called only after that rule let the lookup through).
 * It reads the name and label indexes, so its cost does not grow with the objects cached.
 */
export function describeParamMiss(
  lookup: ParamLookup,
  kind: ParamKind,
  ref: ParamRef,
  requestNamespace: string,
): string {
  if (lookup.describeMiss) return lookup.describeMiss(kind, ref, requestNamespace);
  const namespaced = lookup.scopeOf(kind.apiVersion, kind.kind).scope === "Namespaced";
  const ns = namespaced ? (ref.namespace ?? "") || requestNamespace : "";
  const where = ns !== "" ? `in namespace ${ns}` : "cluster-scoped";
  const anyVersion = lookup.ofKindAnyVersion?.(kind.kind) ?? [lookup.ofKind(kind.apiVersion, kind.kind)];
  const hints: string[] = [];
  let sought: string;
  if (ref.name !== undefined && ref.name !== "") {
    sought =
      ns !== ""
        ? `${kind.kind} ${ns}/${ref.name} (${kind.apiVersion})`
        : `${kind.kind} ${ref.name} (${kind.apiVersion}, ${where})`;
    // Any of that name where the lookup looked was found, so those of the paramKind are elsewhere.
    const named = anyVersion.flatMap((objects) => [...objects.withName(ref.name ?? "")]);
    for (const p of named.filter((p) => p.apiVersion === kind.apiVersion).slice(0, 3))
      hints.push(`one of that name is ${p.namespace ? `in namespace ${p.namespace}` : "cluster-scoped"}`);
    for (const p of named.filter((p) => p.apiVersion !== kind.apiVersion).slice(0, 3))
      hints.push(`one of that name has apiVersion ${p.apiVersion} (${objectName(p)})`);
  } else {
    const m = ref.selector ? compileLabelSelector(ref.selector) : undefined;
    const text = m?.ok ? m.value.text : "";
    sought = `${kind.kind} objects (${kind.apiVersion}, ${where}) with labels ${text === "" ? "(any)" : text}`;
    if (m?.ok && ref.selector) {
      const elsewhere = matchingElsewhere(anyVersion, ref.selector, m.value.matches);
      if (elsewhere.count > 0) {
        const many = `${elsewhere.partial ? "at least " : ""}${elsewhere.count} match`;
        hints.push(
          `${elsewhere.count === 1 && !elsewhere.partial ? "one matches" : many} elsewhere: ${elsewhere.first
            .map((p) => `${objectName(p)} (${p.apiVersion})`)
            .join(", ")}`,
        );
      }
    }
  }
  if (hints.length === 0 && anyVersion.every((objects) => objects.size === 0))
    hints.push(`no ${kind.kind} object is loaded at all`);
  return `looked up ${sought}${hints.length > 0 ? `; ${hints.join("; ")}` : ""}`;
}
