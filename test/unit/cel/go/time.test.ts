/**
 * src/cel/go/time.ts against Go's time package: time_test.go (parseDurationTests and
 * parseDurationErrorTests), format_test.go (RFC 3339 parsing and the RFC3339Nano layout) and
 * Duration.Seconds from time.go.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  durationSeconds,
  formatRFC3339,
  parseDuration,
  parseRFC3339,
} from "../../../../src/cel/go/time.ts";

const NS = 1n;
const US = 1000n;
const MS = 1_000_000n;
const S = 1_000_000_000n;
const M = 60n * S;
const H = 3600n * S;

void test("parseDuration follows time_test.go parseDurationTests", () => {
  const cases: readonly [string, bigint][] = [
    ["0", 0n],
    ["5s", 5n * S],
    ["1478s", 1478n * S],
    ["-5s", -5n * S],
    ["+5s", 5n * S],
    ["-0", 0n],
    ["+0", 0n],
    ["5.0s", 5n * S],
    ["5.6s", 5n * S + 600n * MS],
    ["5.s", 5n * S],
    [".5s", 500n * MS],
    ["1.004s", S + 4n * MS],
    ["100.00100s", 100n * S + MS],
    ["10ns", 10n * NS],
    ["11us", 11n * US],
    ["12\u00b5s", 12n * US],
    ["12\u03bcs", 12n * US],
    ["13ms", 13n * MS],
    ["15m", 15n * M],
    ["16h", 16n * H],
    ["3h30m", 3n * H + 30n * M],
    ["10.5s4m", 4n * M + 10n * S + 500n * MS],
    ["-2m3.4s", -(2n * M + 3n * S + 400n * MS)],
    ["1h2m3s4ms5us6ns", H + 2n * M + 3n * S + 4n * MS + 5n * US + 6n * NS],
    ["39h9m14.425s", 39n * H + 9n * M + 14n * S + 425n * MS],
    ["52763797000ns", 52763797000n],
    ["9007199254740993ns", 2n ** 53n + 1n],
    ["9223372036854775807ns", 2n ** 63n - 1n],
    ["9223372036854775.807us", 2n ** 63n - 1n],
    ["9223372036s854ms775us807ns", 2n ** 63n - 1n],
    ["-9223372036854775808ns", -(2n ** 63n)],
    ["-9223372036854775.808us", -(2n ** 63n)],
    ["-2562047h47m16.854775808s", -(2n ** 63n)],
    ["0.100000000000000000000h", 6n * M],
    ["0.830103483285477580700h", 49n * M + 48n * S + 372539827n],
  ];
  for (const [text, want] of cases) assert.equal(parseDuration(text), want, text);
});

void test("parseDuration fails where time_test.go parseDurationErrorTests fail", () => {
  const bad = [
    "",
    "3",
    "-",
    "s",
    ".",
    "-.",
    ".s",
    "+.s",
    "1d",
    "\ufffd",
    "9223372036854775810ns",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "9223372036854776us",
    "3000000h",
    "9223372036854775.808us",
    "9223372036854ms775us808ns",
  ];
  for (const text of bad) assert.equal(parseDuration(text), undefined, JSON.stringify(text));
});

void test("durationSeconds is Duration.Seconds: whole seconds plus the rest over 1e9", () => {
  assert.equal(durationSeconds(1500n * MS), 1.5);
  assert.equal(durationSeconds(-1n), -1e-9);
  assert.equal(durationSeconds(2n ** 63n - 1n), 9223372036.854776);
});

void test("parseRFC3339 reads time.RFC3339, with the checks newer Go applies", () => {
  assert.equal(parseRFC3339("1970-01-01T00:00:00Z"), 0n);
  assert.equal(parseRFC3339("2006-01-02T15:04:05Z"), 1136214245n * S);
  assert.equal(parseRFC3339("2006-01-02T15:04:05-07:00"), 1136239445n * S);
  assert.equal(parseRFC3339("2006-01-02t15:04:05.5z"), 1136214245n * S + 500n * MS);
  // Go reads nine fraction digits and ignores the rest.
  assert.equal(parseRFC3339("1970-01-01T00:00:00.1234567891Z"), 123456789n);
  assert.equal(parseRFC3339("0001-01-01T00:00:00Z"), -62135596800n * S);
  for (const bad of [
    "2006-01-02T15:04:05", // no offset
    "2006-01-02T15:04:60Z", // leap second
    "2006-02-29T00:00:00Z", // not a leap year
    "2006-1-02T15:04:05Z", // one-digit month
    "2006-01-02T15:04:05+7:00", // one-digit offset hour
    "2006-01-02T15:04:05,5Z", // comma before the fraction
  ])
    assert.equal(parseRFC3339(bad), undefined, bad);
});

void test("formatRFC3339: RFC3339Nano trims the fraction, the JSON form keeps 3, 6 or 9 digits", () => {
  const cases: readonly [bigint, string, string][] = [
    [0n, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"],
    [500n * MS, "1970-01-01T00:00:00.5Z", "1970-01-01T00:00:00.500Z"],
    [120n * US, "1970-01-01T00:00:00.00012Z", "1970-01-01T00:00:00.000120Z"],
    [1n, "1970-01-01T00:00:00.000000001Z", "1970-01-01T00:00:00.000000001Z"],
    [-1n, "1969-12-31T23:59:59.999999999Z", "1969-12-31T23:59:59.999999999Z"],
    [-62135596800n * S, "0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"],
    [253402300799n * S + 999999999n, "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999999Z"],
    [951782400n * S, "2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"],
  ];
  for (const [instant, fewest, groups] of cases) {
    assert.equal(formatRFC3339(instant, "fewest"), fewest);
    assert.equal(formatRFC3339(instant, "groupsOfThree"), groups);
  }
});

void test("the proleptic Gregorian calendar: leap years and day numbers", () => {
  assert.equal(daysInMonth(2000, 2), 29);
  assert.equal(daysInMonth(1900, 2), 28);
  assert.equal(daysInMonth(2024, 2), 29);
  assert.equal(daysInMonth(2023, 4), 30);
  assert.equal(daysInMonth(2023, 12), 31);
  assert.equal(daysFromCivil(1970, 1, 1), 0);
  assert.deepEqual(civilFromDays(daysFromCivil(1600, 2, 29)), { year: 1600, month: 2, day: 29 });
});
