/**
 * Namespaces as admission policies see them: stored with what the API server's namespace strategy
 * adds on create, and handed to CEL as `namespaceObject` in the shape the generic policy plugin
 * builds for it.
 */
import { isObject, type JsonObject } from "./defaults/place.ts";

/** v1.FinalizerKubernetes. */
export const KUBERNETES_FINALIZER = "kubernetes";

/**
 * What the namespace strategy's PrepareForCreate does to a Namespace being created (kubernetes
 * pkg/registry/core/namespace/strategy.go): `status` becomes `{phase: Active}`, and the `kubernetes`
 * finalizer is appended to `spec.finalizers` when it is missing. In place.
 */
export function prepareNamespaceForCreate(ns: JsonObject): void {
  ns.status = { phase: "Active" };
  const spec = isObject(ns.spec) ? ns.spec : {};
  const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
  if (finalizers.includes(KUBERNETES_FINALIZER)) return;
  spec.finalizers = [...finalizers, KUBERNETES_FINALIZER];
  ns.spec = spec;
}

/** The ObjectMeta fields CreateNamespaceObject copies, in the order v1.ObjectMeta declares them. */
const KEPT_METADATA = [
  "name",
  "generateName",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "finalizers",
] as const;

/**
 * `namespaceObject` for a stored Namespace, as kubernetes staging/src/k8s.io/apiserver/pkg/admission/
 * plugin/cel/condition.go `CreateNamespaceObject` builds it: a new v1.Namespace with the stored one's
 * spec and status and only the metadata fields above, so no managedFields, ownerReferences or
 * selfLink, and no apiVersion or kind (the new object has no TypeMeta). A new object; the stored
 * one is left as it is.
 */
export function createNamespaceObject(ns: Readonly<JsonObject>): JsonObject {
  const out: JsonObject = {};
  const meta = ns.metadata;
  if (isObject(meta)) {
    const kept: JsonObject = {};
    for (const key of KEPT_METADATA) if (meta[key] !== undefined) kept[key] = meta[key];
    out.metadata = kept;
  }
  if (ns.spec !== undefined) out.spec = ns.spec;
  if (ns.status !== undefined) out.status = ns.status;
  return out;
}
