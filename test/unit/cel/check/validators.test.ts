/**
 * The compile-time validators of the Kubernetes environment: cel-go's cel/validator.go
 * (homogeneous aggregate literals, duration, timestamp and regex literals; cases from its
 * validator_test.go), the strings extension's format check (ext/formatting.go; cases from
 * formatting_test.go), and the regular expressions the API server compiles when it builds the
 * program (library/regex.go). Positions are cel-go's: the literal at fault.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CallNode, ListNode } from "../../../../src/cel/syntax/ast.ts";
import { admissionCheckEnv } from "../../../../src/cel/check/index.ts";
import { assertSameText, check, rendered } from "./helpers.ts";

const env = admissionCheckEnv({ variables: [] });

function issues(src: string): string[] {
  return check(src, env).result.diagnostics.map((d) => d.message);
}

function assertRendered(src: string, want: string): void {
  assertSameText(rendered(src, check(src, env).result), want, src);
}

// ---- cel-go validator_test.go ---------------------------------------------------------------------

const LITERAL_CASES: readonly (readonly [string, string])[] = [
  [`duration('1')`, `ERROR: <input>:1:10: invalid duration argument | duration('1') | .........^`],
  [`duration('1d')`, `ERROR: <input>:1:10: invalid duration argument | duration('1d') | .........^`],
  [
    "duration('1us')\n < duration('1nns')",
    `ERROR: <input>:2:13: invalid duration argument |  < duration('1nns') | ............^`,
  ],
  [`duration('2h3m4s5us')`, ""],
  [
    `timestamp('1000-00-00T00:00:00Z')`,
    `ERROR: <input>:1:11: invalid timestamp argument | timestamp('1000-00-00T00:00:00Z') | ..........^`,
  ],
  [
    `timestamp('1000-01-01T00:00:00ZZ')`,
    `ERROR: <input>:1:11: invalid timestamp argument | timestamp('1000-01-01T00:00:00ZZ') | ..........^`,
  ],
  [`timestamp('1000-01-01T00:00:00Z')`, ""],
  [`timestamp(-6213559680)`, ""],
  [
    `timestamp(-62135596801)`,
    `ERROR: <input>:1:11: invalid timestamp argument | timestamp(-62135596801) | ..........^`,
  ],
  [`'hello'.matches('el*')`, ""],
  [
    `'hello'.matches('x++')`,
    `ERROR: <input>:1:17: invalid matches argument | 'hello'.matches('x++') | ................^`,
  ],
  [
    `'hello'.matches('(?<name%>el*)')`,
    `ERROR: <input>:1:17: invalid matches argument | 'hello'.matches('(?<name%>el*)') | ................^`,
  ],
  [
    `'hello'.matches('??el*')`,
    `ERROR: <input>:1:17: invalid matches argument | 'hello'.matches('??el*') | ................^`,
  ],
];

for (const [src, want] of LITERAL_CASES) {
  test(`cel-go validator_test.go: ${src.replace(/\n/g, " ")}`, () => assertRendered(src, want));
}

test("validators: literal arguments only; a variable's value is not known until run time", () => {
  const withX = admissionCheckEnv({ params: null });
  for (const src of ["duration(object.d)", "timestamp(object.t)", "'x'.matches(object.p)"])
    assert.deepEqual(check(src, withX).result.diagnostics, [], src);
});

test("validators: duration(int) is declared in cel-go up to v0.28.0 but fails when run, so a literal is refused", () => {
  // 1.36 vendors cel-go v0.26.0, which still declares it (common/stdlib/standard.go IntToDuration).
  const at136 = admissionCheckEnv({ variables: [], kubernetesVersion: "1.35" });
  assert.deepEqual(
    check("duration(5)", at136).result.diagnostics.map((d) => d.message),
    ["invalid duration argument"],
  );
});

test("cel-go v0.29 (Kubernetes 1.37, the default) no longer declares duration(int): no overload", () => {
  assert.deepEqual(issues("duration(5)"), ["found no matching overload for 'duration' applied to '(int)'"]);
  const at137 = admissionCheckEnv({
    variables: [],
    kubernetesVersion: "1.36",
    withoutOverloads: ["int64_to_duration"],
  });
  assert.deepEqual(
    check("duration(5)", at137).result.diagnostics.map((d) => d.message),
    ["found no matching overload for 'duration' applied to '(int)'"],
  );
});

test("validators: the regex validator checks the first argument of matches(), the subject in the global form (cel-go quirk)", () => {
  // cel/validator.go ValidateRegexLiterals: newFormatValidator(overloads.Matches, 0, ...) reads Args()[0].
  assert.deepEqual(issues("matches('[a-z', 'x')"), ["invalid matches argument"]);
  // The pattern of the global form is compiled when the program is built: Go's error, there.
  assert.deepEqual(issues("matches('x', '[a-z')"), ["error parsing regexp: missing closing ]: `[a-z`"]);
});

test("program: constant patterns of find and findAll compile when the program is built (library/regex.go)", () => {
  assert.deepEqual(issues("'abc'.find('(')"), ["error parsing regexp: missing closing ): `(`"]);
  assert.deepEqual(issues("'abc'.findAll('a{2,1}', 1)"), [
    "error parsing regexp: invalid repeat count: `{2,1}`",
  ]);
  assert.deepEqual(issues("'abc'.findAll(object.p)"), []);
  // Only once everything else passes: a program is built only from an expression that compiles.
  assert.deepEqual(issues("'abc'.find('(') == 1"), [
    "found no matching overload for '_==_' applied to '(string, int)'",
  ]);
});

// ---- homogeneous aggregate literals (validator_test.go TestValidateHomogeneousAggregateLiterals) --

test("homogeneous literals: cel-go's cases", () => {
  // cel-go's cases read `name in [...]`; the literals alone, since syntax/parse.ts does not yet see the
  // optional markers of a list that follows `in` (it takes the `[` for an index).
  assertRendered(
    "['hello', 0]",
    `ERROR: <input>:1:11: expected type 'string' but found 'int' | ['hello', 0] | ..........^`,
  );
  assertRendered(
    "{'hello':'world', 1:'!'}",
    `ERROR: <input>:1:19: expected type 'string' but found 'int' | {'hello':'world', 1:'!'} | ..................^`,
  );
  assertRendered(
    "{'hello':'world', 'goodbye':true}",
    `ERROR: <input>:1:29: expected type 'string' but found 'bool' | {'hello':'world', 'goodbye':true} | ............................^`,
  );
  for (const ok of [
    "['hello', 'world']",
    "['hello', ?optional.ofNonZeroValue('')]",
    "[?optional.ofNonZeroValue(''), 'hello', ?optional.of('')]",
    "{'hello': false, 'world': true}",
    "{'hello': false, ?'world': optional.ofNonZeroValue(true)}",
    "{?'hello': optional.ofNonZeroValue(false), 'world': true}",
  ])
    assert.deepEqual(issues(ok), [], ok);
});

test("homogeneous literals: dyn is a type of its own; wrapping every element in dyn() makes a mixed literal", () => {
  assert.deepEqual(issues("[dyn(1), dyn('a')]"), []);
  assert.deepEqual(issues("[1, dyn('a')]"), ["expected type 'int' but found 'dyn'"]);
  // Map values built from a dyn field and a string: the common `{'path': ..., 'c': c}` pattern.
  assert.deepEqual(issues("object.spec.containers.map(c, {'name': c.name + '!', 'c': c})"), [
    "expected type 'string' but found 'dyn'",
  ]);
  assert.deepEqual(issues("object.spec.containers.map(c, {'name': dyn(c.name + '!'), 'c': c})"), []);
});

test("homogeneous literals: a list stops at the first mismatch, a map reports every key and value", () => {
  assert.deepEqual(issues("[1, 'a', true]"), ["expected type 'int' but found 'string'"]);
  assert.deepEqual(issues("{1: 'a', 'b': 2, true: 'c'}"), [
    "expected type 'int' but found 'string'",
    "expected type 'string' but found 'int'",
    "expected type 'int' but found 'bool'",
  ]);
  assert.deepEqual(issues("[[1], ['a']]"), ["expected type 'list(int)' but found 'list(string)'"]);
});

test("homogeneous literals: literals anywhere inside a format call are exempt (ext/formatting.go Configure)", () => {
  assert.deepEqual(issues("'%s and %d'.format(['a', 1])"), []);
  assert.deepEqual(issues("'%s'.format([[1, 'a']])"), []);
  assert.deepEqual(issues("['%s'.format([[1, 'a']]), 'b']"), []);
});

// ---- string.format (ext/formatting.go stringFormatValidator; formatting_test.go) -------------------

const FORMAT_CASES: readonly (readonly [string, string])[] = [
  [`"%s %s".format(["abc"])`, "index 1 out of range"],
  [
    `"%s %s".format(["abc", "def", "ghi"])`,
    "too many arguments supplied to string.format (expected 2, got 3)",
  ],
  [`"filler %".format([])`, "unexpected end of string"],
  [`"%j".format([123])`, `could not parse formatting clause: unrecognized formatting clause "j"`],
  [
    `"object is %s".format([quantity('1')])`,
    "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given kubernetes.Quantity",
  ],
  [
    `"list is %s".format([[1, 2, ip('::1')]])`,
    "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given net.IP",
  ],
  [
    `"int is %d".format([5.2])`,
    "error during formatting: decimal clause can only be used on integers, was given double",
  ],
  [
    `"double is %f".format([true])`,
    "error during formatting: fixed-point clause can only be used on doubles, was given bool",
  ],
  [
    `"double is %.34".format([5.0])`,
    "could not parse formatting clause: error while parsing precision: could not find end of precision specifier",
  ],
  [
    `"double is %e".format([true])`,
    "error during formatting: scientific clause can only be used on doubles, was given bool",
  ],
  [
    `"string is %b".format(["a string"])`,
    "error during formatting: only integers and bools can be formatted as binary, was given string",
  ],
  [
    `"%x is a double".format([2.5])`,
    "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double",
  ],
  [
    `"%X is a double".format([2.5])`,
    "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double",
  ],
  [
    `"an octal: %o".format([3.14])`,
    "error during formatting: octal clause can only be used on integers, was given double",
  ],
  [`"%a".format([1])`, `could not parse formatting clause: unrecognized formatting clause "a"`],
  [`"%d %d %d".format([0, 1])`, "index 2 out of range"],
  [
    `"%d".format([duration("30m2s")])`,
    "error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration",
  ],
  [
    `"null: %d".format([null])`,
    "error during formatting: decimal clause can only be used on integers, was given null_type",
  ],
  [`"double is %E".format([0.5])`, `could not parse formatting clause: unrecognized formatting clause "E"`],
];

for (const [src, want] of FORMAT_CASES) {
  test(`cel-go formatting_test.go (compile-time): ${src}`, () => assert.deepEqual(issues(src), [want]));
}

test("string.format: what passes the static check", () => {
  for (const ok of [
    `"%s, %d, %.2f, %e, %b, %x, %X, %o, %%".format(["a", 1, 2.5, 3.0, true, "hi", b"hi", 8u])`,
    `"%s %s %s %s %s".format([[1, 2], {'a': [duration('1s')]}, type(1), null, timestamp('2024-01-01T00:00:00Z')])`,
    `"%s %s".format([object.a, object.b])`,
    `"%f".format(["NaN"])`,
    // Only a literal format string with a literal list is checked.
    `object.fmt.format([1])`,
    `"%d".format(object.args)`,
  ])
    assert.deepEqual(issues(ok), [], ok);
});

test("string.format: errors are placed at the argument at fault, or at the call (getErrorExprID)", () => {
  // Compared by node: our parser places a call at its start or its `.`, cel-go at its `(`.
  const at = (src: string) => {
    const { parsed, result } = check(src, env);
    assert.equal(result.diagnostics.length, 1, src);
    return { parsed, id: result.diagnostics[0]?.id };
  };
  const many = at(`"%d %s".format([1, 'a', 2])`);
  assert.equal(many.id, many.parsed.root.id);
  const nested = at(`"%s".format([[1, ip('::1')]])`);
  const root = nested.parsed.root as CallNode;
  const outer = root.args[0] as ListNode;
  const inner = outer.elements[0] as ListNode;
  assert.equal(nested.id, inner.elements[1]?.id);
});
