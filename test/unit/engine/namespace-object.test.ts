/**
 * `namespaceObject` and the namespace of a request, as the API server builds them:
 * - kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go and
 *   mutating/dispatcher.go: the Namespace named by the request's namespace, null for a cluster-scoped
 *   resource and, the "special case", null for a request on a core v1 Namespace itself;
 * - plugin/cel/condition.go CreateNamespaceObject: only spec, status and some metadata;
 * - endpoints/handlers/create.go: a Namespace's CREATE carries its own name as the namespace, as its
 *   other requests do (their URL names it), which the webhook codec passes through as sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeAdmissionReview } from "../../../src/adapters/admission/codec.ts";
import { compilePolicySet } from "../../../src/compile/policy.ts";
import { admit } from "../../../src/engine/admit.ts";
import { contextFromResources } from "../../../src/engine/context.ts";
import { decide } from "../../../src/engine/decision.ts";
import { prepare } from "../../../src/engine/prepare.ts";
import { buildRequest, resourceRef } from "../../../src/engine/request.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { FAR, namespaceDoc, podObject, podRequest, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

/** A policy on pods, namespaces and nodes that denies when `namespaceObject` is null. */
function showing(...extra: Doc[]): string {
  return yamlDocs(
    vap("show", {
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            operations: ["*"],
            resources: ["pods", "namespaces", "nodes"],
          },
        ],
      },
      validations: [{ expression: "namespaceObject != null", message: "null" }],
    }),
    vapBinding("b", "show"),
    ...extra,
  );
}

/**
 * The request's namespace and its `namespaceObject` as JSON ("null"), as the engine binds it; the
 * policy agrees that it is null when it is.
 */
function seen(text: string, request: AdmissionRequest, namespaceObject?: Doc): string {
  const { set } = parsePolicyText(text, "t.yaml");
  const compiled = compilePolicySet(set);
  const ctx = contextFromResources(compiled.resources, {
    assumeNamespaces: true,
    ...(namespaceObject ? { namespaceObject } : {}),
  });
  const value = prepare(request, ctx).allValues().namespaceObject;
  const d = decide(admit(compiled, request, ctx, { deadline: FAR(), phase: "validate" }));
  assert.equal(d.allowed, value !== null, "the policy sees what prepare binds");
  return `${request.namespace} ${JSON.stringify(value)}`;
}

test("a Pod's namespaceObject: the stored Namespace as CreateNamespaceObject builds it", () => {
  const ns = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: "team-a",
      labels: { env: "prod" },
      ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o", uid: "u" }],
      managedFields: [{ manager: "kubectl" }],
    },
  };
  const got = seen(showing(ns), podRequest(podObject(), { namespace: "team-a" }));
  // No apiVersion, kind, ownerReferences or managedFields; the name label, status and finalizer of a
  // Namespace the API server created from this manifest.
  assert.equal(
    got,
    'team-a {"metadata":{"name":"team-a","labels":{"env":"prod","kubernetes.io/metadata.name":"team-a"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}',
  );
});

test("a namespace no file defines exists, as created with nothing but its name", () => {
  assert.equal(
    seen(showing(), podRequest(podObject(), { namespace: "elsewhere" })),
    'elsewhere {"metadata":{"name":"elsewhere","labels":{"kubernetes.io/metadata.name":"elsewhere"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}',
  );
});

test("a cluster-scoped resource has no namespace and a null namespaceObject", () => {
  const node = { apiVersion: "v1", kind: "Node", metadata: { name: "n1" } };
  const request = podRequest(node, {
    kind: { group: "", version: "v1", kind: "Node" },
    resource: { group: "", version: "v1", resource: "nodes" },
    namespace: "",
    name: "n1",
  });
  assert.equal(seen(showing(), request), " null");
});

/** The review the API server sends a webhook for `operation` on Namespace `team-a`. */
function namespaceReview(operation: "CREATE" | "UPDATE" | "DELETE"): AdmissionRequest {
  const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a", labels: { env: "prod" } } };
  const decoded = decodeAdmissionReview({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "1",
      kind: { group: "", version: "v1", kind: "Namespace" },
      resource: { group: "", version: "v1", resource: "namespaces" },
      requestKind: { group: "", version: "v1", kind: "Namespace" },
      requestResource: { group: "", version: "v1", resource: "namespaces" },
      name: "team-a",
      namespace: "team-a",
      operation,
      userInfo: { username: "admin" },
      object: operation === "DELETE" ? null : ns,
      oldObject: operation === "CREATE" ? null : ns,
    },
  });
  assert.ok(decoded.ok);
  return decoded.value.request;
}

test("a request on a Namespace: the codec passes its namespace through, and namespaceObject is null (the dispatchers' special case)", () => {
  for (const operation of ["CREATE", "UPDATE", "DELETE"] as const) {
    const request = namespaceReview(operation);
    assert.equal(request.namespace, "team-a", operation);
    // Even when the Namespace is known: the dispatcher does not look it up for a Namespace request.
    assert.equal(seen(showing(namespaceDoc("team-a")), request), "team-a null", operation);
  }
});

test("offline, a Namespace's requests name it too, CREATE included (create.go), and see a null namespaceObject", () => {
  const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } };
  const ref = resourceRef(ns, "ns");
  assert.ok(ref.ok);
  for (const operation of ["CREATE", "UPDATE", "DELETE"] as const) {
    const built = buildRequest(ref.value, {
      operation,
      object: ns,
      ...(operation === "UPDATE" ? { oldObject: ns } : {}),
      userInfo: { username: "admin", groups: [] },
      uid: "u",
    });
    assert.ok(built.ok);
    const request = built.value.request;
    assert.equal(request.namespace, "team-a", operation);
    // The object itself carries no namespace (rest.ExpectedNamespaceForResource).
    const object = (operation === "DELETE" ? request.oldObject : request.object) as Doc;
    assert.equal((object.metadata as Doc).namespace, undefined, operation);
    assert.equal(seen(showing(), request), "team-a null", operation);
  }
});

test("the Namespace given on its own (--namespace-object, a case's namespaceObject) wins over the files' and is stored too", () => {
  const got = seen(
    showing(namespaceDoc("team-a", { from: "file" })),
    podRequest(podObject(), { namespace: "team-a" }),
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a", labels: { from: "flag" } } },
  );
  assert.match(got, /"labels":\{"from":"flag","kubernetes.io\/metadata.name":"team-a"\}/);
});

test("a namespaceSelector on kubernetes.io/metadata.name selects a Namespace file written without the label", () => {
  const text = yamlDocs(
    vap("p", { validations: [{ expression: "false", message: "selected" }] }),
    vapBinding("b", "p", {
      matchResources: {
        namespaceSelector: {
          matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a"] }],
        },
      },
    }),
    namespaceDoc("team-a"),
  );
  const { set } = parsePolicyText(text, "t.yaml");
  const compiled = compilePolicySet(set);
  // Strict lookups (no assumed namespaces): the label can only come from storing the file's Namespace.
  const ctx = contextFromResources(compiled.resources);
  const d = decide(
    admit(compiled, podRequest(podObject(), { namespace: "team-a" }), ctx, { deadline: FAR() }),
  );
  assert.equal(d.allowed, false);
});
