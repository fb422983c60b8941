/**
 * JSON numbers read as the API server's decoder reads them. The rule is sigs.k8s.io/json's
 * PreserveInts (json.go: "unmarshaled as an int64 if the JSON data does not contain a "." character
 * and parses as an integer successfully and does not overflow int64. Otherwise, the number is
 * unmarshaled as a float64"), which k8s.io/apimachinery/pkg/util/json/json.go's convertNumber also
 * follows (Int64(), else Float64(), whose overflow is an error): so `1e3` is a float64 (ParseInt
 * refuses the exponent), `-0` an int64 0, `1.0` a float64, 2^63 a float64, and 1e400 an error.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { podReview } from "../../../bench/review.ts";
import { toCel } from "../../../src/cel/index.ts";
import { jsonEqual } from "../../../src/engine/json-values.ts";
import { stringifyJson } from "../../../src/request/json-deep.ts";
import { needsExactNumbers, parseExact, parseJson, readNumberToken } from "../../../src/yaml/json-numbers.ts";

/** A value's shape: its JS type, with the marks spelled out. */
function shape(v: unknown): string {
  if (v instanceof Number) return `float(${v.valueOf()})`;
  return `${typeof v}(${String(v)})`;
}

void test("number tokens are read as sigs.k8s.io/json's PreserveInts reads them", () => {
  const cases: readonly (readonly [string, string])[] = [
    ["3", "number(3)"],
    ["-0", "number(0)"],
    ["9007199254740991", "number(9007199254740991)"],
    ["9007199254740993", "bigint(9007199254740993)"],
    ["-9007199254740993", "bigint(-9007199254740993)"],
    ["9223372036854775807", "bigint(9223372036854775807)"],
    ["-9223372036854775808", "bigint(-9223372036854775808)"],
    ["9223372036854775808", "number(9223372036854776000)"],
    ["-9223372036854775809", "number(-9223372036854776000)"],
    ["1.0", "float(1)"],
    ["-0.0", "float(0)"],
    ["1e3", "float(1000)"],
    ["2.5E1", "float(25)"],
    ["0.5", "number(0.5)"],
    ["1e21", "number(1e+21)"],
    ["9.3e18", "number(9300000000000000000)"],
  ];
  for (const [token, want] of cases) assert.equal(shape(readNumberToken(token)), want, token);
  assert.ok(Object.is((readNumberToken("-0.0") as number).valueOf(), -0));
  assert.throws(() => readNumberToken("1e400"), /number 1e400 is beyond the range of a float64/);
});

void test("text where JSON.parse reads every number right goes to JSON.parse", () => {
  const ordinary = JSON.stringify(podReview());
  assert.equal(needsExactNumbers(ordinary), false, "the bench's Pod review, with image tags such as :2.14.1");
  assert.equal(needsExactNumbers('{"a":1,"b":0.5,"c":"x:1.0","d":[1e-7, 123456789012345]}'), false);
  for (const text of ['{"a":1.0}', '{"a": 1e3}', "[0,9007199254740993]", '{"a":[2.0]}', '{"a":1e400}'])
    assert.equal(needsExactNumbers(text), true, text);
});

void test("the exact parser accepts and refuses what JSON.parse does, and keeps __proto__ a member", () => {
  const good = [
    '{"a":[1,{"b":null,"c":true,"d":false}],"e":"\\u00e9\\n","f":{}, "g" : [ ] }',
    ' [1.5, -2, "x"] ',
    '"s"',
    "1.0",
    '{"a":1,"a":2.0}',
  ];
  for (const text of good) {
    const exact = parseExact(text);
    assert.ok(jsonEqual(exact, JSON.parse(text)), text);
  }
  const proto = parseExact('{"__proto__":1.0}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.ok(Object.hasOwn(proto, "__proto__"));
  const bad = [
    '{"a":01}',
    "[1,]",
    '{"a" 1}',
    "[1] x",
    '"\\x"',
    '{"a":1.0',
    "",
    "[1.]",
    "[.5]",
    "[+1]",
    '{"a":1}}',
  ];
  for (const text of bad) {
    assert.throws(() => JSON.parse(text), SyntaxError, `JSON.parse ${text}`);
    assert.throws(() => parseExact(text), SyntaxError, `exact ${text}`);
  }
  // Iterative: nesting as deep as Go's decoder accepts, twice over, on any stack.
  const deep = `${"[".repeat(20_000)}1.0${"]".repeat(20_000)}`;
  let v = parseJson(deep);
  for (let i = 0; i < 20_000; i++) v = (v as unknown[])[0];
  assert.equal(shape(v), "float(1)");
});

void test("what was read exactly is written back as the same numbers", () => {
  const text =
    '{"a":9007199254740993,"b":[-9223372036854775808,9223372036854775807],"c":1.0,"d":0.5,"e":"9007199254740993"}';
  const v = parseJson(text);
  assert.equal(
    stringifyJson(v),
    '{"a":9007199254740993,"b":[-9223372036854775808,9223372036854775807],"c":1,"d":0.5,"e":"9007199254740993"}',
  );
  assert.equal(stringifyJson(v, 1).split("\n").length, 10);
  // structuredClone keeps both marks (the engine copies objects with it).
  assert.equal(stringifyJson(structuredClone(v)), stringifyJson(v));
  assert.equal(shape((structuredClone(v) as { c: unknown }).c), "float(1)");
  // A string that holds digits stays a string beside a bigint.
  const tricky = { s: "1152921504606846976", n: 2n ** 60n };
  assert.equal(stringifyJson(tricky), '{"s":"1152921504606846976","n":1152921504606846976}');
  // Without a bigint, it is JSON.stringify.
  assert.equal(stringifyJson({ a: [1, "x"] }, 2), JSON.stringify({ a: [1, "x"] }, null, 2));
});

void test("numbers compare by value in a JSON Patch test, whichever way they were read", () => {
  assert.ok(jsonEqual(parseJson("[1.0]"), [1]));
  assert.ok(jsonEqual(parseJson("[9007199254740993]"), parseJson("[9007199254740993]")));
  assert.ok(!jsonEqual(parseJson("[9007199254740993]"), [9007199254740992]));
  assert.ok(!jsonEqual(parseJson("[1.0]"), parseJson("[2.0]")));
  assert.ok(!jsonEqual(parseJson("[1.0]"), [{}]));
});

void test("toCel reads the marks as CEL does: a bigint an int, a Number object a double", () => {
  assert.deepEqual(toCel(parseJson("[1.0, 9007199254740993, 2]")), [1, 9007199254740993n, 2n]);
  assert.equal(toCel(parseJson("1.0")), 1);
});
