/**
 * An API server audit event (`audit.k8s.io/v1` Event, logged at the `RequestResponse` level) as the
 * AdmissionRequest the API server built for that request: CreateV1AdmissionReview in
 * kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go
 * fills it from the request's attributes (kind and resource, subresource, name, namespace,
 * operation, the user, the objects, dryRun, the operation's options). An audit event holds what
 * those attributes came from, with three limits, each a skip with its reason rather than a guess:
 * - an update (`update`, `patch`) needs the stored object, which the event does not hold: it is the
 *   object an earlier event of the same log left (its `responseObject`), kept for the last
 *   STORED_OBJECTS objects seen;
 * - a `patch` event holds the patch, not the object: the object is its `responseObject` (what was
 *   stored, so mutations of the day are in it), and a denied patch cannot be rebuilt;
 * - only the verbs that reach admission are read (create, update, patch, delete), at the
 *   `ResponseComplete` stage (the `RequestReceived` stage of the same request is a duplicate).
 * The objects get the namespace and defaults the API server gives a decoded object before admission
 * (engine/request.ts). The user is the impersonated one when there is one, as admission sees it.
 */
import type { KindScopes } from "../../../kube/scope.ts";
import { buildRequest } from "../../../engine/request.ts";
import type { Operation } from "../../../policy/types.ts";
import type { AdmissionRequest, UserInfo } from "../../../request/types.ts";
import { err, ok, type Result } from "../../../result.ts";
import { isJsonObject } from "../../input/documents.ts";

type Json = Record<string, unknown>;

/** How many stored objects are kept to pair an update with (the bound on this reader's memory). */
export const STORED_OBJECTS = 10_000;

const VERBS: Readonly<Record<string, Operation>> = {
  create: "CREATE",
  update: "UPDATE",
  patch: "UPDATE",
  delete: "DELETE",
};

export function isAuditEvent(v: unknown): v is Json {
  return (
    isJsonObject(v) &&
    v.kind === "Event" &&
    typeof v.apiVersion === "string" &&
    v.apiVersion.startsWith("audit.k8s.io/")
  );
}

/** Why an event was not replayed (a skip), or the request it was. */
export type FromAudit =
  | { readonly kind: "request"; readonly request: AdmissionRequest }
  | { readonly kind: "skip"; readonly reason: string };

const str = (v: unknown): string => (typeof v === "string" ? v : "");

function userOf(event: Json): UserInfo {
  const u = isJsonObject(event.impersonatedUser) ? event.impersonatedUser : event.user;
  const user = isJsonObject(u) ? u : {};
  return {
    username: str(user.username),
    ...(typeof user.uid === "string" ? { uid: user.uid } : {}),
    ...(Array.isArray(user.groups) ? { groups: user.groups.filter((g) => typeof g === "string") } : {}),
    ...(isJsonObject(user.extra) ? { extra: user.extra as Record<string, string[]> } : {}),
  } as UserInfo;
}

/** The object of `ref`'s kind in `v`, or undefined (a Status, an absent body). */
function objectOf(v: unknown): Json | undefined {
  return isJsonObject(v) && typeof v.kind === "string" && v.kind !== "Status" ? v : undefined;
}

/** The query parameters of the request URI. */
function queryOf(uri: string): URLSearchParams {
  const at = uri.indexOf("?");
  return new URLSearchParams(at === -1 ? "" : uri.slice(at + 1));
}

/** Turns events into requests, keeping the last objects stored to pair updates and deletes with. */
export class AuditReader {
  private readonly stored = new Map<string, Json>();

  constructor(private readonly scopes: KindScopes) {}

  private keyOf(ref: Json): string {
    return [str(ref.apiGroup), str(ref.resource), str(ref.namespace), str(ref.name)].join("/");
  }

  private remember(key: string, object: Json | undefined): void {
    if (object === undefined) return;
    this.stored.delete(key);
    this.stored.set(key, object);
    if (this.stored.size > STORED_OBJECTS) this.stored.delete(this.stored.keys().next().value as string);
  }

  read(event: Json): Result<FromAudit, string> {
    const verb = str(event.verb);
    const operation = VERBS[verb];
    const skip = (reason: string) => ok<FromAudit>({ kind: "skip", reason });
    if (operation === undefined) return skip(`the verb '${verb || "(none)"}' does not reach admission`);
    if (event.stage !== "ResponseComplete") return skip("not the ResponseComplete stage");
    const ref = isJsonObject(event.objectRef) ? event.objectRef : undefined;
    if (ref === undefined) return err("an audit event without objectRef");
    const key = this.keyOf(ref);
    const response = objectOf(event.responseObject);
    const previous = this.stored.get(key);
    const request = objectOf(event.requestObject);
    if (event.requestObject === undefined && operation !== "DELETE")
      return skip("no request body: the event was not logged at the RequestResponse level");
    let object: Json | undefined;
    let oldObject: Json | undefined;
    if (operation === "CREATE") object = request;
    else if (operation === "UPDATE") {
      object = verb === "patch" ? response : request;
      oldObject = previous;
      if (object === undefined)
        return skip("a patch that was not stored: the event holds the patch, not the object");
      if (oldObject === undefined)
        return skip("an update whose stored object no earlier event in the log holds");
    } else {
      // The object the delete returned (a graceful delete's), else the one stored before it.
      object = response ?? previous;
      if (object === undefined) return skip("a delete whose stored object no earlier event in the log holds");
    }
    if (object === undefined) return skip("no object in the request body");
    if (operation === "DELETE") this.stored.delete(key);
    else this.remember(key, response);
    return this.build(event, ref, operation, object, oldObject);
  }

  private build(
    event: Json,
    ref: Json,
    operation: Operation,
    object: Json,
    oldObject: Json | undefined,
  ): Result<FromAudit, string> {
    const apiVersion = str(object.apiVersion);
    const built = buildRequest(
      { apiVersion, kind: str(object.kind), namespace: str(ref.namespace), name: str(ref.name) },
      {
        operation,
        object,
        ...(oldObject !== undefined ? { oldObject } : {}),
        userInfo: userOf(event),
        uid: str(event.auditID),
        scopes: this.scopes,
        ...(str(ref.subresource) !== "" ? { subResource: str(ref.subresource) } : {}),
        name: str(ref.name),
      },
    );
    if (!built.ok) return err(built.error);
    const query = queryOf(str(event.requestURI));
    const resource = {
      group: str(ref.apiGroup),
      version: str(ref.apiVersion) || built.value.request.resource.version,
      resource: str(ref.resource),
    };
    const options = built.value.request.options;
    const fieldManager = query.get("fieldManager");
    return ok({
      kind: "request",
      request: {
        ...built.value.request,
        resource,
        requestResource: resource,
        dryRun: query.getAll("dryRun").includes("All"),
        options:
          options !== null && fieldManager !== null && operation !== "DELETE"
            ? { ...options, fieldManager }
            : options,
      },
    });
  }
}
