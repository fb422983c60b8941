/**
 * Objects the engine looks up, stored as the API server stores them, and `namespaceObject` built
 * from a stored Namespace. Upstream: kubernetes pkg/registry/core/namespace/strategy.go
 * (PrepareForCreate), pkg/apis/core/v1/defaults.go (SetDefaults_Namespace), staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/cel/condition.go (CreateNamespaceObject), and the generic policy
 * dispatcher's param scopes (plugin/policy/generic/policy_dispatcher.go CollectParams).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createNamespaceObject, prepareNamespaceForCreate } from "../../../src/kube/namespace.ts";
import { KindScopes } from "../../../src/kube/scope.ts";
import { storedObject } from "../../../src/kube/stored.ts";

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "limits.rules.example.com" },
  spec: {
    group: "rules.example.com",
    scope: "Cluster",
    names: { kind: "Limit", plural: "limits" },
    versions: [{ name: "v1", served: true, storage: true }],
  },
};

test("scopes: the built-in table for built-in groups, a CRD's spec.scope, else namespaced and marked assumed", () => {
  const scopes = KindScopes.from([CRD]);
  assert.deepEqual(scopes.of("v1", "ConfigMap"), { scope: "Namespaced", source: "built-in" });
  assert.deepEqual(scopes.of("v1", "Namespace"), { scope: "Cluster", source: "built-in" });
  assert.deepEqual(scopes.of("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy"), {
    scope: "Cluster",
    source: "built-in",
  });
  assert.deepEqual(scopes.of("rules.example.com/v1", "Limit"), { scope: "Cluster", source: "crd" });
  // Any version of the CRD's group: the scope is the kind's, not the version's.
  assert.deepEqual(scopes.of("rules.example.com/v2", "Limit"), { scope: "Cluster", source: "crd" });
  assert.deepEqual(scopes.of("rules.example.com/v1", "Other"), { scope: "Namespaced", source: "assumed" });
  // A custom kind named like a built-in one is not taken for it.
  assert.deepEqual(KindScopes.BUILT_IN.of("example.com/v1", "Node"), {
    scope: "Namespaced",
    source: "assumed",
  });
});

test("stored: a namespaced object that names no namespace is in default, a cluster-scoped one loses its own", () => {
  const cm = storedObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, "Namespaced");
  assert.deepEqual(cm.metadata, { name: "c", namespace: "default" });
  const limit = storedObject(
    { apiVersion: "rules.example.com/v1", kind: "Limit", metadata: { name: "l", namespace: "x" } },
    "Cluster",
  );
  assert.deepEqual(limit.metadata, { name: "l" });
});

test("stored: a Namespace created from a manifest has its name label, status Active and the kubernetes finalizer", () => {
  const given = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "team-a", labels: { env: "prod" } },
  };
  const ns = storedObject(given, "Cluster");
  assert.deepEqual(ns, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "team-a", labels: { env: "prod", "kubernetes.io/metadata.name": "team-a" } },
    status: { phase: "Active" },
    spec: { finalizers: ["kubernetes"] },
  });
  assert.deepEqual(given.metadata.labels, { env: "prod" }, "the given object is left as it is");
  // Read back from a cluster (it has a status): its finalizers and status are kept.
  const terminating = storedObject(
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "old" },
      spec: {},
      status: { phase: "Terminating" },
    },
    "Cluster",
  );
  assert.deepEqual(terminating.status, { phase: "Terminating" });
  assert.deepEqual(terminating.spec, {});
  // As written (--no-defaults): no defaults, no strategy.
  assert.deepEqual(storedObject(given, "Cluster", { defaults: false }).metadata, given.metadata);
});

test("PrepareForCreate appends the kubernetes finalizer after the given ones, once", () => {
  const ns: Record<string, unknown> = { spec: { finalizers: ["example.com/x"] } };
  prepareNamespaceForCreate(ns);
  assert.deepEqual(ns, {
    spec: { finalizers: ["example.com/x", "kubernetes"] },
    status: { phase: "Active" },
  });
  prepareNamespaceForCreate(ns);
  assert.deepEqual((ns.spec as { finalizers: string[] }).finalizers, ["example.com/x", "kubernetes"]);
});

test("CreateNamespaceObject: spec, status and twelve metadata fields; no managedFields, ownerReferences, selfLink or TypeMeta", () => {
  const stored = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: "team-a",
      generateName: "team-",
      uid: "3c0c3b5e-0000-4000-8000-000000000001",
      resourceVersion: "42",
      generation: 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
      deletionTimestamp: "2026-02-01T00:00:00Z",
      deletionGracePeriodSeconds: 0,
      labels: { "kubernetes.io/metadata.name": "team-a" },
      annotations: { owner: "alice" },
      finalizers: ["example.com/f"],
      ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o", uid: "u" }],
      managedFields: [{ manager: "kubectl", operation: "Apply" }],
      selfLink: "/api/v1/namespaces/team-a",
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
  assert.deepEqual(createNamespaceObject(stored), {
    metadata: {
      name: "team-a",
      generateName: "team-",
      uid: "3c0c3b5e-0000-4000-8000-000000000001",
      resourceVersion: "42",
      generation: 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
      deletionTimestamp: "2026-02-01T00:00:00Z",
      deletionGracePeriodSeconds: 0,
      labels: { "kubernetes.io/metadata.name": "team-a" },
      annotations: { owner: "alice" },
      finalizers: ["example.com/f"],
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  });
});
