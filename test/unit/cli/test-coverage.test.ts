/**
 * `celgate test --coverage` (suite/coverage.ts, adapters/output/coverage.ts): on a policy written
 * for the purpose, exactly which places the report lists (file:line:col, what never happened) and
 * the tallies; the JSON and lcov forms; --min-coverage's exit code; a policy two suites load counted
 * once; and the coverage of the whole policies/ library, pinned (docs/commands.md quotes it).
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cover
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["configmaps"]
  matchConditions:
    - name: not-system
      expression: "object.metadata.name != 'system'"
  variables:
    - name: keys
      expression: "object.?data.orValue({}).map(k, k)"
  validations:
    - expression: "variables.keys.all(k, k.startsWith('x-')) && size(variables.keys) < 3"
      messageExpression: "size(variables.keys) > 1 ? 'too many keys' : 'a key without x-'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cover
spec:
  policyName: cover
  validationActions: [Deny]
`;

const configMap = (name: string, data?: Record<string, string>) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default" },
    ...(data ? { data } : {}),
  });

/** Cases: one passing ConfigMap with data, one denied for a key without x-. */
const SUITE = `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: good
    object: ${configMap("a", { "x-a": "1" })}
    expect: { allowed: true }
  - name: bad key
    object: ${configMap("b", { b: "1" })}
    expect: { allowed: false }
`;

/** More cases, in a second suite over the same policy: added to the first's counts. */
const MORE = `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: system is skipped
    object: ${configMap("system")}
    expect: { allowed: true }
  - name: no data
    object: ${configMap("c")}
    expect: { allowed: true }
`;

/** A mutation and an audit annotation: every kind of expression counts, mutations applied first. */
const MUTATING = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: label
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["configmaps"]
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: "has(object.metadata.labels) ? [] : [JSONPatch{op: 'add', path: '/metadata/labels', value: {}}]"
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: label
spec:
  policyName: label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: audit
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["configmaps"]
  validations:
    - expression: "true"
  auditAnnotations:
    - key: owner
      valueExpression: "string(object.metadata.?labels.?owner.orValue('nobody'))"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: audit
spec:
  policyName: audit
  validationActions: [Audit]
`;

const MUTATING_SUITE = `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: no labels
    object: ${configMap("a")}
    expect: { allowed: true }
`;

let dir = "";
let mutating = "";

before(async () => {
  mutating = await tempTree({ "policy.yaml": MUTATING, "a.test.yaml": MUTATING_SUITE });
  dir = await tempTree({
    "policy.yaml": POLICY,
    "a.test.yaml": SUITE,
    "more/b.test.yaml": MORE.replace("[policy.yaml]", "[../policy.yaml]"),
  });
});
after(async () => {
  await removeTree(dir);
  await removeTree(mutating);
});

/** The gap lines of the text report: `file:line:col: path: what`, the file made relative to `root`. */
function gaps(stdout: string, root = dir): string[] {
  const section = stdout.split("Not covered:\n")[1]?.split("\n\nCoverage")[0] ?? "";
  return section
    .split("\n")
    .filter((l) => !l.startsWith(" | "))
    .map((l) => l.replace(`${root}/`, ""));
}

test("one suite: the places never run and the outcomes never taken, at file:line:col with a caret", async () => {
  const r = await cli(["test", join(dir, "a.test.yaml"), "--coverage"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(gaps(r.stdout), [
    // The matchCondition was never false (no case named system): at its `!=`.
    "policy.yaml:14:41: spec.matchConditions[0].expression: matchCondition never false",
    // data was always there, in the order they stand: the optional `.?data` never absent,
    // orValue's default `{}` never ran, the map's range was never empty (at its `(`, where cel-go
    // places a macro).
    "policy.yaml:17:26: spec.variables[0].expression: optional never absent",
    "policy.yaml:17:41: spec.variables[0].expression: not evaluated",
    "policy.yaml:17:48: spec.variables[0].expression: never iterated an empty range",
    // The validation passed and failed, and all() was true and false (the `&&` at the root is
    // the validation's outcome, counted once), but never over no keys.
    "policy.yaml:19:38: spec.validations[0].expression: never iterated an empty range",
    // The message ran for the one denial, with one key: its condition was never true (the
    // constant 'too many keys' counts with its parent, and is not listed).
    "policy.yaml:20:52: spec.validations[0].messageExpression: condition never true",
  ]);
  // The caret under the place, as check's diagnostics show it.
  assert.match(
    r.stdout,
    /policy\.yaml:14:41: spec\.matchConditions\[0\]\.expression: matchCondition never false\n \| object\.metadata\.name != 'system'\n \| \.{21}\^\n/,
  );
  // Nodes: 4 of the matchCondition, 6 of the variable, 8 of the validation (`variables` counts with
  // `variables.keys`, the planner resolves them as one), 4 of the message. Branches: the
  // matchCondition's 2 outcomes; the optional's and the range's 2 each; the validation's pass and
  // fail, all()'s true and false, its range's 2; the message's condition 2. 30 of 36 in all.
  assert.match(r.stdout, /^ {2}total +nodes 21\/22 +branches 9\/14 +83\.3%$/m);
  // The summary line stays last.
  assert.equal(r.stdout.trimEnd().split("\n").at(-1), "2 passed, 0 failed");
});

test("two suites over one policy: counted as one, their cases together", async () => {
  const r = await cli(["test", dir, "--coverage"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(gaps(r.stdout), [
    "policy.yaml:20:52: spec.validations[0].messageExpression: condition never true",
  ]);
  assert.match(r.stdout, /^ {2}total +nodes 22\/22 +branches 13\/14 +97\.2%$/m);
  assert.equal(r.stdout.match(/ cover /g)?.length, 1);
});

test("mutations and audit annotations count too, seen after the mutations applied", async () => {
  const r = await cli(["test", mutating, "--coverage"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(gaps(r.stdout, mutating), [
    // No case had labels: the `[]` of the then-branch never ran, the condition never true.
    "policy.yaml:16:50: spec.mutations[0].jsonPatch.expression: condition never true",
    "policy.yaml:16:52: spec.mutations[0].jsonPatch.expression: not evaluated",
    // `true` passes: a constant validation has no node, but its outcomes count.
    "policy.yaml:37:20: spec.validations[0].expression: validation never failed",
    // The mutation added `labels: {}` before validation: `.?labels` present, `.?owner` absent.
    "policy.yaml:40:47: spec.auditAnnotations[0].valueExpression: optional never absent",
    "policy.yaml:40:55: spec.auditAnnotations[0].valueExpression: optional never present",
  ]);
  assert.match(r.stdout, /^ {2}total +nodes 13\/14 +branches 4\/8 +77\.2%$/m);
});

test("-o json holds the report under 'coverage'", async () => {
  const r = await cli(["test", join(dir, "a.test.yaml"), "--coverage", "-o", "json"]);
  assert.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout).coverage;
  assert.deepEqual(
    { nodes: c.nodes, branches: c.branches, percent: c.percent },
    { nodes: { covered: 21, total: 22 }, branches: { covered: 9, total: 14 }, percent: 83.3 },
  );
  const v = c.policies[0].expressions.find(
    (e: { path: string }) => e.path === "spec.validations[0].expression",
  );
  assert.equal(v.role, "validation");
  assert.deepEqual(v.uncovered, [
    {
      kind: "branch",
      location: { file: join(dir, "policy.yaml"), line: 19, column: 38 },
      branch: "range",
      outcome: "empty",
      message: "never iterated an empty range",
    },
  ]);
});

test("--coverage-lcov writes a tracefile of the policy's lines; --min-coverage gates the exit code", async () => {
  const lcov = join(dir, "out.lcov");
  const r = await cli(["test", join(dir, "a.test.yaml"), "--coverage-lcov", lcov, "--min-coverage", "83"]);
  assert.equal(r.code, 0, r.stderr);
  const text = await readFile(lcov, "utf8");
  assert.match(text, new RegExp(`^SF:${join(dir, "policy.yaml")}$`, "m"));
  // Line 17, the variable, has a node never evaluated (orValue's default); line 14 ran whole.
  assert.match(text, /^DA:14,2$/m);
  assert.match(text, /^DA:17,0$/m);
  assert.match(text, /^BRF:14\nBRH:9$/m);
  assert.match(text, /end_of_record\n$/);
  const low = await cli(["test", join(dir, "a.test.yaml"), "--min-coverage", "84"]);
  assert.equal(low.code, 1);
  assert.equal(low.stderr, "celgate test: coverage 83.3% is below --min-coverage 84%\n");
  const bad = await cli(["test", join(dir, "a.test.yaml"), "--min-coverage", "lots"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--min-coverage expects a percentage from 0 to 100, got 'lots'/);
});

test("the policies/ library: its coverage by its own suites, pinned", async () => {
  const r = await cli([
    "test",
    join(import.meta.dirname, "..", "..", "..", "policies"),
    "--coverage",
    "-o",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout).coverage;
  assert.deepEqual(
    { nodes: c.nodes, branches: c.branches, percent: c.percent, policies: c.policies.length },
    {
      nodes: { covered: 2996, total: 3243 },
      branches: { covered: 1077, total: 1374 },
      percent: 88.2,
      policies: 28,
    },
  );
});
