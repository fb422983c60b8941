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
  /** Objects of this kind in any apiVersion, for saying what a failed lookup nearly found. */
  ofKindAnyVersion?(kind: string): readonly ResourceObject[];
}

export function paramLookup(resources: readonly ResourceObject[]): ParamLookup {
  const byKind = new Map<string, ResourceObject[]>();
  for (const r of resources) {
    const k = `${r.apiVersion}/${r.kind}`;
    byKind.set(k, [...(byKind.get(k) ?? []), r]);
  }
  return {
    ofKind: (apiVersion, kind) => byKind.get(`${apiVersion}/${kind}`) ?? [],
    ofKindAnyVersion: (kind) => resources.filter((r) => r.kind === kind),
  };
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

function objectName(r: Pick<ResourceObject, "namespace" | "name">): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}

/**
 * What a lookup that found nothing looked for, and what it nearly found: `ReplicaLimit
 * default/limit (rules.example.com/v1)`, then an object of that name in another namespace or of
 * another apiVersion. Only for the words of the error; the lookup itself is findParams.
 */
export function describeParamMiss(
  lookup: ParamLookup,
  kind: ParamKind,
  ref: ParamRef,
  requestNamespace: string,
): string {
  const ns = ref.namespace !== undefined && ref.namespace !== "" ? ref.namespace : undefined;
  const where = ns
    ? `in namespace ${ns}`
    : requestNamespace === ""
      ? "cluster-scoped"
      : `cluster-scoped or in namespace ${requestNamespace}`;
  const sameKind = lookup.ofKind(kind.apiVersion, kind.kind);
  const anyVersion = lookup.ofKindAnyVersion?.(kind.kind) ?? sameKind;
  const hints: string[] = [];
  let sought: string;
  if (ref.name !== undefined && ref.name !== "") {
    sought = ns
      ? `${kind.kind} ${ns}/${ref.name} (${kind.apiVersion})`
      : `${kind.kind} ${ref.name} (${kind.apiVersion}, ${where})`;
    // Any of that name here was found by findParams, so those of the paramKind are elsewhere.
    const named = anyVersion.filter((r) => r.name === ref.name);
    for (const r of named.filter((r) => r.apiVersion === kind.apiVersion).slice(0, 3))
      hints.push(`one of that name is ${r.namespace ? `in namespace ${r.namespace}` : "cluster-scoped"}`);
    for (const r of named.filter((r) => r.apiVersion !== kind.apiVersion).slice(0, 3))
      hints.push(`one of that name has apiVersion ${r.apiVersion} (${objectName(r)})`);
  } else {
    const m = ref.selector ? compileLabelSelector(ref.selector) : undefined;
    const text = m?.ok ? m.value.text : "";
    sought = `${kind.kind} objects (${kind.apiVersion}, ${where}) with labels ${text === "" ? "(any)" : text}`;
    if (m?.ok) {
      const elsewhere = anyVersion.filter((r) => m.value.matches(r.labels));
      if (elsewhere.length > 0)
        hints.push(
          `${elsewhere.length === 1 ? "one matches" : `${elsewhere.length} match`} elsewhere: ${elsewhere
            .slice(0, 3)
            .map((r) => `${objectName(r)} (${r.apiVersion})`)
            .join(", ")}`,
        );
    }
  }
  if (hints.length === 0 && anyVersion.length === 0) hints.push(`no ${kind.kind} object is loaded at all`);
  return `looked up ${sought}${hints.length > 0 ? `; ${hints.join("; ")}` : ""}`;
}
