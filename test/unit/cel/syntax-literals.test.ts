/**
 * Literals cel-go's parser refuses and @bufbuild/cel's accepts (cases from cel-go's
 * parser/parser_test.go, lexer rules from parser/gen/CEL.g4, unescape rules from
 * parser/unescape.go): parse errors, the first one thrown by parseCel, as a parse error stops
 * cel-go before checking.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkLiterals } from "../../../src/cel/syntax/literals.ts";
import { CelSyntaxError, parseCel } from "../../../src/cel/syntax/parse.ts";
import { renderError } from "../../../src/cel/syntax/source.ts";

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

/** The parse error of `src`, rendered as cel-go prints it. */
function parseError(src: string): string {
  try {
    parseCel(src);
  } catch (e) {
    if (e instanceof CelSyntaxError) return renderError(src, e.offset, e.message);
    throw e;
  }
  assert.fail(`${src} parsed`);
}

test("parseCel: a literal error is a parse error, at the literal (parser.go VisitInt, VisitDouble)", () => {
  assert.equal(
    parseError("x == 9223372036854775808 && 1 == 1.0"),
    "ERROR: <input>:1:6: invalid int literal\n | x == 9223372036854775808 && 1 == 1.0\n | .....^",
  );
  assert.equal(parseError("1e999"), "ERROR: <input>:1:1: invalid double literal\n | 1e999\n | ^");
  assert.equal(
    parseError("'\\d'"),
    "ERROR: <input>:1:1: Syntax error: token recognition error at: ''\\d'\n | '\\d'\n | ^",
  );
  assert.equal(
    parseError("'\\u12'"),
    "ERROR: <input>:1:1: Syntax error: token recognition error at: ''\\u12''\n | '\\u12'\n | ^",
  );
});

test("parseCel: of a syntax error and a literal error, the first in the source is thrown", () => {
  assert.match(parseError("1e999 + )"), /1:1: invalid double literal/);
  assert.match(parseError(") + 1e999"), /1:1: Syntax error/);
});
