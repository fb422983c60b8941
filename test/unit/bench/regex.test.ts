/**
 * Correctness gates of the regular-expression benchmark (target 2): the ordinary patterns agree with
 * native RegExp on the whole corpus and each both matches and rejects some of it; the hostile cases
 * answer right. The gate must also catch a pattern on which RE2 and JavaScript disagree, and a corpus
 * that never exercises one outcome. Timings are never asserted here.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { HOSTILE, ORDINARY, ordinaryCorpus, regexGateProblems, runRegexBench } from "../../../bench/regex.ts";

test("the ordinary patterns pass the gate on the benchmark corpus", () => {
  assert.deepEqual(regexGateProblems(ORDINARY, ordinaryCorpus()), []);
});

test("the corpus is deterministic and varied", () => {
  const a = ordinaryCorpus();
  assert.deepEqual(ordinaryCorpus(), a);
  assert.ok(new Set(a).size > a.length / 2, `only ${new Set(a).size} distinct strings of ${a.length}`);
  assert.ok(
    a.every((s) => /^[\x20-\x7e]*$/.test(s)),
    "the corpus must stay ASCII",
  );
});

test("the gate reports a pattern RE2 and JavaScript read differently", () => {
  // \s is ASCII whitespace in RE2 and Unicode whitespace in JavaScript.
  const problems = regexGateProblems([{ name: "space", pattern: "\\s" }], ["a b", "a\u00a0b"], []);
  assert.equal(problems.length, 1);
  assert.match(problems[0] ?? "", /^space: "a\u00a0b" is not matched, a native RegExp says otherwise$/);
});

test("the gate reports a pattern the corpus never matches, or always does", () => {
  assert.deepEqual(regexGateProblems([{ name: "x", pattern: "^x$" }], ["a", "b"], []), [
    "x: the corpus never matches; it must do both",
  ]);
  assert.deepEqual(regexGateProblems([{ name: "any", pattern: "" }], ["a", "b"], []), [
    "any: the corpus always matches; it must do both",
  ]);
});

test("the gate reports a hostile case answered wrongly", () => {
  const wrong = { ...(HOSTILE[0] as (typeof HOSTILE)[number]), expected: true };
  assert.deepEqual(regexGateProblems([], [], [wrong]), [
    `${wrong.pattern}: answered false on hostile input, expected true`,
  ]);
});

test("a short run reports every pattern and hostile case, with positive timings", () => {
  const r = runRegexBench({ rounds: 1, warmupRounds: 0, iterations: 1, hostileLengths: [100, 1000] });
  assert.deepEqual(
    r.ordinary.map((p) => p.name),
    ORDINARY.map((p) => p.name),
  );
  assert.ok(r.ordinary.every((p) => p.oursNs > 0 && p.nativeNs > 0 && p.ratio > 0));
  assert.deepEqual(
    r.hostile.map((h) => h.pattern),
    HOSTILE.map((h) => h.pattern),
  );
  assert.ok(r.hostile.every((h) => h.shortMs > 0 && h.longMs > 0));
});
