/**
 * Turning resource files into the admission requests the API server would send for them, for dry
 * runs: kind and resource from apiVersion/kind, namespace from the object, the operation from flags.
 */
import type { AdmissionRequest, UserInfo } from "../request/types.ts";
import type { Operation } from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";

/** Which object a result is about, as reports name it. */
export interface ResourceRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

type JsonObject = Record<string, unknown>;

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
 * Kinds that live outside namespaces. Other kinds without `metadata.namespace` go to `default`, as
 * kubectl would send them.
 */
const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  "APIService",
  "CertificateSigningRequest",
  "ClusterRole",
  "ClusterRoleBinding",
  "CSIDriver",
  "CSINode",
  "CustomResourceDefinition",
  "IngressClass",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
  "MutatingWebhookConfiguration",
  "Namespace",
  "Node",
  "PersistentVolume",
  "PriorityClass",
  "RuntimeClass",
  "StorageClass",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "ValidatingWebhookConfiguration",
  "VolumeAttachment",
]);

export function isClusterScopedKind(kind: string): boolean {
  return CLUSTER_SCOPED_KINDS.has(kind);
}

/** `apps/v1` → group `apps`, version `v1`; `v1` → the core group. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf("/");
  return slash < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function metadata(o: JsonObject): JsonObject {
  return isJsonObject(o.metadata) ? o.metadata : {};
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** Checks that a document is a Kubernetes object and names it. */
export function resourceRef(doc: unknown, where: string): Result<ResourceRef, string> {
  if (!isJsonObject(doc))
    return err(`${where}: expected a Kubernetes object (a mapping), got ${describe(doc)}`);
  const apiVersion = doc.apiVersion;
  const kind = doc.kind;
  if (typeof apiVersion !== "string" || apiVersion === "")
    return err(`${where}: the object has no apiVersion`);
  if (typeof kind !== "string" || kind === "") return err(`${where}: the object has no kind`);
  const meta = metadata(doc);
  return ok({
    apiVersion,
    kind,
    namespace: str(meta.namespace),
    name: str(meta.name) || str(meta.generateName),
  });
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return `a ${typeof v}`;
}

export interface RequestOptions {
  readonly operation: Operation;
  /** The object being written (CREATE, UPDATE, CONNECT) or deleted (DELETE). */
  readonly object: JsonObject;
  /** The stored object, for UPDATE. */
  readonly oldObject?: JsonObject;
  readonly subResource?: string;
  readonly userInfo: UserInfo;
  /** The namespace to use when the object names none (from `--namespace-object`). */
  readonly defaultNamespace?: string;
  readonly uid: string;
}

/** The options object the API server puts in a request for each operation. */
const OPTIONS_KIND: Readonly<Record<Operation, string | undefined>> = {
  CREATE: "CreateOptions",
  UPDATE: "UpdateOptions",
  DELETE: "DeleteOptions",
  CONNECT: undefined,
};

/** Builds the AdmissionRequest the API server would send for this object and operation. */
export function buildRequest(ref: ResourceRef, o: RequestOptions): AdmissionRequest {
  const { group, version } = splitApiVersion(ref.apiVersion);
  const kind = { group, version, kind: ref.kind };
  const resource = { group, version, resource: resourceForKind(ref.kind) };
  // The API server takes a request's namespace from its URL: /api/v1/namespaces/NAME names itself,
  // but a Namespace is created by POST to /api/v1/namespaces, which names none.
  const namespace =
    ref.kind === "Namespace"
      ? o.operation === "CREATE"
        ? ""
        : ref.name
      : ref.namespace || (isClusterScopedKind(ref.kind) ? "" : (o.defaultNamespace ?? "default"));
  const optionsKind = OPTIONS_KIND[o.operation];
  const isDelete = o.operation === "DELETE";
  return {
    uid: o.uid,
    kind,
    resource,
    ...(o.subResource ? { subResource: o.subResource, requestSubResource: o.subResource } : {}),
    requestKind: kind,
    requestResource: resource,
    name: ref.name,
    namespace,
    operation: o.operation,
    userInfo: o.userInfo,
    object: isDelete ? null : o.object,
    oldObject: isDelete ? o.object : (o.oldObject ?? null),
    dryRun: false,
    options: optionsKind ? { apiVersion: "meta.k8s.io/v1", kind: optionsKind } : null,
  };
}

/** The documents of a resource file, with `kind: List` expanded into its items. */
export function expandLists(doc: unknown): unknown[] {
  if (isJsonObject(doc) && doc.kind === "List" && Array.isArray(doc.items)) return doc.items;
  return [doc];
}
