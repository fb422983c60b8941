/**
 * Objects the engine looks up in the cluster (Namespaces for namespaceSelector and namespaceObject,
 * params for paramRef), read offline from files: stored as the API server would have stored the
 * manifest when it was created. It decodes it with its defaults, puts it in the namespace of the
 * request (kubectl sends a namespaced object that names none to `default`; a cluster-scoped object
 * loses any namespace: `EnsureObjectNamespaceMatchesRequestNamespace`, apiserver/pkg/registry/rest/
 * meta.go), and runs the kind's strategy on create (a Namespace gets its status and `kubernetes`
 * finalizer). Done once, when the objects are loaded; never on a request's path.
 */
import { applyDefaults } from "./defaults/index.ts";
import { isObject, type JsonObject } from "./defaults/place.ts";
import { isNamespaceKind } from "./kinds.ts";
import { prepareNamespaceForCreate } from "./namespace.ts";
import type { Scope } from "./scope.ts";

/** kubectl's namespace for a namespaced object that names none, with no context namespace set. */
export const DEFAULT_NAMESPACE = "default";

export interface StoreOptions {
  /** Whether to apply the API server's defaults and create strategy (default true). */
  readonly defaults?: boolean;
}

/**
 * A copy of `object` as stored when created from it. A Namespace given with a `status` is one read
 * back from a cluster: its status and finalizers are kept, as PrepareForCreate ran long ago.
 */
export function storedObject(
  object: Readonly<JsonObject>,
  scope: Scope,
  options: StoreOptions = {},
): JsonObject {
  const copy = structuredClone(object) as JsonObject;
  const meta = isObject(copy.metadata) ? copy.metadata : undefined;
  const namespace = typeof meta?.namespace === "string" ? meta.namespace : "";
  if (scope === "Cluster" && meta && namespace !== "") delete meta.namespace;
  if (scope === "Namespaced" && namespace === "") copy.metadata = { ...meta, namespace: DEFAULT_NAMESPACE };
  if (options.defaults === false) return copy;
  const created = copy.status === undefined || copy.status === null;
  applyDefaults(copy);
  if (created && typeof copy.apiVersion === "string" && typeof copy.kind === "string")
    if (isNamespaceKind({ apiVersion: copy.apiVersion, kind: copy.kind })) prepareNamespaceForCreate(copy);
  return copy;
}

/** The stored namespace of an object stored by `storedObject` ("" when cluster-scoped). */
export function storedNamespace(object: Readonly<JsonObject>): string {
  const meta = object.metadata;
  return isObject(meta) && typeof meta.namespace === "string" ? meta.namespace : "";
}
