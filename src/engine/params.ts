/**
 * The parameter objects a binding's paramRef selects among the loaded resources, as the generic
 * policy dispatcher's `CollectParams` finds them in the cluster (kubernetes staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go): in the param kind's scope, by
 * name or by label selector, with the configuration errors it reports in its words.
 */
import { KindScopes, type KindScope } from "../kube/scope.ts";
import { storedNamespace, storedObject } from "../kube/stored.ts";
import { compileLabelSelector, objectLabels } from "../match/index.ts";
import type { ParamKind, ParamRef, ResourceObject } from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";

/** A param object as the cluster stores it (see kube/stored.ts), with what lookups read of it. */
export interface StoredParam {
  readonly name: string;
  /** "" for a cluster-scoped kind. */
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly object: Readonly<Record<string, unknown>>;
}

export interface ParamLookup {
  /** Objects of this apiVersion and kind. */
  ofKind(apiVersion: string, kind: string): readonly StoredParam[];
  /** The scope of a kind: built in, from a CustomResourceDefinition among the resources, or assumed. */
  scopeOf(apiVersion: string, kind: string): KindScope;
}

export interface ParamLookupOptions {
  /** Store the objects with the API server's defaults (default true; `--no-defaults` turns it off). */
  readonly defaults?: boolean;
}

/** The resources as stored params, by apiVersion and kind. Built once, when the resources load. */
export function paramLookup(
  resources: readonly ResourceObject[],
  options: ParamLookupOptions = {},
): ParamLookup {
  const scopes = KindScopes.from(resources.map((r) => r.object));
  const byKind = new Map<string, StoredParam[]>();
  for (const r of resources) {
    const object = storedObject(r.object, scopes.of(r.apiVersion, r.kind).scope, options);
    const k = `${r.apiVersion}/${r.kind}`;
    let list = byKind.get(k);
    if (!list) {
      list = [];
      byKind.set(k, list);
    }
    list.push({
      name: r.name,
      namespace: storedNamespace(object),
      labels: objectLabels(object) ?? {},
      object,
    });
  }
  return {
    ofKind: (apiVersion, kind) => byKind.get(`${apiVersion}/${kind}`) ?? [],
    scopeOf: (apiVersion, kind) => scopes.of(apiVersion, kind),
  };
}

/** Why a binding's params could not be collected: a configuration error of the binding. */
export interface ParamError {
  /** `param-not-found`: none found and parameterNotFoundAction is Deny; else the paramRef cannot apply. */
  readonly kind: "param-not-found" | "configuration";
  readonly message: string;
}

const configuration = (message: string) => err<ParamError>({ kind: "configuration", message });

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
  const namespaced = lookup.scopeOf(kind.apiVersion, kind.kind).scope === "Namespaced";
  const refNamespace = ref.namespace ?? "";
  let namespace = "";
  if (namespaced) {
    namespace = refNamespace !== "" ? refNamespace : requestNamespace;
    // You must supply a namespace if your matcher can possibly match a cluster-scoped resource.
    if (namespace === "")
      return configuration(
        "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
      );
  } else if (refNamespace !== "") {
    return configuration("paramRef.namespace must not be provided for a cluster-scoped `paramKind`");
  }
  const inScope = lookup.ofKind(kind.apiVersion, kind.kind).filter((p) => p.namespace === namespace);
  let found: readonly StoredParam[];
  const name = ref.name ?? "";
  if (name !== "") {
    if (ref.selector) return configuration("paramRef.name and paramRef.selector are mutually exclusive");
    found = inScope.filter((p) => p.name === name);
  } else if (ref.selector) {
    const selector = compileLabelSelector(ref.selector);
    if (!selector.ok) return configuration(selector.error.message);
    found = inScope.filter((p) => selector.value.matches(p.labels));
  } else {
    return configuration("one of name or selector must be provided");
  }
  if (found.length === 0 && ref.parameterNotFoundAction === "Deny")
    return err({
      kind: "param-not-found",
      message: "no params found for policy binding with `Deny` parameterNotFoundAction",
    });
  return ok(found);
}
