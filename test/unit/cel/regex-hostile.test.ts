/**
 * The fault trial's hostile patterns over 100 KB and 1 MB: each answers, with RE2's (Go's) result.
 * Before the automata, `(.*a){20}x` over 1 MB ran on V8's linear engine for about 25 s and 9 GB.
 * Outcomes only, never times; the test's timeout is a backstop.
 *
 * Expected values follow from leftmost-first matching: a text that ends with the final character
 * matches from position 0 (the greedy loops take everything), except the nested counted repetition,
 * which can take at most 1,000 characters before its `b`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compileRegex } from "../../../src/cel/regex/index.ts";

interface Hostile {
  readonly pattern: string;
  /** A text of length n on which the pattern backtracks for ever and never matches. */
  readonly failing: (n: number) => string;
  /** A text of about length n that matches, and its leftmost-first match. */
  readonly matching: (n: number) => { readonly text: string; readonly match: string };
}

const whole = (text: string) => ({ text, match: text });

const HOSTILE: readonly Hostile[] = [
  { pattern: "(.*a){20}x", failing: (n) => "a".repeat(n), matching: (n) => whole(`${"a".repeat(n)}x`) },
  { pattern: "(a*)*b", failing: (n) => "a".repeat(n), matching: (n) => whole(`${"a".repeat(n)}b`) },
  { pattern: "(a|a)*b", failing: (n) => "a".repeat(n), matching: (n) => whole(`${"a".repeat(n)}b`) },
  { pattern: "(x+x+)+y", failing: (n) => "x".repeat(n), matching: (n) => whole(`${"x".repeat(n)}y`) },
  {
    pattern: "((a{1,10}){1,10}){1,10}b",
    failing: (n) => "a".repeat(n),
    matching: (n) => ({ text: `${"a".repeat(n)}b`, match: `${"a".repeat(1000)}b` }),
  },
  {
    pattern: "(?:(?:\\w{1,20}\\s?){1,20}){1,2}!",
    failing: (n) => "word ".repeat(n / 5),
    matching: (n) => ({ text: `${"word ".repeat(n / 5 - 1)}word!`, match: `${"word ".repeat(39)}word!` }),
  },
];

for (const n of [100_000, 1_000_000]) {
  for (const h of HOSTILE) {
    void test(`${h.pattern} over ${n.toLocaleString("en-US")} characters answers as RE2 does`, {
      timeout: 120_000,
    }, () => {
      const re = compileRegex(h.pattern);
      const failing = h.failing(n);
      assert.equal(re.test(failing), false);
      assert.equal(re.find(failing), undefined);
      assert.deepEqual(re.findAll(failing, -1), []);
      const { text, match } = h.matching(n);
      assert.equal(re.test(text), true);
      // Compared without printing a megabyte on failure.
      assert.ok(re.find(text) === match, "find returns the leftmost-first match");
      const all = re.findAll(text, -1);
      assert.ok(all.length === 1 && all[0] === match, `findAll returns that match alone (${all.length})`);
    });
  }
}

void test("a pattern whose DFA states multiply (2^20 of them) answers over 1 MB without its cache", {
  timeout: 120_000,
}, () => {
  // Random a/b text: nearly every 21-character window is a new DFA state, so the cache thrashes and
  // the search goes on as an NFA simulation.
  let seed = 1;
  const chars: string[] = [];
  for (let i = 0; i < 1_000_000; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    chars.push((seed >> 16) & 1 ? "a" : "b");
  }
  chars[chars.length - 21] = "a";
  const text = chars.join("");
  const re = compileRegex("(a|b)*a(a|b){20}c");
  assert.equal(re.test(text), false);
  assert.equal(re.find(text), undefined);
  // With the final `c`, the greedy loop makes the match start at 0.
  assert.equal(re.test(`${text}c`), true);
  // Compared without printing a megabyte on failure.
  assert.ok(re.find(`${text}c`) === `${text}c`, "the match is the whole text");
});
