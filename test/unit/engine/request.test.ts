import assert from "node:assert/strict";
import { test } from "node:test";
import { buildRequest, expandLists, resourceForKind, resourceRef } from "../../../src/engine/request.ts";

test("resource names: lower-case English plurals of the kind", () => {
  const cases: [string, string][] = [
    ["Pod", "pods"],
    ["Deployment", "deployments"],
    ["Ingress", "ingresses"],
    ["IngressClass", "ingressclasses"],
    ["NetworkPolicy", "networkpolicies"],
    ["Endpoints", "endpoints"],
    ["EndpointSlice", "endpointslices"],
    ["Gateway", "gateways"],
    ["Mesh", "meshes"],
    ["Box", "boxes"],
    ["ConfigMap", "configmaps"],
  ];
  for (const [kind, resource] of cases) assert.equal(resourceForKind(kind), resource, kind);
});

const userInfo = { username: "u", groups: ["g"] };

function request(object: Record<string, unknown>, extra: Partial<Parameters<typeof buildRequest>[1]> = {}) {
  const ref = resourceRef(object, "test");
  assert.ok(ref.ok);
  return buildRequest(ref.value, { operation: "CREATE", object, userInfo, uid: "u-1", ...extra });
}

test("kind, resource and namespace come from the object", () => {
  const r = request({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "i", namespace: "web" },
  });
  assert.deepEqual(r.kind, { group: "networking.k8s.io", version: "v1", kind: "Ingress" });
  assert.deepEqual(r.resource, { group: "networking.k8s.io", version: "v1", resource: "ingresses" });
  assert.equal(r.namespace, "web");
  assert.equal(r.name, "i");
  assert.deepEqual(r.options, { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" });
});

test("namespace: default for namespaced kinds, none for cluster-scoped ones, the namespace object's otherwise", () => {
  const cases: [Record<string, unknown>, Partial<Parameters<typeof buildRequest>[1]>, string][] = [
    [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }, {}, "default"],
    [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }, { defaultNamespace: "prod" }, "prod"],
    [
      { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "x" } },
      { defaultNamespace: "prod" },
      "x",
    ],
    [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "c" } }, {}, ""],
    [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } }, {}, ""],
    [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } }, { operation: "DELETE" }, "n"],
  ];
  for (const [object, extra, namespace] of cases) assert.equal(request(object, extra).namespace, namespace);
});

test("DELETE: the object is the oldObject and there is no object", () => {
  const object = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } };
  const r = request(object, { operation: "DELETE" });
  assert.equal(r.object, null);
  assert.deepEqual(r.oldObject, object);
  assert.deepEqual(r.options, { apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions" });
});

test("subresource and old object", () => {
  const object = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" } };
  const old = { ...object, spec: {} };
  const r = request(object, { operation: "UPDATE", oldObject: old, subResource: "scale" });
  assert.equal(r.subResource, "scale");
  assert.equal(r.requestSubResource, "scale");
  assert.deepEqual(r.oldObject, old);
});

test("resourceRef rejects what is not a Kubernetes object", () => {
  const cases: [unknown, RegExp][] = [
    [[1], /a mapping\), got a list/],
    ["text", /got a string/],
    [{ kind: "Pod" }, /no apiVersion/],
    [{ apiVersion: "v1" }, /no kind/],
  ];
  for (const [doc, message] of cases) {
    const r = resourceRef(doc, "f.yaml");
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, message);
  }
});

test("Lists expand into their items", () => {
  assert.deepEqual(expandLists({ kind: "List", items: [1, 2] }), [1, 2]);
  assert.deepEqual(expandLists({ kind: "Pod" }), [{ kind: "Pod" }]);
});
