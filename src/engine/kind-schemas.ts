/**
 * The schema a mutation of a request's kind merges and checks against, looked up once per policy
 * set and kind: the built-in kinds' (client-go v0.37.2), then the CustomResourceDefinitions among
 * the set's objects, as Kubernetes' type converter resolves them (built-in first). A kind with no
 * schema here merges as structured-merge-diff deduces an untyped value.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import {
  deducedMergeSchema,
  isCustomResourceDefinition,
  type KindSchema,
  kindMergeSchema,
  kindSchema,
  type MergeNode,
  readCustomResourceDefinition,
} from "../kube/schemas/index.ts";
import type { GroupVersionKind } from "../request/types.ts";

/** How a mutation of one kind merges and what it is checked against. */
export interface KindMerge {
  /** The merge metadata of the kind's objects (deduced when the kind has no schema). */
  readonly root: MergeNode;
  /** The kind's schema; undefined when none is known (then nothing is checked or refused). */
  readonly schema: KindSchema | undefined;
}

const DEDUCED: KindMerge = Object.freeze({ root: deducedMergeSchema(), schema: undefined });

interface SetSchemas {
  crds: readonly KindSchema[] | undefined;
  readonly byKind: Map<string, KindMerge>;
}

/** Per policy set: a reload builds a new set, and with it new lookups. */
const bySet = new WeakMap<CompiledPolicySet, SetSchemas>();

function customResources(set: CompiledPolicySet, cache: SetSchemas): readonly KindSchema[] {
  if (cache.crds === undefined) {
    const out: KindSchema[] = [];
    // A CRD's problems are reported when the set is checked; here its good versions are used.
    for (const r of set.resources)
      if (isCustomResourceDefinition(r.object)) out.push(...readCustomResourceDefinition(r.object).kinds);
    cache.crds = out;
  }
  return cache.crds;
}

export function apiVersionOf(gvk: GroupVersionKind): string {
  return gvk.group === "" ? gvk.version : `${gvk.group}/${gvk.version}`;
}

/** The schema a mutation of `gvk` objects uses in `set`. */
export function kindMerge(set: CompiledPolicySet, gvk: GroupVersionKind): KindMerge {
  let cache = bySet.get(set);
  if (cache === undefined) {
    cache = { crds: undefined, byKind: new Map() };
    bySet.set(set, cache);
  }
  const apiVersion = apiVersionOf(gvk);
  const key = `${apiVersion}\u0000${gvk.kind}`;
  let found = cache.byKind.get(key);
  if (found === undefined) {
    const schema = kindSchema(apiVersion, gvk.kind, customResources(set, cache));
    found = schema === undefined ? DEDUCED : { root: kindMergeSchema(schema), schema };
    cache.byKind.set(key, found);
  }
  return found;
}

/** The schema of a kind without a policy set (built-in kinds, and the CRDs given). */
export function kindMergeOf(
  gvk: GroupVersionKind,
  customResourceSchemas: readonly KindSchema[] = [],
): KindMerge {
  const schema = kindSchema(apiVersionOf(gvk), gvk.kind, customResourceSchemas);
  return schema === undefined ? DEDUCED : { root: kindMergeSchema(schema), schema };
}
