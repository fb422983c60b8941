/**
 * src/yaml/reader.ts: the schema reader both file formats read through. Each format's own
 * diagnostics are pinned by test/unit/policy/parse.test.ts and test/unit/suite/parse.test.ts;
 * these tests pin what the reader itself decides (null, aliases, duplicate keys, where problems are
 * shown) with a small wording of their own.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isScalar } from "yaml";
import type { Diagnostic } from "../../../src/errors.ts";
import {
  atNodes,
  byPath,
  type Field,
  offsetOf,
  readDocuments,
  type Wording,
  type YamlMap,
  YamlReader,
} from "../../../src/yaml/reader.ts";
import { YamlSourceMap } from "../../../src/yaml/source-map.ts";

const WORDING: Wording = {
  typeCode: "PE_FIELD_TYPE",
  wrongType: (expected, got) => `want ${expected}, have ${got.toJSON()}`,
  missingItem: "no value",
  fieldName: (key) => (isScalar(key) && typeof key.value === "string" ? key.value : undefined),
  refusedKey: "keys are strings",
  unknownFieldCode: "PE_FIELD_VALUE",
  unknownFieldSeverity: "warning",
  unknownField: (key, known, what) => `unknown ${key} in ${what || "it"}; known: ${known.join(",")}`,
};

function read(
  text: string,
  locate: "node" | "path" = "node",
  wording: Wording = WORDING,
): { top: YamlMap; r: YamlReader; d: Diagnostic[] } {
  const { docs, positions } = readDocuments(text, "f.yaml");
  const doc = docs[0];
  assert.ok(doc?.contents);
  const d: Diagnostic[] = [];
  const locator =
    locate === "node"
      ? atNodes(positions)
      : byPath(new YamlSourceMap(positions, doc, doc.contents), doc, positions);
  const r = new YamlReader(doc, d, wording, locator);
  const root = r.resolve(doc.contents);
  assert.ok(root);
  const top = r.mapping({ node: root, offset: offsetOf(doc.contents, 0), path: "" });
  assert.ok(top);
  return { top, r, d };
}

const where = (d: Diagnostic) => `${d.location?.line}:${d.location?.column} ${d.path ?? ""} ${d.message}`;

void test("a null value is a value to get() and absent to field(), as Go's decoder leaves a field unset", () => {
  const { top } = read("a:\nb: ~\nc: null\nd: x\ne: {f}\n");
  for (const key of ["a", "b", "c"]) {
    assert.ok(top.get(key), key);
    assert.equal(top.field(key), undefined, key);
  }
  assert.equal(top.string("d"), "x");
  assert.equal(top.get("zz"), undefined);
  // A flow key without a value has no value node at all; it reads as null too.
  const e = top.map("e");
  assert.ok(e?.has("f"));
  assert.equal(e?.field("f"), undefined);
  assert.equal(e?.get("f")?.node.toJSON(), null);
});

void test("aliases are resolved wherever a value or key is read", () => {
  const { top, d } = read("base: &b {name: n, list: &l [1, 2]}\nuse: *b\nagain: *l\n");
  assert.equal(top.map("use")?.string("name"), "n");
  assert.deepEqual(
    top.list("again")?.map((f: Field) => f.path),
    ["again[0]", "again[1]"],
  );
  assert.deepEqual(d, []);
});

void test("the later of two keys naming one field wins, as in the decoded object", () => {
  // yaml refuses a repeated key; 1 and '1' are two keys that a wording may name alike.
  const wording: Wording = {
    ...WORDING,
    fieldName: (key) => (isScalar(key) ? String(key.value) : undefined),
  };
  const { top } = read("1: a\n'1': b\n", "node", wording);
  assert.deepEqual(top.keys(), ["1"]);
  assert.equal(top.string("1"), "b");
  assert.equal(top.keyOffset("1"), 5);
});

void test("type errors use the wording's code and text, at the value", () => {
  const { top, r, d } = read("s: [1]\nm: text\nl: {a: 1}\nb: 1\n");
  assert.equal(top.string("s"), undefined);
  assert.equal(top.map("m"), undefined);
  assert.equal(top.list("l"), undefined);
  assert.equal(r.boolean(top.get("b") as Field), undefined);
  assert.deepEqual(d.map(where), [
    "1:4 s want string, have 1",
    "2:4 m want mapping, have text",
    "3:4 l want list, have [object Object]",
    "4:4 b want boolean, have 1",
  ]);
  assert.equal(r.errors, 4);
  assert.ok(d.every((x) => x.code === "PE_FIELD_TYPE" && x.severity === "error"));
});

void test("list items keep their index in the path, a null item included", () => {
  const { top, d } = read("l:\n  - a\n  -\n  - c\n");
  const items = top.list("l");
  assert.deepEqual(
    items?.map((f) => [f.path, f.node.toJSON()]),
    [
      ["l[0]", "a"],
      ["l[1]", null],
      ["l[2]", "c"],
    ],
  );
  assert.deepEqual(d, []);
});

void test("keys the wording refuses are reported at the key and left out", () => {
  const { top, d } = read("1: a\nok: b\n");
  assert.deepEqual(top.keys(), ["ok"]);
  assert.deepEqual(d.map(where), ["1:1  keys are strings"]);
});

void test("unknown keys are reported with the wording's code, severity and text, at the key", () => {
  const { top, d } = read("known: 1\nother:\n  x: 1\n");
  top.known(["known"], "top");
  top.map("other")?.known(["y"]);
  assert.deepEqual(d.map(where), [
    "2:1 other unknown other in top; known: known",
    "3:3 other.x unknown x in it; known: y",
  ]);
  assert.ok(d.every((x) => x.code === "PE_FIELD_VALUE" && x.severity === "warning"));
});

void test("by path, a problem with an empty value is shown at its key; at the node, at the node", () => {
  const text = "a:\n  b:\n  c: [1]\n";
  const byNode = read(text, "node");
  const byMap = read(text, "path");
  for (const { top, r } of [byNode, byMap]) {
    const a = top.map("a");
    assert.ok(a);
    r.string(a.get("b") as Field);
    a.string("c");
  }
  assert.deepEqual(byMap.d.map(where), ["2:3 a.b want string, have null", "3:6 a.c want string, have 1"]);
  assert.equal(byNode.d[1]?.location?.column, 6);
  // The empty value itself starts after its key's colon.
  assert.notEqual(byNode.d[0]?.location?.column, 3);
});

void test("readDocuments reads every document of a file with one set of positions", () => {
  const { docs, positions } = readDocuments("a: 1\n---\nb: 2\n", "f.yaml");
  assert.equal(docs.length, 2);
  const second = docs[1]?.contents;
  assert.deepEqual(positions.at(offsetOf(second, 0)), { file: "f.yaml", line: 3, column: 1 });
});

void test("an object label, once set, goes on every diagnostic", () => {
  const { top, r, d } = read("a: [1]\n");
  r.object = { kind: "K", name: "n" };
  top.string("a");
  assert.deepEqual(d[0]?.object, { kind: "K", name: "n" });
});
