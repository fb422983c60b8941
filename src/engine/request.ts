/**
 * Turning resource files into the admission requests the API server would send for them, for dry
 * runs: kind and resource from apiVersion/kind, namespace from the object, the operation from flags,
 * and the objects as the API server hands them to admission: with the request's namespace and with
 * the defaults it applies when it decodes them.
 */
import { cloneJson } from "../request/json-deep.ts";
import type { AdmissionRequest, UserInfo } from "../request/types.ts";
import { applyDefaults, type DefaultedField } from "../kube/defaults/index.ts";
import { expectedObjectNamespace, isNamespaceKind, resourceForKind, splitApiVersion } from "../kube/kinds.ts";
import { KindScopes } from "../kube/scope.ts";
import type { Operation } from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";

export type { DefaultedField };

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
  /**
   * Whether to apply the API server's defaults to the objects, as it does when it decodes them
   * (default true). Off shows a policy the manifest as written.
   */
  readonly defaults?: boolean;
  /** The request's name when the caller sets it (a test case's requestName); else the object's. */
  readonly name?: string;
  /** Which kinds are cluster-scoped: the built-in API's, and CRDs read with the policies. */
  readonly scopes?: KindScopes;
}

/** What the API server's defaulting changed in each object of a request. */
export interface Defaulted {
  readonly object: readonly DefaultedField[];
  readonly oldObject: readonly DefaultedField[];
}

/** Every field defaulting changed, with its path from `object.` or `oldObject.`, as reports show them. */
export function defaultedFields(d: Defaulted): DefaultedField[] {
  const from = (root: string, fields: readonly DefaultedField[]) =>
    fields.map((f) => ({ ...f, path: f.path.startsWith("[") ? `${root}${f.path}` : `${root}.${f.path}` }));
  return [...from("object", d.object), ...from("oldObject", d.oldObject)];
}

/** A request built for a dry run, and what defaulting changed in its objects. */
export interface BuiltRequest {
  readonly request: AdmissionRequest;
  readonly defaulted: Defaulted;
}

/** The options object the API server puts in a request for each operation. */
const OPTIONS_KIND: Readonly<Record<Operation, string | undefined>> = {
  CREATE: "CreateOptions",
  UPDATE: "UpdateOptions",
  DELETE: "DeleteOptions",
  CONNECT: undefined,
};

/**
 * The request's namespace. The API server takes it from the URL: a cluster-scoped resource's URL
 * names none, whatever its object says, and a namespaced object that names none goes where kubectl
 * would send it: the given default namespace, else `default`. A Namespace is the exception: its
 * requests carry its own name as their namespace, on every operation. /api/v1/namespaces/NAME names it
 * (UPDATE, DELETE), and on CREATE, a POST to /api/v1/namespaces, the create handler sets it from the
 * object's name (kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go:
 * `if len(namespace) == 0 && scope.Resource == namespaceGVR { namespace = name }`).
 */
function requestNamespace(ref: ResourceRef, name: string, o: RequestOptions): string {
  if (isNamespaceKind(ref)) return name;
  if ((o.scopes ?? KindScopes.BUILT_IN).of(ref.apiVersion, ref.kind).scope === "Cluster") return "";
  return ref.namespace || (o.defaultNamespace ?? "default");
}

/**
 * The request's name: the object's `metadata.name`. An object created with only `generateName` is
 * admitted with no name (create.go takes the name from the object before the registry generates
 * one), so policies see `request.name == ""`.
 */
function requestName(o: RequestOptions): string {
  return o.name ?? str(metadata(o.object).name);
}

function objectNamespace(object: JsonObject): string {
  return str(metadata(object).namespace);
}

/**
 * An object as admission receives it: with the namespace the API server puts on it and, unless
 * turned off, its defaults. A copy; the given object is left as it is.
 *
 * The namespace is EnsureObjectNamespaceMatchesRequestNamespace's (staging/src/k8s.io/apiserver/pkg/
 * registry/rest/meta.go), which create.go and update.go (endpoints/handlers) call on the decoded body
 * before admission: an object without a namespace gets the expected one, an object of a
 * cluster-scoped resource (or a Namespace) loses its own, and an object naming another namespace is
 * rejected with 400 BadRequest, so admission never sees it: offline, that is an input error. A stored
 * object (UPDATE's and DELETE's oldObject) always carries the namespace it is stored under.
 */
function admittedObject(
  given: JsonObject,
  expected: string,
  defaults: boolean,
  what: string,
): Result<{ object: JsonObject; defaulted: DefaultedField[] }, string> {
  const own = objectNamespace(given);
  if (own !== "" && expected !== "" && own !== expected)
    return err(
      `${what} names namespace '${own}' but the request is for namespace '${expected}': the API server rejects this before admission (400 BadRequest: the namespace of the provided object does not match the namespace sent on the request)`,
    );
  const object = cloneJson(given);
  if (own !== expected) {
    if (expected === "") delete (object.metadata as JsonObject).namespace;
    else object.metadata = { ...metadata(object), namespace: expected };
  }
  return ok({ object, defaulted: defaults ? applyDefaults(object) : [] });
}

/**
 * Builds the AdmissionRequest the API server would send for this object and operation: the objects
 * carry the request's namespace and the API server's defaults (CREATE: `object`; UPDATE: both;
 * DELETE: the stored object, `oldObject`). CONNECT's object is the connect options (PodExecOptions
 * and the like), which have neither, and is passed as given. Fails only when an object names a
 * namespace other than the request's.
 */
export function buildRequest(ref: ResourceRef, o: RequestOptions): Result<BuiltRequest, string> {
  const { group, version } = splitApiVersion(ref.apiVersion);
  const kind = { group, version, kind: ref.kind };
  const resource = { group, version, resource: resourceForKind(ref.kind) };
  const name = requestName(o);
  const namespace = requestNamespace(ref, name, o);
  const expected = expectedObjectNamespace(namespace, resource);
  const defaults = o.defaults ?? true;
  const isDelete = o.operation === "DELETE";
  let object: JsonObject | null = isDelete ? null : o.object;
  let oldObject: JsonObject | null = isDelete ? o.object : (o.oldObject ?? null);
  let defaulted: Defaulted = { object: [], oldObject: [] };
  if (o.operation !== "CONNECT") {
    const fresh = object ? admittedObject(object, expected, defaults, "the object") : undefined;
    if (fresh && !fresh.ok) return fresh;
    const stored = oldObject
      ? admittedObject(
          oldObject,
          expected,
          defaults,
          isDelete ? "the object being deleted" : "the old object",
        )
      : undefined;
    if (stored && !stored.ok) return stored;
    object = fresh?.value.object ?? object;
    oldObject = stored?.value.object ?? oldObject;
    defaulted = { object: fresh?.value.defaulted ?? [], oldObject: stored?.value.defaulted ?? [] };
  }
  const optionsKind = OPTIONS_KIND[o.operation];
  const request: AdmissionRequest = {
    uid: o.uid,
    kind,
    resource,
    ...(o.subResource ? { subResource: o.subResource, requestSubResource: o.subResource } : {}),
    requestKind: kind,
    requestResource: resource,
    name,
    namespace,
    operation: o.operation,
    userInfo: o.userInfo,
    object,
    oldObject,
    dryRun: false,
    options: optionsKind ? { apiVersion: "meta.k8s.io/v1", kind: optionsKind } : null,
  };
  return ok({ request, defaulted });
}

/** The documents of a resource file, with `kind: List` expanded into its items. */
export function expandLists(doc: unknown): unknown[] {
  if (isJsonObject(doc) && doc.kind === "List" && Array.isArray(doc.items)) return doc.items;
  return [doc];
}
