import assert from "node:assert/strict";
import { test } from "node:test";
import { celCompare, celEquals } from "../../../src/cel/runtime/equality.ts";
import { QuantityValue, quantityLibrary } from "../../../src/cel/library/quantity.ts";
import type { CelValue } from "../../../src/cel/runtime/values.ts";
import {
  errorInBothTiers,
  errorOf,
  evaluate,
  libraryHarness,
  valueInBothTiers,
} from "../../helpers/library.ts";

const { call, cost } = libraryHarness(quantityLibrary);

const q = (s: string): QuantityValue => call("quantity", "string_to_quantity", s) as QuantityValue;
const FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const BAD_SUFFIX = "unable to parse quantity's suffix";

// --- parsing and the canonical form -----------------------------------------------------------------

const canonical: readonly [input: string, printed: string][] = [
  ["0", "0"],
  ["0Ki", "0"],
  ["0m", "0"],
  ["1", "1"],
  ["12Mi", "12Mi"],
  ["1024Mi", "1Gi"],
  ["1.5Gi", "1536Mi"],
  ["-1.5Gi", "-1536Mi"],
  ["1Ki", "1Ki"],
  ["8Ki", "8Ki"],
  ["3Ei", "3Ei"],
  ["1025Ki", "1025Ki"],
  ["0.5Ki", "512"],
  ["0.1", "100m"],
  ["1.5", "1500m"],
  ["1.0", "1"],
  ["1.", "1"],
  ["1.G", "1G"],
  ["1000M", "1G"],
  ["50k", "50k"],
  ["50000", "50k"],
  ["50.02k", "50020"],
  ["100.035k", "100035"],
  ["10.035M", "10035k"],
  [".001", "1m"],
  [".0001k", "100m"],
  ["0.0005k", "500m"],
  ["5n", "5n"],
  ["4u", "4u"],
  ["3m", "3m"],
  ["2P", "2P"],
  ["1E", "1E"],
  ["12E", "12E"],
  // DecimalSI has no suffix beyond E, so Kubernetes falls back to an exponent.
  ["1000E", "1e21"],
  ["1e3", "1e3"],
  ["1E6", "1e6"],
  ["1E-3", "1e-3"],
  ["1.2e3", "1200"],
  ["1.3E+6", "1300e3"],
  ["0.5e-1", "50e-3"],
  // Amounts below a nanounit round up.
  ["3.001n", "4n"],
  ["1.1E-9", "2e-9"],
  ["0.0000000001", "1n"],
  ["0.00000012345", "124n"],
  ["0.000000000001Ki", "2n"],
  [".001Ki", "1024m"],
  [".000001Ki", "1024u"],
  // Binary amounts are capped at the largest int64.
  ["9Ei", "9223372036854775807"],
  ["-9Ei", "-9223372036854775807"],
  ["9223372036854775807Ki", "9223372036854775807"],
  ["100.035Ki", "102435840m"],
  ["0.5Mi", "512Ki"],
  ["9999999999999999999999999999999999999G", "9999999999999999999999999999999999999G"],
  ["+1k", "1k"],
  ["-000", "0"],
  // The scanner accepts a lone suffix or sign as zero, whatever the library docs say: apimachinery's
  // parseQuantityString (resource/quantity.go) turns an empty numerator into "0" ("if we stripped all
  // numerator positions, always return 0") and ParseQuantity then parses "0" with the suffix. The
  // comment in apiserver's library/quantity.go claims `isQuantity('Mi')` is false; the code says true.
  ["Mi", "0"],
  ["-Ki", "0"],
  ["k", "0"],
  ["+", "0"],
];

test("quantity() parses and prints the canonical form", () => {
  for (const [input, printed] of canonical) {
    const v = q(input);
    assert.equal(v.toString(), printed, input);
    assert.equal(v.toJSON(), printed, input);
    assert.equal(v.celType, "kubernetes.Quantity");
  }
});

const invalid: readonly [input: string, message: string][] = [
  ["", FORMAT_WRONG],
  ["10Mo", FORMAT_WRONG],
  ["1,3G", FORMAT_WRONG],
  ["Three", FORMAT_WRONG],
  ["aoeu", FORMAT_WRONG],
  ["1.1.M", FORMAT_WRONG],
  ["1+1.0M", FORMAT_WRONG],
  ["0.1am", FORMAT_WRONG],
  [" 1", FORMAT_WRONG],
  ["1 ", FORMAT_WRONG],
  ["10Mm", BAD_SUFFIX],
  ["200K", BAD_SUFFIX],
  ["0.1mi", BAD_SUFFIX],
  [".5i", BAD_SUFFIX],
  ["1i", BAD_SUFFIX],
  ["-3.01i", BAD_SUFFIX],
  ["-3.01e-", BAD_SUFFIX],
  ["1e", BAD_SUFFIX],
  // An exponent beyond int32 is refused instead of being truncated to another number.
  ["1e4294967297", BAD_SUFFIX],
  [".e-10", "unable to parse numeric part of quantity"],
];

test("quantity() rejects malformed strings with Kubernetes' messages", () => {
  for (const [input, message] of invalid) {
    assert.equal(
      errorOf(() => q(input)),
      message,
      input,
    );
  }
});

test("isQuantity() is true exactly when quantity() succeeds", () => {
  const isQ = (s: string) => call("isQuantity", "is_quantity_string", s);
  for (const s of ["20", "20M", "20Mi", "1.3G", "1.3Gi", "10000k", "1e3"]) assert.equal(isQ(s), true, s);
  for (const s of ["20Mo", "10Mm", "1,3G", "200K", "Three", ""]) assert.equal(isQ(s), false, s);
  for (const [input] of canonical) assert.equal(isQ(input), true, input);
  for (const [input] of invalid) assert.equal(isQ(input), false, input);
  // apimachinery's scanner reads a lone suffix as zero (see "Mi" above), so it is a quantity.
  assert.equal(valueInBothTiers(`isQuantity('Mi')`), true);
  assert.equal(errorInBothTiers(`quantity('Three')`), FORMAT_WRONG);
});

// --- equality and ordering ---------------------------------------------------------------------------

test("quantities are equal by value whatever their suffix", () => {
  const equal: [string, string][] = [
    ["200M", "200M"],
    ["200M", "0.2G"],
    ["2M", "0.002G"],
    ["2000k", "2M"],
    ["0.002G", "2000k"],
    ["1Gi", "1024Mi"],
    ["1k", "1e3"],
    ["0", "0Ki"],
  ];
  for (const [a, b] of equal) {
    assert.ok(celEquals(q(a), q(b)), `${a} == ${b}`);
    assert.ok(celEquals(q(b), q(a)), `${b} == ${a}`);
  }
  assert.equal(celEquals(q("200M"), q("0.3G")), false);
  assert.equal(celEquals(q("1"), 1n), false);
  assert.equal(celEquals(q("1"), "1"), false);
});

test("isLessThan, isGreaterThan and compareTo order by value", () => {
  const cases: [string, string, number][] = [
    ["50M", "50Mi", -1],
    ["50M", "100M", -1],
    ["100M", "50M", 1],
    ["50Mi", "50M", 1],
    ["150Mi", "100Mi", 1],
    ["200M", "0.2G", 0],
    ["10000T", "100Gi", 1],
    ["-1", "1m", -1],
    ["1e1000", "9999999999999999999999999999999999999G", 1],
    ["1n", "1e-1000", 0],
  ];
  for (const [a, b, want] of cases) {
    const label = `${a} vs ${b}`;
    assert.equal(call("compareTo", "quantity_compare_to", q(a), q(b)), BigInt(want), label);
    assert.equal(call("isLessThan", "quantity_is_less_than", q(a), q(b)), want === -1, label);
    assert.equal(call("isGreaterThan", "quantity_is_greater_than", q(a), q(b)), want === 1, label);
    assert.equal(celCompare(q(a), q(b)), want, label);
  }
});

// --- arithmetic ----------------------------------------------------------------------------------------

test("add and sub take quantities and ints", () => {
  const addQ = (a: QuantityValue, b: QuantityValue) => call("add", "quantity_add", a, b) as QuantityValue;
  const addI = (a: QuantityValue, b: bigint) => call("add", "quantity_add_int", a, b) as QuantityValue;
  const subQ = (a: QuantityValue, b: QuantityValue) => call("sub", "quantity_sub", a, b) as QuantityValue;
  const subI = (a: QuantityValue, b: bigint) => call("sub", "quantity_sub_int", a, b) as QuantityValue;

  assert.ok(celEquals(addQ(q("50k"), q("20")), q("50.02k")));
  assert.ok(celEquals(addI(q("50k"), 20n), q("50020")));
  assert.equal(call("isLessThan", "quantity_is_less_than", addI(q("50k"), 20n), q("50020")), false);
  assert.ok(celEquals(subQ(q("50k"), q("20")), q("49.98k")));
  assert.ok(celEquals(subI(q("50k"), 20n), q("49980")));
  assert.ok(celEquals(subI(q("50k"), 20000n), q("30k")));
  const chain = subI(subQ(addI(q("50k"), 20n), q("100k")), -50000n);
  assert.ok(celEquals(chain, q("20")));
  assert.equal(call("asInteger", "quantity_get_int", subQ(addI(q("50k"), 20n), q("100k"))), -49980n);
  assert.equal(call("asInteger", "quantity_get_int", chain), 20n);

  // Mixed binary and fractional amounts stay exact.
  assert.equal(addQ(q("1.5Gi"), q("512Mi")).toString(), "2Gi");
  assert.equal(addQ(q("0.1"), q("0.2")).toString(), "300m");
  assert.equal(subQ(q("1"), q("1n")).toString(), "999999999n");
  // Sums past int64 switch to big decimals rather than overflow.
  assert.equal(addQ(q("9223372036854775807"), q("1")).toString(), "9223372036854775808");
  assert.equal(addI(q("8E"), 9223372036854775807n).toString(), "17223372036854775807");
  assert.equal(subI(q("-9223372036854775807"), 2n).toString(), "-9223372036854775809");
});

test("adding to or subtracting from zero takes the other operand's suffix style", () => {
  for (const s of ["100m", "1Gi"]) {
    assert.equal(q(s).add(q("0")).toString(), s);
    assert.equal(q("0").add(q(s)).toString(), s);
    assert.equal(q(s).sub(q("0")).toString(), s);
    assert.equal(q("0").sub(q(s)).toString(), `-${s}`);
  }
  // An int operand is an exponent-style quantity.
  assert.equal(q("0").add(QuantityValue.fromInt(1000n)).toString(), "1e3");
  assert.equal(q("1k").add(QuantityValue.fromInt(1000n)).toString(), "2k");
});

// --- conversions -------------------------------------------------------------------------------------

test("isInteger and asInteger follow Kubernetes' int64 fast path", () => {
  const cases: [string, bigint | undefined][] = [
    ["50", 50n],
    ["50k", 50000n],
    ["50000000G", 50000000000000000n],
    ["1Gi", 1073741824n],
    ["-3", -3n],
    ["0", 0n],
    ["922337203685477580", 922337203685477580n],
    ["9999999999999999999999999999999999999G", undefined],
    ["10E", undefined],
    // Kubernetes keeps these as fractions or big decimals, which never convert, even when whole.
    ["1.0", undefined],
    ["1000m", undefined],
    ["1.5Gi", undefined],
    ["9Ei", undefined],
    ["1.5", undefined],
    // More than 18 digits always parse into a big decimal.
    ["9223372036854775807", undefined],
  ];
  for (const [input, want] of cases) {
    assert.equal(call("isInteger", "quantity_is_integer", q(input)), want !== undefined, input);
    if (want === undefined) {
      assert.equal(
        errorOf(() => call("asInteger", "quantity_get_int", q(input))),
        "cannot convert value to integer",
        input,
      );
    } else {
      assert.equal(call("asInteger", "quantity_get_int", q(input)), want, input);
    }
  }
});

test("asApproximateFloat converts with Kubernetes' rounding", () => {
  const cases: [string, number][] = [
    ["50.703k", 50703],
    ["1Gi", 1073741824],
    ["0.1", 0.1],
    ["1.5Gi", 1610612736],
    ["-2m", -0.002],
    ["100.035Ki", 102435.84000000001],
    ["1e1000", Number.POSITIVE_INFINITY],
    ["-1e1000", Number.NEGATIVE_INFINITY],
    ["1n", 1e-9],
  ];
  for (const [input, want] of cases)
    assert.equal(call("asApproximateFloat", "quantity_get_float", q(input)), want, input);
  const third = q("50k").sub(QuantityValue.fromInt(20000n));
  assert.equal(call("asApproximateFloat", "quantity_get_float", third), 30000);
});

test("sign is -1, 0 or 1", () => {
  for (const [input, want] of [
    ["5", 1n],
    ["0", 0n],
    ["-1m", -1n],
    ["-9Ei", -1n],
    ["0.0000000000000001", 1n],
  ] as const) {
    assert.equal(call("sign", "quantity_sign", q(input)), want, input);
  }
});

// apiserver/pkg/cel/library/quantity.go declares sign with cel.Overload, not cel.MemberOverload.
test("sign is a global function, sign(q), as Kubernetes declares it, not a method", () => {
  assert.equal(valueInBothTiers(`sign(quantity("-1m"))`), -1n);
  assert.equal(valueInBothTiers(`sign(quantity("5").sub(5))`), 0n);
  assert.equal(valueInBothTiers(`[quantity("2Gi")].map(x, sign(x))`)?.toString(), "1");
  const member = evaluate(`quantity("5").sign()`);
  assert.ok(!member.ok, "the member form is not declared");
});

// apiserver/pkg/cel/quantity.go: Quantity.Equal asserts `other.(Quantity)`; library/quantity.go's add
// and sub return `&apiservercel.Quantity{…}` (a pointer) where quantity() returns the struct. cel-go
// asks `lhs.Equal(rhs)` (common/types/compare.go Equal), so an arithmetic result on the right of `==`
// is never equal, whatever the amounts, while on the left it compares normally. Upstream is odd
// here; celgate matches it, since a policy that passes on one must pass on the other.
test("the quantity equality quirk: an add/sub result equals nothing when it is on the right", () => {
  const cases: [string, boolean][] = [
    [`quantity("50k").add(quantity("20")) == quantity("50.02k")`, true],
    [`quantity("50k").sub(20) == quantity("49980")`, true],
    [`quantity("50.02k") == quantity("50k").add(quantity("20"))`, false],
    [`quantity("49980") == quantity("50k").sub(20)`, false],
    [`quantity("1") == quantity("1").add(0)`, false],
    [`quantity("1").add(0) == quantity("1").add(0)`, false],
    [`quantity("1") != quantity("1").sub(0)`, true],
    [`quantity("1").sub(0) != quantity("1")`, false],
    // The same result on both sides is still a pointer on the right.
    [`cel.bind(x, quantity("1").add(1), x == x)`, false],
    [`cel.bind(x, quantity("2"), x == x)`, true],
    // Lists compare element by element, left to right (common/types/list.go Equal).
    [`[quantity("2")] == [quantity("1").add(1)]`, false],
    [`[quantity("1").add(1)] == [quantity("2")]`, true],
    // Comparisons and compareTo are not equality: they see the amounts.
    [`quantity("2").compareTo(quantity("1").add(1)) == 0`, true],
  ];
  for (const [expr, want] of cases) assert.equal(valueInBothTiers(expr), want, expr);
});

// Membership asks the needle: cel-go common/types/list.go baseList.Contains calls `elem.Equal(item)`,
// ext/sets.go setsContains/setsIntersects go through Contains with the sub-list's element as needle,
// and ext/lists.go distinctList asks `val.Equal(other)` with the later element first. With the
// quantity quirk above, the order decides: a pointer result as the needle compares normally.
test("membership, sets and distinct compare needle first, as cel-go's Contains and distinctList do", () => {
  const cases: [string, unknown][] = [
    [`quantity("1").add(1) in [quantity("2")]`, true],
    [`quantity("2") in [quantity("1").add(1)]`, false],
    [`sets.contains([quantity("2")], [quantity("1").add(1)])`, true],
    [`sets.contains([quantity("1").add(1)], [quantity("2")])`, false],
    [`sets.intersects([quantity("1").add(1)], [quantity("2")])`, true],
    [`sets.intersects([quantity("2")], [quantity("1").add(1)])`, false],
    // indexOf is the other way round: Kubernetes library/lists.go asks `element.Equal(item)`.
    [`[quantity("1").add(1)].indexOf(quantity("2"))`, 0n],
    [`[quantity("2")].indexOf(quantity("1").add(1))`, -1n],
    [`[quantity("2"), quantity("1").add(1)].distinct().size()`, 1n],
    [`[quantity("1").add(1), quantity("2")].distinct().size()`, 2n],
  ];
  for (const [expr, want] of cases) assert.equal(valueInBothTiers(expr), want, expr);
});

test("parsing costs one traversal of the string", () => {
  const parseCost = (s: string) => cost("quantity", "string_to_quantity", s);
  assert.equal(parseCost("1"), 0);
  assert.equal(parseCost("12345678901"), 1);
  assert.equal(parseCost("x".repeat(100)), 9);
});

// --- through the evaluator -------------------------------------------------------------------------

test("quantity expressions evaluate end to end", () => {
  const cases: [string, CelValue][] = [
    [`quantity("1Gi") == quantity("1024Mi")`, true],
    [`quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")`, true],
    [`quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()`, 20n],
    [`quantity("50M").compareTo(quantity("50Mi"))`, -1n],
    [`quantity("150Mi").isGreaterThan(quantity("100Mi"))`, true],
    [`quantity("50.703k").asApproximateFloat()`, 50703],
    [`isQuantity("1,3G")`, false],
    [`quantity("9999999999999999999999999999999999999G").isInteger()`, false],
  ];
  for (const [expr, want] of cases) {
    const r = evaluate(expr);
    assert.ok(r.ok, `${expr}: ${r.ok ? "" : r.error}`);
    assert.equal(r.value, want, expr);
  }
  const bad = evaluate(`quantity("10Mo")`);
  assert.ok(!bad.ok && bad.stage === "eval" && bad.error === FORMAT_WRONG);
  const overflow = evaluate(`quantity("9999999999999999999999999999999999999G").asInteger()`);
  assert.ok(!overflow.ok && overflow.error === "cannot convert value to integer");
});
