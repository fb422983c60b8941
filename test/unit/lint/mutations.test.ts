/**
 * `celgate lint` on mutations, against the corpus of the policies' test suites:
 * - idempotence (Kubernetes "Dynamic Admission Control": "Mutating webhooks must be idempotent",
 *   and the non-idempotent examples there: a sidecar appended without looking for it first);
 * - ApplyConfigurations that set atomic fields, refused by the API server
 *   (k8s.io/apiserver .../policy/mutating/patch/smd.go validatePatch: "may not mutate atomic
 *   arrays, maps or structs"; tolerations is `+listType=atomic` in k8s.io/api core/v1 types.go);
 * - policies that undo each other, which reinvocation cannot settle.
 */
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { cli, tempTree } from "../cli/fake-io.ts";

interface Report {
  findings: {
    rule: string;
    severity: string;
    message: string;
    fix: string;
    location?: { file: string; line: number };
  }[];
  errors: number;
  corpus: number;
}

async function lint(t: TestContext, files: Record<string, string>, ...flags: string[]) {
  const dir = await tempTree(files);
  t.after(() => rm(dir, { recursive: true, force: true }));
  const r = await cli(["lint", ...flags, "-o", "json", dir]);
  return { ...r, dir, report: JSON.parse(r.stdout || "{}") as Report };
}

const map = (name: string, spec: string) => `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: ${name} }
spec:
${spec.includes("reinvocationPolicy") ? "" : "  reinvocationPolicy: Never\n"}  failurePolicy: Ignore
  matchConstraints:
    resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }]
${spec}---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec: { policyName: ${name} }
`;

const SUITE = (policy: string) => `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${policy}]
cases:
  - name: a pod
    namespace: team-a
    object: { apiVersion: v1, kind: Pod, metadata: { name: web }, spec: { containers: [{ name: app, image: "nginx:1.27" }] } }
    expect: { allowed: true }
`;

void test("a sidecar appended without looking for it first is not idempotent", async (t) => {
  const r = await lint(t, {
    "sidecar.yaml": map(
      "sidecar",
      `  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: "[JSONPatch{op: 'add', path: '/spec/containers/-', value: {'name': 'foo-sidecar', 'image': 'proxy:1'}}]"
`,
    ),
    "sidecar.test.yaml": SUITE("sidecar.yaml"),
  });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.report.corpus, 1);
  const [f, ...rest] = r.report.findings;
  assert.equal(rest.length, 0, JSON.stringify(rest));
  assert.equal(f?.rule, "mutation-not-idempotent");
  assert.match(
    f?.message ?? "",
    /^MutatingAdmissionPolicy 'sidecar' is not idempotent: applied to its own output for .*sidecar\.test\.yaml: a pod it changes the object again \(add \/spec\/containers\/2\)$/,
  );
  assert.equal(f?.location?.line, 10, "at spec.mutations, where its list starts");
});

void test("the same sidecar behind a matchCondition that looks for it first is idempotent", async (t) => {
  const r = await lint(t, {
    "sidecar.yaml": map(
      "sidecar",
      `  matchConditions:
    - { name: not-yet, expression: "!object.spec.containers.exists(c, c.name == 'foo-sidecar')" }
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: "[JSONPatch{op: 'add', path: '/spec/containers/-', value: {'name': 'foo-sidecar', 'image': 'proxy:1'}}]"
`,
    ),
    "sidecar.test.yaml": SUITE("sidecar.yaml"),
  });
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(r.report.findings, []);
});

void test("an ApplyConfiguration that sets tolerations (atomic) silently does nothing under Ignore", async (t) => {
  const r = await lint(t, {
    "tolerate.yaml": map(
      "tolerate",
      `  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: >-
          Object{spec: Object.spec{tolerations: [Object.spec.tolerations{key: "gpu", operator: "Exists", effect: "NoSchedule"}]}}
`,
    ),
    "tolerate.test.yaml": SUITE("tolerate.yaml"),
  });
  assert.equal(r.code, 1);
  assert.deepEqual(
    r.report.findings.map((f) => [f.rule, f.message]),
    [
      [
        "mutation-atomic",
        "MutatingAdmissionPolicy 'tolerate' mutations[0] is an ApplyConfiguration that sets the atomic .spec.tolerations: the API server refuses it (\"may not mutate atomic arrays, maps or structs\"), so it silently does nothing (failurePolicy Ignore)",
      ],
    ],
  );
});

void test("an ApplyConfiguration that merges labels and a container by name is fine", async (t) => {
  const r = await lint(t, {
    "merge.yaml": map(
      "merge",
      `  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: >-
          Object{metadata: Object.metadata{labels: {"team": "a"}}, spec: Object.spec{containers: [Object.spec.containers{name: "app", imagePullPolicy: "Always"}]}}
`,
    ),
    "merge.test.yaml": SUITE("merge.yaml"),
  });
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(r.report.findings, []);
});

void test("two policies that set one label to different values, one reinvoked, loop", async (t) => {
  const label = (value: string) => `  reinvocationPolicy: IfNeeded
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: "Object{metadata: Object.metadata{labels: {'tier': '${value}'}}}"
`;
  const r = await lint(t, {
    "a.yaml": map("tier-front", label("front")),
    "b.yaml": map("tier-back", label("back")),
    "both.test.yaml": SUITE("a.yaml, b.yaml"),
  });
  assert.equal(r.code, 1, r.stdout);
  const loops = r.report.findings.filter((f) => f.rule === "reinvocation-loop");
  assert.equal(loops.length, 1, JSON.stringify(r.report.findings));
  assert.match(
    loops[0]?.message ?? "",
    /^MutatingAdmissionPolicies 'tier-front', 'tier-back' undo each other's changes for .*both\.test\.yaml: a pod: applied again to their own output they change it \(replace \/metadata\/labels\/tier(, replace \/metadata\/labels\/tier)*\), and 'tier-front' asks to be reinvoked, which cannot settle it$/,
  );
  assert.equal(loops[0]?.severity, "error");
  assert.deepEqual(
    r.report.findings.filter((f) => f.rule === "mutation-not-idempotent"),
    [],
    "each alone is idempotent",
  );
});

void test("a mutation no test object exercises is a warning, not an error", async (t) => {
  const r = await lint(t, {
    "lonely.yaml": map(
      "lonely",
      `  mutations:
    - patchType: JSONPatch
      jsonPatch: { expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'a': 'b'}}]" }
`,
    ),
  });
  assert.equal(r.code, 0);
  assert.deepEqual(
    r.report.findings.map((f) => [f.rule, f.severity, f.message]),
    [
      [
        "mutation-unexercised",
        "warning",
        "MutatingAdmissionPolicy 'lonely' changes none of the 0 test objects, so its idempotence and its atomic fields were not checked",
      ],
    ],
  );
});

void test("the shipped policies lint clean, their suites exercising every mutation", async () => {
  const policies = fileURLToPath(new URL("../../../policies", import.meta.url));
  const r = await cli(["lint", policies]);
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /^no findings; \d+ test objects in the mutation corpus\n$/);
  const native = await cli(["lint", "--native", "-o", "json", policies]);
  // Applied natively, they are written for every namespace: the deadlock rules say so.
  const rules = new Set((JSON.parse(native.stdout) as Report).findings.map((f) => f.rule));
  assert.deepEqual([...rules].sort(), ["self-deadlock"]);
});
