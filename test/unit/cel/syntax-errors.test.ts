/**
 * Syntax errors in cel-go's words and at its place (src/cel/syntax/diagnose.ts): each expected text
 * is what kube-apiserver 1.36.3 and 1.37.2 answered for the expression (cel-go's parser/parser.go
 * error listener over ANTLR's recovery), and test/kube/acceptance.test.ts compares them again.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compile, createEnvironment, ADMISSION_VARIABLES } from "../../../src/cel/index.ts";

const OPERAND =
  "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

const CASES: [string, string][] = [
  ["1 +", `ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting ${OPERAND}\n | 1 +\n | ...^`],
  [
    "object.a &&",
    `ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting ${OPERAND}\n | object.a &&\n | ...........^`,
  ],
  ["(1 + 2", "ERROR: <input>:1:7: Syntax error: missing ')' at '<EOF>'\n | (1 + 2\n | ......^"],
  [
    "object.spec.exists(x,\n  (x > 1)",
    "ERROR: <input>:2:10: Syntax error: missing ')' at '<EOF>'\n |   (x > 1)\n | .........^",
  ],
  [
    "[1, 2",
    "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {']', ','}\n | [1, 2\n | .....^",
  ],
  [
    "{'a': 1",
    "ERROR: <input>:1:8: Syntax error: mismatched input '<EOF>' expecting {'}', ','}\n | {'a': 1\n | .......^",
  ],
  [
    "size(object.a]",
    "ERROR: <input>:1:14: Syntax error: mismatched input ']' expecting ')'\n | size(object.a]\n | .............^",
  ],
  ["1 + 2)", "ERROR: <input>:1:6: Syntax error: extraneous input ')' expecting <EOF>\n | 1 + 2)\n | .....^"],
];

const env = createEnvironment({ variables: ADMISSION_VARIABLES });

for (const [source, expected] of CASES)
  void test(`cel-go's syntax error for ${JSON.stringify(source)}`, () => {
    const r = compile(source, env);
    assert.equal(r.ok, false);
    assert.equal(r.ok ? "" : r.problems.map((p) => p.rendered).join("\n"), expected);
  });

void test("brackets inside strings do not count; a valid expression is never diagnosed", () => {
  for (const ok of ["'(' + \"[\" + '''{'''", "size('(]') == 3", "r'\\\\(' == 'x'"])
    assert.equal(compile(ok, env).ok, true, ok);
});
