import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { tests as conformance } from "@bufbuild/cel-spec/testdata/conformance.js";
import { celEquals } from "../../../src/cel/runtime/equality.ts";
import { stringsLibrary, stringsV3Library } from "../../../src/cel/library/strings.ts";
import {
  CelError,
  CelMap,
  CelObject,
  CelType,
  type CelValue,
  Duration,
  Optional,
  Timestamp,
  UInt,
} from "../../../src/cel/runtime/values.ts";
import { parseTimestamp } from "../../../src/cel/library/time.ts";
import { KUBERNETES_DEPARTURES } from "../../helpers/cel-spec.ts";
import { errorInBothTiers, evaluate, overloadsById, valueInBothTiers } from "../../helpers/library.ts";

const { overload, call, cost } = overloadsById([stringsLibrary, stringsV3Library]);

/** Runs a table: `want` is the result, or `{ error }` for the exact message of a CelError. */
type Case = readonly [id: string, args: readonly CelValue[], want: CelValue | { readonly error: string }];

function isErrorWant(w: Case[2]): w is { readonly error: string } {
  return typeof w === "object" && w !== null && !Array.isArray(w) && Object.hasOwn(w, "error");
}

function runTable(cases: readonly Case[]): void {
  for (const [id, args, want] of cases) {
    const label = `${id}(${args.map((a) => inspect(a)).join(", ")})`;
    if (isErrorWant(want)) {
      assert.throws(
        () => call(id, ...args),
        (e: unknown) => e instanceof CelError && e.message === want.error,
        `${label} should fail with ${want.error}`,
      );
    } else {
      assert.deepEqual(call(id, ...args), want, label);
    }
  }
}

const ts = (iso: string): Timestamp => new Timestamp(BigInt(Date.parse(iso)) * 1_000_000n);
const seconds = (s: bigint): Duration => new Duration(s * 1_000_000_000n);

class Opaque extends CelObject {
  readonly celType = "example.Opaque";
  equals(other: CelValue): boolean {
    return other === this;
  }
  toJSON(): unknown {
    return "opaque";
  }
}

void test("the library is the Kubernetes strings extension", () => {
  assert.equal(stringsLibrary.availability, "kubernetes");
  const names = stringsLibrary.functions.map((f) => f.name).sort();
  assert.deepEqual(names, [
    "charAt",
    "format",
    "indexOf",
    "join",
    "lastIndexOf",
    "lowerAscii",
    "replace",
    "split",
    "strings.quote",
    "substring",
    "trim",
    "upperAscii",
  ]);
  assert.equal(overload("strings_quote").member, false);
  assert.equal(overload("string_format").member, true);
});

void test("charAt counts code points", () => {
  runTable([
    ["string_char_at_int", ["tacocat", 3n], "o"],
    ["string_char_at_int", ["tacocat", 0n], "t"],
    ["string_char_at_int", ["tacocat", 7n], ""],
    ["string_char_at_int", ["©αT", 1n], "α"],
    ["string_char_at_int", ["😀a😛", 1n], "a"],
    ["string_char_at_int", ["😀a😛", 2n], "😛"],
    ["string_char_at_int", ["😀a😛", 3n], ""],
    ["string_char_at_int", ["", 0n], ""],
    ["string_char_at_int", ["tacocat", 30n], { error: "index out of range: 30" }],
    ["string_char_at_int", ["tacocat", -1n], { error: "index out of range: -1" }],
    ["string_char_at_int", ["😀a😛", 4n], { error: "index out of range: 4" }],
  ]);
});

void test("indexOf finds the first match, counting code points", () => {
  runTable([
    ["string_index_of_string", ["tacocat", ""], 0n],
    ["string_index_of_string", ["tacocat", "ac"], 1n],
    ["string_index_of_string", ["tacocat", "none"], -1n],
    ["string_index_of_string", ["ta©o©αT", "©"], 2n],
    ["string_index_of_string", ["😀😀x😀", "x"], 2n],
    ["string_index_of_string", ["", "a"], -1n],
    ["string_index_of_string", ["hello wello", "hello wello"], 0n],
    ["string_index_of_string_int", ["tacocat", "", 3n], 3n],
    ["string_index_of_string_int", ["tacocat", "a", 3n], 5n],
    ["string_index_of_string_int", ["tacocat", "at", 3n], 5n],
    ["string_index_of_string_int", ["ta©o©αT", "©", 3n], 4n],
    ["string_index_of_string_int", ["ta©o©αT", "©αT", 3n], 4n],
    ["string_index_of_string_int", ["ta©o©αT", "©α", 5n], -1n],
    ["string_index_of_string_int", ["😀a😀a", "a", 2n], 3n],
    ["string_index_of_string_int", ["hello wello", "ello", 6n], 7n],
    ["string_index_of_string_int", ["tacocat", "a", -1n], { error: "index out of range: -1" }],
    ["string_index_of_string_int", ["tacocat", "", -1n], -1n],
  ]);
});

void test("lastIndexOf finds the last match starting at or before the offset", () => {
  runTable([
    ["string_last_index_of_string", ["", "@@"], -1n],
    ["string_last_index_of_string", ["tacocat", ""], 7n],
    ["string_last_index_of_string", ["tacocat", "at"], 5n],
    ["string_last_index_of_string", ["tacocat", "none"], -1n],
    ["string_last_index_of_string", ["ta©o©αT", "©"], 4n],
    ["string_last_index_of_string", ["hello wello", "hello wello"], 0n],
    ["string_last_index_of_string", ["ab", "abc"], -1n],
    ["string_last_index_of_string", ["😀a😀a", "a"], 3n],
    ["string_last_index_of_string_int", ["tacocat", "", 3n], 3n],
    ["string_last_index_of_string_int", ["tacocat", "a", 3n], 1n],
    ["string_last_index_of_string_int", ["ta©o©αT", "©", 3n], 2n],
    ["string_last_index_of_string_int", ["ta©o©αT", "©α", 4n], 4n],
    ["string_last_index_of_string_int", ["hello wello", "ello", 6n], 1n],
    ["string_last_index_of_string_int", ["bananananana", "nana", 7n], 6n],
    ["string_last_index_of_string_int", ["tacocat", "at", 6n], 5n],
    ["string_last_index_of_string_int", ["tacocat", "a", -1n], { error: "index out of range: -1" }],
  ]);
});

// cel-go ext/strings.go indexOfOffset / lastIndexOfOffset since v0.22 (Kubernetes 1.32 and later):
// an offset at or past the end of the string, counted in code points, finds nothing; only a
// negative one is an error. The cel-spec suite (string_ext/value_errors) still expects the error.
void test("indexOf and lastIndexOf return -1 for an offset at or past the end (cel-go ext/strings.go)", () => {
  runTable([
    ["string_index_of_string_int", ["tacocat", "a", 30n], -1n],
    ["string_index_of_string_int", ["tacocat", "a", 7n], -1n],
    ["string_index_of_string_int", ["😀😀", "😀", 2n], -1n],
    ["string_index_of_string_int", ["😀😀", "😀", 1n], 1n],
    ["string_index_of_string_int", ["", "a", 0n], -1n],
    ["string_last_index_of_string_int", ["tacocat", "a", 30n], -1n],
    ["string_last_index_of_string_int", ["tacocat", "a", 7n], -1n],
    ["string_last_index_of_string_int", ["tacocat", "t", 6n], 6n],
    ["string_last_index_of_string_int", ["😀😀", "😀", 2n], -1n],
    // An empty substring is found at the offset itself, whatever it is.
    ["string_index_of_string_int", ["abc", "", 9n], 9n],
    ["string_last_index_of_string_int", ["abc", "", -2n], -2n],
  ]);
});

void test("reverse is strings version 3, which no Kubernetes environment has (environment/base.go pins version 2)", () => {
  assert.equal(stringsV3Library.availability, "none");
  const r = evaluate("'abc'.reverse()");
  assert.equal(r.ok, false);
  assert.match(r.ok ? "" : r.error, /found no matching overload for 'reverse' applied to 'string\.\(\)'/);
  // The lists extension's reverse is there.
  const l = evaluate("[1, 2].reverse()");
  assert.ok(l.ok);
});

void test("lowerAscii and upperAscii change ASCII letters only", () => {
  runTable([
    ["string_lower_ascii", ["TacoCat"], "tacocat"],
    ["string_lower_ascii", ["TacoCÆt Xii"], "tacocÆt xii"],
    ["string_lower_ascii", [""], ""],
    ["string_upper_ascii", ["tacoCat"], "TACOCAT"],
    ["string_upper_ascii", ["tacoCαt"], "TACOCαT"],
    ["string_upper_ascii", ["ß😀z"], "ß😀Z"],
  ]);
});

void test("replace follows Go's strings.Replace", () => {
  runTable([
    ["string_replace_string_string", ["12 days 12 hours", "{0}", "2"], "12 days 12 hours"],
    ["string_replace_string_string", ["{0} days {0} hours", "{0}", "2"], "2 days 2 hours"],
    ["string_replace_string_string", ["1 ©αT taco", "αT", "o©α"], "1 ©o©α taco"],
    ["string_replace_string_string", ["aaa", "a", "aa"], "aaaaaa"],
    ["string_replace_string_string", ["a😀b", "", "-"], "-a-😀-b-"],
    ["string_replace_string_string", ["", "", "x"], "x"],
    ["string_replace_string_string_int", ["{0} days {0} hours", "{0}", "2", 1n], "2 days {0} hours"],
    ["string_replace_string_string_int", ["hello hello", "he", "we", -1n], "wello wello"],
    ["string_replace_string_string_int", ["hello hello", "he", "we", 0n], "hello hello"],
    ["string_replace_string_string_int", ["a😀b", "", "-", 2n], "-a-😀b"],
    ["string_replace_string_string_int", ["ab", "", "-", 5n], "-a-b-"],
  ]);
});

void test("split follows Go's strings.Split and SplitN", () => {
  runTable([
    ["string_split_string", ["hello world", " "], ["hello", "world"]],
    ["string_split_string", ["a,,b", ","], ["a", "", "b"]],
    ["string_split_string", ["", ","], [""]],
    ["string_split_string", ["", ""], []],
    ["string_split_string", ["a😀b", ""], ["a", "😀", "b"]],
    ["string_split_string_int", ["hello world events!", " ", 0n], []],
    ["string_split_string_int", ["hello world events!", " ", 1n], ["hello world events!"]],
    ["string_split_string_int", ["hello world events!", " ", 2n], ["hello", "world events!"]],
    ["string_split_string_int", ["o©o©o©o", "©", -1n], ["o", "o", "o", "o"]],
    ["string_split_string_int", ["a😀bc", "", 2n], ["a", "😀bc"]],
    ["string_split_string_int", ["ab", "", 5n], ["a", "b"]],
  ]);
});

void test("substring takes code-point ranges", () => {
  runTable([
    ["string_substring_int", ["tacocat", 4n], "cat"],
    ["string_substring_int", ["tacocat", 7n], ""],
    ["string_substring_int", ["😀😛x", 1n], "😛x"],
    ["string_substring_int_int", ["tacocat", 0n, 4n], "taco"],
    ["string_substring_int_int", ["tacocat", 4n, 4n], ""],
    ["string_substring_int_int", ["ta©o©αT", 2n, 6n], "©o©α"],
    ["string_substring_int_int", ["ta©o©αT", 7n, 7n], ""],
    ["string_substring_int_int", ["a😀b😛c", 1n, 4n], "😀b😛"],
    ["string_substring_int", ["tacocat", 40n], { error: "index out of range: 40" }],
    ["string_substring_int", ["tacocat", -1n], { error: "index out of range: -1" }],
    ["string_substring_int_int", ["tacocat", 1n, 50n], { error: "index out of range: 50" }],
    ["string_substring_int_int", ["tacocat", 49n, 50n], { error: "index out of range: 49" }],
    ["string_substring_int_int", ["tacocat", -1n, 2n], { error: "index out of range: -1" }],
    ["string_substring_int_int", ["tacocat", 4n, 3n], { error: "invalid substring range. start: 4, end: 3" }],
  ]);
});

void test("trim removes Go's Unicode white space, not zero-width characters", () => {
  runTable([
    ["string_trim", [" \f\n\r\t\vtext  "], "text"],
    ["string_trim", ["\u0085\u00a0\u1680text"], "text"],
    ["string_trim", ["text\u2000\u2001\u2002\u2003\u2004\u2004\u2006\u2007\u2008\u2009"], "text"],
    ["string_trim", ["\u200atext\u2028\u2029\u202F\u205F\u3000"], "text"],
    ["string_trim", ["\u180etext\u200b\u200c\u200d\u2060\ufeff"], "\u180etext\u200b\u200c\u200d\u2060\ufeff"],
    ["string_trim", ["   "], ""],
    ["string_trim", [" a b "], "a b"],
  ]);
});

void test("reverse (strings version 3) reverses code points", () => {
  runTable([
    ["string_reverse", ["gums"], "smug"],
    ["string_reverse", ["John Smith"], "htimS nhoJ"],
    ["string_reverse", ["a😀b"], "b😀a"],
    ["string_reverse", [""], ""],
  ]);
});

void test("join concatenates a list of strings", () => {
  runTable([
    ["list_join", [["x", "y"]], "xy"],
    ["list_join", [[]], ""],
    ["list_join_string", [["x", "y"], "-"], "x-y"],
    ["list_join_string", [["x"], "-"], "x"],
    ["list_join_string", [[], "-"], ""],
    ["list_join_string", [["a", "b", "c"], ", "], "a, b, c"],
    ["list_join", [["x", 1n]], { error: "join: invalid input: 1" }],
    // cel-go's dispatcher guards list(string) by the list's first element (common/types/types.go
    // defaultIsAssignableRuntimeType) before join runs: MaybeNoSuchOverload's text (decls.go).
    // Found by the Values fuzzer against a real kube-apiserver (test/kube/values.test.ts).
    ["list_join", [[1n, "x"]], { error: "no such overload: join(list)" }],
    ["list_join_string", [[true], "-"], { error: "no such overload: join(list, string)" }],
    ["list_join_string", [["x", true], "-"], { error: "join: invalid input: true" }],
  ]);
});

void test("strings.quote escapes what CEL would unescape", () => {
  runTable([
    ["strings_quote", ["first\nsecond"], '"first\\nsecond"'],
    ["strings_quote", ["bell\u0007"], '"bell\\a"'],
    ["strings_quote", ["\bbackspace"], '"\\bbackspace"'],
    ["strings_quote", ["\fform feed"], '"\\fform feed"'],
    ["strings_quote", ["carriage \r return"], '"carriage \\r return"'],
    ["strings_quote", ["horizontal tab\t"], '"horizontal tab\\t"'],
    ["strings_quote", ["vertical \v tab"], '"vertical \\v tab"'],
    ["strings_quote", ["double \\\\ slash"], '"double \\\\\\\\ slash"'],
    ["strings_quote", ['mid string " quote'], '"mid string \\" quote"'],
    ["strings_quote", ["printable unicode😀"], '"printable unicode😀"'],
    ["strings_quote", ["завтра"], '"завтра"'],
    ["strings_quote", [""], '""'],
    ["strings_quote", ["nul\u0000"], '"nul\u0000"'],
    ["strings_quote", ["lone \ud800 surrogate"], '"lone \ufffd surrogate"'],
  ]);
});

void test("format: substitution and escaping", () => {
  runTable([
    ["string_format", ["no substitution", []], "no substitution"],
    ["string_format", ["str is %s and some more", ["filler"]], "str is filler and some more"],
    ["string_format", ["%% and also %%", []], "% and also %"],
    ["string_format", ["%%%s%%", ["text"]], "%text%"],
    ["string_format", ["%d %d %d, %s %s %s", [1n, 2n, 3n, "A", "B", "C"]], "1 2 3, A B C"],
    ["string_format", ["%s then %s", ["😀", "é"]], "😀 then é"],
    ["string_format", ["ünïcödé %s", ["x"]], "ünïcödé x"],
  ]);
});

// cel-go v0.26 ext/formatting.go, the legacy formatter Kubernetes runs (strings v2), and its cases in
// formatting_test.go: %f and %e take doubles (or the strings "NaN", "Infinity", "-Infinity") and
// print through x/text/message for en_US (grouped digits, ∞, `×10ⁿⁿ` as the x/text Kubernetes pins
// prints it: go/message.ts); %d takes integers only.
void test("format: numeric clauses", () => {
  const X10 = "\u00d710";
  const fixedOnly = (t: string) => ({
    error: `error during formatting: fixed-point clause can only be used on doubles, was given ${t}`,
  });
  const scientificOnly = (t: string) => ({
    error: `error during formatting: scientific clause can only be used on doubles, was given ${t}`,
  });
  const decimalOnly = (t: string) => ({
    error: `error during formatting: decimal clause can only be used on integers, was given ${t}`,
  });
  runTable([
    ["string_format", ["%.3f", [1.2345]], "1.234"],
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: cel-go's own test value
    ["string_format", ["%f", [2.71828]], "2.718280"],
    ["string_format", ["%.0f", [123.0]], "123"],
    ["string_format", ["%.0f", [3.5001]], "4"],
    ["string_format", ["%.0f", [3.4999]], "3"],
    ["string_format", ["%.0f", [1.5]], "2"],
    ["string_format", ["%.0f", [2.5]], "2"],
    ["string_format", ["%.3f", [123.4999]], "123.500"],
    ["string_format", ["%.3f", [123.4994]], "123.499"],
    ["string_format", ["%.3f", [-123.4999]], "-123.500"],
    ["string_format", ["%.5f", [-1.2]], "-1.20000"],
    ["string_format", ["%.2f", [-0.001]], "-0.00"],
    // x/text takes the sign from x < 0, which negative zero is not.
    ["string_format", ["%.2f", [-0]], "0.00"],
    // English groups the integer digits by three.
    ["string_format", ["%f", [1234567.891]], "1,234,567.891000"],
    ["string_format", ["%.2f", [1e21]], "1,000,000,000,000,000,000,000.00"],
    ["string_format", ["%.1f", [-999.96]], "-1,000.0"],
    ["string_format", ["%f", [Number.NaN]], "NaN"],
    ["string_format", ["%f", [Number.POSITIVE_INFINITY]], "\u221e"],
    ["string_format", ["%f", [Number.NEGATIVE_INFINITY]], "-\u221e"],
    ["string_format", ["%f", ["NaN"]], "NaN"],
    ["string_format", ["%f", ["Infinity"]], "\u221e"],
    ["string_format", ["%f", ["-Infinity"]], "-\u221e"],
    ["string_format", ["%.3f + %.2f", [1n, new UInt(1n)]], fixedOnly("int")],
    ["string_format", ["%f", ["1.5"]], fixedOnly("string")],
    ["string_format", ["%.6e", [1052.032911275]], `1.052033${X10}\u2070\u00b3`],
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: cel-go's own test value
    ["string_format", ["%e", [2.71828]], `2.718280${X10}\u2070\u2070`],
    ["string_format", ["%e", [0]], `0.000000${X10}\u2070\u2070`],
    ["string_format", ["%e", [-0.00012]], `-1.200000${X10}\u207b\u2070\u2074`],
    ["string_format", ["%e", [9.9999999]], `1.000000${X10}\u2070\u00b9`],
    ["string_format", ["%.0e", [15]], `2${X10}\u2070\u00b9`],
    ["string_format", ["%e", [1e300]], `1.000000${X10}\u00b3\u2070\u2070`],
    ["string_format", ["%e", [Number.NaN]], "NaN"],
    ["string_format", ["%e", [Number.NEGATIVE_INFINITY]], "-\u221e"],
    ["string_format", ["%e", ["Infinity"]], "\u221e"],
    ["string_format", ["%.4e", [new UInt(1052n)]], scientificOnly("uint")],
    ["string_format", ["%d", [new UInt(64n)]], "64"],
    ["string_format", ["%d", [-9223372036854775808n]], "-9223372036854775808"],
    ["string_format", ["%d", [Number.NaN]], decimalOnly("double")],
    ["string_format", ["%d", [1.5]], decimalOnly("double")],
    ["string_format", ["this is 5 in binary: %b", [5n]], "this is 5 in binary: 101"],
    ["string_format", ["%b", [-5n]], "-101"],
    ["string_format", ["%b", [new UInt(64n)]], "1000000"],
    ["string_format", ["%b %b", [true, false]], "1 0"],
    ["string_format", ["%o", [11n]], "13"],
    ["string_format", ["%o", [-11n]], "-13"],
    ["string_format", ["%o", [new UInt(65535n)]], "177777"],
    ["string_format", ["%x is 20 in hexadecimal", [30n]], "1e is 20 in hexadecimal"],
    ["string_format", ["%X", [30n]], "1E"],
    ["string_format", ["%x", [-30n]], "-1e"],
    ["string_format", ["%X", [new UInt(6000n)]], "1770"],
    ["string_format", ["%x", [new UInt(18446744073709551615n)]], "ffffffffffffffff"],
    ["string_format", ["%x", ["Hello world!"]], "48656c6c6f20776f726c6421"],
    ["string_format", ["%X", ["Hello world!"]], "48656C6C6F20776F726C6421"],
    ["string_format", ["%x", ["é"]], "c3a9"],
    ["string_format", ["%x", [new Uint8Array([0, 0, 0x62, 0])]], "00006200"],
    ["string_format", ["%X", [new TextEncoder().encode("byte string")]], "6279746520737472696E67"],
  ]);
});

// cel-go v0.26 ext/formatting.go FormatString, formatList, formatMap and quoteForCEL: a top-level
// value as string() gives it (a double as Go's %g), list elements and map entries as CEL literals.
void test("format: %s renders every value type", () => {
  runTable([
    ["string_format", ["%s", [null]], "null"],
    ["string_format", ["%s", [999999999999n]], "999999999999"],
    ["string_format", ["%s", [new UInt(7n)]], "7"],
    ["string_format", ["%s, %s", [true, false]], "true, false"],
    ["string_format", ["%s", [new Uint8Array([120, 121, 122])]], "xyz"],
    ["string_format", ["%s", [new CelType("string")]], "string"],
    ["string_format", ["%s, %s", [32n, 56.8]], "32, 56.8"],
    ["string_format", ["%s", [2.71]], "2.71"],
    ["string_format", ["%s", [0.000000002]], "2e-09"],
    ["string_format", ["%s", [1e21]], "1e+21"],
    ["string_format", ["%s", [123456.0]], "123456"],
    ["string_format", ["%s", [1234567.0]], "1.234567e+06"],
    ["string_format", ["%s", [-0]], "-0"],
    [
      "string_format",
      ["%s %s %s", [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]],
      "NaN +Inf -Inf",
    ],
    ["string_format", ["%s", [ts("2023-02-03T23:31:20Z")]], "2023-02-03T23:31:20Z"],
    ["string_format", ["%s", [parseTimestamp("2023-02-03T23:31:20+01:00")]], "2023-02-03T23:31:20+01:00"],
    ["string_format", ["%s", [new Timestamp(1_257_894_000_123_450_000n)]], "2009-11-10T23:00:00.12345Z"],
    ["string_format", ["%s", [new Timestamp(-62_135_596_800_000_000_000n)]], "0001-01-01T00:00:00Z"],
    ["string_format", ["%s", [new Timestamp(-1n)]], "1969-12-31T23:59:59.999999999Z"],
    ["string_format", ["%s", [seconds(6347n)]], "6347s"],
    ["string_format", ["%s", [new Duration(2n)]], "0.000000002s"],
    ["string_format", ["%s", [new Duration(-1_500_000_000n)]], "-1.5s"],
    ["string_format", ["%s", [seconds(0n)]], "0s"],
    [
      "string_format",
      ["%s", [["abc", 3.14, null, [9n, 8n, 7n, 6n], ts("2023-02-03T23:31:20Z")]]],
      '["abc", 3.140000, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]',
    ],
    [
      "string_format",
      ["%s", [[Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]]],
      '["NaN", "+Inf", "-Inf"]',
    ],
    [
      "string_format",
      ["%s", [[new UInt(2n), new CelType("int"), true, 'a"b\n', new Uint8Array([104, 105])]]],
      '[2, int, true, "a\\"b\\n", b"hi"]',
    ],
    [
      "string_format",
      ["%s", [[parseTimestamp("2023-02-03T23:31:20.5-07:00"), new Duration(-1_500_000_000n)]]],
      '[timestamp("2023-02-03T23:31:20.5-07:00"), duration("-1.5s")]',
    ],
    [
      "string_format",
      [
        "%s",
        [
          {
            key1: new Uint8Array([120, 121, 122]),
            key5: null,
            key2: seconds(7200n),
            key4: true,
            key3: 2.5,
          },
        ],
      ],
      '{"key1":b"xyz", "key2":duration("7200s"), "key3":2.500000, "key4":true, "key5":null}',
    ],
    [
      "string_format",
      [
        "%s",
        [
          new CelMap([
            [1n, "value1"],
            [new UInt(2n), "value2"],
            [true, Number.NaN],
          ]),
        ],
      ],
      '{1:"value1", 2:"value2", true:"NaN"}',
    ],
    [
      "string_format",
      [
        "%s",
        [
          new CelMap([
            ["strKey", "x"],
            [6n, seconds(422n)],
            [true, 42n],
          ]),
        ],
      ],
      '{"strKey":"x", 6:duration("422s"), true:42}',
    ],
    // Quoted keys sort in UTF-8 (code point) order, where U+FF5E comes before an emoji.
    ["string_format", ["%s", [{ "😀": 1n, "～": 2n }]], '{"～":2, "😀":1}'],
    ["string_format", ["%s", [{ b: [1.5], a: { c: "d" } }]], '{"a":{"c":"d"}, "b":[1.500000]}'],
    ["string_format", ["%s", [[]]], "[]"],
    ["string_format", ["%s", [{}]], "{}"],
  ]);
});

void test("format: errors carry cel-go's texts", () => {
  const notString =
    "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given";
  runTable([
    [
      "string_format",
      ["%a", [1n]],
      { error: 'could not parse formatting clause: unrecognized formatting clause "a"' },
    ],
    [
      "string_format",
      ["%E", [0.5]],
      { error: 'could not parse formatting clause: unrecognized formatting clause "E"' },
    ],
    ["string_format", ["%d %d %d", [0n, 1n]], { error: "index 2 out of range" }],
    ["string_format", ["%s", []], { error: "index 0 out of range" }],
    ["string_format", ["trailing %", ["x"]], { error: "unexpected end of string" }],
    [
      "string_format",
      ["%.", [1.0]],
      {
        error:
          "could not parse formatting clause: error while parsing precision: could not find end of precision specifier",
      },
    ],
    [
      "string_format",
      ["%.f", [1.0]],
      {
        error:
          'could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax',
      },
    ],
    [
      "string_format",
      ["%.99999999999999999999f", [1.0]],
      {
        error:
          'could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "99999999999999999999": value out of range',
      },
    ],
    [
      "string_format",
      ["%.5000f", [1.0]],
      {
        error:
          "could not parse formatting clause: error while parsing precision: precision 5000 exceeds maximum allowed precision 1000",
      },
    ],
    [
      "string_format",
      ["string is %b", ["abc"]],
      {
        error:
          "error during formatting: only integers and bools can be formatted as binary, was given string",
      },
    ],
    [
      "string_format",
      ["%d", [seconds(1802n)]],
      {
        error:
          "error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration",
      },
    ],
    [
      "string_format",
      ["octal: %o", ["a string"]],
      { error: "error during formatting: octal clause can only be used on integers, was given string" },
    ],
    [
      "string_format",
      ["double is %x", [0.5]],
      {
        error:
          "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double",
      },
    ],
    [
      "string_format",
      ["null: %d", [null]],
      { error: "error during formatting: decimal clause can only be used on integers, was given null_type" },
    ],
    [
      "string_format",
      ["null: %e", [null]],
      {
        error: "error during formatting: scientific clause can only be used on doubles, was given null_type",
      },
    ],
    [
      "string_format",
      ["null: %f", [null]],
      {
        error: "error during formatting: fixed-point clause can only be used on doubles, was given null_type",
      },
    ],
    [
      "string_format",
      ["%e", [1n]],
      { error: "error during formatting: scientific clause can only be used on doubles, was given int" },
    ],
    [
      "string_format",
      ["%s", [new Uint8Array([0xff, 0x61])]],
      {
        error:
          'error during formatting: could not convert argument "invalid UTF-8 in bytes, cannot convert to string" to string',
      },
    ],
    // Go reads the clause as one byte: the first byte of é's UTF-8, shown as a rune.
    [
      "string_format",
      ["%é", [1n]],
      { error: 'could not parse formatting clause: unrecognized formatting clause "\u00c3"' },
    ],
    [
      "string_format",
      ["null: %X", [null]],
      {
        error:
          "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given null_type",
      },
    ],
    [
      "string_format",
      ["null: %b", [null]],
      {
        error:
          "error during formatting: only integers and bools can be formatted as binary, was given null_type",
      },
    ],
    ["string_format", ["object is %s", [new Opaque()]], { error: `${notString} example.Opaque` }],
    // Inside a list or a map, clauseForType has no formatter for the type.
    [
      "string_format",
      ["%s", [[1n, 2n, new Opaque()]]],
      { error: "error during formatting: no formatting function for example.Opaque" },
    ],
    [
      "string_format",
      ["%s", [new CelMap([[1n, new Opaque()]])]],
      { error: "error during formatting: no formatting function for example.Opaque" },
    ],
    [
      "string_format",
      ["%s", [[Optional.none]]],
      { error: "error during formatting: no formatting function for optional_type" },
    ],
  ]);
});

void test("costs: about a tenth of a unit per character, beyond the base cost of 1", () => {
  const long = "x".repeat(100);
  const wide = "é".repeat(100);
  // Kubernetes: ceil(0.1 * code points) for lowerAscii, upperAscii, substring, trim.
  assert.equal(cost("string_lower_ascii", long), 9);
  assert.equal(cost("string_upper_ascii", wide), 9);
  assert.equal(cost("string_trim", "abc"), 0);
  assert.equal(cost("string_substring_int_int", long, 0n, 1n), 9);
  // indexOf/lastIndexOf: floor(0.1 * UTF-8 bytes), so multi-byte text costs more.
  assert.equal(cost("string_index_of_string", long, "x"), 9);
  assert.equal(cost("string_index_of_string", wide, "x"), 19);
  assert.equal(cost("string_last_index_of_string_int", long, "x", 3n), 9);
  // replace and split build a result: twice the traversal.
  assert.equal(cost("string_replace_string_string", long, "x", "y"), 19);
  assert.equal(cost("string_split_string_int", long, ",", 2n), 19);
  // join: twice the size of the result.
  assert.equal(cost("list_join_string", ["a".repeat(50), "b".repeat(49)], "-"), 19);
  assert.equal(cost("list_join", []), 0);
  // Not costed by Kubernetes; charged as a traversal like newer cel-go does.
  assert.equal(cost("string_char_at_int", long, 1n), 9);
  assert.equal(cost("string_reverse", long), 9);
  assert.equal(cost("strings_quote", long), 9);
  assert.equal(cost("string_format", "%s".repeat(25), [long]), 14);
  for (const decl of stringsLibrary.functions) {
    for (const o of decl.overloads) assert.ok(o.cost, `${o.id} declares a cost`);
  }
});

// ---------------------------------------------------------------------------------------------
// The cel-spec conformance suite "string_ext", end to end through the evaluator.

interface ConformanceValue {
  readonly stringValue?: string;
  readonly int64Value?: string;
  readonly uint64Value?: string;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
}

interface ConformanceCase {
  readonly name: string;
  readonly expr: string;
  readonly disableCheck?: boolean;
  readonly value?: ConformanceValue;
  readonly evalError?: { readonly errors: readonly { readonly message: string }[] };
  readonly bindings?: Readonly<Record<string, { readonly value: ConformanceValue }>>;
}

interface ConformanceSuite {
  readonly name: string;
  readonly suites?: readonly ConformanceSuite[];
  readonly tests?: readonly { readonly original: ConformanceCase }[];
}

function fromConformance(v: ConformanceValue): CelValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.int64Value !== undefined) return BigInt(v.int64Value);
  if (v.uint64Value !== undefined) return new UInt(BigInt(v.uint64Value));
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  throw new Error(`conformance value not handled here: ${JSON.stringify(v)}`);
}

function stringExtCases(): { section: string; c: ConformanceCase }[] {
  const root = (conformance as unknown as ConformanceSuite).suites?.find((s) => s.name === "string_ext");
  assert.ok(root, "the conformance data has a string_ext suite");
  const out: { section: string; c: ConformanceCase }[] = [];
  for (const section of root.suites ?? []) {
    for (const t of section.tests ?? []) out.push({ section: section.name, c: t.original });
  }
  return out;
}

void test("the string_ext conformance suite is where we expect it", () => {
  const cases = stringExtCases();
  assert.ok(cases.length > 150, `found ${cases.length} cases`);
  const sections = new Set(cases.map((x) => x.section));
  for (const s of [
    "char_at",
    "index_of",
    "format",
    "format_errors",
    "value_errors",
    "type_errors",
    "quote",
  ]) {
    assert.ok(sections.has(s), `section ${s}`);
  }
});

void test("Kubernetes' strings v2 format validator refuses `%d` of a double (cel-go v0.26 ext/formatting.go stringFormatChecker.Decimal)", () => {
  const r = evaluate('"%d".format([double("NaN")])');
  assert.equal(r.ok, false);
  if (!r.ok)
    assert.equal(
      r.error,
      'ERROR: <input>:1:20: error during formatting: decimal clause can only be used on integers, was given double\n | "%d".format([double("NaN")])\n | ...................^',
    );
});

void test("conformance: string_ext through evaluate()", async (t) => {
  for (const { section, c } of stringExtCases()) {
    // celgate models no protobuf messages, so the conformance proto types cannot be built.
    const skip = c.expr.includes("cel.expr.conformance") ? "needs conformance protobuf messages" : undefined;
    await t.test(`${section}/${c.name}`, skip ? { skip } : {}, () => {
      const bindings: Record<string, unknown> = {};
      for (const [k, b] of Object.entries(c.bindings ?? {})) bindings[k] = fromConformance(b.value);
      // cel-go's checker as the conformance runner has it, without Kubernetes' validators (the
      // format validator refuses `%d` of a double: see the test below); unchecked for disable_check.
      const got = evaluate(c.expr, bindings, { checks: c.disableCheck ? "none" : "cel" });
      // Where Kubernetes answers otherwise on purpose (test/helpers/cel-spec.ts), its answer.
      const departure = KUBERNETES_DEPARTURES.get(`string_ext/${section}/${c.name}`)?.kubernetes;
      if (departure !== undefined) {
        if ("error" in departure) assert.ok(!got.ok && got.error.includes(departure.error), c.expr);
        else assert.ok(got.ok && celEquals(got.value, departure.value), c.expr);
        return;
      }
      if (c.evalError) {
        assert.equal(got.ok, false, `${c.expr} should fail`);
        if (got.ok) return;
        // Type errors become compile errors once a checker runs; the rest happen at eval.
        if (!c.disableCheck) assert.equal(got.stage, "eval", got.error);
        const want = c.evalError.errors[0]?.message ?? "";
        if (want === "no such overload") {
          assert.match(got.error, /no (such|matching) overload/, got.error);
        } else {
          assert.ok(
            got.error.includes(want),
            `error ${JSON.stringify(got.error)} should contain ${JSON.stringify(want)}`,
          );
        }
        return;
      }
      assert.ok(got.ok, got.ok ? "" : `${c.expr}: ${got.error}`);
      const want = c.value ? fromConformance(c.value) : true;
      assert.equal(typeof got.value, typeof want, `${c.expr} result type`);
      assert.ok(celEquals(got.value, want), `${c.expr} = ${String(got.value)}, want ${String(want)}`);
    });
  }
});

// cel-go ext/strings.go: indexOfOffset/lastIndexOfOffset fail on an offset at or past the end
// before v0.22 and give -1 from v0.22, which Kubernetes 1.32 vendors (cel/env/releases.ts
// RuntimeSwitches.indexOfPastEndIsMinusOne). Both tiers run the release's overloads.
test("indexOf/lastIndexOf past the end follow the release: an error before 1.32, -1 from it", () => {
  const at = (kubernetesVersion: string) => ({ env: { kubernetesVersion } });
  for (const [expr, newer] of [
    ["'abc'.indexOf('c', 3)", -1n],
    ["'abc'.lastIndexOf('c', 3)", -1n],
    ["''.lastIndexOf('x')", -1n],
  ] as const) {
    assert.equal(valueInBothTiers(expr, {}, at("1.32")), newer, expr);
    const old = errorInBothTiers(expr, {}, at("1.31"));
    assert.match(old, /index out of range/, expr);
  }
  // Within range, every release agrees.
  assert.equal(valueInBothTiers("'abcabc'.lastIndexOf('c', 4)", {}, at("1.30")), 2n);
});
