/**
 * src/cel/go/quote.ts against Go's own tables: strconv/quote_test.go (quotetests, quoterunetests)
 * and unicode.IsPrint as strconv/quote.go defines it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isPrint, quote, quoteBytes, quoteWith } from "../../../../src/cel/go/quote.ts";
import { decodeRune, fromByteString, toByteString } from "../../../../src/cel/go/utf8.ts";

void test("quote follows strconv/quote_test.go quotetests (the Quote column)", () => {
  const cases: readonly [string, string][] = [
    ["\u0007\b\f\r\n\t\v", '"\\a\\b\\f\\r\\n\\t\\v"'],
    ["\\", '"\\\\"'],
    ["\u263a", '"☺"'],
    ["\u{10ffff}", '"\\U0010ffff"'],
    ["\u0004", '"\\x04"'],
    // Non-printable but graphic runes: Quote escapes them.
    ["!\u00a0!\u2000!\u3000!", '"!\\u00a0!\\u2000!\\u3000!"'],
  ];
  for (const [input, want] of cases) assert.equal(quote(input), want, JSON.stringify(input));
});

void test('quoteBytes writes an invalid UTF-8 byte as \\xNN (quote_test.go: "abc\\xffdef")', () => {
  assert.equal(quoteBytes("abc\xffdef"), '"abc\\xffdef"');
  // A truncated sequence is one bad byte, then the rest as it decodes (utf8.DecodeRuneInString).
  assert.equal(quoteBytes("\xe2\x98"), '"\\xe2\\x98"');
  assert.equal(quoteBytes(toByteString("\u263a")), '"☺"');
});

void test("quoterunetests: U+FFFD and U+00FF are printable, U+00A0 is not", () => {
  assert.equal(quote("\ufffd"), '"\ufffd"');
  assert.equal(quote("\u00ff"), '"ÿ"');
  assert.equal(quote("\u00a0"), '"\\u00a0"');
  assert.equal(quote("'"), `"'"`);
});

void test("a lone surrogate is quoted as U+FFFD, which is what Go receives after JSON decoding", () => {
  assert.equal(quote("a\ud800b"), '"a\ufffdb"');
  assert.equal(quoteBytes(toByteString("a\ud800b")), '"a\ufffdb"');
});

void test("quote of a string and quoteBytes of its UTF-8 agree on every kind of rune", () => {
  const samples = ["", "plain", '"\\', "\u0000\u001f\u007f\u0080\u00ad", "日本\u{1f600}\u{e0001}", " \t"];
  for (const s of samples) assert.equal(quoteBytes(toByteString(s)), quote(s), JSON.stringify(s));
});

void test("isPrint is unicode.IsPrint: L, M, N, P, S and the ASCII space only", () => {
  assert.equal(isPrint(0x20), true);
  assert.equal(isPrint(0x7e), true);
  assert.equal(isPrint(0x7f), false);
  assert.equal(isPrint(0x1f), false);
  assert.equal(isPrint(0x3000), false); // ideographic space: a space, so not printable
  assert.equal(isPrint(0x0301), true); // combining acute accent (M)
  assert.equal(isPrint(0xe000), false); // private use
});

void test("quoteWith keeps what its predicate keeps but always writes Go's short escapes", () => {
  assert.equal(
    quoteWith("a\u0000\n\u00a0", () => true),
    '"a\u0000\\n\u00a0"',
  );
});

void test("byte strings round-trip, and decodeRune rejects what utf8.DecodeRuneInString rejects", () => {
  const s = "héllo \u{1f600}";
  assert.equal(fromByteString(toByteString(s)), s);
  assert.deepEqual(decodeRune(toByteString("é"), 0), [0xe9, 2]);
  assert.equal(decodeRune("\xc0\x80", 0), undefined); // overlong NUL
  assert.equal(decodeRune("\xed\xa0\x80", 0), undefined); // a surrogate
  assert.equal(decodeRune("\xf4\x90\x80\x80", 0), undefined); // past U+10FFFF
  assert.equal(fromByteString("a\xffb"), "a\ufffdb");
});
