import assert from "node:assert/strict";
import { test } from "node:test";
import { regexLibrary } from "../../../src/cel/library/regex.ts";
import {
  compileRegex,
  compileRegexWith,
  type RegexEngine,
  regexEngine,
} from "../../../src/cel/regex/index.ts";
import { CelError, type CelValue } from "../../../src/cel/runtime/values.ts";
import { evaluate, libraryHarness, stubContext } from "../../helpers/library.ts";

// ---------------------------------------------------------------------------------------------
// The engine

interface MatchCase {
  readonly pattern: string;
  readonly text: string;
  /** The leftmost-first match, or undefined for none. */
  readonly find: string | undefined;
  readonly all?: readonly string[];
}

const matchCases: readonly MatchCase[] = [
  { pattern: "a+b", text: "xaab", find: "aab" },
  { pattern: "[0-9]+", text: "abc 123 def 45", find: "123", all: ["123", "45"] },
  { pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", text: "my-app-1", find: "my-app-1" },
  { pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", text: "-bad", find: undefined },
  // `matches` is a search, not a whole-string match.
  { pattern: "b", text: "abc", find: "b" },
  // Leftmost-first, not leftmost-longest.
  { pattern: "a|ab", text: "ab", find: "a" },
  { pattern: "a*?b", text: "aab", find: "aab" },
  { pattern: "a+?", text: "aaa", find: "a", all: ["a", "a", "a"] },
  // Inline flags, at the start and in groups.
  { pattern: "(?i)hello", text: "say HeLLo", find: "HeLLo" },
  { pattern: "(?i:a)b", text: "AB Ab", find: "Ab" },
  { pattern: "a(?i)b", text: "aB", find: "aB" },
  { pattern: "(?s)a.b", text: "a\nb", find: "a\nb" },
  { pattern: "a.b", text: "a\nb", find: undefined },
  { pattern: "(?m)^b$", text: "a\nb\nc", find: "b" },
  { pattern: "^b$", text: "a\nb\nc", find: undefined },
  { pattern: "(?U)a+", text: "aaa", find: "a" },
  { pattern: "(?U)a+?", text: "aaa", find: "aaa" },
  { pattern: "(?i)k", text: "\u212a", find: "\u212a" }, // Kelvin sign folds to k
  // RE2-only syntax.
  { pattern: "\\Aab\\z", text: "ab", find: "ab" },
  { pattern: "ab\\z", text: "ab\n", find: undefined },
  { pattern: "ab$", text: "ab\n", find: undefined }, // `$` is the end of text, not before a final newline
  { pattern: "(?P<year>\\d{4})-(?<month>\\d{2})", text: "on 2024-05-01", find: "2024-05" },
  { pattern: "[[:alpha:]]+", text: "12abC3", find: "abC" },
  { pattern: "[[:^digit:]x]+", text: "12ab3", find: "ab" },
  { pattern: "\\Qa.b*\\E", text: "aab a.b*", find: "a.b*" },
  { pattern: "\\x{41}\\x42\\101", text: "xABA", find: "ABA" },
  { pattern: "a{,2}", text: "a{,2}", find: "a{,2}" }, // not a repetition in RE2
  { pattern: "\\s+", text: "a\u00a0b c", find: " " }, // \s is ASCII only
  { pattern: "\\w+", text: "é_a1", find: "_a1" },
  { pattern: "\\bfoo\\b", text: "foobar foo", find: "foo" },
  // Unicode.
  { pattern: "\\pL+", text: "123héllo", find: "héllo" },
  { pattern: "\\p{Greek}+", text: "abc αβγ", find: "αβγ" },
  { pattern: "\\PL+", text: "ab12cd", find: "12" },
  { pattern: "^.$", text: "😀", find: "😀" },
  { pattern: "^..$", text: "😀", find: undefined },
  { pattern: "[😀-😂]+", text: "x😁😀y", find: "😁😀" },
  { pattern: "[^a]", text: "a😀", find: "😀" },
  { pattern: "x*", text: "😀", find: "", all: ["", ""] },
  { pattern: "é+", text: "éé", find: "éé" },
  // Counted repetitions beyond what V8's linear engine accepts directly.
  { pattern: "^a{20}$", text: "a".repeat(20), find: "a".repeat(20) },
  { pattern: "^a{2,40}$", text: "a".repeat(41), find: undefined },
  { pattern: "[a-z]{0,63}\\.", text: `${"b".repeat(70)}.`, find: `${"b".repeat(63)}.` },
  // Go's FindAll skips an empty match right after a match (here the one between "aaa" and "c").
  { pattern: "a*", text: "baaac", find: "", all: ["", "aaa", ""] },
  { pattern: "", text: "ab", find: "", all: ["", "", ""] },
];

for (const c of matchCases) {
  void test(`compileRegex(${JSON.stringify(c.pattern)}) on ${JSON.stringify(c.text)}`, () => {
    const re = compileRegex(c.pattern);
    assert.equal(re.test(c.text), c.find !== undefined);
    assert.equal(re.find(c.text), c.find);
    if (c.all) assert.deepEqual(re.findAll(c.text, -1), c.all);
  });
}

void test("both engines agree on every case they both run", () => {
  for (const c of matchCases) {
    let linear: ReturnType<typeof compileRegexWith>;
    try {
      linear = compileRegexWith(c.pattern, "v8-linear");
    } catch {
      continue;
    }
    const fallback = compileRegexWith(c.pattern, "re2js");
    for (const text of [c.text, "", "a\nb", "😀a😀"]) {
      assert.equal(linear.test(text), fallback.test(text), `${c.pattern} test ${text}`);
      assert.equal(linear.find(text), fallback.find(text), `${c.pattern} find ${text}`);
      assert.deepEqual(linear.findAll(text, -1), fallback.findAll(text, -1), `${c.pattern} findAll ${text}`);
    }
  }
});

/** A small deterministic generator, so the differential test below is reproducible. */
function rng(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

void test("the translation to V8 matches RE2/J on generated patterns", () => {
  const rnd = rng(42);
  const atoms = [
    "a",
    "b",
    ".",
    "[ab]",
    "[^a]",
    "\\d",
    "\\w",
    "\\W",
    "\\s",
    "😀",
    "é",
    "\\b",
    "\\B",
    "^",
    "$",
  ];
  const more = ["(?i:A)", "(?s:.)", "[[:upper:]]", "\\Q.\\E", "(?m:^)", "(?m:$)", "\n", "K"];
  const allAtoms = [...atoms, ...more];
  const quantifiers = [
    "",
    "",
    "",
    "*",
    "+",
    "?",
    "*?",
    "+?",
    "??",
    "{2}",
    "{1,2}",
    "{0,}?",
    "{17}",
    "{2,18}",
  ];
  const gen = (depth: number): string => {
    let s = "";
    for (let k = 0, n = 1 + rnd(3); k < n; k++) {
      const r = rnd(10);
      let atom: string;
      if (depth > 0 && r < 2) atom = `(${gen(depth - 1)})`;
      else if (depth > 0 && r < 3) atom = `(?:${gen(depth - 1)}|${gen(depth - 1)})`;
      else atom = allAtoms[rnd(allAtoms.length)] as string;
      const anchor = /^[\^$]|\\[bB]|\(\?m:/.test(atom);
      s += atom + (anchor ? "" : (quantifiers[rnd(quantifiers.length)] as string));
    }
    return s;
  };
  const chars = ["a", "b", "x", "A", "K", "\u212a", "1", " ", "\n", "😀", "é", ".", "_"];
  let compared = 0;
  for (let t = 0; t < 1500; t++) {
    let pattern = gen(2);
    if (rnd(4) === 0) pattern = `(?i)${pattern}`;
    if (rnd(6) === 0) pattern = `(?U)${pattern}`;
    let linear: ReturnType<typeof compileRegexWith>;
    try {
      linear = compileRegexWith(pattern, "v8-linear");
    } catch {
      continue;
    }
    const fallback = compileRegexWith(pattern, "re2js");
    for (let j = 0; j < 4; j++) {
      let text = "";
      for (let k = 0, n = rnd(12); k < n; k++) text += chars[rnd(chars.length)];
      const a = [linear.test(text), linear.find(text), linear.findAll(text, -1)];
      const b = [fallback.test(text), fallback.find(text), fallback.findAll(text, -1)];
      assert.deepEqual(a, b, `pattern ${JSON.stringify(pattern)} on ${JSON.stringify(text)}`);
      compared++;
    }
  }
  assert.ok(compared > 4000, `compared ${compared} cases`);
});

const engineCases: ReadonlyArray<readonly [string, RegexEngine]> = [
  ["^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "v8-linear"],
  ["(?i)^[a-z]+$", "v8-linear"],
  ["(?m)^a$", "v8-linear"],
  ["[\\w.-]{0,127}", "v8-linear"],
  ["\\pL", "re2js"], // Unicode classes
  ["(?i)é", "re2js"], // case folding beyond ASCII
  ["^a(?m:^)b", "re2js"], // single-line and multi-line anchors together
  ["(a*)*", "re2js"], // a loop over something that can match empty
];

for (const [pattern, engine] of engineCases) {
  void test(`regexEngine(${JSON.stringify(pattern)}) is ${engine}`, () => {
    assert.equal(regexEngine(pattern), engine);
  });
}

const invalidCases: ReadonlyArray<readonly [string, string]> = [
  ["(abc", "error parsing regexp: missing closing ): `(abc`"],
  ["abc)", "error parsing regexp: unexpected ): `abc)`"],
  ["[a", "error parsing regexp: missing closing ]: `[a`"],
  ["a**", "error parsing regexp: invalid nested repetition operator: `**`"],
  ["\\1", "error parsing regexp: invalid escape sequence: `\\1`"],
  ["x{1001}", "error parsing regexp: invalid repeat count: `{1001}`"],
  ["(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"],
  ["[z-a]", "error parsing regexp: invalid character class range: `z-a`"],
];

for (const [pattern, message] of invalidCases) {
  void test(`compileRegex(${JSON.stringify(pattern)}) fails like Go`, () => {
    assert.throws(
      () => compileRegex(pattern),
      (e: unknown) => e instanceof CelError && e.message === message,
    );
    // The failure is cached and reported again.
    assert.throws(() => compileRegex(pattern), CelError);
  });
}

const catastrophic: ReadonlyArray<readonly [string, string, boolean]> = [
  ["(a+)+$", `${"a".repeat(30)}b`, false],
  ["(a|a)*b", "a".repeat(40), false],
  ["(x+x+)+y", "x".repeat(5000), false],
  ["^(a|aa)+$", `${"a".repeat(5000)}b`, false],
  ["(a+)+$", "a".repeat(30), true],
  ["(\\w+\\s?)*$", `${"word ".repeat(2000)}!`, true],
];

for (const [pattern, text, expected] of catastrophic) {
  void test(`${pattern} on ${text.length} characters finishes`, { timeout: 5000 }, () => {
    const re = compileRegex(pattern);
    assert.equal(re.test(text), expected);
    assert.equal(re.find(text) !== undefined, expected);
  });
}

void test("text that V8 could read differently goes to the fallback", () => {
  // A lone surrogate is one rune to RE2; `\r` is no line end for RE2's (?m).
  const dot = compileRegex("^.$");
  assert.equal(dot.test("\ud800"), true);
  const ml = compileRegex("(?m)a$");
  assert.equal(ml.test("a\rb"), false);
  assert.equal(ml.test("a\nb"), true);
  assert.deepEqual(compileRegex("(?m)^\\w").findAll("a\rb\nc", -1), ["a", "c"]);
});

void test("findAll honours the limit", () => {
  const re = compileRegex("[0-9]");
  assert.deepEqual(re.findAll("1a2b3", 2), ["1", "2"]);
  assert.deepEqual(re.findAll("1a2b3", 0), []);
  assert.deepEqual(compileRegexWith("\\pN", "re2js").findAll("1a2b3", 2), ["1", "2"]);
});

void test("compiled patterns are cached", () => {
  assert.equal(compileRegex("cached-[a-z]+"), compileRegex("cached-[a-z]+"));
});

// ---------------------------------------------------------------------------------------------
// Kubernetes' find / findAll

const regex = libraryHarness(regexLibrary, stubContext({ regex: true }));
const call = regex.call;

void test("regexLibrary is part of the Kubernetes environment", () => {
  assert.equal(regexLibrary.availability, "kubernetes");
});

const findCases: ReadonlyArray<readonly [string, string, string]> = [
  ["abc 123", "[0-9]+", "123"],
  ["abc 123", "xyz", ""],
  ["abc 123", "[0-9]*", ""], // an empty match at 0 comes first
  ["Ünïcödé", "\\pL{2}", "Ün"],
];

for (const [text, pattern, expected] of findCases) {
  void test(`${JSON.stringify(text)}.find(${JSON.stringify(pattern)}) is ${JSON.stringify(expected)}`, () => {
    assert.equal(call("find", "string_find_string", text, pattern), expected);
  });
}

const findAllCases: ReadonlyArray<readonly [string, string, bigint | undefined, readonly string[]]> = [
  ["123 abc 456", "[0-9]+", undefined, ["123", "456"]],
  ["123 abc 456", "[0-9]+", 1n, ["123"]],
  ["123 abc 456", "[0-9]+", -1n, ["123", "456"]],
  ["123 abc 456", "[0-9]+", 0n, []],
  ["123 abc 456", "xyz", undefined, []],
  ["a,b,,c", "[^,]*", undefined, ["a", "b", "", "c"]],
];

for (const [text, pattern, limit, expected] of findAllCases) {
  void test(`${JSON.stringify(text)}.findAll(${JSON.stringify(pattern)}${limit === undefined ? "" : `, ${limit}`})`, () => {
    const result =
      limit === undefined
        ? call("findAll", "string_find_all_string", text, pattern)
        : call("findAll", "string_find_all_string_int", text, pattern, limit);
    assert.deepEqual(result, expected);
  });
}

void test("find with an invalid pattern fails as Kubernetes does", () => {
  assert.throws(
    () => call("find", "string_find_string", "x", "(x"),
    (e: unknown) =>
      e instanceof CelError && e.message === "Illegal regex: error parsing regexp: missing closing ): `(x`",
  );
  assert.throws(() => call("findAll", "string_find_all_string", "x", "[x"), /^CelError: Illegal regex/);
});

void test("find and findAll cost the product of string and pattern sizes", () => {
  const cost = (text: string, pattern: string) => regex.cost("find", "string_find_string", text, pattern);
  // ceil(0.1 × (1 + 19)) × ceil(0.25 × 6) = 2 × 2, of which 1 is the base cost.
  assert.equal(cost("a".repeat(19), "[0-9]+"), 3);
  // Code points, not UTF-16 units: 9 emoji count 9.
  assert.equal(cost("😀".repeat(9), "ab"), 0);
});

void test("find and findAll through evaluate", () => {
  const cases: ReadonlyArray<readonly [string, CelValue]> = [
    ["'abc 123'.find('[0-9]+')", "123"],
    ["'abc'.find('x')", ""],
    ["'1 2 3'.findAll('[0-9]')", ["1", "2", "3"]],
    ["'1 2 3'.findAll('[0-9]', 2)", ["1", "2"]],
  ];
  for (const [source, expected] of cases) {
    const r = evaluate(source);
    assert.ok(r.ok, `${source}: ${r.ok ? "" : r.error}`);
    assert.deepEqual(r.value, expected, source);
  }
});
