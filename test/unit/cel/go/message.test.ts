/**
 * go/message.ts against golang.org/x/text: %f cases from message/fmt_test.go (grouping, the sign
 * from x < 0, ∞) and %e cases from cel-go v0.26 ext/formatting_test.go, which prints for en_US.
 * cel-go's test expects U+202F around the ×, as the x/text it pins (v0.22) prints; the API server
 * is built with the x/text Kubernetes pins (v0.33.0 in 1.36), which prints none, and that is what
 * a real kube-apiserver 1.36 and 1.37 answered (test/kube/values.test.ts, `'%e'.format([2.5])`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { printFixed, printScientific } from "../../../../src/cel/go/message.ts";

test("printFixed: x/text message/fmt_test.go's %f cases", () => {
  const cases: [number, number, string][] = [
    [1234.5678e3, 6, "1,234,567.800000"],
    [1234.5678e-8, 6, "0.000012"],
    [-7.0, 6, "-7.000000"],
    [-1e-9, 6, "-0.000000"],
    [1.23456789e3, 6, "1,234.567890"],
    [12345678901.234568, 6, "12,345,678,901.234568"],
    [1.23456789e3, 8, "1,234.56789000"],
    [1.0, 2, "1.00"],
    [-1.0, 2, "-1.00"],
    [Number.POSITIVE_INFINITY, 6, "\u221e"],
    [Number.NEGATIVE_INFINITY, 6, "-\u221e"],
    [Number.NaN, 6, "NaN"],
    [123.0, 0, "123"],
  ];
  for (const [x, prec, want] of cases) assert.equal(printFixed(x, prec), want, `${x} %.${prec}f`);
});

test("printScientific: cel-go ext/formatting_test.go's %e cases, en_US, as Kubernetes' x/text prints them", () => {
  const X10 = "\u00d710";
  const cases: [number, number, string][] = [
    [1052.032911275, 6, `1.052033${X10}\u2070\u00b3`],
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: cel-go's own test value
    [2.71828, 6, `2.718280${X10}\u2070\u2070`],
    // The shapes of x/text's fmt_test.go cases: a negative exponent, a negative number.
    [1234.5678e-8, 6, `1.234568${X10}\u207b\u2070\u2075`],
    [-1e-9, 6, `-1.000000${X10}\u207b\u2070\u2079`],
    [1234.5678e3, 6, `1.234568${X10}\u2070\u2076`],
    [Number.NEGATIVE_INFINITY, 6, "-\u221e"],
  ];
  for (const [x, prec, want] of cases) assert.equal(printScientific(x, prec), want, `${x} %.${prec}e`);
});
