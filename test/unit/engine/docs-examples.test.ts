/**
 * The examples of the Kubernetes documentation pages "Validating Admission Policy" and "Mutating
 * Admission Policy", as YAML fixtures (test/fixtures/engine/), with the outcomes the pages describe.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fastJsonPatch from "fast-json-patch";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { withDefaults } from "../../../src/kube/defaults/index.ts";
import {
  compileText,
  deploymentRequest,
  engineFixture,
  mutateText,
  podObject,
  podRequest,
  validateText,
} from "../../helpers/engine.ts";

const deployment = (
  name: string,
  namespace: string,
  spec: Record<string, unknown>,
  labels: Record<string, string> = {},
  overrides: Partial<AdmissionRequest> = {},
): AdmissionRequest =>
  podRequest(
    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace, labels }, spec },
    {
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      resource: { group: "apps", version: "v1", resource: "deployments" },
      name,
      namespace,
      ...overrides,
    },
  );

// ---- ValidatingAdmissionPolicy ---------------------------------------------------------------------

test("docs: the replicas ≤ 5 demo policy denies 6 replicas in a test namespace with the documented message", () => {
  const text = engineFixture("vap-demo-replicas.yaml");
  const d = validateText(text, deploymentRequest(6));
  assert.equal(d.allowed, false);
  assert.deepEqual(d.status, {
    code: 422,
    reason: "Invalid",
    message:
      "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5",
  });
  assert.equal(validateText(text, deploymentRequest(5)).allowed, true);
  // The binding selects namespaces labelled environment=test only.
  const prod = validateText(text, deploymentRequest(6, { namespace: "prod" }));
  assert.equal(prod.allowed, true);
  assert.equal(prod.results[0]?.outcome, "skip");
});

const replicaLimitCases: { namespace: string; replicas: number; denied?: string }[] = [
  {
    namespace: "test-ns",
    replicas: 4,
    denied:
      "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: failed expression: object.spec.replicas <= params.maxReplicas",
  },
  { namespace: "test-ns", replicas: 3 },
  { namespace: "prod-ns", replicas: 100 },
  {
    namespace: "prod-ns",
    replicas: 101,
    denied:
      "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-nontest' denied request: failed expression: object.spec.replicas <= params.maxReplicas",
  },
];

for (const c of replicaLimitCases) {
  test(`docs: ReplicaLimit params, ${c.replicas} replicas in ${c.namespace} → ${c.denied ? "denied" : "admitted"}`, () => {
    const d = validateText(
      engineFixture("vap-replicalimit-params.yaml"),
      deployment("web", c.namespace, { replicas: c.replicas }),
    );
    assert.equal(d.allowed, c.denied === undefined);
    if (c.denied) assert.deepEqual(d.status, { code: 422, reason: "Invalid", message: c.denied });
    // Each namespace is selected by exactly one of the two bindings, which reads its own params.
    const evaluated = d.results.filter((r) => r.outcome !== "skip");
    assert.deepEqual(
      evaluated.map((r) => [r.binding, r.param]),
      [
        c.namespace === "test-ns"
          ? ["replicalimit-binding-test.example.com", "default/replica-limit-test.example.com"]
          : ["replicalimit-binding-nontest", "default/replica-limit-prod.example.com"],
      ],
    );
  });
}

test("docs: messageExpression gives the documented denial for 5 replicas over a limit of 3", () => {
  const d = validateText(engineFixture("vap-message-expression.yaml"), deploymentRequest(5));
  assert.equal(
    d.status?.message,
    "ValidatingAdmissionPolicy 'deploy-replica-policy.example.com' with binding 'demo-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3",
  );
});

/**
 * The documented audit annotation `cond ? 'Deployment spec.replicas set to ' + ... : null` does not
 * type-check in cel-go, so the API server refuses the policy: `_?_:_` takes (bool, A, A), and null is
 * assignable only to nullable types, which string is not (cel-go v0.26 checker/types.go
 * internalIsAssignable, isLegacyNullable). celgate reports it as kubectl would.
 */
test("docs: the high-replica-count audit annotation does not compile (cel-go: string is not nullable)", () => {
  const set = compileText(engineFixture("vap-audit-annotations.yaml"));
  const [d] = set.diagnostics;
  assert.equal(set.diagnostics.length, 1);
  assert.equal(d?.path, "spec.auditAnnotations[0].valueExpression");
  assert.equal(d?.code, "PE_CEL_UNKNOWN_FUNCTION");
  assert.equal(d?.message, "found no matching overload for '_?_:_' applied to '(bool, string, null)'");
  // The caret is at the `?` (cel-go parser.go VisitExpr places the conditional there).
  assert.match(d?.detail ?? "", /^ERROR: <input>:1:27: /);
});

test("docs: the high-replica-count audit annotation, with '' for null (omitted alike), is set above 50 replicas only", () => {
  const text = engineFixture("vap-audit-annotations.yaml").replace(") : null", ") : ''");
  const high = validateText(text, deploymentRequest(128));
  assert.equal(high.allowed, true);
  assert.deepEqual(high.auditAnnotations, {
    "demo-policy.example.com/high-replica-count": "Deployment spec.replicas set to 128",
  });
  const low = validateText(text, deploymentRequest(50));
  assert.equal(low.allowed, true);
  assert.deepEqual(low.auditAnnotations, {});
  const tooMany = validateText(text, deploymentRequest(129));
  assert.equal(tooMany.allowed, false);
  assert.equal(
    tooMany.status?.message,
    "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding.example.com' denied request: failed expression: object.spec.replicas <= 128",
  );
});

const matchConditionCases: { name: string; request: AdmissionRequest; denied: boolean }[] = [
  {
    name: "a deployment over 100 replicas",
    request: deployment("web", "default", { replicas: 101 }),
    denied: true,
  },
  { name: "in kube-system", request: deployment("web", "kube-system", { replicas: 101 }), denied: false },
  {
    name: "a canary on CREATE",
    request: deployment("web-canary", "default", { replicas: 101 }),
    denied: false,
  },
  {
    name: "a canary on UPDATE",
    request: deployment(
      "web-canary",
      "default",
      { replicas: 101 },
      {},
      {
        operation: "UPDATE",
        oldObject: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web-canary" }, spec: {} },
      },
    ),
    denied: true,
  },
];

for (const c of matchConditionCases) {
  test(`docs: matchConditions (kube-system, canary): ${c.name} → ${c.denied ? "denied" : "admitted"}`, () => {
    const d = validateText(engineFixture("vap-match-conditions.yaml"), c.request);
    const mine = d.results.find((r) => r.policy === "demo-policy.example.com");
    assert.equal(mine?.outcome, c.denied ? "fail" : "skip");
  });
}

const leaseCases: { name: string; request: AdmissionRequest; outcome: "fail" | "pass" | "skip" }[] = [
  { name: "a ConfigMap not named demo*", request: configMap("settings"), outcome: "fail" },
  { name: "a ConfigMap named demo*", request: configMap("demo-settings"), outcome: "pass" },
  {
    name: "a Lease",
    request: podRequest(
      { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "node-1" } },
      {
        kind: { group: "coordination.k8s.io", version: "v1", kind: "Lease" },
        resource: { group: "coordination.k8s.io", version: "v1", resource: "leases" },
        name: "node-1",
      },
    ),
    outcome: "skip",
  },
  {
    name: "a request from a node",
    request: configMap("settings", { userInfo: { username: "system:node:n1", groups: ["system:nodes"] } }),
    outcome: "skip",
  },
  {
    name: "an RBAC Role",
    request: podRequest(
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "reader" } },
      {
        kind: { group: "rbac.authorization.k8s.io", version: "v1", kind: "Role" },
        resource: { group: "rbac.authorization.k8s.io", version: "v1", resource: "roles" },
        name: "reader",
      },
    ),
    outcome: "skip",
  },
];

function configMap(name: string, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return podRequest(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: {} },
    {
      kind: { group: "", version: "v1", kind: "ConfigMap" },
      resource: { group: "", version: "v1", resource: "configmaps" },
      name,
      ...overrides,
    },
  );
}

for (const c of leaseCases) {
  test(`docs: matchConditions (leases, nodes, rbac): ${c.name} → ${c.outcome}`, () => {
    const d = validateText(engineFixture("vap-match-conditions.yaml"), c.request);
    const mine = d.results.find((r) => r.policy === "name-prefix.example.com");
    assert.equal(mine?.outcome, c.outcome);
    if (c.outcome === "fail")
      assert.equal(
        d.status?.message,
        "ValidatingAdmissionPolicy 'name-prefix.example.com' with binding 'name-prefix-binding.example.com' denied request: failed expression: object.metadata.name.startsWith('demo')",
      );
  });
}

test("docs: variables.foo — the label 'foo' must be 'bar', defaulting to 'default'", () => {
  const text = engineFixture("vap-variables.yaml");
  const withLabel = (labels: Record<string, string>) =>
    podRequest(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "default", labels } },
      {
        kind: { group: "", version: "v1", kind: "ConfigMap" },
        resource: { group: "", version: "v1", resource: "configmaps" },
      },
    );
  assert.equal(validateText(text, withLabel({ foo: "bar" })).allowed, true);
  assert.equal(
    validateText(text, withLabel({ foo: "baz" })).status?.message,
    "ValidatingAdmissionPolicy 'foo-label.example.com' with binding 'foo-label-binding' denied request: failed expression: variables.foo == 'bar'",
  );
  assert.equal(validateText(text, withLabel({})).allowed, false);
});

const imageCases: {
  name: string;
  namespace: string;
  images: string[];
  labels?: Record<string, string>;
  message?: string;
}[] = [
  { name: "staging images in staging", namespace: "staging", images: ["staging.example.com/app:1"] },
  {
    name: "prod image in staging",
    namespace: "staging",
    images: ["staging.example.com/a:1", "prod.example.com/b:1"],
    message: "only staging images are allowed in namespace staging",
  },
  { name: "images outside example.com are not checked", namespace: "staging", images: ["docker.io/nginx:1"] },
  {
    name: "exempt deployments",
    namespace: "staging",
    images: ["prod.example.com/b:1"],
    labels: { exempt: "true" },
  },
  {
    name: "a namespace without environment label counts as prod",
    namespace: "unlabelled",
    images: ["staging.example.com/a:1"],
    message: "only prod images are allowed in namespace unlabelled",
  },
  {
    name: "prod images in an unlabelled namespace",
    namespace: "unlabelled",
    images: ["prod.example.com/a:1"],
  },
];

for (const c of imageCases) {
  test(`docs: image-matches-namespace-environment: ${c.name}`, () => {
    const request = deployment(
      "web",
      c.namespace,
      { template: { spec: { containers: c.images.map((image, i) => ({ name: `c${i}`, image })) } } },
      c.labels ?? {},
    );
    const d = validateText(engineFixture("vap-variables.yaml"), request);
    assert.equal(d.allowed, c.message === undefined);
    if (c.message)
      assert.equal(
        d.status?.message,
        `ValidatingAdmissionPolicy 'image-matches-namespace-environment.policy.example.com' with binding 'image-matches-namespace-environment-binding' denied request: ${c.message}`,
      );
  });
}

// ---- MutatingAdmissionPolicy -----------------------------------------------------------------------

const SIDECAR_APPLY = {
  name: "mesh-proxy",
  image: "mesh/proxy:v1.0.0",
  args: ["proxy", "sidecar"],
  restartPolicy: "Always",
};

/** The fixture without its paramKind: what the examples do once params are not looked for. */
const withoutParamKind = (text: string) =>
  text.replace(/\n {2}paramKind:\n {4}kind: Sidecar\n {4}apiVersion: mutations\.example\.com\/v1/, "");

/**
 * The pod as the API server sends it, and as it comes out: defaulted, the sidecar included, since the
 * API server defaults the object again after each mutation (mutating/dispatcher.go dispatchOne).
 */
function sidecarCheck(text: string, sidecar: Record<string, unknown>): void {
  const request = podRequest(
    withDefaults(podObject({ initContainers: [], containers: [{ name: "app", image: "app:1" }] })).object,
  );
  const d = mutateText(text, request, { defaults: true });
  assert.equal(d.allowed, true, JSON.stringify(d.status));
  const want = withDefaults(
    podObject({ initContainers: [sidecar], containers: [{ name: "app", image: "app:1" }] }),
  ).object;
  const added = (want.spec as { initContainers: Record<string, unknown>[] }).initContainers[0];
  // The sidecar's image has a tag (IfNotPresent) or none (Always), as the defaults decide.
  assert.equal(added?.imagePullPolicy, String(sidecar.image).includes(":") ? "IfNotPresent" : "Always");
  assert.equal(added?.terminationMessagePolicy, "File");
  assert.deepEqual(d.patchedObject, want);
  const doc = structuredClone(request.object);
  assert.deepEqual(
    fastJsonPatch.applyPatch(doc, (d.patch ?? []) as fastJsonPatch.Operation[], true, false).newDocument,
    want,
  );
  // A pod that has the sidecar already is left alone (the matchCondition makes it idempotent).
  const again = mutateText(text, podRequest(want), { defaults: true });
  assert.equal(again.patch, undefined);
  assert.equal(again.results[0]?.outcome, "skip");
}

/**
 * The documented ApplyConfiguration sets `args`, an atomic list (`+listType=atomic` on
 * Container.Args), so the API server refuses it: smd.go validatePatch ("apply configuration with
 * change to atomic" in smd_test.go), confirmed on a 1.35 cluster in kyverno/kyverno#15094. With
 * failurePolicy Fail the Pod is denied.
 */
function sidecarApplyRefused(text: string): void {
  const d = mutateText(
    text,
    podRequest(podObject({ initContainers: [], containers: [{ name: "app", image: "app:1" }] })),
  );
  assert.deepEqual(d.status, {
    code: 403,
    reason: "Invalid",
    message:
      "policy 'sidecar-policy.example.com' with binding 'sidecar-policy.example.com' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.initContainers[0].args",
  });
  assert.equal(d.patch, undefined);
}

test("docs: sidecar injection with ApplyConfiguration (paramKind removed) is refused: args is atomic", () => {
  sidecarApplyRefused(withoutParamKind(engineFixture("map-sidecar-apply.yaml")));
});

test("docs: the same sidecar without args is merged into initContainers by name", () => {
  const { args: _, ...noArgs } = SIDECAR_APPLY;
  sidecarCheck(
    withoutParamKind(engineFixture("map-sidecar-apply.yaml")).replace('args: ["proxy", "sidecar"],', ""),
    noArgs,
  );
});

test("docs: sidecar injection with JSONPatch (paramKind removed)", () => {
  sidecarCheck(withoutParamKind(engineFixture("map-sidecar-jsonpatch.yaml")), {
    name: "mesh-proxy",
    image: "mesh-proxy/v1.0.0",
    restartPolicy: "Always",
  });
});

test("docs: sidecar injection with ApplyConfiguration, exactly as documented (paramKind, binding without paramRef), is refused", {}, () => {
  sidecarApplyRefused(engineFixture("map-sidecar-apply.yaml"));
});

test("docs: sidecar injection with JSONPatch, exactly as documented (paramKind, binding without paramRef)", {}, () => {
  sidecarCheck(engineFixture("map-sidecar-jsonpatch.yaml"), {
    name: "mesh-proxy",
    image: "mesh-proxy/v1.0.0",
    restartPolicy: "Always",
  });
});
