/**
 * deploy/library, the opt-in policy components (src/manifests/library.ts,
 * src/adapters/cli/deploy-library.ts): exactly what `npm run manifests:deploy` writes; each one adds
 * its file to the base's ConfigMap with its bindings in [Warn, Audit] and nothing else changed, its
 * enforce/ restores the file as policies/ has it, and its RBAC is only what its params need.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { deployLibrary } from "../../../src/adapters/cli/deploy-library.ts";
import { configMapFiles } from "../../../src/manifests/kustomization.ts";
import { AUDIT_FIRST_ACTIONS, auditFirst } from "../../../src/manifests/library.ts";
import { loadPolicyPaths } from "../../../src/sources/files.ts";
import { loadSnapshot } from "../../../src/sources/store.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const LIBRARY = join(ROOT, "deploy", "library");

function onDisk(): Map<string, string> {
  return new Map(
    readdirSync(LIBRARY, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => {
        const path = join(e.parentPath, e.name);
        return [relative(LIBRARY, path), readFileSync(path, "utf8")] as const;
      }),
  );
}

interface Component {
  kind: string;
  resources?: string[];
  configMapGenerator: { name: string; namespace: string; behavior: string; files: string[] }[];
}

void test("deploy/library is exactly what `npm run manifests:deploy` writes for policies/", async () => {
  const wanted = await deployLibrary(join(ROOT, "policies"));
  const disk = onDisk();
  assert.deepEqual([...disk.keys()].sort(), [...wanted.keys()].sort(), "run `npm run manifests:deploy`");
  for (const [f, text] of wanted)
    assert.equal(disk.get(f), text, `deploy/library/${f} is stale: run \`npm run manifests:deploy\``);
});

void test("one component per policy file that binds something; each merges into the base's ConfigMap", async () => {
  const loaded = await loadPolicyPaths([join(ROOT, "policies")]);
  const files = configMapFiles(loaded.files, (f) => relative(join(ROOT, "policies"), f));
  const components = readdirSync(LIBRARY).sort();
  // always-deny.yaml and namespace-lifecycle.yaml bind nothing (their bindings are comments).
  const binding = [];
  for (const f of files) {
    const s = await loadSnapshot([join(ROOT, "policies", f)]);
    assert.ok(s.ok, f);
    if (s.snapshot.set.bindings.length > 0) binding.push(f.replace(/\.yaml$/, ""));
  }
  assert.ok(binding.length >= 20);
  assert.deepEqual(components, binding);
  const keys = new Set<string>();
  for (const c of components)
    for (const dir of [c, `${c}/enforce`]) {
      let text: string;
      try {
        text = readFileSync(join(LIBRARY, dir, "kustomization.yaml"), "utf8");
      } catch {
        continue;
      }
      const k = parseYaml(text) as Component;
      assert.equal(k.kind, "Component", dir);
      assert.equal(k.configMapGenerator.length, 1, dir);
      const g = k.configMapGenerator[0]!;
      assert.deepEqual(
        { name: g.name, namespace: g.namespace, behavior: g.behavior },
        { name: "celgate-policies", namespace: "celgate", behavior: "merge" },
        dir,
      );
      assert.deepEqual(g.files, [`${c}.yaml`], `${dir}: the ConfigMap key is the policy file's name`);
      if (dir === c) {
        assert.ok(!keys.has(g.files[0]!), "keys are unique across the library");
        keys.add(g.files[0]!);
      }
      for (const r of k.resources ?? [])
        assert.ok(readFileSync(join(LIBRARY, dir, r), "utf8"), `${dir}/${r}`);
    }
});

void test("audit first: every denying binding warns and audits instead, every other byte as policies/ has it", () => {
  let softened = 0;
  for (const c of readdirSync(LIBRARY)) {
    const original = readFileSync(join(ROOT, "policies", `${c}.yaml`), "utf8");
    const copy = readFileSync(join(LIBRARY, c, `${c}.yaml`), "utf8");
    const before = original.split("\n");
    const after = copy.split("\n");
    assert.equal(after.length, before.length, c);
    const changed = before.filter((l, i) => l !== after[i]);
    for (const l of changed)
      assert.match(l, /^\s*validationActions: \[Deny\]/, `${c}: only validationActions lines change`);
    for (const doc of parseAllDocuments(copy)) {
      const o = doc.toJS() as { kind?: string; spec?: { validationActions?: string[] } };
      if (o.kind === "ValidatingAdmissionPolicyBinding")
        assert.ok(!o.spec?.validationActions?.includes("Deny"), `${c}: no binding denies`);
    }
    let enforce: string | undefined;
    try {
      enforce = readFileSync(join(LIBRARY, c, "enforce", `${c}.yaml`), "utf8");
    } catch {
      enforce = undefined;
    }
    assert.equal(
      enforce !== undefined,
      changed.length > 0,
      `${c}: an enforce component exactly when a binding denies`,
    );
    if (enforce !== undefined) assert.equal(enforce, original, `${c}/enforce: the file as policies/ has it`);
    softened += changed.length;
  }
  assert.ok(softened >= 15, `${softened} bindings softened`);
});

void test("auditFirst rewrites flow and block lists, leaves Warn/Audit-only bindings and policies alone", () => {
  const text = [
    "kind: ValidatingAdmissionPolicy",
    "spec: { validationActions: [Deny] }",
    "---",
    "kind: ValidatingAdmissionPolicyBinding",
    "metadata: { name: a }",
    "spec:",
    "  validationActions: [Deny, Audit]  # a comment",
    "---",
    "kind: ValidatingAdmissionPolicyBinding",
    "metadata: { name: b }",
    "spec:",
    "  validationActions:",
    "    - Deny",
    "  policyName: x",
    "---",
    "kind: ValidatingAdmissionPolicyBinding",
    "metadata: { name: c }",
    "spec:",
    "  validationActions: [Warn]",
    "",
  ].join("\n");
  const out = auditFirst(text);
  assert.deepEqual(out.bindings, ["a", "b"]);
  const docs = parseAllDocuments(out.text).map(
    (d) => d.toJS() as { spec: { validationActions: string[]; policyName?: string } },
  );
  assert.deepEqual(docs[0]!.spec.validationActions, ["Deny"], "not a binding");
  assert.deepEqual(docs[1]!.spec.validationActions, [...AUDIT_FIRST_ACTIONS]);
  assert.deepEqual(docs[2]!.spec.validationActions, [...AUDIT_FIRST_ACTIONS]);
  assert.equal(docs[2]!.spec.policyName, "x", "the next key survives");
  assert.deepEqual(docs[3]!.spec.validationActions, ["Warn"]);
  assert.ok(!out.text.includes("a comment"));
});

void test("a component's RBAC reads only what its params need, never the base's Namespaces, and says why", () => {
  const roles = new Map<string, { rules: { resources: string[]; verbs: string[] }[] }>();
  for (const c of readdirSync(LIBRARY)) {
    let text: string;
    try {
      text = readFileSync(join(LIBRARY, c, "rbac.yaml"), "utf8");
    } catch {
      continue;
    }
    const docs = parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string } });
    const role = docs.find((d) => d.kind === "ClusterRole") as unknown as {
      rules: { resources: string[]; verbs: string[] }[];
    };
    roles.set(c, role);
    for (const r of role.rules) {
      assert.ok(!r.resources.includes("namespaces"), `${c}: the base reads Namespaces`);
      if (!r.resources.includes("subjectaccessreviews"))
        assert.deepEqual(r.verbs, ["get", "list", "watch"], c);
    }
    assert.match(text, /# params of .*: serve caches all|# authorizer checks of/, `${c}: each rule says why`);
    const binding = docs.find((d) => d.kind === "ClusterRoleBinding");
    assert.equal(binding?.metadata.name, `celgate-${c}`);
  }
  // Only the Pod-params policy reads Pods, so only enabling it makes each replica cache every Pod.
  assert.deepEqual(
    [...roles].filter(([, r]) => r.rules.some((x) => x.resources.includes("pods"))).map(([c]) => c),
    ["deny-escalating-exec"],
  );
  assert.ok(!roles.has("disallow-latest-tag"), "a policy without params adds no RBAC");
});
