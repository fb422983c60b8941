import assert from "node:assert/strict";
import { test } from "node:test";
import { celEquals } from "../../../src/cel/runtime/equality.ts";
import { compareStrings, formatDouble, parseDouble, stdLibrary } from "../../../src/cel/library/std.ts";
import { parseDuration, parseTimestamp } from "../../../src/cel/library/time.ts";
import { CelMap, CelType, type CelValue, UInt } from "../../../src/cel/runtime/values.ts";
import { overloadsById, stubContext, throwsCel } from "../../helpers/library.ts";

const std = overloadsById([stdLibrary], stubContext({ regex: true }));
const call = std.call;
/** The whole cost of a call: the base cost of 1 plus what the overload adds. */
const cost = (id: string, ...args: CelValue[]): number => 1 + std.cost(id, ...args);

const u = (n: bigint) => new UInt(n);
const MIN = -9223372036854775808n;
const MAX = 9223372036854775807n;
const UMAX = 18446744073709551615n;
const bytes = (s: string) => new TextEncoder().encode(s);

type Case = readonly [id: string, args: readonly CelValue[], want: CelValue];
type ErrorCase = readonly [id: string, args: readonly CelValue[], message: string | RegExp];

function runCases(cases: readonly Case[]): void {
  for (const [id, args, want] of cases) {
    const got = call(id, ...args);
    const same =
      typeof want === "number" && Number.isNaN(want) ? Number.isNaN(got as number) : celEquals(got, want);
    assert.ok(same, `${id}(${args.map(String).join(", ")}) = ${String(got)}, want ${String(want)}`);
    // celEquals treats 1 and 1.0 alike; the result type matters too.
    assert.equal(typeof got, typeof want, `${id} result type`);
  }
}

function runErrors(cases: readonly ErrorCase[]): void {
  for (const [id, args, message] of cases) throwsCel(() => call(id, ...args), message);
}

test("int64 arithmetic, with overflow as an error", () => {
  runCases([
    ["add_int64", [40n, 2n], 42n],
    ["subtract_int64", [-42n, -12n], -30n],
    ["multiply_int64", [-30n, -2n], 60n],
    ["divide_int64", [-20n, 2n], -10n],
    ["divide_int64", [7n, -2n], -3n],
    ["modulo_int64", [43n, -5n], 3n],
    ["modulo_int64", [-42n, -5n], -2n],
    ["modulo_int64", [-3n, 5n], -3n],
    ["negate_int64", [MAX], -MAX],
    ["add_int64", [MAX, MIN], -1n],
    ["modulo_int64", [MIN, 1n], 0n],
  ]);
  runErrors([
    ["add_int64", [MAX, 1n], "integer overflow"],
    ["subtract_int64", [MIN, 1n], "integer overflow"],
    ["add_int64", [MIN, -1n], "integer overflow"],
    ["subtract_int64", [1n, -MAX], "integer overflow"],
    ["negate_int64", [MIN], "integer overflow"],
    ["multiply_int64", [MIN, -1n], "integer overflow"],
    ["multiply_int64", [5000000000n, 5000000000n], "integer overflow"],
    ["divide_int64", [MIN, -1n], "integer overflow"],
    ["modulo_int64", [MIN, -1n], "integer overflow"],
    ["divide_int64", [15n, 0n], "division by zero"],
    ["modulo_int64", [34n, 0n], "modulus by zero"],
  ]);
});

test("uint64 arithmetic, with underflow and overflow as errors", () => {
  runCases([
    ["add_uint64", [u(42n), u(2n)], u(44n)],
    ["subtract_uint64", [u(42n), u(12n)], u(30n)],
    ["multiply_uint64", [u(40n), u(2n)], u(80n)],
    ["divide_uint64", [u(60n), u(7n)], u(8n)],
    ["modulo_uint64", [u(42n), u(5n)], u(2n)],
    ["add_uint64", [u(UMAX - 1n), u(1n)], u(UMAX)],
  ]);
  assert.ok(call("add_uint64", u(1n), u(2n)) instanceof UInt);
  runErrors([
    ["add_uint64", [u(UMAX), u(1n)], "unsigned integer overflow"],
    ["subtract_uint64", [u(0n), u(1n)], "unsigned integer overflow"],
    ["multiply_uint64", [u(5000000000n), u(5000000000n)], "unsigned integer overflow"],
    ["divide_uint64", [u(15n), u(0n)], "division by zero"],
    ["modulo_uint64", [u(34n), u(0n)], "modulus by zero"],
  ]);
});

test("double arithmetic is IEEE 754", () => {
  runCases([
    ["add_double", [4.25, 15.25], 19.5],
    ["subtract_double", [42.875, -22], 64.875],
    ["multiply_double", [40.75, -2.25], -91.6875],
    ["divide_double", [0.0625, 0.002], 31.25],
    ["divide_double", [15.75, 0], Number.POSITIVE_INFINITY],
    ["divide_double", [0, 0], Number.NaN],
    ["multiply_double", [2, 8.988466e307], Number.POSITIVE_INFINITY],
    ["negate_double", [-1.25], 1.25],
  ]);
  assert.ok(Object.is(call("negate_double", 0), -0));
});

test("string, bytes and list concatenation", () => {
  runCases([
    ["add_string", ["he", "llo"], "hello"],
    ["add_string", ["a", "ÿ🐱"], "aÿ🐱"],
    ["add_bytes", [bytes("abc"), bytes("def")], bytes("abcdef")],
    ["add_bytes", [new Uint8Array(), new Uint8Array()], new Uint8Array()],
    [
      "add_list",
      [
        [0n, 1n],
        [2n, "x"],
      ],
      [0n, 1n, 2n, "x"],
    ],
    ["add_list", [[], []], []],
  ]);
});

test("ordering across numeric types, strings, bytes, bools, time", () => {
  runCases([
    ["less_int64", [1n, 2n], true],
    ["less_int64_double", [1n, 1.5], true],
    ["less_int64_uint64", [-1n, u(0n)], true],
    ["less_uint64_int64", [u(UMAX), MAX], false],
    ["greater_uint64_int64", [u(UMAX), MAX], true],
    ["less_equals_double_int64", [2.0, 2n], true],
    ["greater_equals_double_uint64", [1.5, u(2n)], false],
    ["greater_double_int64", [Number.POSITIVE_INFINITY, MAX], true],
    ["less_bool", [false, true], true],
    ["greater_bool", [false, true], false],
    ["less_string", ["a", "b"], true],
    ["less_string", ["abc", "ab"], false],
    ["less_string", ["\uffff", "😀"], true],
    ["less_bytes", [bytes("a"), bytes("ab")], true],
    ["greater_equals_bytes", [new Uint8Array([0xff]), new Uint8Array([0x01, 0x02])], true],
    [
      "less_timestamp",
      [parseTimestamp("2009-02-13T23:00:00Z"), parseTimestamp("2009-03-13T23:00:00Z")],
      true,
    ],
    ["greater_duration", [parseDuration("300s"), parseDuration("200s")], true],
    ["less_equals_duration", [parseDuration("200s"), parseDuration("200s")], true],
  ]);
  runErrors([
    ["less_double", [Number.NaN, 1.0], "NaN values cannot be ordered"],
    ["greater_equals_int64_double", [1n, Number.NaN], "NaN values cannot be ordered"],
  ]);
});

test("strings order by code point, not UTF-16 unit", () => {
  assert.equal(compareStrings("\uffff", "😀"), -1);
  assert.equal(compareStrings("😀", "\ue000"), 1);
  assert.equal(compareStrings("a", "a"), 0);
  assert.equal(compareStrings("", "a"), -1);
  assert.equal(compareStrings("b", "a"), 1);
});

test("size counts code points, bytes, elements and entries", () => {
  runCases([
    ["size_string", [""], 0n],
    ["size_string", ["πέντε"], 5n],
    ["string_size", ["🐱😀"], 2n],
    ["size_bytes", [bytes("ÿ")], 2n],
    ["bytes_size", [bytes("abc")], 3n],
    ["size_list", [[1n, 2n, 3n]], 3n],
    ["list_size", [[]], 0n],
    ["size_map", [{ a: 1n, b: 2n }], 2n],
    ["map_size", [new CelMap([[1n, "one"]])], 1n],
  ]);
});

test("string predicates and matches", () => {
  runCases([
    ["contains_string", ["hello", "ell"], true],
    ["contains_string", ["hello", ""], true],
    ["contains_string", ["", "x"], false],
    ["contains_string", ["🐱😀😁", "😀"], true],
    ["starts_with_string", ["foobar", "foo"], true],
    ["starts_with_string", ["foobar", "bar"], false],
    ["ends_with_string", ["forté", "té"], true],
    ["ends_with_string", ["", "x"], false],
    ["matches_string", ["hubba", "ubb"], true],
    ["matches_string", ["", "foo|bar"], false],
    ["matches", ["grey", "gr(a|e)y"], true],
    ["matches", ["cows", "^c.*x$"], false],
  ]);
});

test("call costs follow cel-go's runtime estimates", () => {
  assert.equal(cost("add_string", "a".repeat(15), "b".repeat(10)), 3);
  assert.equal(cost("add_bytes", new Uint8Array(20), new Uint8Array(1)), 3);
  assert.equal(cost("contains_string", "x".repeat(100), "y".repeat(20)), 20);
  assert.equal(cost("starts_with_string", "x".repeat(31), ""), 4);
  assert.equal(cost("starts_with_string", "", "abc"), 0);
  assert.equal(cost("matches_string", "x".repeat(19), "a".repeat(8)), 4);
  assert.equal(cost("less_string", "x".repeat(100), "y".repeat(11)), 2);
  assert.equal(cost("string_to_bytes", "🐱".repeat(10)), 1);
  assert.equal(cost("add_list", [1n], [2n]), 1);
  assert.equal(cost("add_int64", 1n, 2n), 1);
});

test("int() conversions truncate and check range", () => {
  runCases([
    ["int64_to_int64", [5n], 5n],
    ["uint64_to_int64", [u(MAX)], MAX],
    ["double_to_int64", [-123.456], -123n],
    ["double_to_int64", [1.9], 1n],
    ["double_to_int64", [-7.9], -7n],
    ["double_to_int64", [36028797018963968], 36028797018963968n],
    ["double_to_int64", [-(2 ** 63) + 1024], -9223372036854774784n],
    ["string_to_int64", ["987"], 987n],
    ["string_to_int64", ["-9223372036854775808"], MIN],
    ["string_to_int64", ["+12"], 12n],
  ]);
  runErrors([
    ["uint64_to_int64", [u(UMAX)], "integer overflow"],
    ["double_to_int64", [2 ** 63], "integer overflow"],
    ["double_to_int64", [-(2 ** 63)], "integer overflow"],
    ["double_to_int64", [1e99], "integer overflow"],
    ["double_to_int64", [Number.NaN], "integer overflow"],
    ["double_to_int64", [Number.NEGATIVE_INFINITY], "integer overflow"],
    ["string_to_int64", ["9223372036854775808"], "type conversion error from 'string' to 'int'"],
    ["string_to_int64", ["1.5"], "type conversion error from 'string' to 'int'"],
    ["string_to_int64", [""], "type conversion error from 'string' to 'int'"],
    ["string_to_int64", [" 1"], "type conversion error from 'string' to 'int'"],
  ]);
});

test("uint() conversions", () => {
  runCases([
    ["uint64_to_uint64", [u(3n)], u(3n)],
    ["int64_to_uint64", [MAX], u(MAX)],
    ["double_to_uint64", [3.25], u(3n)],
    ["double_to_uint64", [25.5], u(25n)],
    ["double_to_uint64", [-0.0], u(0n)],
    ["string_to_uint64", ["18446744073709551615"], u(UMAX)],
  ]);
  runErrors([
    ["int64_to_uint64", [-1n], "unsigned integer overflow"],
    ["double_to_uint64", [-0.5], "unsigned integer overflow"],
    ["double_to_uint64", [6.022e23], "unsigned integer overflow"],
    ["double_to_uint64", [2 ** 64], "unsigned integer overflow"],
    ["string_to_uint64", ["-1"], "type conversion error from 'string' to 'uint'"],
    ["string_to_uint64", ["+1"], "type conversion error from 'string' to 'uint'"],
    ["string_to_uint64", ["18446744073709551616"], "type conversion error from 'string' to 'uint'"],
  ]);
});

test("double() conversions, with Go's float syntax", () => {
  runCases([
    ["int64_to_double", [MAX], 2 ** 63],
    ["uint64_to_double", [u(UMAX)], 2 ** 64],
    ["double_to_double", [5.5], 5.5],
    ["string_to_double", ["-987.654"], -987.654],
    ["string_to_double", ["6.02214e23"], 6.02214e23],
    ["string_to_double", [".5"], 0.5],
    ["string_to_double", ["5."], 5],
    ["string_to_double", ["Inf"], Number.POSITIVE_INFINITY],
    ["string_to_double", ["-infinity"], Number.NEGATIVE_INFINITY],
    ["string_to_double", ["NaN"], Number.NaN],
    ["string_to_double", ["0x1p-2"], 0.25],
    ["string_to_double", ["-0x1.8P1"], -3],
  ]);
  runErrors([
    ["string_to_double", ["1e400"], "type conversion error from 'string' to 'double'"],
    ["string_to_double", ["abc"], "type conversion error from 'string' to 'double'"],
    ["string_to_double", [""], "type conversion error from 'string' to 'double'"],
    ["string_to_double", ["1_000"], "type conversion error from 'string' to 'double'"],
    ["string_to_double", ["+nan"], "type conversion error from 'string' to 'double'"],
    ["string_to_double", ["0x1.8"], "type conversion error from 'string' to 'double'"],
  ]);
  assert.ok(Object.is(parseDouble("-0.0"), -0));
});

test("string() conversions", () => {
  runCases([
    ["int64_to_string", [-456n], "-456"],
    ["uint64_to_string", [u(9876n)], "9876"],
    ["double_to_string", [123.456], "123.456"],
    ["double_to_string", [-4.5e-3], "-0.0045"],
    ["bool_to_string", [true], "true"],
    ["bytes_to_string", [new Uint8Array([0xc3, 0xbf])], "ÿ"],
    ["string_to_string", ["x"], "x"],
  ]);
  runErrors([
    ["bytes_to_string", [new Uint8Array([0x00, 0xff])], "invalid UTF-8 in bytes, cannot convert to string"],
  ]);
});

test("string(double) prints like Go's %g", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [-0, "-0"],
    [1, "1"],
    [1.5, "1.5"],
    [100000, "100000"],
    [1000000, "1e+06"],
    [1234567, "1.234567e+06"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [1e100, "1e+100"],
    [-2.5e-10, "-2.5e-10"],
    [2 ** 63, "9.223372036854776e+18"],
    [0.1 + 0.2, "0.30000000000000004"],
    [Number.POSITIVE_INFINITY, "+Inf"],
    [Number.NEGATIVE_INFINITY, "-Inf"],
    [Number.NaN, "NaN"],
  ];
  for (const [x, s] of cases) assert.equal(formatDouble(x), s, String(x));
});

test("bytes() and bool() conversions", () => {
  runCases([
    ["string_to_bytes", ["ÿ"], new Uint8Array([0xc3, 0xbf])],
    ["bytes_to_bytes", [bytes("abc")], bytes("abc")],
    ["bool_to_bool", [false], false],
  ]);
  for (const s of ["1", "t", "T", "true", "TRUE", "True"]) assert.equal(call("string_to_bool", s), true, s);
  for (const s of ["0", "f", "F", "false", "FALSE", "False"])
    assert.equal(call("string_to_bool", s), false, s);
  for (const s of ["TrUe", "yes", "", "constructor", "toString"]) {
    throwsCel(() => call("string_to_bool", s), "type conversion error from 'string' to 'bool'");
  }
});

test("type() names the runtime type, dyn() is the identity", () => {
  const cases: [CelValue, string][] = [
    [true, "bool"],
    [1n, "int"],
    [u(1n), "uint"],
    [1.5, "double"],
    ["s", "string"],
    [bytes("x"), "bytes"],
    [null, "null_type"],
    [[], "list"],
    [{}, "map"],
    [new CelMap(), "map"],
    [parseDuration("1s"), "google.protobuf.Duration"],
    [parseTimestamp("2000-01-01T00:00:00Z"), "google.protobuf.Timestamp"],
    [new CelType("int"), "type"],
  ];
  for (const [v, name] of cases) {
    const t = call("type", v);
    assert.ok(t instanceof CelType);
    assert.equal(t.name, name);
  }
  const list = [1n];
  assert.equal(call("to_dyn", list), list);
});

test("every overload id is unique and arities match the declared tags", () => {
  const seen = new Set<string>();
  for (const f of stdLibrary.functions) {
    for (const o of f.overloads) {
      assert.ok(!seen.has(o.id), `duplicate overload id ${o.id}`);
      seen.add(o.id);
      // Implementations take the arguments then the call context.
      assert.ok(o.impl.length <= o.args.length + 1, `${o.id} takes too many parameters`);
    }
  }
  assert.ok(seen.size > 100);
});

test("int and uint order against doubles through a lossy conversion, as cel-go does", () => {
  runCases([
    ["less_int64_double", [MAX, 2 ** 63], false],
    ["less_equals_int64_double", [MAX, 2 ** 63], true],
    ["greater_double_int64", [2 ** 63, MAX], false],
    ["greater_equals_double_int64", [2 ** 63, MAX], true],
    ["less_int64_double", [MAX, 2 ** 63 + 2048], true],
    ["greater_int64_double", [MIN, -(2 ** 63) - 2048], true],
    ["less_int64_double", [MIN, -(2 ** 63)], false],
    ["greater_double_int64", [-(2 ** 63), MIN], false],
    ["less_uint64_double", [u(UMAX), 2 ** 64], false],
    ["less_equals_uint64_double", [u(UMAX), 2 ** 64], true],
    ["less_uint64_double", [u(UMAX), 2 ** 64 + 4096], true],
    ["greater_uint64_double", [u(0n), -1.0], true],
    ["greater_double_uint64", [2 ** 64, u(UMAX)], false],
    ["less_double_uint64", [-0.5, u(0n)], true],
    ["less_double_int64", [Number.NEGATIVE_INFINITY, MIN], true],
    ["greater_double_uint64", [Number.POSITIVE_INFINITY, u(UMAX)], true],
    ["less_double", [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY], true],
    ["less_equals_double", [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY], true],
  ]);
  runErrors([
    ["less_uint64_double", [u(1n), Number.NaN], "NaN values cannot be ordered"],
    ["greater_double_uint64", [Number.NaN, u(1n)], "NaN values cannot be ordered"],
  ]);
});
