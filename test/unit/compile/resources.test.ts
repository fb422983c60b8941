/**
 * Rules that can never match (src/compile/resources.ts): the API server accepts a resourceRule of
 * any well-formed name (pkg/apis/admissionregistration/validation/validation.go validateRule checks
 * only its form), and the policy or binding then applies to nothing. check warns, with a
 * did-you-mean, against the built-in API and the loaded CRDs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePolicySet } from "../../../src/compile/policy.ts";
import { checkReferences, parsePolicyText } from "../../../src/policy/parse.ts";
import { vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";
import { cli, removeTree, tempTree } from "../cli/fake-io.ts";

const rule = (apiGroups: string[], resources: string[]) => ({
  apiGroups,
  apiVersions: ["*"],
  operations: ["CREATE"],
  resources,
});

function warnings(...docs: Record<string, unknown>[]) {
  const { set, diagnostics } = parsePolicyText(yamlDocs(...docs), "p.yaml");
  assert.deepEqual(diagnostics, []);
  return compilePolicySet(set)
    .diagnostics.filter((d) => d.code === "PE_UNKNOWN_RESOURCE")
    .map((d) => [d.severity, d.object?.kind, d.path, d.message]);
}

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { kind: "Widget", plural: "widgets" },
    versions: [{ name: "v1", served: true, storage: true }],
  },
};

test("a resource its group does not serve: a warning at the name, with the likely one", () => {
  const policy = vap("p", {
    validations: [{ expression: "true" }],
    matchConstraints: {
      resourceRules: [
        rule(["apps"], ["deployment", "Deployment", "deployments", "deployments/scale"]),
        rule([""], ["deployments", "pods", "pods/exec", "podz"]),
        rule(["example.com"], ["widget", "widgets"]),
        // Not judged: wildcards, and a group nothing loaded defines.
        rule(["*"], ["nosuch"]),
        rule(["other.example.com"], ["gadgets"]),
      ],
    },
  });
  const never = "so the rule never matches";
  assert.deepEqual(warnings(policy, CRD), [
    [
      "warning",
      "ValidatingAdmissionPolicy",
      "spec.matchConstraints.resourceRules[0].resources[0]",
      `resource "deployment" is not served by group "apps", ${never}; did you mean "deployments"?`,
    ],
    [
      "warning",
      "ValidatingAdmissionPolicy",
      "spec.matchConstraints.resourceRules[0].resources[1]",
      `resource "Deployment" is not served by group "apps", ${never}; did you mean "deployments"?`,
    ],
    [
      "warning",
      "ValidatingAdmissionPolicy",
      "spec.matchConstraints.resourceRules[1].resources[0]",
      `resource "deployments" is not served by the core group ("") but by group "apps" or group "extensions", ${never}`,
    ],
    [
      "warning",
      "ValidatingAdmissionPolicy",
      "spec.matchConstraints.resourceRules[1].resources[3]",
      `resource "podz" is not served by the core group (""), ${never}; did you mean "pods"?`,
    ],
    [
      "warning",
      "ValidatingAdmissionPolicy",
      "spec.matchConstraints.resourceRules[2].resources[0]",
      `resource "widget" is not served by group "example.com", ${never}; did you mean "widgets"?`,
    ],
  ]);
  // Without the CRD, example.com is a group celgate knows nothing of.
  assert.equal(warnings(policy).length, 4);
});

test("a binding's matchResources, and a binding naming no loaded policy gets a did-you-mean", () => {
  const policy = vap("replicas.example.com", { validations: [{ expression: "true" }] });
  const binding = vapBinding("b", "replica.example.com", {
    matchResources: { resourceRules: [rule(["apps"], ["statefulset"])] },
  });
  assert.deepEqual(warnings(policy, binding), [
    [
      "warning",
      "ValidatingAdmissionPolicyBinding",
      "spec.matchResources.resourceRules[0].resources[0]",
      'resource "statefulset" is not served by group "apps", so the rule never matches; did you mean "statefulsets"?',
    ],
  ]);
  const { set } = parsePolicyText(yamlDocs(policy, binding), "p.yaml");
  assert.deepEqual(
    checkReferences(set).map((d) => d.message),
    [
      'no ValidatingAdmissionPolicy named "replica.example.com" is loaded: the binding applies to nothing; did you mean "replicas.example.com"?',
    ],
  );
});

test("check and lint report it: a warning, so check --strict fails", async (t) => {
  const policy = vap("p", {
    validations: [{ expression: "true" }],
    matchConstraints: { resourceRules: [rule([""], ["deployments"])] },
  });
  const dir = await tempTree({ "p.yaml": yamlDocs(policy, vapBinding("b", "p")) });
  t.after(() => removeTree(dir));
  const check = await cli(["check", dir]);
  assert.equal(check.code, 0, check.stdout);
  assert.match(
    check.stdout,
    /warning: spec\.matchConstraints\.resourceRules\[0\]\.resources\[0\]: resource "deployments" is not served by the core group \(""\) but by group "apps" or group "extensions", so the rule never matches \[PE_UNKNOWN_RESOURCE\]/,
  );
  assert.equal((await cli(["check", "--strict", dir])).code, 1);
  const lint = await cli(["lint", "-o", "json", dir]);
  const findings = (JSON.parse(lint.stdout) as { findings: { rule: string; severity: string }[] }).findings;
  assert.deepEqual(
    findings.map((f) => [f.rule, f.severity]),
    [["never-matches", "warning"]],
  );
});
