/**
 * `celgate eval` reads numbers as kubectl and the API server would (issue 36 item 5, "Integers lose
 * precision"). A JSON file is read as the API server's decoder reads JSON (sigs.k8s.io/json
 * PreserveInts: an int64 when the text is an integer that fits); a YAML file as kubectl's YAML to
 * JSON conversion gives it (sigs.k8s.io/yaml YAMLToJSON: a YAML integer is written as its digits,
 * which that decoder reads back as an int64). So the same object in either form evaluates the
 * same, an integer beyond 2^53 kept exactly, and what admission writes back (the patch, the
 * `--write-mutated` object) holds the same digits. A saved AdmissionReview in JSON is read as the
 * webhook reads its body: `1.0` a double.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: numbers}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"]}]
  validations:
    - expression: "object.spec.a == 9007199254740993 && object.spec.a != 9007199254740992"
      message: 2^53+1 is not read exactly
    - expression: "type(object.spec.max) == int && object.spec.max == 9223372036854775807"
      message: int64 max is not an int
    - expression: "type(object.spec.over) == double"
      message: 2^63 is not a double
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: numbers}
spec: {policyName: numbers, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: {name: copy}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules: [{apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"]}]
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: '[JSONPatch{op: "copy", from: "/spec/a", path: "/spec/copied"}]'
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: {name: copy}
spec: {policyName: copy}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: float}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["widgets"]}]
  validations:
    - expression: "type(object.spec.x) == double"
      message: 1.0 is not a double
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: float}
spec: {policyName: float, validationActions: [Deny]}
`;

const WIDGET_JSON = `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "team-a"},
 "spec": {"a": 9007199254740993, "max": 9223372036854775807, "over": 9223372036854775808}}`;

const WIDGET_YAML = `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: team-a}
spec:
  a: 9007199254740993
  max: 9223372036854775807
  over: 9223372036854775808
`;

const REVIEW = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"r-1",
 "kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},
 "namespace":"team-a","name":"w","operation":"UPDATE","userInfo":{"username":"bob"},
 "object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"team-a"},"spec":{"x":1.0}},
 "oldObject":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"team-a"},"spec":{"x":2}}}}`;

let dir = "";
const path = (f: string) => join(dir, f);

before(async () => {
  dir = await tempTree({
    "policies.yaml": POLICIES,
    "widget.json": WIDGET_JSON,
    "widget.yaml": WIDGET_YAML,
    "review.json": REVIEW,
  });
});
after(() => removeTree(dir));

void test("a JSON and a YAML file give the same results, with integers beyond 2^53 exact", async () => {
  const outputs: string[] = [];
  for (const file of ["widget.json", "widget.yaml"]) {
    const r = await cli(["eval", "-p", path("policies.yaml"), "-r", path(file), "-o", "json"]);
    assert.equal(r.stderr, "", file);
    assert.equal(r.code, 0, `${file}: ${r.stdout}`);
    const [report] = JSON.parse(r.stdout) as { decision: { allowed: boolean; patch?: unknown } }[];
    assert.equal(report?.decision.allowed, true, file);
    // The copy moves the number itself, whichever form the patch writes it in.
    assert.doesNotMatch(r.stdout, /9007199254740992/, file);
    outputs.push(r.stdout.replaceAll(file, "FILE"));
  }
  assert.equal(outputs[0], outputs[1]);
});

void test("--write-mutated writes the copied integer with the same digits", async () => {
  for (const [file, out] of [
    ["widget.json", "out-json"],
    ["widget.yaml", "out-yaml"],
  ] as const) {
    const r = await cli([
      "eval",
      "-p",
      path("policies.yaml"),
      "-r",
      path(file),
      "--write-mutated",
      path(out),
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const [written] = await readdir(path(out));
    const text = await readFile(join(path(out), written ?? ""), "utf8");
    assert.match(text, /^ {2}a: 9007199254740993$/m, file);
    assert.match(text, /^ {2}copied: 9007199254740993$/m, file);
    assert.match(text, /^ {2}max: 9223372036854775807$/m, file);
  }
});

void test("a saved AdmissionReview in JSON is read as the webhook reads it: 1.0 is a double", async () => {
  const r = await cli(["eval", "-p", path("policies.yaml"), "-r", path("review.json")]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /1\.0 is not a double/);
});

void test("a number beyond float64's range is an input error, as the API server's decoder refuses it", async () => {
  const dir2 = await tempTree({ "huge.json": WIDGET_JSON.replace("9223372036854775808", "1e400") });
  try {
    const r = await cli(["eval", "-p", path("policies.yaml"), "-r", join(dir2, "huge.json")]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /number 1e400 is beyond the range of a float64/);
    assert.doesNotMatch(r.stderr, /internal error/i);
  } finally {
    await removeTree(dir2);
  }
});

void test("celgate test reads a case's object and review files as eval reads them", async () => {
  const suite = `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policies.yaml]
cases:
  - name: json object
    objectFile: widget.json
    expect: { allowed: true }
  - name: yaml object
    objectFile: widget.yaml
    expect: { allowed: true }
  - name: inline object
    object:
      apiVersion: example.com/v1
      kind: Widget
      metadata: {name: w, namespace: team-a}
      spec: {a: 9007199254740993, max: 9223372036854775807, over: 9223372036854775808}
    expect: { allowed: true }
  - name: saved review
    reviewFile: review.json
    expect: { allowed: true }
`;
  const dir2 = await tempTree({
    "policies.yaml": POLICIES,
    "widget.json": WIDGET_JSON,
    "widget.yaml": WIDGET_YAML,
    "review.json": REVIEW,
    "numbers.test.yaml": suite,
  });
  try {
    const r = await cli(["test", dir2]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /4 passed, 0 failed/);
  } finally {
    await removeTree(dir2);
  }
});

void test("celgate expr reads --vars and batch lines as JSON is read everywhere else", async () => {
  const expr = "x == 9007199254740993 && x != 9007199254740992 && type(y) == double";
  const vars = '{"x": 9007199254740993, "y": 1.0}';
  const one = await cli(["expr", expr, "--vars", vars]);
  assert.equal(one.stdout.trim(), "true (bool)", one.stderr);
  const batch = await cli(["expr", "--batch"], {
    stdin: `{"expr": ${JSON.stringify(expr)}, "vars": ${vars}}\n`,
  });
  assert.match(batch.stdout, /"value":true/, batch.stdout + batch.stderr);
});
