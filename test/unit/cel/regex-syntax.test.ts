/**
 * validateRegex: the text of Go's `regexp.Compile` error for a pattern, or undefined when Go accepts
 * it. Messages are Go's regexp/syntax/parse.go: `Error.Error()` is "error parsing regexp: " + the
 * ErrorCode + ": `" + the offending text + "`", with the ErrorCode strings defined there
 * (ErrMissingParen "missing closing )", ErrInvalidRepeatSize "invalid repeat count", ...).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compileRegex, validateRegex } from "../../../src/cel/regex/index.ts";
import { withoutGroupNames } from "../../../src/cel/regex/syntax.ts";
import { CelError } from "../../../src/cel/runtime/values.ts";

const INVALID: ReadonlyArray<readonly [string, string]> = [
  ["(abc", "missing closing ): `(abc`"], // ErrMissingParen, the whole pattern
  ["abc)", "unexpected ): `abc)`"], // ErrUnexpectedParen, the whole pattern
  ["[a", "missing closing ]: `[a`"], // ErrMissingBracket
  ["a**", "invalid nested repetition operator: `**`"], // ErrInvalidRepeatOp
  ["x{2}{3}{4}", "invalid nested repetition operator: `{2}{3}`"],
  ["*a", "missing argument to repetition operator: `*`"], // ErrMissingRepeatArgument
  ["\\1", "invalid escape sequence: `\\1`"], // ErrInvalidEscape: no backreferences
  ["\\8", "invalid escape sequence: `\\8`"],
  ["x{1001}", "invalid repeat count: `{1001}`"], // ErrInvalidRepeatSize: maxRepeat is 1000
  ["a{2,1}", "invalid repeat count: `{2,1}`"],
  ["((a{1,1000}){1,1000})", "invalid repeat count: `{1,1000}`"], // nested counts multiply (repeatIsValid)
  ["(?=a)", "invalid or unsupported Perl syntax: `(?=`"], // ErrInvalidPerlOp: no lookahead
  ["(?i", "invalid or unsupported Perl syntax: `(?i`"],
  ["(?P<>a)", "invalid named capture: `(?P<>`"], // ErrInvalidNamedCapture
  ["[z-a]", "invalid character class range: `z-a`"], // ErrInvalidCharRange
  ["\\pX", "invalid character class range: `\\pX`"], // unknown Unicode class
  ["[[:foo:]]", "invalid character class range: `[:foo:]`"], // unknown POSIX class
];

for (const [pattern, message] of INVALID) {
  void test(`validateRegex(${JSON.stringify(pattern)}) is Go's error`, () => {
    assert.equal(validateRegex(pattern), `error parsing regexp: ${message}`);
    // compileRegex fails with the same text, as a CelError.
    assert.throws(
      () => compileRegex(pattern),
      (e: unknown) => e instanceof CelError && e.message === `error parsing regexp: ${message}`,
    );
  });
}

const VALID = [
  "",
  "abc",
  "^$",
  "(?i)é",
  "\\pL{1000}",
  "(?P<year>\\d{4})-(?<month>\\d{2})",
  "a{,2}", // not a repetition in Go: literal text
  "[]a]", // a `]` first in a class is a literal
  "\\Q(?P<n>\\E",
];

void test("validateRegex accepts what Go accepts", () => {
  for (const pattern of VALID) assert.equal(validateRegex(pattern), undefined, pattern);
});

void test("two groups of one name are valid, as in Go (regexp.go SubexpIndex), unlike RE2/J", () => {
  assert.equal(validateRegex("(?P<x>a+)-(?P<x>b+)"), undefined);
  assert.equal(compileRegex("(?P<x>a+)-(?<x>b+)").find("zz aa-bb"), "aa-bb");
  // Other errors in such a pattern are still reported, quoting the pattern as given.
  assert.equal(
    validateRegex("(?P<n>a)(?P<n>b"),
    "error parsing regexp: missing closing ): `(?P<n>a)(?P<n>b`",
  );
  assert.equal(
    validateRegex("(?P<n>a)(?P<n>b)**"),
    "error parsing regexp: invalid nested repetition operator: `**`",
  );
});

void test("group names are removed only where Go's parser reads a group", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["(?P<n>a)(?<n>b)", "(a)(b)"],
    ["\\(?P<n>a)", "\\(?P<n>a)"], // an escaped parenthesis
    ["[(?P<n>](?P<n>a)", "[(?P<n>](a)"], // inside a class
    ["[]](?P<n>a)", "[]](a)"], // a class whose first character is `]`
    ["[^]](?P<n>a)", "[^]](a)"],
    ["[[:alpha:]](?P<n>a)", "[[:alpha:]](a)"],
    ["\\Q(?P<n>\\E(?P<n>a)", "\\Q(?P<n>\\E(a)"], // quoted text
    ["(?P<n-1>a)", "(?P<n-1>a)"], // not a valid name: left for the parser to reject
  ];
  for (const [pattern, unnamed] of cases) assert.equal(withoutGroupNames(pattern), unnamed, pattern);
});
