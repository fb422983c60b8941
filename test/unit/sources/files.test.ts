import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Diagnostic } from "../../../src/errors.ts";
import { fingerprintPolicyFiles, loadPolicyPaths } from "../../../src/sources/files.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/policies", import.meta.url));

function summary(d: Diagnostic): string {
  const where = d.location ? `${d.location.file}:${d.location.line}:${d.location.column}` : "-";
  return `${where} ${d.severity} ${d.code} ${d.path ?? ""}: ${d.message}`;
}

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "true"
`;
const BINDING = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: b.example.com
spec:
  policyName: p.example.com
  validationActions: [Deny]
`;
const NAMESPACE_JSON = '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}\n';

let dir = "";

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "celgate-files-"));
  // Written out of order on purpose: the loader must sort.
  await mkdir(join(dir, "tree", "z-last"), { recursive: true });
  await mkdir(join(dir, "tree", "a-first", "nested"), { recursive: true });
  await mkdir(join(dir, "tree", ".git"), { recursive: true });
  await writeFile(join(dir, "tree", "z-last", "binding.yml"), BINDING);
  await writeFile(join(dir, "tree", "a-first", "nested", "ns.json"), NAMESPACE_JSON);
  await writeFile(join(dir, "tree", "B-upper.yaml"), "# comments only\n");
  await writeFile(join(dir, "tree", "policy.yaml"), POLICY);
  await writeFile(join(dir, "tree", "policy.test.yaml"), "not: [a, policy\n");
  await writeFile(join(dir, "tree", "notes.txt"), "not: [a, policy\n");
  await writeFile(join(dir, "tree", ".hidden.yaml"), "not: [a, policy\n");
  await writeFile(join(dir, "tree", ".git", "config.yaml"), "not: [a, policy\n");
  // A link back up the tree must not be followed forever.
  await symlink(join(dir, "tree"), join(dir, "tree", "a-first", "loop"));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("a directory is walked recursively, sorted, skipping hidden entries, test suites and other files", async () => {
  const { files, set, diagnostics } = await loadPolicyPaths([join(dir, "tree")]);
  assert.deepEqual(files, [
    join(dir, "tree", "B-upper.yaml"),
    join(dir, "tree", "a-first", "nested", "ns.json"),
    join(dir, "tree", "policy.yaml"),
    join(dir, "tree", "z-last", "binding.yml"),
  ]);
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(
    set.policies.map((p) => p.name),
    ["p.example.com"],
  );
  assert.deepEqual(
    set.bindings.map((b) => b.name),
    ["b.example.com"],
  );
  assert.deepEqual(
    set.resources.map((r) => `${r.kind}/${r.name}`),
    ["Namespace/team-a"],
  );
});

test("a binding may name a policy from another file; a dangling one is reported", async () => {
  const together = await loadPolicyPaths([join(dir, "tree", "policy.yaml"), join(dir, "tree", "z-last")]);
  assert.deepEqual(together.diagnostics, []);
  const alone = await loadPolicyPaths([join(dir, "tree", "z-last")]);
  assert.deepEqual(alone.diagnostics.map(summary), [
    `${join(dir, "tree", "z-last", "binding.yml")}:6:15 warning PE_UNKNOWN_POLICY spec.policyName: no ValidatingAdmissionPolicy named "p.example.com" is loaded: the binding applies to nothing`,
  ]);
  assert.equal(alone.set.bindings.length, 1);
});

test("a file named explicitly is read whatever its name, and only once", async () => {
  const testSuite = join(dir, "tree", "policy.test.yaml");
  const policy = join(dir, "tree", "policy.yaml");
  const { files, diagnostics, set } = await loadPolicyPaths([policy, testSuite, join(dir, "tree"), policy]);
  assert.equal(files[0], policy);
  assert.equal(files[1], testSuite);
  assert.equal(files.filter((f) => f === policy).length, 1);
  assert.equal(set.policies.length, 1);
  assert.deepEqual(
    diagnostics.map((d) => d.code),
    ["PE_YAML_SYNTAX"],
  );
  assert.equal(diagnostics[0]?.location?.file, testSuite);
});

test("a path that cannot be read is a PE_IO diagnostic, and the others are still loaded", async () => {
  const missing = join(dir, "no-such-dir");
  const { files, diagnostics, set } = await loadPolicyPaths([missing, join(dir, "tree", "policy.yaml")]);
  assert.deepEqual(files, [join(dir, "tree", "policy.yaml")]);
  assert.equal(set.policies.length, 1);
  assert.equal(diagnostics.length, 1);
  const [d] = diagnostics;
  assert.equal(d?.code, "PE_IO");
  assert.equal(d?.severity, "error");
  assert.deepEqual(d?.location, { file: missing, line: 1, column: 1 });
  assert.match(
    d?.message ?? "",
    new RegExp(`^cannot read ${missing.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: .*ENOENT`),
  );
});

test("fixtures: the good policies load without diagnostics", async () => {
  const { files, set, diagnostics } = await loadPolicyPaths([join(FIXTURES, "good")]);
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(
    files.map((f) => f.slice(FIXTURES.length + 1)),
    [
      "good/demo-binding.json",
      "good/demo-policy.yaml",
      "good/mutating/sidecar.yaml",
      "good/replicalimit.yaml",
    ],
  );
  assert.deepEqual(
    set.policies.map((p) => `${p.kind}/${p.name}`),
    [
      "ValidatingAdmissionPolicy/demo-policy.example.com",
      "MutatingAdmissionPolicy/sidecar-policy.example.com",
      "ValidatingAdmissionPolicy/replicalimit-policy.example.com",
    ],
  );
  assert.deepEqual(
    set.bindings.map((b) => `${b.kind}/${b.name}->${b.policyName}`),
    [
      "ValidatingAdmissionPolicyBinding/demo-binding-test.example.com->demo-policy.example.com",
      "MutatingAdmissionPolicyBinding/sidecar-policy.example.com->sidecar-policy.example.com",
      "ValidatingAdmissionPolicyBinding/replicalimit-binding-test.example.com->replicalimit-policy.example.com",
    ],
  );
  assert.deepEqual(
    set.resources.map((r) => `${r.kind}/${r.namespace}/${r.name}`),
    ["ReplicaLimit/default/replica-limit-test.example.com"],
  );
});

test("fixtures: the broken policies report every problem with its place", async () => {
  const { set, diagnostics } = await loadPolicyPaths([join(FIXTURES, "broken")]);
  const rel = (d: Diagnostic): string => summary(d).slice(FIXTURES.length + 1);
  assert.deepEqual(diagnostics.map(rel), [
    "broken/bad-values.yaml:6:3 error PE_MISSING_FIELD spec.validations: validations or auditAnnotations must contain at least one item",
    'broken/bad-values.yaml:6:18 error PE_FIELD_VALUE spec.failurePolicy: must be one of "Fail", "Ignore"; got "Sometimes"',
    'broken/bad-values.yaml:11:31 error PE_FIELD_VALUE spec.matchConstraints.resourceRules[0].operations[1]: must be one of "CREATE", "UPDATE", "DELETE", "CONNECT", "*"; got "PATCH"',
    'broken/bad-values.yaml:13:3 warning PE_FIELD_VALUE spec.validation: unknown field "validation" (did you mean "validations"?)',
    'broken/bad-values.yaml:22:22 error PE_FIELD_VALUE spec.validationActions: must not contain both "Deny" and "Warn" (the same failure would be reported twice)',
    "broken/syntax.yaml:4:9 error PE_YAML_SYNTAX : Nested mappings are not allowed in compact mappings",
    'broken/orphan-binding.yaml:6:15 warning PE_UNKNOWN_POLICY spec.policyName: no ValidatingAdmissionPolicy named "no-such-policy.example.com" is loaded: the binding applies to nothing',
  ]);
  assert.deepEqual(
    set.bindings.map((b) => b.name),
    ["orphan.example.com"],
  );
  assert.equal(set.policies.length, 0);
});

test("a fixtures directory beside test suites is not read as policies or params", async () => {
  const dir = await mkdtemp(join(tmpdir(), "celgate-fixtures-"));
  await mkdir(join(dir, "fixtures"));
  await writeFile(
    join(dir, "fixtures", "pod.yaml"),
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test-input\n",
  );
  await writeFile(join(dir, "ns.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n");
  const loaded = await loadPolicyPaths([dir]);
  assert.deepEqual(
    loaded.set.resources.map((r) => `${r.kind}/${r.name}`),
    ["Namespace/team-a"],
  );
});

test("more files than are read at once: files, policies and diagnostics still come in sorted order", async () => {
  const many = join(dir, "many");
  await mkdir(many, { recursive: true });
  const names: string[] = [];
  // Written in reverse, sizes varying so reads finish out of order; every seventh one is broken.
  for (let i = 99; i >= 0; i--) {
    const name = `p${String(i).padStart(3, "0")}.yaml`;
    names.push(name);
    const text =
      i % 7 === 0
        ? `not: [a, policy ${"x".repeat(i * 50)}\n`
        : `${"# padding\n".repeat((100 - i) * 20)}${POLICY.replace("p.example.com", `p${i}.example.com`)}`;
    await writeFile(join(many, name), text);
  }
  const sorted = names.sort();
  const { files, diagnostics, set } = await loadPolicyPaths([many]);
  assert.deepEqual(
    files,
    sorted.map((n) => join(many, n)),
  );
  assert.deepEqual(
    set.policies.map((p) => p.name),
    sorted
      .map((n) => Number(n.slice(1, 4)))
      .filter((i) => i % 7 !== 0)
      .map((i) => `p${i}.example.com`),
  );
  assert.deepEqual(
    diagnostics.map((d) => d.location?.file),
    sorted.filter((n) => Number(n.slice(1, 4)) % 7 === 0).map((n) => join(many, n)),
  );
});

test("the fingerprint is of the bytes parsed, not of the file after the load (issue 28 item 1)", async () => {
  const fdir = await mkdtemp(join(tmpdir(), "celgate-print-"));
  try {
    const file = join(fdir, "p.yaml");
    await writeFile(file, POLICY);
    const before = await fingerprintPolicyFiles([fdir]);
    const loaded = await loadPolicyPaths([fdir], {
      hooks: { afterRead: () => writeFile(file, POLICY.replace("p.example.com", "q.example.com")) },
    });
    assert.deepEqual(
      loaded.set.policies.map((p) => p.name),
      ["p.example.com"],
    );
    assert.equal(loaded.fingerprint, before, "the fingerprint must describe what was parsed");
    assert.notEqual(await fingerprintPolicyFiles([fdir]), loaded.fingerprint);
  } finally {
    await rm(fdir, { recursive: true, force: true });
  }
});

test("the fingerprint sees a change that keeps the file's size and times", async () => {
  const fdir = await mkdtemp(join(tmpdir(), "celgate-print-"));
  try {
    const file = join(fdir, "p.yaml");
    await writeFile(file, POLICY);
    const { atime, mtime } = await stat(file);
    const before = await fingerprintPolicyFiles([fdir]);
    // Same length, same times: what a size/mtime fingerprint cannot tell apart.
    await writeFile(file, POLICY.replace("p.example.com", "q.example.com"));
    await utimes(file, atime, mtime);
    assert.notEqual(await fingerprintPolicyFiles([fdir]), before);
    // Unchanged bytes, new times: the same fingerprint.
    await writeFile(file, POLICY);
    assert.equal(await fingerprintPolicyFiles([fdir]), before);
    // A file added, or a path that cannot be read, changes it.
    await writeFile(join(fdir, "q.yaml"), "");
    const added = await fingerprintPolicyFiles([fdir]);
    assert.notEqual(added, before);
    assert.notEqual(await fingerprintPolicyFiles([fdir, join(fdir, "missing.yaml")]), added);
  } finally {
    await rm(fdir, { recursive: true, force: true });
  }
});

test("a symlink to nothing inside a directory is no file: skipped, not an error (ConfigMap volume updates)", async () => {
  // kubernetes pkg/volume/util/atomic_writer.go links a new key to ..data/<key> before ..data holds
  // it, and unlinks a removed key only after the swap: for a moment the link leads nowhere.
  const fdir = await mkdtemp(join(tmpdir(), "celgate-dangling-"));
  try {
    await writeFile(join(fdir, "p.yaml"), POLICY);
    const before = await fingerprintPolicyFiles([fdir]);
    await symlink(join("..data", "new.yaml"), join(fdir, "new.yaml"));
    const loaded = await loadPolicyPaths([fdir]);
    assert.deepEqual(loaded.diagnostics, []);
    assert.deepEqual(loaded.files, [join(fdir, "p.yaml")]);
    assert.equal(loaded.fingerprint, before);
    // Named on its own, the same link is a path that cannot be read.
    const named = await loadPolicyPaths([join(fdir, "new.yaml")]);
    assert.deepEqual(
      named.diagnostics.map((d) => d.code),
      ["PE_IO"],
    );
  } finally {
    await rm(fdir, { recursive: true, force: true });
  }
});
