import assert from "node:assert/strict";
import { test } from "node:test";
import { codePointLength, hasSurrogate } from "../../../src/cel/runtime/code-points.ts";
import { evaluate } from "../../../src/cel/index.ts";

// Strings of one length (3 UTF-16 units) with different answers, asked in every order: an answer
// must depend on the string's content alone, not on its length or on what was asked before.
const SAME_LENGTH: readonly [string, number, boolean][] = [
  ["abc", 3, false],
  ["a\u{1F600}", 2, true],
  ["\ud800bc", 3, true], // a lone high surrogate is one code point
  ["ab\udc00", 3, true], // a lone low surrogate too
  ["x\udc00\ud800", 3, true], // low before high is no pair
  ["xyz", 3, false],
];

void test("code point sizes and surrogate checks agree with a plain count, whatever was asked before", () => {
  const count = (s: string) => Array.from(s).length;
  // Every order of asking: each string after each other one, sizes and checks interleaved.
  for (const [a, aSize, aSurrogate] of SAME_LENGTH)
    for (const [b, bSize, bSurrogate] of SAME_LENGTH) {
      assert.equal(codePointLength(a), aSize, a);
      assert.equal(hasSurrogate(b), bSurrogate, b);
      assert.equal(codePointLength(b), bSize, b);
      assert.equal(hasSurrogate(a), aSurrogate, a);
      assert.equal(codePointLength(a), count(a), a);
      // A copy built anew is another string object with the same content.
      const copy = [...b].join("");
      assert.equal(codePointLength(copy), bSize, copy);
    }
});

void test("size() and the cost of string calls count code points when strings of one length alternate", () => {
  const r = evaluate("['abc', 'a😀', 'xyz', 'b😀'].map(s, size(s))");
  assert.ok(r.ok, r.ok ? "" : r.error);
  assert.deepEqual(r.value, [3n, 2n, 3n, 2n]);
  // endsWith is priced by the size of its receiver, ceil(0.1 * size) (cel-go's runtime cost): 15
  // emoji are 30 UTF-16 units but 15 code points, priced as 15 letters, not as 30.
  const priced = (s: string) => {
    const e = evaluate("x.endsWith('c') || x.endsWith('d')", { x: s });
    assert.ok(e.ok, e.ok ? "" : e.error);
    return e.cost;
  };
  const emoji = priced("😀".repeat(15));
  assert.equal(priced("a".repeat(15)), emoji);
  assert.ok(priced("a".repeat(30)) > emoji);
  // Asked again after the others, the same string is priced the same.
  assert.equal(priced("😀".repeat(15)), emoji);
});
