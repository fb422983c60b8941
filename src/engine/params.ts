/** Finds the parameter objects a binding's paramRef selects among the loaded resources. */
import { compileLabelSelector } from "../match/index.ts";
import type { ParamKind, ParamRef, ResourceObject } from "../policy/types.ts";

export interface ParamLookup {
  /** Objects of this apiVersion and kind. */
  ofKind(apiVersion: string, kind: string): readonly ResourceObject[];
  /**
   * A lookup that knows the kind's scope and whether its objects are known yet (a cluster cache)
   * answers a paramRef itself: the params, or why none can be looked up, which failurePolicy decides.
   */
  select?(kind: ParamKind, ref: ParamRef, requestNamespace: string): readonly ResourceObject[] | string;
}

export function paramLookup(resources: readonly ResourceObject[]): ParamLookup {
  const byKind = new Map<string, ResourceObject[]>();
  for (const r of resources) {
    const k = `${r.apiVersion}/${r.kind}`;
    byKind.set(k, [...(byKind.get(k) ?? []), r]);
  }
  return { ofKind: (apiVersion, kind) => byKind.get(`${apiVersion}/${kind}`) ?? [] };
}

/**
 * The params for one evaluation. With no namespace in the paramRef, a namespaced request looks in
 * its own namespace (as the API server does for namespace-scoped param kinds) and cluster-scoped
 * params are found too, since offline we cannot ask discovery which kind is which.
 */
export function findParams(
  lookup: ParamLookup,
  kind: ParamKind,
  ref: ParamRef,
  requestNamespace: string,
): ResourceObject[] {
  const candidates = lookup.ofKind(kind.apiVersion, kind.kind).filter((r) => {
    if (ref.namespace !== undefined && ref.namespace !== "") return r.namespace === ref.namespace;
    return r.namespace === undefined || r.namespace === "" || r.namespace === requestNamespace;
  });
  if (ref.name !== undefined && ref.name !== "") return candidates.filter((r) => r.name === ref.name);
  if (ref.selector) {
    const m = compileLabelSelector(ref.selector);
    if (!m.ok) return [];
    return candidates.filter((r) => m.value.matches(r.labels));
  }
  return [];
}

/** The params of a paramRef, or why they cannot be looked up: `select` where the lookup has it. */
export function lookupParams(
  lookup: ParamLookup,
  kind: ParamKind,
  ref: ParamRef,
  requestNamespace: string,
): readonly ResourceObject[] | string {
  return lookup.select
    ? lookup.select(kind, ref, requestNamespace)
    : findParams(lookup, kind, ref, requestNamespace);
}
