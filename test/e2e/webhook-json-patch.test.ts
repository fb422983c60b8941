/**
 * The test helper that checks the webhook's patches is itself checked here, against the examples
 * of RFC 6902 Appendix A, so a patch that "applies" in the end-to-end tests really is RFC 6902.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyJsonPatch, type PatchOperation, parsePointer } from "../helpers/json-patch.ts";

const cases: readonly {
  name: string;
  doc: unknown;
  patch: PatchOperation[];
  expected?: unknown;
  error?: RegExp;
}[] = [
  {
    name: "A.1 add an object member",
    doc: { foo: "bar" },
    patch: [{ op: "add", path: "/baz", value: "qux" }],
    expected: { baz: "qux", foo: "bar" },
  },
  {
    name: "A.2 add an array element",
    doc: { foo: ["bar", "baz"] },
    patch: [{ op: "add", path: "/foo/1", value: "qux" }],
    expected: { foo: ["bar", "qux", "baz"] },
  },
  {
    name: "A.3 remove an object member",
    doc: { baz: "qux", foo: "bar" },
    patch: [{ op: "remove", path: "/baz" }],
    expected: { foo: "bar" },
  },
  {
    name: "A.4 remove an array element",
    doc: { foo: ["bar", "qux", "baz"] },
    patch: [{ op: "remove", path: "/foo/1" }],
    expected: { foo: ["bar", "baz"] },
  },
  {
    name: "A.5 replace a value",
    doc: { baz: "qux", foo: "bar" },
    patch: [{ op: "replace", path: "/baz", value: "boo" }],
    expected: { baz: "boo", foo: "bar" },
  },
  {
    name: "A.6 move a value",
    doc: { foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } },
    patch: [{ op: "move", from: "/foo/waldo", path: "/qux/thud" }],
    expected: { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } },
  },
  {
    name: "A.7 move an array element",
    doc: { foo: ["all", "grass", "cows", "eat"] },
    patch: [{ op: "move", from: "/foo/1", path: "/foo/3" }],
    expected: { foo: ["all", "cows", "eat", "grass"] },
  },
  {
    name: "A.8 test a value (success)",
    doc: { baz: "qux", foo: ["a", 2, "c"] },
    patch: [
      { op: "test", path: "/baz", value: "qux" },
      { op: "test", path: "/foo/1", value: 2 },
    ],
    expected: { baz: "qux", foo: ["a", 2, "c"] },
  },
  {
    name: "A.9 test a value (error)",
    doc: { baz: "qux" },
    patch: [{ op: "test", path: "/baz", value: "bar" }],
    error: /test failed/,
  },
  {
    name: "A.10 add a nested member object",
    doc: { foo: "bar" },
    patch: [{ op: "add", path: "/child", value: { grandchild: {} } }],
    expected: { foo: "bar", child: { grandchild: {} } },
  },
  {
    name: "A.12 add to a nonexistent target",
    doc: { foo: "bar" },
    patch: [{ op: "add", path: "/baz/bat", value: "qux" }],
    error: /does not exist/,
  },
  {
    name: "A.14 ~ escape ordering",
    doc: { "/": 9, "~1": 10 },
    patch: [{ op: "test", path: "/~01", value: 10 }],
    expected: { "/": 9, "~1": 10 },
  },
  {
    name: "A.15 comparing strings and numbers",
    doc: { "/": 9, "~1": 10 },
    patch: [{ op: "test", path: "/~01", value: "10" }],
    error: /test failed/,
  },
  {
    name: "A.16 add an array value",
    doc: { foo: ["bar"] },
    patch: [{ op: "add", path: "/foo/-", value: ["abc", "def"] }],
    expected: { foo: ["bar", ["abc", "def"]] },
  },
  {
    name: "copy, and replace of a missing member is an error",
    doc: { a: { b: 1 } },
    patch: [
      { op: "copy", from: "/a", path: "/c" },
      { op: "replace", path: "/d", value: 1 },
    ],
    error: /does not exist/,
  },
  {
    name: "an index past the end is an error",
    doc: { a: [1] },
    patch: [{ op: "add", path: "/a/2", value: 3 }],
    error: /out of range/,
  },
];

void test("RFC 6902 Appendix A", () => {
  for (const c of cases) {
    const before = structuredClone(c.doc);
    if (c.error) assert.throws(() => applyJsonPatch(c.doc, c.patch), c.error, c.name);
    else assert.deepEqual(applyJsonPatch(c.doc, c.patch), c.expected, c.name);
    assert.deepEqual(c.doc, before, `${c.name}: the input was modified`);
  }
});

void test("RFC 6901 pointers", () => {
  assert.deepEqual(parsePointer(""), []);
  assert.deepEqual(parsePointer("/a~1b/~0c/~01"), ["a/b", "~c", "~1"]);
  assert.throws(() => parsePointer("a"), /must start/);
  assert.throws(() => parsePointer("/a~2"), /bad escape/);
});
