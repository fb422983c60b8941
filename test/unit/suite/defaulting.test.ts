/**
 * Test suites evaluate cases as `celgate eval` does: objects in the request's namespace and with the
 * API server's defaults, unless a case (or its defaults) says `defaulting: false`. Run through the
 * real `celgate test` command on suite files in a temporary directory.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cli, removeTree, tempTree } from "../cli/fake-io.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "engine");
const DEPLOYMENT =
  "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {template: {spec: {containers: [{name: web, image: nginx:1.27}]}}}}";
const NAMESPACE =
  "{apiVersion: v1, kind: Namespace, metadata: {name: default, labels: {kubernetes.io/metadata.name: default}}}";
const DENIED =
  "ValidatingAdmissionPolicy 'enforce-multiple-replicas-deployments' with binding 'enforce-multiple-replicas-deployments-binding' denied request: failed expression: object.spec.replicas >= 2";

let dir = "";
before(async () => {
  dir = await tempTree({
    "good/defaults.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies:
  - ${join(FIXTURES, "tutorial-vap-min-replicas.yaml")}
  - ${join(FIXTURES, "tutorial-default-pod-security-baseline.yaml")}
defaults:
  operation: CREATE
cases:
  - name: a Deployment without replicas has 1 and is denied
    namespaceObject: ${NAMESPACE}
    object: ${DEPLOYMENT}
    expect: {allowed: false, message: "${DENIED}"}
  - name: as written, the policy cannot read replicas
    defaulting: false
    namespaceObject: ${NAMESPACE}
    object: ${DEPLOYMENT}
    expect: {allowed: false, messageMatches: "no such key: replicas"}
  - group: manifests as written
    defaults: {defaulting: false}
    cases:
      - name: the group's defaults turn defaulting off
        object: {apiVersion: v1, kind: Namespace, metadata: {name: example}}
        expect: {allowed: false, messageMatches: "no such key: labels"}
      - name: a case turns it back on
        defaulting: true
        object: {apiVersion: v1, kind: Namespace, metadata: {name: example}}
        expect:
          allowed: true
          patch: [{op: add, path: /metadata/labels/pod-security.kubernetes.io~1enforce, value: baseline}]
`,
    "broken/defaulting.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${join(FIXTURES, "tutorial-vap-min-replicas.yaml")}]
cases:
  - name: not a boolean
    defaulting: "no"
    object: ${DEPLOYMENT}
    expect: {allowed: true}
`,
  });
});
after(() => removeTree(dir));

test("defaulting is on in suites, and `defaulting: false` in a case or in defaults turns it off", async () => {
  const r = await cli(["test", "--ascii", join(dir, "good")]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^4 passed, 0 failed$/m);
});

test("celgate test --no-defaults turns defaulting off for the cases that do not set it", async () => {
  const r = await cli(["test", "--ascii", "--no-defaults", join(dir, "good")]);
  assert.equal(r.code, 1);
  // The first case counted on the defaults; the others say what they want.
  assert.match(r.stdout, /^ {2}FAIL a Deployment without replicas has 1 and is denied$/m);
  assert.match(r.stdout, /^3 passed, 1 failed$/m);
  const help = await cli(["test", "--help"]);
  assert.match(help.stdout, /--no-defaults {2,}evaluate the objects of cases that do not set 'defaulting'/);
});

test("a defaulting field that is not a boolean breaks the suite, with its place", async () => {
  const r = await cli(["test", "--ascii", join(dir, "broken")]);
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.match(
    r.stdout + r.stderr,
    /defaulting\.test\.yaml:6:17: error: cases\[0\]\.defaulting: expected true or false, got string "no"/,
  );
});
