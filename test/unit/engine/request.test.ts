import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type BuiltRequest,
  buildRequest,
  defaultedFields,
  expandLists,
  type RequestOptions,
  resourceRef,
} from "../../../src/engine/request.ts";

const userInfo = { username: "u", groups: ["g"] };

/** The value at a path of keys and indices; undefined where the path ends early. */
function at(v: unknown, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>(
    (o, k) => (o !== null && typeof o === "object" ? (o as Record<string | number, unknown>)[k] : undefined),
    v,
  );
}

function built(object: Record<string, unknown>, extra: Partial<RequestOptions> = {}): BuiltRequest {
  const ref = resourceRef(object, "test");
  assert.ok(ref.ok);
  const r = buildRequest(ref.value, { operation: "CREATE", object, userInfo, uid: "u-1", ...extra });
  assert.ok(r.ok, r.ok ? "" : r.error);
  return r.value;
}

const request = (object: Record<string, unknown>, extra: Partial<RequestOptions> = {}) =>
  built(object, extra).request;

/** The request without the API server's defaults, to look at one thing at a time. */
const raw = (object: Record<string, unknown>, extra: Partial<RequestOptions> = {}) =>
  request(object, { defaults: false, ...extra });

function failure(
  object: Record<string, unknown>,
  extra: Partial<RequestOptions>,
  ref?: { namespace: string },
) {
  const r0 = resourceRef(object, "test");
  assert.ok(r0.ok);
  const r = buildRequest(
    { ...r0.value, ...ref },
    { operation: "CREATE", object, userInfo, uid: "u-1", ...extra },
  );
  assert.equal(r.ok, false);
  return r.ok ? "" : r.error;
}

test("kind, resource and namespace come from the object", () => {
  const r = raw({
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
  const cases: [Record<string, unknown>, Partial<RequestOptions>, string][] = [
    [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }, {}, "default"],
    [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }, { defaultNamespace: "prod" }, "prod"],
    [
      { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "x" } },
      { defaultNamespace: "prod" },
      "x",
    ],
    [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "c" } }, {}, ""],
    // A cluster-scoped resource's URL names no namespace, whatever its object says.
    [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "c", namespace: "x" },
      },
      {},
      "",
    ],
    // A Namespace's requests name the Namespace itself, CREATE included: the create handler sets the
    // namespace from the object's name (apiserver/pkg/endpoints/handlers/create.go, namespaceGVR).
    [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } }, {}, "n"],
    [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } }, { operation: "DELETE" }, "n"],
  ];
  for (const [object, extra, namespace] of cases) assert.equal(raw(object, extra).namespace, namespace);
});

test("DELETE: the object is the oldObject and there is no object", () => {
  const object = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default" } };
  const r = raw(object, { operation: "DELETE" });
  assert.equal(r.object, null);
  assert.deepEqual(r.oldObject, object);
  assert.deepEqual(r.options, { apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions" });
});

test("subresource and old object", () => {
  const object = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "default" } };
  const old = { ...object, spec: {} };
  const r = raw(object, { operation: "UPDATE", oldObject: old, subResource: "scale" });
  assert.equal(r.subResource, "scale");
  assert.equal(r.requestSubResource, "scale");
  assert.deepEqual(r.oldObject, old);
});

// ---- The object's namespace: EnsureObjectNamespaceMatchesRequestNamespace ----------------------
// staging/src/k8s.io/apiserver/pkg/registry/rest/meta.go, called by endpoints/handlers/create.go and
// update.go with rest.ExpectedNamespaceForResource before admission.

test("create.go: an object without a namespace gets the request's before admission; the input is left alone", () => {
  const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } };
  const r = raw(object);
  assert.deepEqual(r.object, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", namespace: "default" },
  });
  assert.deepEqual(object, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } });
  const inProd = raw(object, { defaultNamespace: "prod" });
  assert.equal(at(inProd.object, "metadata", "namespace"), "prod");
  // No metadata at all: SetNamespace makes it.
  const bare = raw({ apiVersion: "v1", kind: "ConfigMap" });
  assert.deepEqual(bare.object?.metadata, { namespace: "default" });
});

test("meta.go: a cluster-scoped object's namespace is cleared", () => {
  const r = raw({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "c", namespace: "team-a" },
  });
  assert.deepEqual(r.object?.metadata, { name: "c" });
});

test("ExpectedNamespaceForResource: a Namespace's object carries no namespace, though its UPDATE request names it", () => {
  const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "n", namespace: "n" } };
  const update = raw(ns, {
    operation: "UPDATE",
    oldObject: { apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } },
  });
  assert.equal(update.namespace, "n");
  assert.deepEqual(update.object?.metadata, { name: "n" });
  assert.deepEqual(update.oldObject?.metadata, { name: "n" });
});

test("update.go: UPDATE puts the namespace on the object and on the stored oldObject", () => {
  const r = raw(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
    {
      operation: "UPDATE",
      oldObject: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
      defaultNamespace: "prod",
    },
  );
  assert.equal(at(r.object, "metadata", "namespace"), "prod");
  assert.equal(at(r.oldObject, "metadata", "namespace"), "prod");
});

test("DELETE: the stored object carries its namespace; CONNECT's options object is passed as given", () => {
  const del = raw({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" } }, { operation: "DELETE" });
  assert.equal(at(del.oldObject, "metadata", "namespace"), "default");
  const options = { apiVersion: "v1", kind: "PodExecOptions", command: ["sh"] };
  const connect = request(options, { operation: "CONNECT" });
  assert.deepEqual(connect.object, options);
  assert.equal(connect.namespace, "default");
});

test("meta.go: an object naming another namespace than the request's is an input error, as the API server's 400", () => {
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "team-b" } };
  const message = failure(pod, {}, { namespace: "team-a" });
  assert.match(message, /^the object names namespace 'team-b' but the request is for namespace 'team-a'/);
  assert.match(
    message,
    /400 BadRequest: the namespace of the provided object does not match the namespace sent on the request/,
  );
  const old = failure(
    { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "team-a" } },
    { operation: "UPDATE", oldObject: pod },
  );
  assert.match(old, /^the old object names namespace 'team-b' but the request is for namespace 'team-a'/);
  const deleted = failure(pod, { operation: "DELETE" }, { namespace: "team-a" });
  assert.match(deleted, /^the object being deleted names namespace 'team-b'/);
});

// ---- Defaulting before admission ---------------------------------------------------------------

test("the API server's defaults are applied to object and oldObject, and listed; off leaves the manifests as written", () => {
  const deployment = (replicas?: number) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "d", namespace: "default" },
    spec: {
      ...(replicas === undefined ? {} : { replicas }),
      template: { spec: { containers: [{ name: "a", image: "nginx:1.27" }] } },
    },
  });
  const b = built(deployment(), { operation: "UPDATE", oldObject: deployment(3) });
  const spec = b.request.object?.spec as Record<string, unknown>;
  assert.equal(spec.replicas, 1); // SetDefaults_Deployment
  assert.equal(at(b.request.oldObject, "spec", "replicas"), 3);
  assert.deepEqual(
    b.defaulted.object.find((f) => f.path === "spec.replicas"),
    { path: "spec.replicas", value: 1 },
  );
  assert.ok(b.defaulted.oldObject.some((f) => f.path === "spec.revisionHistoryLimit"));
  const fields = defaultedFields(b.defaulted);
  assert.ok(fields.some((f) => f.path === "object.spec.replicas"));
  assert.ok(fields.some((f) => f.path === "oldObject.spec.template.spec.containers[0].imagePullPolicy"));

  const off = built(deployment(), { defaults: false });
  assert.equal(at(off.request.object, "spec", "replicas"), undefined);
  assert.deepEqual(off.defaulted, { object: [], oldObject: [] });
});

test("Lists expand into their items", () => {
  assert.deepEqual(expandLists({ kind: "List", items: [1, 2] }), [1, 2]);
  assert.deepEqual(expandLists({ kind: "Pod" }), [{ kind: "Pod" }]);
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

test("an object created with only generateName is admitted with no name (create.go reads the name from the object before the registry generates one)", () => {
  const r = raw({ apiVersion: "v1", kind: "Pod", metadata: { generateName: "web-" } });
  assert.equal(r.name, "");
  // A Namespace created so has no name to be its namespace either.
  assert.equal(raw({ apiVersion: "v1", kind: "Namespace", metadata: { generateName: "ns-" } }).namespace, "");
});

test("a custom resource's scope comes from its CustomResourceDefinition when one is given, else it is namespaced", async () => {
  const { KindScopes } = await import("../../../src/kube/scope.ts");
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gatewayclasses.gateway.networking.k8s.io" },
    spec: {
      group: "gateway.networking.k8s.io",
      scope: "Cluster",
      names: { kind: "GatewayClass", plural: "gatewayclasses" },
      versions: [{ name: "v1", served: true, storage: true }],
    },
  };
  const object = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GatewayClass",
    metadata: { name: "gc", namespace: "x" },
  };
  assert.equal(raw(object, { scopes: KindScopes.from([crd]) }).namespace, "");
  assert.equal(raw(object).namespace, "x");
  // A custom kind that shares a built-in kind's name is not taken for it.
  const node = { apiVersion: "example.com/v1", kind: "Node", metadata: { name: "n" } };
  assert.equal(raw(node).namespace, "default");
});
