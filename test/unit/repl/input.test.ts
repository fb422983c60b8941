import assert from "node:assert/strict";
import { test } from "node:test";
import { isIncomplete, needsMore, splitInputs } from "../../../src/adapters/repl/input.ts";

test("isIncomplete: open brackets, open triple quotes and trailing operators continue", () => {
  const cases: [string, boolean][] = [
    ["1 + 2", false],
    ["object.spec.containers.all(c,", true],
    ["[1, 2", true],
    ["{'a': 1", true],
    ["f(x))", false],
    ["x &&", true],
    ["x ||  ", true],
    ["x ? 1 :", true],
    ["object.", true],
    ["'(' + x", false],
    ['"unterminated', false],
    ["'''three\nlines", true],
    ["'''three\nlines'''", false],
    ["r'\\'", false],
    ["a // comment (", false],
    ["a && // more to come", true],
    ["'&&'", false],
  ];
  for (const [text, expected] of cases) assert.equal(isIncomplete(text), expected, JSON.stringify(text));
});

test("needsMore: commands do not continue, except :let with an unfinished expression", () => {
  assert.equal(needsMore(":object pod.yaml"), false);
  assert.equal(needsMore(":policy ("), false);
  assert.equal(needsMore(":let xs = [1,"), true);
  assert.equal(needsMore(":let xs ="), true);
  assert.equal(needsMore(":let xs = [1]"), false);
  assert.equal(needsMore(""), false);
  assert.equal(needsMore("xs.all(x,\n x > 0"), true);
});

test("splitInputs: a :command line ends the unfinished expression before it", () => {
  assert.deepEqual(splitInputs("1 +\n:vars"), ["1 +", ":vars"]);
  assert.deepEqual(splitInputs("a &&\n b"), ["a &&\n b"]);
  assert.deepEqual(splitInputs(":let x = [1,\n 2]"), [":let x = [1,\n 2]"]);
});
