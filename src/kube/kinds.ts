/**
 * Knowledge about the built-in Kubernetes kinds that offline commands need to build the request the
 * API server would build: the resource a kind is served as, whether it lives in a namespace, and the
 * namespace the API server puts on an object before admission.
 *
 * Without discovery these are tables and rules, not a lookup in a cluster: the tables hold the
 * built-in API of the release celgate models (Kubernetes 1.37, see `defaults/index.ts`), and a kind
 * they do not list (a custom resource) is taken to be namespaced, with the regular English plural.
 */

/** A group and version, as apiVersion spells them (`apps/v1`; the core group is ""). */
export interface GroupVersion {
  readonly group: string;
  readonly version: string;
}

/** `apps/v1` → group `apps`, version `v1`; `v1` → the core group. */
export function splitApiVersion(apiVersion: string): GroupVersion {
  const slash = apiVersion.indexOf("/");
  return slash < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Kinds whose plural is not the regular English one. */
const IRREGULAR_PLURALS: Readonly<Record<string, string>> = {
  endpoints: "endpoints",
};

/**
 * The resource name for a kind: lower case, plural by the usual English rules (`Pod` → `pods`,
 * `Ingress` → `ingresses`, `NetworkPolicy` → `networkpolicies`, `Gateway` → `gateways`).
 * Without discovery this is a guess, but it is the guess that matches the built-in API.
 */
export function resourceForKind(kind: string): string {
  const k = kind.toLowerCase();
  const irregular = IRREGULAR_PLURALS[k];
  if (irregular) return irregular;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(k)) return `${k}es`;
  return `${k}s`;
}

/**
 * Kinds that live outside namespaces: every type of k8s.io/api 1.37 marked
 * `+genclient:nonNamespaced` (the same set as 1.36's), plus CustomResourceDefinition (apiextensions) and APIService
 * (kube-aggregator). Other kinds without `metadata.namespace` go to `default`, as kubectl would send
 * them.
 */
const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  "APIService",
  "CertificateSigningRequest",
  "ClusterRole",
  "ClusterRoleBinding",
  "ClusterTrustBundle",
  "ComponentStatus",
  "CSIDriver",
  "CSINode",
  "CustomResourceDefinition",
  "DeviceClass",
  "DeviceTaintRule",
  "FlowSchema",
  "ImageReview",
  "IngressClass",
  "IPAddress",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
  "MutatingWebhookConfiguration",
  "Namespace",
  "Node",
  "PersistentVolume",
  "PriorityClass",
  "PriorityLevelConfiguration",
  "ResourcePoolStatusRequest",
  "ResourceSlice",
  "RuntimeClass",
  "SelfSubjectAccessReview",
  "SelfSubjectReview",
  "SelfSubjectRulesReview",
  "ServiceCIDR",
  "StorageClass",
  "StorageVersion",
  "StorageVersionMigration",
  "SubjectAccessReview",
  "TokenReview",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "ValidatingWebhookConfiguration",
  "VolumeAttachment",
  "VolumeAttributesClass",
]);

export function isClusterScopedKind(kind: string): boolean {
  return CLUSTER_SCOPED_KINDS.has(kind);
}

/** The core/v1 Namespace kind: cluster-scoped, yet its requests carry its own name as namespace. */
export function isNamespaceKind(ref: { readonly apiVersion: string; readonly kind: string }): boolean {
  return ref.apiVersion === "v1" && ref.kind === "Namespace";
}

/**
 * The namespace the API server expects on an object of this resource, given the request's
 * namespace: the request's, except for namespaces themselves, whose requests name the namespace
 * but whose objects carry none (`rest.ExpectedNamespaceForResource`, staging/src/k8s.io/apiserver/
 * pkg/registry/rest/meta.go). A cluster-scoped resource's request has no namespace to begin with.
 */
export function expectedObjectNamespace(
  requestNamespace: string,
  resource: { readonly group: string; readonly resource: string },
): string {
  return resource.group === "" && resource.resource === "namespaces" ? "" : requestNamespace;
}
