/**
 * Literals cel-go's parser refuses and @bufbuild/cel's accepts (cases from cel-go's
 * parser/parser_test.go, lexer rules from parser/gen/CEL.g4, unescape rules from
 * parser/unescape.go). checkExpression reports them as syntax issues, alone, as a parse error
 * stops cel-go before checking.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { admissionCheckEnv } from "../../../../src/cel/check/index.ts";
import { checkLiterals } from "../../../../src/cel/check/literals.ts";
import { assertSameText, check, rendered } from "./helpers.ts";

const first = (src: string) => checkLiterals(src)[0];

test("cel-go parser_test.go: int, uint and double literals out of range", () => {
  assert.deepEqual(checkLiterals("0xFFFFFFFFFFFFFFFFF"), [{ offset: 0, message: "invalid int literal" }]);
  assert.deepEqual(checkLiterals("0xFFFFFFFFFFFFFFFFFu"), [{ offset: 0, message: "invalid uint literal" }]);
  assert.deepEqual(checkLiterals("1.99e90000009"), [{ offset: 0, message: "invalid double literal" }]);
  assert.deepEqual(checkLiterals("0xF + 0xFu + 1.5e300"), []);
});

test("int literals: the range of int64, with the sign the grammar gives a literal (literal: sign=MINUS? NUM_INT)", () => {
  assert.deepEqual(checkLiterals("9223372036854775807 + -9223372036854775808"), []);
  assert.deepEqual(checkLiterals("9223372036854775808"), [{ offset: 0, message: "invalid int literal" }]);
  assert.deepEqual(checkLiterals("-9223372036854775809"), [{ offset: 0, message: "invalid int literal" }]);
  assert.deepEqual(checkLiterals("-0x8000000000000000"), []);
  // A binary minus is not a sign; two minuses negate an unsigned literal (ANTLR's greedy loop).
  assert.deepEqual(checkLiterals("1 - 9223372036854775808"), [{ offset: 4, message: "invalid int literal" }]);
  assert.deepEqual(checkLiterals("1 - -9223372036854775808"), []);
  assert.deepEqual(checkLiterals("--9223372036854775808"), [{ offset: 2, message: "invalid int literal" }]);
  assert.deepEqual(checkLiterals("18446744073709551615u"), []);
  assert.deepEqual(checkLiterals("18446744073709551616u"), [{ offset: 0, message: "invalid uint literal" }]);
});

test("cel-go parser_test.go: escapes the lexer does not know are token recognition errors", () => {
  assert.equal(first(`"\\xFh"`)?.message, `Syntax error: token recognition error at: '"\\xFh'`);
  assert.equal(
    first(`"\\a\\b\\f\\n\\r\\t\\v\\'\\"\\\\\\? Illegal escape \\>"`)?.message,
    `Syntax error: token recognition error at: '"\\a\\b\\f\\n\\r\\t\\v\\'\\"\\\\\\? Illegal escape \\>'`,
  );
  assert.equal(first(`'\\d'`)?.message, `Syntax error: token recognition error at: ''\\d'`);
  assert.equal(first(`'\\u12'`)?.message, `Syntax error: token recognition error at: ''\\u12''`);
  assert.equal(first(`'\\777'`)?.message, `Syntax error: token recognition error at: ''\\7'`);
});

test("cel-go parser_test.go: legal escapes", () => {
  for (const ok of [
    `"\\u2764"`,
    `"\\xC3\\XBF"`,
    `"\\303\\277"`,
    `"hi\\u263A \\u263Athere"`,
    `"\\U000003A8\\?"`,
    `"\\a\\b\\f\\n\\r\\t\\v'\\"\\\\\\? Legal escapes"`,
    `r'\\d+'`,
    `R"\\w"`,
    `b'\\xff\\377'`,
    `'''multi \\n line'''`,
  ])
    assert.deepEqual(checkLiterals(ok), [], ok);
});

test("unescape.go: \\u in bytes, and code points that are not runes", () => {
  assert.equal(first(`b'\\u00e9'`)?.message, "unable to unescape string");
  assert.equal(first(`'\\U00110000'`)?.message, "invalid unicode code point");
  assert.deepEqual(checkLiterals(`'\\U0010FFFF'`), []);
});

test("comments, identifiers and the insides of strings are not literals", () => {
  assert.deepEqual(checkLiterals("x1 + y // 99999999999999999999 '\\d'\n + z"), []);
  assert.deepEqual(checkLiterals("'99999999999999999999' + \"1e999\""), []);
});

test("checkExpression: a literal error is a syntax issue, reported alone, at the literal", () => {
  const src = "x == 9223372036854775808 && 1 == 1.0";
  const { result } = check(src, admissionCheckEnv());
  assertSameText(
    rendered(src, result),
    "ERROR: <input>:1:6: invalid int literal | x == 9223372036854775808 && 1 == 1.0 | .....^",
  );
  assert.equal(result.diagnostics[0]?.source, "syntax");
});
