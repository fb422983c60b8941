/**
 * Alias expansion is bounded by Kubernetes' own rule (gopkg.in/yaml.v2 decode.go: `allowedAliasRatio`
 * and the check in `(*decoder).unmarshal`, which sigs.k8s.io/yaml decodes with): a file that uses
 * aliases plainly loads whatever their count, a bomb is a located PE_YAML_ALIASES diagnostic, and
 * nothing throws (the yaml package's own limit of 100 alias uses threw out of every command).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { parseAllDocuments } from "yaml";
import { parseDocuments } from "../../../src/adapters/input/documents.ts";
import { loadPolicies, loadPolicyFiles } from "../../../src/index.ts";
import { readObjects } from "../../../src/manifests/documents.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { allowedAliasRatio, checkAliases } from "../../../src/yaml/aliases.ts";

/** A ConfigMap whose one anchored label map is used `uses` times: benign, whatever the count. */
function manyUses(uses: number): string {
  const lines = [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    "  name: many",
    "  labels: &l {a: b}",
    "data:",
  ];
  for (let i = 0; i < uses; i++) lines.push(`  k${i}: &v${i} x${i}`);
  lines.push("list:");
  for (let i = 0; i < uses; i++) lines.push("  - *l");
  return `${lines.join("\n")}\n`;
}

/** Nine levels of ten aliases each: a billion-laughs document of a dozen lines. */
const BOMB = [
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata:",
  "  name: bomb",
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...["b", "c", "d", "e", "f", "g", "h", "i"].map(
    (n, i) => `${n}: &${n} [${Array(10).fill(`*${"abcdefghi"[i]}`).join(",")}]`,
  ),
  "",
].join("\n");

test("allowedAliasRatio follows go-yaml's: 99% up to 400,000 nodes, 10% from 4,000,000, linear between", () => {
  assert.equal(allowedAliasRatio(1000), 0.99);
  assert.equal(allowedAliasRatio(400_000), 0.99);
  assert.equal(allowedAliasRatio(4_000_000), 0.1);
  assert.equal(allowedAliasRatio(10_000_000), 0.1);
  assert.ok(Math.abs(allowedAliasRatio(2_200_000) - 0.545) < 1e-9);
});

test("a file that uses one anchor 150 times parses with no diagnostic, the aliases expanded", () => {
  const { set, diagnostics } = parsePolicyText(manyUses(150), "many.yaml");
  assert.deepEqual(diagnostics, []);
  const cm = set.resources[0]?.object as { list: unknown[] };
  assert.equal(cm.list.length, 150);
  assert.deepEqual(cm.list[149], { a: "b" });
});

test("a billion-laughs document is PE_YAML_ALIASES at the alias where the share passed the bound", () => {
  const { set, diagnostics } = parsePolicyText(BOMB, "bomb.yaml");
  assert.equal(set.resources.length, 0);
  assert.equal(diagnostics.length, 1);
  const d = diagnostics[0];
  assert.equal(d?.code, "PE_YAML_ALIASES");
  assert.equal(d?.severity, "error");
  // The first level whose expansion passes 1,000 nodes: `d`'s list of ten *c (each 111 nodes).
  assert.equal(d?.location?.file, "bomb.yaml");
  assert.equal(d?.location?.line, 8);
  assert.match(d?.message ?? "", /aliases expand too far.*alias \*c/);
});

test("an alias inside the node it names is PE_YAML_ALIASES, not a cyclic value", () => {
  const text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: loop\ndata: &d\n  self: *d\n";
  const { diagnostics } = parsePolicyText(text, "loop.yaml");
  assert.deepEqual(
    diagnostics.map((x) => [x.code, x.location?.line, x.location?.column]),
    [["PE_YAML_ALIASES", 6, 9]],
  );
});

test("the other documents of the file are still read", () => {
  const text = `${BOMB}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n`;
  const { set, diagnostics } = parsePolicyText(text, "two.yaml");
  assert.deepEqual(
    set.resources.map((r) => r.name),
    ["fine"],
  );
  assert.deepEqual(
    diagnostics.map((x) => x.code),
    ["PE_YAML_ALIASES"],
  );
});

test("counting visits each node of the text once: a deep chain of aliases is judged without expanding it", () => {
  // 60 levels of two aliases each would be 2^60 nodes expanded.
  const lines = ["a0: &a0 [x, y]"];
  for (let i = 1; i <= 60; i++) lines.push(`a${i}: &a${i} [*a${i - 1}, *a${i - 1}]`);
  const doc = parseAllDocuments(lines.join("\n"))[0];
  assert.ok(doc !== undefined && !Array.isArray(doc));
  const excess = checkAliases(doc as never);
  assert.equal(excess?.reason, "excessive");
});

test("loadPolicies and loadPolicyFiles keep their promise not to throw on an alias bomb", async () => {
  const loaded = loadPolicies(BOMB, "bomb.yaml");
  assert.deepEqual(
    loaded.diagnostics.map((d) => d.code),
    ["PE_YAML_ALIASES"],
  );
  const dir = await mkdtemp(join(tmpdir(), "celgate-alias-"));
  try {
    await writeFile(join(dir, "bomb.yaml"), BOMB);
    await writeFile(join(dir, "many.yaml"), manyUses(300));
    const files = await loadPolicyFiles([dir]);
    assert.deepEqual(
      files.diagnostics.map((d) => d.code),
      ["PE_YAML_ALIASES"],
    );
    assert.deepEqual(
      files.set.resources.map((r) => r.name),
      ["many"],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("data files (eval's inputs) and manifests' objects take the same rule, as a located message", () => {
  const bad = parseDocuments(BOMB, "in.yaml");
  assert.equal(bad.ok, false);
  assert.match(bad.ok ? "" : bad.error, /^in\.yaml:8:\d+: the document's aliases expand too far/);
  const good = parseDocuments(manyUses(150), "in.yaml");
  assert.equal(good.ok, true);
  const read = readObjects(BOMB, "m.yaml");
  assert.deepEqual(
    read.diagnostics.map((d) => [d.code, d.location?.line]),
    [["PE_YAML_ALIASES", 8]],
  );
  assert.equal(readObjects(manyUses(150), "m.yaml").objects.length, 1);
});
