/**
 * Issue 36: `eval -r DIR`, `audit -r DIR` and `eval -r DIR --write-mutated OUT` failed with a raw
 * EISDIR although README's own example passes a directory. A directory is read as `-p` reads one:
 * recursively, its .yaml, .yml and .json files in sorted order, each document and List item an
 * object.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const LABEL = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: add-team }
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps] }
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}'
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: add-team }
spec: { policyName: add-team }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: small }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps] }
  validations:
  - { expression: "!has(object.data) || object.data.size() < 2", message: too big }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: small }
spec: { policyName: small, validationActions: [Deny] }
`;

const cm = (name: string, keys: number) =>
  `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "${name}", "namespace": "team-a"}, "data": {${Array.from({ length: keys }, (_, i) => `"k${i}": "v"`).join(", ")}}}`;

async function tree(t: TestContext): Promise<string> {
  const dir = await tempTree({
    "policies/p.yaml": LABEL,
    "objects/a.yaml": `${cm("a", 1)}\n---\n${cm("b", 1)}\n`,
    "objects/nested/list.json": `{"apiVersion": "v1", "kind": "List", "items": [${cm("c", 3)}, ${cm("d", 0)}]}`,
    "objects/notes.txt": "not an object file",
  });
  t.after(() => removeTree(dir));
  return dir;
}

void test("eval -r DIR reads every YAML and JSON file under it, List items included", async (t) => {
  const dir = await tree(t);
  const r = await cli(["eval", "-p", "policies", "-r", "objects"], { cwd: dir });
  assert.equal(r.code, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /EISDIR/);
  for (const name of ["a", "b", "d"])
    assert.match(r.stdout, new RegExp(`^ConfigMap team-a/${name}: allowed`, "m"));
  assert.match(r.stdout, /^ConfigMap team-a\/c: denied: .*too big/m);
  assert.match(r.stdout, /4 resources: 3 allowed, 1 denied\n$/);
});

void test("audit -r DIR audits every object under it", async (t) => {
  const dir = await tree(t);
  const r = await cli(["audit", "-p", "policies", "-r", "objects", "-o", "json"], { cwd: dir });
  assert.equal(r.code, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /EISDIR/);
  assert.match(r.stdout, /"objects": 4/);
});

void test("eval -r DIR --write-mutated OUT writes one file per object, named kind_namespace_name.yaml", async (t) => {
  const dir = await tree(t);
  const r = await cli(["eval", "-p", "policies", "-r", "objects", "--write-mutated", "out"], { cwd: dir });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /wrote 4 objects to out/);
  assert.deepEqual((await readdir(join(dir, "out"))).sort(), [
    "configmap_team-a_a.yaml",
    "configmap_team-a_b.yaml",
    "configmap_team-a_c.yaml",
    "configmap_team-a_d.yaml",
  ]);
  assert.match(await readFile(join(dir, "out", "configmap_team-a_d.yaml"), "utf8"), /team: a/);
  // Never over an input: the directory read is refused as a target when it would be overwritten.
  const clash = await cli(["eval", "-p", "policies", "-r", "out", "--write-mutated", "out"], { cwd: dir });
  assert.equal(clash.code, 2);
  assert.match(clash.stderr, /is one of the input files; refusing to overwrite it/);
});

void test("a directory with no object file is an error that names it", async (t) => {
  const dir = await tempTree({ "policies/p.yaml": LABEL, "empty/readme.txt": "x" });
  t.after(() => removeTree(dir));
  const r = await cli(["eval", "-p", "policies", "-r", "empty"], { cwd: dir });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no resources found in empty/);
});
