/**
 * src/cel/go/strconv.ts against Go's own tables: strconv/ftoa_test.go (ftoatests, the 'e', 'f' and
 * 'g' rows) for FormatFloat, and strconv/atoi_test.go, atof_test.go and atob_test.go for parsing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  formatFloat,
  numError,
  parseBool,
  parseFloat64,
  parseInt64,
  parseUint64,
} from "../../../../src/cel/go/strconv.ts";

// Go writes these as exact constants; Number() rounds the text to the same doubles.
const below1e23 = Number("99999999999999974834176");
const above1e23 = Number("100000000000000008388608");

void test("formatFloat follows strconv/ftoa_test.go ftoatests", () => {
  const cases: readonly [number, "e" | "f" | "g", number, string][] = [
    [1, "e", 5, "1.00000e+00"],
    [1, "f", 5, "1.00000"],
    [1, "g", 5, "1"],
    [1, "g", -1, "1"],
    [20, "g", -1, "20"],
    [1234567.8, "g", -1, "1.2345678e+06"],
    [200000, "g", -1, "200000"],
    [2000000, "g", -1, "2e+06"],
    // g conversion and zero suppression
    [400, "g", 2, "4e+02"],
    [40, "g", 2, "40"],
    [4, "g", 2, "4"],
    [0.4, "g", 2, "0.4"],
    [0.04, "g", 2, "0.04"],
    [0.004, "g", 2, "0.004"],
    [0.0004, "g", 2, "0.0004"],
    [0.00004, "g", 2, "4e-05"],
    [0.000004, "g", 2, "4e-06"],
    [0, "e", 5, "0.00000e+00"],
    [0, "f", 5, "0.00000"],
    [0, "g", 5, "0"],
    [0, "g", -1, "0"],
    [-1, "e", 5, "-1.00000e+00"],
    [-1, "f", 5, "-1.00000"],
    [-1, "g", 5, "-1"],
    [-1, "g", -1, "-1"],
    [12, "e", 5, "1.20000e+01"],
    [12, "f", 5, "12.00000"],
    [12, "g", 5, "12"],
    [12, "g", -1, "12"],
    [123456700, "e", 5, "1.23457e+08"],
    [123456700, "f", 5, "123456700.00000"],
    [123456700, "g", 5, "1.2346e+08"],
    [123456700, "g", -1, "1.234567e+08"],
    [1.2345e6, "e", 5, "1.23450e+06"],
    [1.2345e6, "f", 5, "1234500.00000"],
    [1.2345e6, "g", 5, "1.2345e+06"],
    [1e23, "e", 17, "9.99999999999999916e+22"],
    [1e23, "f", 17, "99999999999999991611392.00000000000000000"],
    [1e23, "g", 17, "9.9999999999999992e+22"],
    [1e23, "e", -1, "1e+23"],
    [1e23, "f", -1, "100000000000000000000000"],
    [1e23, "g", -1, "1e+23"],
    [below1e23, "e", 17, "9.99999999999999748e+22"],
    [below1e23, "f", 17, "99999999999999974834176.00000000000000000"],
    [below1e23, "g", 17, "9.9999999999999975e+22"],
    [below1e23, "e", -1, "9.999999999999997e+22"],
    [below1e23, "f", -1, "99999999999999970000000"],
    [below1e23, "g", -1, "9.999999999999997e+22"],
    [above1e23, "e", 17, "1.00000000000000008e+23"],
    [above1e23, "f", 17, "100000000000000008388608.00000000000000000"],
    [above1e23, "g", 17, "1.0000000000000001e+23"],
    [above1e23, "e", -1, "1.0000000000000001e+23"],
    [above1e23, "f", -1, "100000000000000010000000"],
    [above1e23, "g", -1, "1.0000000000000001e+23"],
    [5e-324, "g", -1, "5e-324"],
    [-5e-324, "g", -1, "-5e-324"],
    [32, "g", -1, "32"],
    [32, "g", 0, "3e+01"],
    [Number.NaN, "g", -1, "NaN"],
    [Number.POSITIVE_INFINITY, "g", -1, "+Inf"],
    [Number.NEGATIVE_INFINITY, "g", -1, "-Inf"],
    // fixed bugs: the exact binary value decides, ties go to even
    [0.9, "f", 1, "0.9"],
    [0.09, "f", 1, "0.1"],
    [0.0999, "f", 1, "0.1"],
    [0.05, "f", 1, "0.1"],
    [0.05, "f", 0, "0"],
    [0.5, "f", 1, "0.5"],
    [0.5, "f", 0, "0"],
    [1.5, "f", 0, "2"],
    [Number("2.2250738585072012e-308"), "g", -1, "2.2250738585072014e-308"],
    [Number("2.2250738585072011e-308"), "g", -1, "2.225073858507201e-308"],
    // Issues 2625 and 29491.
    [Number("383260575764816448"), "f", 0, "383260575764816448"],
    [Number("383260575764816448"), "g", -1, "3.8326057576481645e+17"],
    [Number("498484681984085570"), "f", -1, "498484681984085570"],
    [Number("-5.8339553793802237e23"), "g", -1, "-5.8339553793802237e+23"],
  ];
  for (const [x, fmt, prec, want] of cases)
    assert.equal(formatFloat(x, fmt, prec), want, `FormatFloat(${x}, '${fmt}', ${prec})`);
});

void test("formatFloat keeps the sign of negative zero and writes three exponent digits from 100 on", () => {
  assert.equal(formatFloat(-0, "g", -1), "-0");
  assert.equal(formatFloat(-0, "e", 2), "-0.00e+00");
  assert.equal(formatFloat(1e100, "g", -1), "1e+100");
  assert.equal(formatFloat(9.5, "e", 0), "1e+01"); // a carry moves the exponent
});

void test("parseInt64 and parseUint64 follow strconv/atoi_test.go in base 10 with 64 bits", () => {
  const ints: readonly [string, bigint | string][] = [
    ["", "invalid syntax"],
    ["0", 0n],
    ["-0", 0n],
    ["+0", 0n],
    ["1", 1n],
    ["-1", -1n],
    ["+1", 1n],
    ["12345", 12345n],
    ["-12345", -12345n],
    ["012345", 12345n],
    ["-012345", -12345n],
    ["98765432100", 98765432100n],
    ["9223372036854775807", 9223372036854775807n],
    ["-9223372036854775807", -9223372036854775807n],
    ["9223372036854775808", "value out of range"],
    ["-9223372036854775808", -9223372036854775808n],
    ["-9223372036854775809", "value out of range"],
    ["-1_2_3_4_5", "invalid syntax"], // underscores only with a base prefix
    ["-_12345", "invalid syntax"],
    ["12345x", "invalid syntax"],
  ];
  for (const [s, want] of ints) assert.equal(parseInt64(s), want, `ParseInt(${JSON.stringify(s)})`);
  const uints: readonly [string, bigint | string][] = [
    ["", "invalid syntax"],
    ["0", 0n],
    ["1", 1n],
    ["12345", 12345n],
    ["012345", 12345n],
    ["12345x", "invalid syntax"],
    ["18446744073709551615", 18446744073709551615n],
    ["18446744073709551616", "value out of range"],
    ["18446744073709551620", "value out of range"],
    ["1_2_3_4_5", "invalid syntax"],
    ["+1", "invalid syntax"],
    ["-1", "invalid syntax"],
  ];
  for (const [s, want] of uints) assert.equal(parseUint64(s), want, `ParseUint(${JSON.stringify(s)})`);
});

void test("parseFloat64 follows strconv/atof_test.go: decimal, hexadecimal and special forms", () => {
  const cases: readonly [string, number | string][] = [
    ["", "invalid syntax"],
    ["1", 1],
    ["+1", 1],
    ["1e23", 1e23],
    ["1E23", 1e23],
    ["100000000000000000000000", 1e23],
    ["1e-100", 1e-100],
    [".5", 0.5],
    ["5.", 5],
    ["1x", "invalid syntax"],
    ["1.1.", "invalid syntax"],
    ["1e", "invalid syntax"],
    ["0x1p-2", 0.25],
    ["0x1.8p1", 3],
    ["-0x2p3", -16],
    ["0x1", "invalid syntax"], // a hexadecimal float needs its p exponent
    ["1e308", 1e308],
    ["1e309", "value out of range"],
    ["-1e309", "value out of range"],
    ["inf", Number.POSITIVE_INFINITY],
    ["-Inf", Number.NEGATIVE_INFINITY],
    ["+INFINITY", Number.POSITIVE_INFINITY],
    ["NaN", Number.NaN],
    ["nan", Number.NaN],
  ];
  for (const [s, want] of cases) assert.equal(parseFloat64(s), want, `ParseFloat(${JSON.stringify(s)})`);
  assert.ok(Object.is(parseFloat64("-0"), -0));
});

void test("parseBool accepts strconv/atob.go's spellings only", () => {
  for (const s of ["1", "t", "T", "true", "TRUE", "True"]) assert.equal(parseBool(s), true, s);
  for (const s of ["0", "f", "F", "false", "FALSE", "False"]) assert.equal(parseBool(s), false, s);
  for (const s of ["", "asdf", "tRUE", "yes"]) assert.equal(parseBool(s), "invalid syntax", s);
});

void test('numError writes *NumError.Error(): strconv.Func: parsing "input": reason', () => {
  assert.equal(numError("ParseUint", "", "invalid syntax"), 'strconv.ParseUint: parsing "": invalid syntax');
  assert.equal(
    numError("Atoi", "9\n", "value out of range"),
    'strconv.Atoi: parsing "9\\n": value out of range',
  );
});
