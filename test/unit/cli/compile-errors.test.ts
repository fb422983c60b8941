/**
 * Issue 36: every command that reads policies reports their compile errors and fails, as check does.
 * `lint` and `manifests` used to compile the set, skip the policies that did not compile and say "no
 * findings" with exit 0: a CEL syntax error passed CI.
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const BROKEN = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: broken
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments] }
  validations:
  - expression: "object.spec.replicas <= "
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: broken
spec:
  policyName: broken
  validationActions: [Deny]
`;

async function brokenDir(t: TestContext): Promise<string> {
  const dir = await tempTree({ "broken.yaml": BROKEN });
  t.after(() => removeTree(dir));
  return dir;
}

/** The compile error as check reports it: file:line:col, code and field path. */
async function checkLine(dir: string): Promise<string> {
  const checked = await cli(["check", dir]);
  assert.equal(checked.code, 1);
  const line = checked.stdout.split("\n").find((l) => l.includes("PE_CEL"));
  assert.ok(line, checked.stdout);
  assert.match(line, /broken\.yaml:11:\d+: error: spec\.validations\[0\]\.expression: .*\[PE_CEL_PARSE\]/);
  return line;
}

void test("lint reports a policy's compile errors as check does and fails", async (t) => {
  const dir = await brokenDir(t);
  const line = await checkLine(dir);
  const r = await cli(["lint", dir]);
  assert.notEqual(r.code, 0, r.stdout);
  assert.ok(r.stderr.includes(line), r.stderr);
  assert.doesNotMatch(r.stdout, /no findings/);
});

void test("manifests reports a policy's compile errors as check does and fails", async (t) => {
  const dir = await brokenDir(t);
  const line = await checkLine(dir);
  const r = await cli(["manifests", "--policies", dir, "--service", "celgate", "--namespace", "celgate"]);
  assert.notEqual(r.code, 0, r.stdout);
  assert.ok(r.stderr.includes(line), r.stderr);
  assert.equal(r.stdout, "");
});
