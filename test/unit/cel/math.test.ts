import assert from "node:assert/strict";
import { test } from "node:test";
import { mathLibrary } from "../../../src/cel/library/math.ts";
import type { Overload } from "../../../src/cel/library/types.ts";
import { CelError, type CelValue, UInt } from "../../../src/cel/runtime/values.ts";
import { evaluate, stubContext, throwsCel } from "../../helpers/library.ts";

const ctx = stubContext();

type Fn = (...args: unknown[]) => CelValue;

/** Dispatches like the evaluator: the first overload of `name` whose argument tags fit the values. */
function call(name: string, ...args: CelValue[]): CelValue {
  const decl = mathLibrary.functions.find((f) => f.name === name);
  assert.ok(decl, `function ${name} is declared`);
  const fits = (v: CelValue, tag: string) =>
    tag === "dyn" ||
    (tag === "int" && typeof v === "bigint") ||
    (tag === "double" && typeof v === "number") ||
    (tag === "uint" && v instanceof UInt);
  const o = decl.overloads.find(
    (x: Overload) => x.args.length === args.length && x.args.every((t, i) => fits(args[i] as CelValue, t)),
  );
  if (!o) throw new CelError(`no overload of ${name} for these arguments`);
  return (o.impl as unknown as Fn)(...args, ctx);
}

const u = (n: bigint) => new UInt(n);
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

void test("mathLibrary is opt-in, under the extra name 'math'", () => {
  assert.equal(mathLibrary.availability, "extra");
  assert.equal(mathLibrary.name, "math");
});

void test("greatest and least take 1 to 6 arguments", () => {
  for (const name of ["math.greatest", "math.least"]) {
    const decl = mathLibrary.functions.find((f) => f.name === name);
    assert.deepEqual(
      decl?.overloads.map((o) => o.args.length),
      [1, 2, 3, 4, 5, 6],
    );
  }
});

const extremes: ReadonlyArray<readonly [CelValue[], CelValue, CelValue]> = [
  // [arguments, greatest, least]
  [[5n], 5n, 5n],
  [[-5.5], -5.5, -5.5],
  [[u(5n)], u(5n), u(5n)],
  [[3n, -3n], 3n, -3n],
  [[1n, 1.0], 1n, 1n], // a tie keeps the first argument, with its type
  [[1.0, 1n], 1.0, 1.0],
  [[u(5n), -7n], u(5n), -7n],
  [[INT64_MAX, 1n], INT64_MAX, 1n],
  [[INT64_MIN, 1n], 1n, INT64_MIN],
  [[u(UINT64_MAX), 1n], u(UINT64_MAX), 1n],
  [[1.797693e308, 1n], 1.797693e308, 1n],
  [[10n, 1n, 3n], 10n, 1n],
  [[5.4, 10n, u(3n), -5.0, INT64_MAX], INT64_MAX, -5.0],
  [[1n, 2n, 3n, 4n, 5n, 6n], 6n, 1n],
  [[[5.4, 10n, u(3n), -5.0, 3.5]], 10n, -5.0],
  [[[7n]], 7n, 7n],
];

for (const [args, greatest, least] of extremes) {
  void test(`math.greatest / math.least of ${args.length} argument(s)`, () => {
    assert.deepEqual(call("math.greatest", ...args), greatest);
    assert.deepEqual(call("math.least", ...args), least);
  });
}

void test("greatest and least errors", () => {
  throwsCel(() => call("math.greatest", []), "math.@max(list) argument must not be empty");
  throwsCel(() => call("math.least", []), "math.@min(list) argument must not be empty");
  throwsCel(() => call("math.greatest", "a"), "no such overload: math.greatest(string)");
  throwsCel(() => call("math.least", 1n, "a"), "no such overload: math.least(int, string)");
  throwsCel(() => call("math.greatest", [1n, true]), /^no such overload: math.greatest/);
  throwsCel(() => call("math.greatest", 1.0, Number.NaN), "NaN values cannot be ordered");
  throwsCel(() => call("math.least", [Number.NaN, 1n, 2n]), "NaN values cannot be ordered");
});

const rounding: ReadonlyArray<readonly [string, number, number]> = [
  ["math.ceil", -1.2, -1],
  ["math.ceil", 1.2, 2],
  ["math.floor", -1.2, -2],
  ["math.floor", 1.2, 1],
  ["math.round", -1.6, -2],
  ["math.round", -1.4, -1],
  ["math.round", -1.5, -2], // halves go away from zero, as Go's math.Round
  ["math.round", 1.5, 2],
  ["math.round", 2.5, 3],
  ["math.round", 0.49999999999999994, 0],
  ["math.round", 1e300, 1e300],
  ["math.trunc", -1.7, -1],
  ["math.trunc", 1.7, 1],
  ["math.abs", -11.5, 11.5],
  ["math.abs", 1.5, 1.5],
  ["math.sign", 100.5, 1],
  ["math.sign", -32.0, -1],
  ["math.sign", 0.0, 0],
  ["math.sqrt", 9.0, 3],
  ["math.sqrt", 2.0, Math.SQRT2],
];

for (const [name, x, expected] of rounding) {
  void test(`${name}(${x}) is ${expected}`, () => {
    assert.equal(call(name, x), expected);
  });
}

void test("NaN and the infinities", () => {
  for (const name of [
    "math.ceil",
    "math.floor",
    "math.round",
    "math.trunc",
    "math.abs",
    "math.sign",
    "math.sqrt",
  ]) {
    assert.ok(Number.isNaN(call(name, Number.NaN) as number), `${name}(NaN)`);
  }
  assert.equal(call("math.round", -Infinity), -Infinity);
  assert.ok(Object.is(call("math.round", -0.4), -0));
  const predicates: ReadonlyArray<readonly [number, boolean, boolean, boolean]> = [
    // [x, isNaN, isInf, isFinite]
    [Number.NaN, true, false, false],
    [Infinity, false, true, false],
    [-Infinity, false, true, false],
    [1.5, false, false, true],
    [0, false, false, true],
  ];
  for (const [x, nan, inf, finite] of predicates) {
    assert.equal(call("math.isNaN", x), nan, `isNaN(${x})`);
    assert.equal(call("math.isInf", x), inf, `isInf(${x})`);
    assert.equal(call("math.isFinite", x), finite, `isFinite(${x})`);
  }
  assert.ok(Number.isNaN(call("math.sqrt", -1n) as number));
});

const integers: ReadonlyArray<readonly [string, CelValue[], CelValue]> = [
  ["math.abs", [-11n], 11n],
  ["math.abs", [INT64_MAX], INT64_MAX],
  ["math.abs", [u(1n)], u(1n)],
  ["math.sign", [-11n], -1n],
  ["math.sign", [0n], 0n],
  ["math.sign", [100n], 1n],
  ["math.sign", [u(0n)], u(0n)],
  ["math.sign", [u(100n)], u(1n)],
  ["math.sqrt", [16n], 4],
  ["math.sqrt", [u(25n)], 5],
  ["math.bitAnd", [1n, 3n], 1n],
  ["math.bitAnd", [1n, -1n], 1n],
  ["math.bitAnd", [u(1n), u(2n)], u(0n)],
  ["math.bitOr", [4n, -2n], -2n],
  ["math.bitOr", [u(1n), u(4n)], u(5n)],
  ["math.bitXor", [4n, -2n], -6n],
  ["math.bitXor", [u(1n), u(3n)], u(2n)],
  ["math.bitNot", [1n], -2n],
  ["math.bitNot", [-1n], 0n],
  ["math.bitNot", [INT64_MIN], INT64_MAX],
  ["math.bitNot", [u(0n)], u(UINT64_MAX)],
  ["math.bitNot", [u(1n)], u(UINT64_MAX - 1n)],
  ["math.bitShiftLeft", [1n, 2n], 4n],
  ["math.bitShiftLeft", [1n, 63n], INT64_MIN], // bits fall off the top
  ["math.bitShiftLeft", [3n, 63n], INT64_MIN],
  ["math.bitShiftLeft", [1n, 200n], 0n],
  ["math.bitShiftLeft", [-1n, 200n], 0n],
  ["math.bitShiftLeft", [u(1n), 2n], u(4n)],
  ["math.bitShiftLeft", [u(3n), 63n], u(2n ** 63n)],
  ["math.bitShiftLeft", [u(1n), 200n], u(0n)],
  ["math.bitShiftRight", [1024n, 2n], 256n],
  ["math.bitShiftRight", [1024n, 64n], 0n],
  ["math.bitShiftRight", [-1024n, 3n], 2305843009213693824n], // zeros come in from the left
  ["math.bitShiftRight", [-1n, 63n], 1n],
  ["math.bitShiftRight", [-1024n, 64n], 0n],
  ["math.bitShiftRight", [u(1024n), 2n], u(256n)],
  ["math.bitShiftRight", [u(1024n), 200n], u(0n)],
];

for (const [name, args, expected] of integers) {
  void test(`${name}(${args.map(String).join(", ")})`, () => {
    assert.deepEqual(call(name, ...args), expected);
  });
}

void test("integer errors", () => {
  throwsCel(() => call("math.abs", INT64_MIN), "integer overflow");
  throwsCel(() => call("math.bitShiftLeft", u(1n), -1n), "math.bitShiftLeft() negative offset: -1");
  throwsCel(() => call("math.bitShiftLeft", 1n, -5n), "math.bitShiftLeft() negative offset: -5");
  throwsCel(() => call("math.bitShiftRight", u(1n), -1n), "math.bitShiftRight() negative offset: -1");
  throwsCel(() => call("math.bitShiftRight", 1n, -2n), "math.bitShiftRight() negative offset: -2");
});

void test("rounding and predicates take doubles only", () => {
  for (const name of [
    "math.ceil",
    "math.floor",
    "math.round",
    "math.trunc",
    "math.isNaN",
    "math.isInf",
    "math.isFinite",
  ]) {
    const decl = mathLibrary.functions.find((f) => f.name === name);
    assert.deepEqual(
      decl?.overloads.map((o) => o.args),
      [["double"]],
      name,
    );
  }
  throwsCel(() => call("math.ceil", 1n), /no overload/);
  throwsCel(() => call("math.bitAnd", 1n, u(1n)), /no overload/);
});

// ---------------------------------------------------------------------------------------------
// The cel-spec conformance suite "math_ext", through the whole evaluator.

interface ConformanceTest {
  readonly original: {
    readonly name?: string;
    readonly expr: string;
    readonly value?: Record<string, unknown>;
    readonly evalError?: unknown;
    readonly disableCheck?: boolean;
  };
}

interface ConformanceSuite {
  readonly name: string;
  readonly suites?: readonly ConformanceSuite[];
  readonly tests?: readonly ConformanceTest[];
}

function expectedValue(v: Record<string, unknown>): CelValue {
  if ("int64Value" in v) return BigInt(v.int64Value as string);
  if ("uint64Value" in v) return new UInt(BigInt(v.uint64Value as string));
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("boolValue" in v) return v.boolValue as boolean;
  throw new Error(`unexpected expected value ${JSON.stringify(v)}`);
}

void test("conformance: math_ext", async () => {
  const { tests } = (await import("@bufbuild/cel-spec/testdata/conformance.js")) as {
    tests: ConformanceSuite;
  };
  const suite = tests.suites?.find((s) => s.name === "math_ext");
  assert.ok(suite?.suites, "the conformance data has a math_ext suite");
  let count = 0;
  for (const section of suite.suites) {
    for (const t of section.tests ?? []) {
      const { expr, value, evalError } = t.original;
      const where = `${section.name}/${t.original.name}: ${expr}`;
      // cel-go's checker without Kubernetes' validators (mixed-type lists are conformance cases).
      const r = evaluate(expr, {}, { checks: t.original.disableCheck ? "none" : "cel" });
      if (evalError !== undefined) {
        assert.ok(!r.ok, `${where} should fail`);
      } else {
        assert.ok(r.ok, `${where}: ${r.ok ? "" : r.error}`);
        // A test without an expected value expects true.
        assert.deepEqual(r.value, value === undefined ? true : expectedValue(value), where);
      }
      count++;
    }
  }
  assert.ok(count >= 190, `ran ${count} conformance tests`);
});
