/**
 * Copying and writing JSON values of any depth, numbers as yaml/json-numbers.ts reads them. The
 * depth bound is the API server's (Go's encoding/json refuses nesting past 10,000 levels), deeper
 * than JSON.stringify and structuredClone recurse on the main thread.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { cloneJson, stringifyJson } from "../../../src/request/json-deep.ts";
import { parseJson } from "../../../src/yaml/json-numbers.ts";

const DEPTH = 10_000;

/** `[[…[leaf]…]]`, `depth` lists deep. */
function nested(depth: number, leaf: unknown): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

void test("a value too deep for JSON.stringify is written whole, a bigint and a float64 mark as numbers", () => {
  const v = nested(DEPTH, { big: 2n ** 62n, one: parseJson('{"x":1.0}'), gone: undefined });
  const text = stringifyJson(v);
  assert.equal(text, `${"[".repeat(DEPTH)}{"big":4611686018427387904,"one":{"x":1}}${"]".repeat(DEPTH)}`);
});

void test("with indentation the explicit-stack writer writes what JSON.stringify writes", () => {
  // The reference: JSON.stringify of the same value with a small number in the bigint's place.
  const shaped = (n: unknown) => ({ a: [n, "x", {}, [], { b: [null, true] }], c: {}, d: undefined });
  for (const space of [1, 2, 4])
    assert.equal(
      stringifyJson(shaped(2n ** 60n), space),
      JSON.stringify(shaped(12345), null, space).replace("12345", "1152921504606846976"),
    );
  assert.equal(stringifyJson(2n ** 63n - 1n), "9223372036854775807");
});

void test("a deep copy keeps bigints and float64 marks, at any depth", () => {
  const leaf = parseJson('{"f":2.0,"i":9007199254740993}') as { f: unknown; i: unknown };
  const copy = cloneJson(nested(DEPTH, leaf));
  let at: unknown = copy;
  for (let i = 0; i < DEPTH; i++) at = (at as unknown[])[0];
  const got = at as { f: unknown; i: unknown };
  assert.notEqual(got, leaf, "a copy, not the same object");
  assert.ok(got.f instanceof Number && got.f.valueOf() === 2, "the float64 mark is kept");
  assert.equal(got.i, 9007199254740993n);
});
