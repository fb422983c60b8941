import assert from "node:assert/strict";
import { test } from "node:test";
import { base64Decode, base64Encode, encodersLibrary } from "../../../src/cel/library/encoders.ts";
import { CelError } from "../../../src/cel/runtime/values.ts";
import { evaluate, libraryHarness } from "../../helpers/library.ts";

const { overload, call } = libraryHarness(encodersLibrary);

const encode = (b: Uint8Array) => call("base64.encode", "base64_encode_bytes", b);
const decode = (s: string) => call("base64.decode", "base64_decode_string", s);

const bytes = (s: string) => new TextEncoder().encode(s);

void test("encodersLibrary is opt-in, under the extra name 'encoders'", () => {
  assert.equal(encodersLibrary.availability, "extra");
  assert.equal(encodersLibrary.name, "encoders");
  assert.deepEqual(overload("base64.encode", "base64_encode_bytes").args, ["bytes"]);
  assert.equal(overload("base64.encode", "base64_encode_bytes").result, "string");
  assert.deepEqual(overload("base64.decode", "base64_decode_string").args, ["string"]);
  assert.equal(overload("base64.decode", "base64_decode_string").result, "bytes");
});

const encodeCases: ReadonlyArray<readonly [Uint8Array, string]> = [
  [bytes("hello"), "aGVsbG8="],
  [bytes(""), ""],
  [bytes("f"), "Zg=="],
  [bytes("fo"), "Zm8="],
  [bytes("foo"), "Zm9v"],
  [new Uint8Array([0xfb, 0xff, 0xfe]), "+//+"],
  [new Uint8Array([0, 0, 0, 0]), "AAAAAA=="],
];

for (const [input, expected] of encodeCases) {
  void test(`base64.encode(${JSON.stringify(Array.from(input))}) is ${JSON.stringify(expected)}`, () => {
    assert.equal(encode(input), expected);
    assert.deepEqual(decode(expected), input, "and decodes back");
  });
}

void test("base64.encode of a view encodes only the view", () => {
  const buffer = new Uint8Array([1, 2, 3, 4, 5]);
  assert.equal(base64Encode(buffer.subarray(1, 4)), "AgME");
});

const decodeCases: ReadonlyArray<readonly [string, Uint8Array]> = [
  ["aGVsbG8=", bytes("hello")],
  ["aGVsbG8", bytes("hello")], // unpadded input is accepted too
  ["Zg", bytes("f")],
  ["Zm8", bytes("fo")],
  ["aGVs\nbG8=", bytes("hello")], // line breaks are ignored
  ["aGVsbG8=\r\n", bytes("hello")],
  ["Zg=\n=", bytes("f")],
  ["", new Uint8Array([])],
  ["YR==", bytes("a")], // non-zero trailing bits are tolerated, as Go's non-strict decoder does
];

for (const [input, expected] of decodeCases) {
  void test(`base64.decode(${JSON.stringify(input)})`, () => {
    assert.deepEqual(decode(input), expected);
  });
}

// When the padded decoding fails, the unpadded one is tried, and its error is the one reported:
// to it every "=" is a bad symbol.
const invalidCases: ReadonlyArray<readonly [string, string]> = [
  ["a", "illegal base64 data at input byte 0"],
  ["aGVsbG8=x", "illegal base64 data at input byte 7"],
  ["aGV!bG8=", "illegal base64 data at input byte 3"],
  ["aGVsbG8==", "illegal base64 data at input byte 7"],
  ["=", "illegal base64 data at input byte 0"],
  ["Zm9v-_8=", "illegal base64 data at input byte 4"], // the URL alphabet is not accepted
  ["é", "illegal base64 data at input byte 0"],
  ["Zm9vé", "illegal base64 data at input byte 4"],
];

for (const [input, message] of invalidCases) {
  void test(`base64.decode(${JSON.stringify(input)}) fails`, () => {
    assert.throws(
      () => decode(input),
      (e: unknown) => e instanceof CelError && e.message === message,
    );
  });
}

void test("decoding round-trips arbitrary bytes", () => {
  const all = new Uint8Array(256).map((_, i) => i);
  for (let len = 0; len <= all.length; len += 17) {
    const b = all.slice(0, len);
    const s = base64Encode(b);
    assert.deepEqual(base64Decode(s), b);
    assert.deepEqual(base64Decode(s.replace(/=+$/, "")), b);
  }
});

void test("base64 through evaluate", () => {
  const enc = evaluate("base64.encode(b'hello')");
  assert.ok(enc.ok && enc.value === "aGVsbG8=");
  const dec = evaluate("base64.decode('aGVsbG8') == b'hello'");
  assert.ok(dec.ok && dec.value === true);
  const bad = evaluate("base64.decode('a')");
  assert.ok(!bad.ok && bad.error.includes("illegal base64 data at input byte 0"));
});

interface ConformanceSuite {
  readonly name: string;
  readonly suites?: readonly ConformanceSuite[];
  readonly tests?: ReadonlyArray<{
    readonly original: {
      readonly expr: string;
      readonly value?: { stringValue?: string; bytesValue?: string };
    };
  }>;
}

void test("conformance: encoders_ext", async () => {
  const { tests } = (await import("@bufbuild/cel-spec/testdata/conformance.js")) as {
    tests: ConformanceSuite;
  };
  const suite = tests.suites?.find((s) => s.name === "encoders_ext");
  assert.ok(suite?.suites, "the conformance data has an encoders_ext suite");
  let count = 0;
  for (const section of suite.suites) {
    for (const t of section.tests ?? []) {
      const { expr, value } = t.original;
      const r = evaluate(expr);
      assert.ok(r.ok, `${expr}: ${r.ok ? "" : r.error}`);
      if (value?.stringValue !== undefined) assert.equal(r.value, value.stringValue, expr);
      else if (value?.bytesValue !== undefined)
        assert.deepEqual(r.value, new Uint8Array(Buffer.from(value.bytesValue, "base64")), expr);
      else assert.fail(`${expr}: unexpected expectation`);
      count++;
    }
  }
  assert.ok(count >= 4, `ran ${count} conformance tests`);
});
