import assert from "node:assert/strict";
import { test } from "node:test";
import {
  expectedObjectNamespace,
  isClusterScopedKind,
  isNamespaceKind,
  resourceForKind,
  splitApiVersion,
} from "../../../src/kube/kinds.ts";

test("resource names: lower-case English plurals of the kind", () => {
  const cases: [string, string][] = [
    ["Pod", "pods"],
    ["Deployment", "deployments"],
    ["Ingress", "ingresses"],
    ["IngressClass", "ingressclasses"],
    ["NetworkPolicy", "networkpolicies"],
    ["Endpoints", "endpoints"],
    ["EndpointSlice", "endpointslices"],
    ["ComponentStatus", "componentstatuses"],
    ["Gateway", "gateways"],
    ["Mesh", "meshes"],
    ["Box", "boxes"],
    ["ConfigMap", "configmaps"],
  ];
  for (const [kind, resource] of cases) assert.equal(resourceForKind(kind), resource, kind);
});

test("apiVersion: group and version; the core group is empty", () => {
  assert.deepEqual(splitApiVersion("apps/v1"), { group: "apps", version: "v1" });
  assert.deepEqual(splitApiVersion("v1"), { group: "", version: "v1" });
  assert.deepEqual(splitApiVersion("networking.k8s.io/v1"), { group: "networking.k8s.io", version: "v1" });
});

test("cluster-scoped kinds: every +genclient:nonNamespaced type of k8s.io/api 1.36, CRDs and APIServices", () => {
  // From k8s.io/api at kubernetes-1.36.3: the types marked +genclient:nonNamespaced.
  const k8sApi = [
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterTrustBundle",
    "ComponentStatus",
    "CSIDriver",
    "CSINode",
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
  ];
  for (const kind of [...k8sApi, "CustomResourceDefinition", "APIService"])
    assert.equal(isClusterScopedKind(kind), true, kind);
  for (const kind of [
    "Pod",
    "Deployment",
    "Role",
    "RoleBinding",
    "Lease",
    "LocalSubjectAccessReview",
    "ResourceClaim",
    "Widget",
  ])
    assert.equal(isClusterScopedKind(kind), false, kind);
});

test("isNamespaceKind: core/v1 Namespace only", () => {
  assert.equal(isNamespaceKind({ apiVersion: "v1", kind: "Namespace" }), true);
  assert.equal(isNamespaceKind({ apiVersion: "example.com/v1", kind: "Namespace" }), false);
});

test("rest.ExpectedNamespaceForResource (apiserver registry/rest/meta.go): namespaces carry none, others the request's", () => {
  assert.equal(expectedObjectNamespace("team-a", { group: "", resource: "namespaces" }), "");
  assert.equal(expectedObjectNamespace("team-a", { group: "", resource: "pods" }), "team-a");
  assert.equal(expectedObjectNamespace("team-a", { group: "example.com", resource: "namespaces" }), "team-a");
  assert.equal(
    expectedObjectNamespace("", { group: "rbac.authorization.k8s.io", resource: "clusterroles" }),
    "",
  );
});
