/**
 * `kubernetesVersion`: a policy or binding in an API version the release does not serve is a
 * problem (cel/env/releases.ts; kube_features.go MutatingAdmissionPolicy, the admissionregistration
 * prerelease lifecycle).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type CompiledPolicySet, compilePolicySet } from "../../../src/compile/policy.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { contextFromSet } from "../../../src/engine/context.ts";
import { decide } from "../../../src/engine/decision.ts";
import { validate } from "../../../src/engine/validating.ts";
import { map, mapBinding, podObject, podRequest, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

const MUTATION = {
  mutations: [
    {
      patchType: "JSONPatch",
      jsonPatch: { expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {}}]" },
    },
  ],
};

function at(version: string, docs: Doc[], kubernetesVersion?: string): CompiledPolicySet {
  const text = yamlDocs(
    ...docs.map((d) => ({ ...d, apiVersion: `admissionregistration.k8s.io/${version}` })),
  );
  const { set, diagnostics } = parsePolicyText(text, "policies.yaml");
  assert.deepEqual(diagnostics, []);
  return compilePolicySet(set, kubernetesVersion === undefined ? {} : { kubernetesVersion });
}

const rows = (set: CompiledPolicySet) =>
  set.diagnostics.map((d) => [d.object?.kind, d.severity, d.path, d.message, d.location?.line]);

void test("kube_features.go: MutatingAdmissionPolicy v1beta1 arrives in 1.34, so 1.33 refuses the policy and its binding", () => {
  const set = at("v1beta1", [map("m", MUTATION), mapBinding("mb", "m")], "1.33");
  assert.deepEqual(rows(set), [
    [
      "MutatingAdmissionPolicy",
      "error",
      "apiVersion",
      "Kubernetes 1.33 does not serve MutatingAdmissionPolicy v1beta1 (from 1.34); it serves v1alpha1",
      1,
    ],
    [
      "MutatingAdmissionPolicyBinding",
      "error",
      "apiVersion",
      "Kubernetes 1.33 does not serve MutatingAdmissionPolicyBinding v1beta1 (from 1.34); it serves v1alpha1",
      22,
    ],
  ]);
  assert.equal(set.policies[0]?.diagnostics.length, 1, "the policy's own problem is on the policy");
});

void test("kube_features.go: before 1.32 there is no MutatingAdmissionPolicy at all", () => {
  const set = at("v1alpha1", [map("m", MUTATION)], "1.31");
  assert.deepEqual(
    rows(set)[0]?.[3],
    "Kubernetes 1.31 does not serve MutatingAdmissionPolicy v1alpha1 (from 1.32)",
  );
});

void test("a version behind the feature gate is a warning that says how to turn it on; GA v1 in 1.36 is not", () => {
  const beta = at("v1beta1", [map("m", MUTATION)], "1.35");
  assert.deepEqual(
    rows(beta).map((r) => [r[1], r[3]]),
    [
      [
        "warning",
        "Kubernetes 1.35 serves MutatingAdmissionPolicy v1beta1 only with the MutatingAdmissionPolicy feature gate and --runtime-config=admissionregistration.k8s.io/v1beta1=true",
      ],
    ],
  );
  assert.deepEqual(rows(at("v1", [map("m", MUTATION), mapBinding("mb", "m")], "1.36")), []);
  assert.equal(rows(at("v1", [map("m", MUTATION)], "1.35"))[0]?.[1], "error");
});

void test("admissionregistration/v1alpha1 prerelease lifecycle: ValidatingAdmissionPolicy v1alpha1 is not served from 1.32", () => {
  const policy = vap("p", { validations: [{ expression: "true" }] });
  assert.equal(rows(at("v1alpha1", [policy], "1.31"))[0]?.[1], "warning");
  assert.deepEqual(rows(at("v1alpha1", [policy], "1.32"))[0]?.slice(1, 4), [
    "error",
    "apiVersion",
    "Kubernetes 1.32 does not serve ValidatingAdmissionPolicy v1alpha1 (until 1.31); it serves v1, v1beta1",
  ]);
  assert.deepEqual(rows(at("v1", [policy, vapBinding("b", "p")], "1.30")), []);
});

void test("admissionregistration/v1beta1 prerelease lifecycle: ValidatingAdmissionPolicy v1beta1 and its binding are not served from 1.34", () => {
  // APILifecycleRemoved 1.34 in k8s.io/api admissionregistration/v1beta1/zz_generated.prerelease-lifecycle.go;
  // the real kube-apiserver 1.37.2 serves only the mutating kinds in v1beta1 (test/kube/acceptance.test.ts).
  const docs = [vap("p", { validations: [{ expression: "true" }] }), vapBinding("b", "p")];
  assert.deepEqual(
    rows(at("v1beta1", docs, "1.33")).map((r) => r[1]),
    ["warning", "warning"],
  );
  assert.deepEqual(
    rows(at("v1beta1", docs, "1.34")).map((r) => r.slice(1, 4)),
    [
      [
        "error",
        "apiVersion",
        "Kubernetes 1.34 does not serve ValidatingAdmissionPolicy v1beta1 (until 1.33); it serves v1",
      ],
      [
        "error",
        "apiVersion",
        "Kubernetes 1.34 does not serve ValidatingAdmissionPolicyBinding v1beta1 (until 1.33); it serves v1",
      ],
    ],
  );
});

void test("without kubernetesVersion every API version celgate reads is accepted, as before", () => {
  assert.deepEqual(rows(at("v1alpha1", [map("m", MUTATION), mapBinding("mb", "m")])), []);
});

void test("a release outside the modelled range is reported, not thrown", () => {
  const set = at("v1", [vap("p", { validations: [{ expression: "true" }] })], "1.12");
  assert.match(String(rows(set)[0]?.[3]), /Kubernetes 1\.12 is not modelled; celgate models 1\.30 to 1\.38/);
});

// cel-go ext/strings.go before v0.22 (Kubernetes before 1.32): indexOf past the end is an error.
// A policy compiled for a release runs with that release's run time, not only its checker.
test("a policy compiled for 1.31 runs indexOf past the end as 1.31 does; for 1.32 it gives -1", () => {
  const text = yamlDocs(
    vap("p", { failurePolicy: "Fail", validations: [{ expression: "'abc'.indexOf('c', 3) == -1" }] }),
    vapBinding("b", "p"),
  );
  const decisionAt = (kubernetesVersion: string) => {
    const set = compilePolicySet(parsePolicyText(text, "p.yaml").set, { kubernetesVersion });
    return decide(
      validate(set, podRequest(podObject()), contextFromSet(set), { deadline: performance.now() + 10_000 }),
    );
  };
  const old = decisionAt("1.31");
  assert.equal(old.allowed, false);
  assert.match(old.status?.message ?? "", /index out of range: 3/);
  assert.equal(decisionAt("1.32").allowed, true);
});

// KEP-5793: pkg/apis/admissionregistration/validation/static_suffix.go; each admissionregistration
// strategy's Validate calls ValidateStaticSuffix when ManifestBasedAdmissionControlConfig is on (beta,
// on by default, from 1.37; pkg/features/kube_features.go), and WarningsOnCreate warns while it is
// off (alpha in 1.36). The API server at v1.37.2 refused the website's static-manifest examples.
void test("names ending in .static.k8s.io: refused from 1.37, a warning at 1.36, nothing before or without a release", () => {
  const docs = [
    vap("p.static.k8s.io", { validations: [{ expression: "true" }] }),
    vapBinding("b.static.k8s.io", "p.static.k8s.io"),
  ];
  const text =
    'names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API';
  assert.deepEqual(rows(at("v1", docs, "1.37")), [
    ["ValidatingAdmissionPolicy", "error", "metadata.name", text, 4],
    ["ValidatingAdmissionPolicyBinding", "error", "metadata.name", text, 23],
  ]);
  assert.deepEqual(
    rows(at("v1", docs, "1.36")).map((r) => r[1]),
    ["warning", "warning"],
  );
  assert.deepEqual(rows(at("v1", docs, "1.35")), []);
  assert.deepEqual(rows(at("v1", docs)), []);
});
