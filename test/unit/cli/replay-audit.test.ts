/**
 * An audit.k8s.io Event as the AdmissionRequest the API server built for its request
 * (src/adapters/cli/replay/audit.ts). The fields follow CreateV1AdmissionReview in kubernetes
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go: kind and
 * resource, subresource, name and namespace, operation, the user admission sees (the impersonated
 * one, as the impersonation filter replaces the request's user before admission), the objects,
 * dryRun, and the operation's options. test/kube/replay-audit.test.ts checks the decisions against
 * a real API server's.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AuditReader, STORED_OBJECTS } from "../../../src/adapters/cli/replay/audit.ts";
import { KindScopes } from "../../../src/kube/scope.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";

const pod = (name: string, image: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "app", image }] },
});

function event(
  verb: string,
  name: string,
  body: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "RequestResponse",
    auditID: `${verb}-${name}`,
    stage: "ResponseComplete",
    requestURI: `/api/v1/namespaces/team-a/pods${verb === "create" ? "" : `/${name}`}`,
    verb,
    user: { username: "alice", uid: "a-1", groups: ["dev"], extra: { scopes: ["x"] } },
    objectRef: { resource: "pods", namespace: "team-a", name, apiVersion: "v1" },
    responseStatus: { code: 200 },
    ...body,
    ...extra,
  };
}

/** The first container's image of a request's object. */
function image(o: AdmissionRequest["object"]): string | undefined {
  const spec = o?.spec as { containers?: { image?: string }[] } | undefined;
  return spec?.containers?.[0]?.image;
}

function requestOf(reader: AuditReader, e: Record<string, unknown>): AdmissionRequest {
  const r = reader.read(e);
  assert.ok(r.ok, r.ok ? "" : r.error);
  assert.equal(r.value.kind, "request", JSON.stringify(r.value));
  return (r.value as { request: AdmissionRequest }).request;
}

void test("a create: kind, resource, name, namespace, the user, dryRun and options, the object defaulted", () => {
  const reader = new AuditReader(KindScopes.BUILT_IN);
  const created = pod("web", "nginx");
  const r = requestOf(
    reader,
    event(
      "create",
      "web",
      { requestObject: created, responseObject: created },
      {
        requestURI: "/api/v1/namespaces/team-a/pods?dryRun=All&fieldManager=kubectl-client-side-apply",
      },
    ),
  );
  assert.deepEqual(r.kind, { group: "", version: "v1", kind: "Pod" });
  assert.deepEqual(r.resource, { group: "", version: "v1", resource: "pods" });
  assert.equal(r.operation, "CREATE");
  assert.equal(r.name, "web");
  assert.equal(r.namespace, "team-a");
  assert.equal(r.uid, "create-web");
  assert.deepEqual(r.userInfo, { username: "alice", uid: "a-1", groups: ["dev"], extra: { scopes: ["x"] } });
  assert.equal(r.dryRun, true);
  assert.deepEqual(r.options, {
    apiVersion: "meta.k8s.io/v1",
    kind: "CreateOptions",
    fieldManager: "kubectl-client-side-apply",
  });
  assert.equal(r.oldObject, null);
  // The namespace the URL names, and the API server's defaults, as a decoded object has them.
  const object = r.object ?? {};
  assert.equal((object.metadata as { namespace?: string }).namespace, "team-a");
  const spec = object.spec as { containers: { imagePullPolicy?: string }[] };
  assert.equal(spec.containers[0]?.imagePullPolicy, "Always");
});

void test("an update pairs with the object an earlier event stored; a patch's object is what was stored", () => {
  const reader = new AuditReader(KindScopes.BUILT_IN);
  const v1 = pod("web", "nginx:1");
  const v2 = pod("web", "nginx:2");
  const v3 = pod("web", "nginx:3");
  requestOf(reader, event("create", "web", { requestObject: v1, responseObject: v1 }));
  const update = requestOf(
    reader,
    event(
      "update",
      "web",
      { requestObject: v2, responseObject: v2 },
      { impersonatedUser: { username: "bob" } },
    ),
  );
  assert.equal(update.operation, "UPDATE");
  assert.equal(update.userInfo.username, "bob");
  assert.equal(image(update.oldObject), "nginx:1");
  assert.deepEqual(update.options, { apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions" });
  const patch = requestOf(reader, event("patch", "web", { requestObject: { spec: {} }, responseObject: v3 }));
  assert.equal(image(patch.object), "nginx:3");
  assert.equal(image(patch.oldObject), "nginx:2");
  const status = { kind: "Status", apiVersion: "v1", status: "Success" };
  const del = requestOf(reader, event("delete", "web", { responseObject: status }));
  assert.equal(del.operation, "DELETE");
  assert.equal(del.object, null);
  assert.equal(image(del.oldObject), "nginx:3");
  assert.deepEqual(del.options, { apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions" });
  // Gone with the delete: a later update of the same name has no stored object.
  const again = reader.read(event("update", "web", { requestObject: v2, responseObject: v2 }));
  assert.deepEqual(again.ok && again.value, {
    kind: "skip",
    reason: "an update whose stored object no earlier event in the log holds",
  });
});

void test("what cannot be rebuilt is skipped with its reason; the stored objects kept are bounded", () => {
  const reader = new AuditReader(KindScopes.BUILT_IN);
  const skip = (e: Record<string, unknown>) => {
    const r = reader.read(e);
    return r.ok && r.value.kind === "skip" ? r.value.reason : JSON.stringify(r);
  };
  assert.equal(skip(event("get", "web", {})), "the verb 'get' does not reach admission");
  assert.equal(
    skip(event("create", "web", {})),
    "no request body: the event was not logged at the RequestResponse level",
  );
  assert.equal(
    skip(event("patch", "web", { requestObject: {}, responseObject: { kind: "Status" } })),
    "a patch that was not stored: the event holds the patch, not the object",
  );
  assert.equal(
    skip(event("create", "web", { requestObject: pod("web", "x") }, { stage: "RequestReceived" })),
    "not the ResponseComplete stage",
  );
  // The oldest stored object is forgotten once STORED_OBJECTS others have been stored after it.
  for (let i = 0; i <= STORED_OBJECTS; i++) {
    const p = pod(`p${i}`, "x");
    requestOf(reader, event("create", `p${i}`, { requestObject: p, responseObject: p }));
  }
  assert.equal(
    skip(event("update", "p0", { requestObject: pod("p0", "y"), responseObject: pod("p0", "y") })),
    "an update whose stored object no earlier event in the log holds",
  );
  requestOf(reader, event("update", "p1", { requestObject: pod("p1", "y"), responseObject: pod("p1", "y") }));
});
