/**
 * What the REPL's bindings describe: the admission request the API server would send for the loaded
 * objects (or the loaded request as it is), and the variables CEL sees, bound as the engine binds
 * them for `eval`: through `prepare`, with the lookups `eval` builds.
 */
import { type CelValue, toCel } from "../../cel/index.ts";
import { contextFromResources, type EngineContext } from "../../engine/context.ts";
import { prepare } from "../../engine/prepare.ts";
import { buildRequest, resourceRef } from "../../engine/request.ts";
import { createNamespaceObject } from "../../kube/namespace.ts";
import { KindScopes } from "../../kube/scope.ts";
import { storedObject } from "../../kube/stored.ts";
import type { Operation } from "../../policy/types.ts";
import { type AdmissionRequest, DEFAULT_USER, type UserInfo } from "../../request/types.ts";
import { ok, type Result } from "../../result.ts";
import { isJsonObject } from "../input/documents.ts";

/** The session's documents and settings, as loaded. */
export interface SessionBindings {
  readonly object?: unknown;
  readonly oldObject?: unknown;
  readonly params?: unknown;
  readonly namespaceObject?: unknown;
  /** A request loaded with `:request` or `:review` (its objects are `object` and `oldObject`). */
  readonly request?: AdmissionRequest;
  readonly operation?: Operation;
  readonly user?: UserInfo;
  /** The API server's defaults on objects built into a request and on stored objects. */
  readonly defaults: boolean;
}

function namespaceName(b: SessionBindings): string | undefined {
  const ns = b.namespaceObject;
  const meta = isJsonObject(ns) ? ns.metadata : undefined;
  return isJsonObject(meta) && typeof meta.name === "string" ? meta.name : undefined;
}

/**
 * The request from the loaded files: a loaded request as it is (the API server built it), else one
 * built from the objects with the request's namespace and the API server's defaults in them; an
 * error when an object names another namespace than the request's; undefined without an object.
 */
export function sessionRequest(b: SessionBindings): Result<AdmissionRequest, string> | undefined {
  const { object, oldObject } = b;
  if (b.request) {
    return ok({
      ...b.request,
      object: isJsonObject(object) ? object : null,
      oldObject: isJsonObject(oldObject) ? oldObject : null,
      ...(b.operation ? { operation: b.operation } : {}),
      ...(b.user ? { userInfo: b.user } : {}),
    });
  }
  const subject = isJsonObject(object) ? object : isJsonObject(oldObject) ? oldObject : undefined;
  if (!subject) return undefined;
  const ref = resourceRef(subject, "object");
  if (!ref.ok) return undefined;
  const operation =
    b.operation ??
    (isJsonObject(object) && isJsonObject(oldObject) ? "UPDATE" : isJsonObject(object) ? "CREATE" : "DELETE");
  const nsName = namespaceName(b);
  const built = buildRequest(ref.value, {
    operation,
    // DELETE sends the stored object as oldObject; buildRequest takes it as `object`.
    object: operation === "DELETE" ? (isJsonObject(oldObject) ? oldObject : subject) : subject,
    ...(operation !== "DELETE" && isJsonObject(oldObject) && isJsonObject(object) ? { oldObject } : {}),
    userInfo: b.user ?? DEFAULT_USER,
    ...(nsName ? { defaultNamespace: nsName } : {}),
    uid: "celgate-repl",
    defaults: b.defaults,
  });
  return built.ok ? ok(built.value.request) : built;
}

/** The lookups `eval` builds, with the Namespace loaded with `:namespace`. */
export function sessionContext(b: SessionBindings): EngineContext {
  const ns = b.namespaceObject;
  return contextFromResources([], {
    assumeNamespaces: true,
    defaults: b.defaults,
    ...(isJsonObject(ns) ? { namespaceObject: ns } : {}),
  });
}

/** A loaded document as the cluster stores it (unless `--no-defaults`); other values as they are. */
function stored(b: SessionBindings, v: unknown): unknown {
  if (!b.defaults || !isJsonObject(v) || typeof v.apiVersion !== "string" || typeof v.kind !== "string")
    return v;
  return storedObject(v, KindScopes.BUILT_IN.of(v.apiVersion, v.kind).scope);
}

/**
 * The admission variables: with a request, as the engine binds them (`namespaceObject` is the
 * request's Namespace as the API server builds it, null for a cluster-scoped resource or a
 * Namespace); without one, the loaded documents, params and the Namespace as the cluster stores
 * them. A new record each time (the session adds its lets to it).
 */
export function admissionValues(
  b: SessionBindings,
  request: AdmissionRequest | undefined,
): Record<string, CelValue> {
  const ns = b.namespaceObject;
  const base: Record<string, CelValue> = request
    ? prepare(request, sessionContext(b)).allValues()
    : {
        object: toCel(b.object ?? null),
        oldObject: toCel(b.oldObject ?? null),
        request:
          b.operation || b.user
            ? toCel({
                ...(b.operation ? { operation: b.operation } : {}),
                ...(b.user ? { userInfo: b.user } : {}),
              })
            : null,
        namespaceObject: toCel(
          isJsonObject(ns) ? createNamespaceObject(stored(b, ns) as Record<string, unknown>) : (ns ?? null),
        ),
      };
  base.params = toCel(stored(b, b.params) ?? null);
  return base;
}
