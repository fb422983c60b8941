import assert from "node:assert/strict";
import { test } from "node:test";
import { stdLibrary } from "../../../src/cel/library/std.ts";
import { civilFromDays, daysFromCivil } from "../../../src/cel/go/time.ts";
import {
  formatDuration,
  formatTimestamp,
  parseDuration,
  parseTimestamp,
  timeLibrary,
} from "../../../src/cel/library/time.ts";
import { type CelValue, Duration, Timestamp } from "../../../src/cel/runtime/values.ts";
import { evaluateBothTiers, overloadsById, throwsCel, valueInBothTiers } from "../../helpers/library.ts";

// Conversions such as int64_to_timestamp live in the standard library.
const { call } = overloadsById([timeLibrary, stdLibrary]);

const S = 1_000_000_000n;
const ts = (s: string) => parseTimestamp(s);

test("duration parsing follows Go's time.ParseDuration", () => {
  const cases: [string, bigint][] = [
    ["0", 0n],
    ["-0", 0n],
    ["+5s", 5n * S],
    ["1h2m3.5s", 3723n * S + S / 2n],
    ["-1.5h", -5400n * S],
    ["500ms", 500_000_000n],
    ["1us", 1000n],
    ["1µs", 1000n],
    ["1μs", 1000n],
    ["1ns", 1n],
    [".5s", S / 2n],
    ["1.s", S],
    ["1000000s", 1_000_000n * S],
    ["2h45m", 9900n * S],
    ["1.000000001s", S + 1n],
    ["0.0000000009s", 0n],
    ["9223372036854775807ns", 9223372036854775807n],
    ["-9223372036854775808ns", -9223372036854775808n],
  ];
  for (const [text, nanos] of cases) assert.equal(parseDuration(text).nanos, nanos, text);
});

test("invalid or out-of-range durations are conversion errors", () => {
  for (const text of [
    "",
    "-",
    "1",
    "s",
    ".s",
    "1d",
    "1 s",
    "1h 2m",
    "abc",
    "1e3s",
    "9223372036854775808ns",
    "320000000000s",
    "--1s",
  ]) {
    throwsCel(() => parseDuration(text), "type conversion error from 'string' to 'google.protobuf.Duration'");
  }
});

test("durations print as seconds", () => {
  const cases: [bigint, string][] = [
    [0n, "0s"],
    [3600n * S, "3600s"],
    [S + S / 2n, "1.5s"],
    [-(S + S / 2n), "-1.5s"],
    [1n, "0.000000001s"],
    [1_000_000n * S, "1000000s"],
    [-1n, "-0.000000001s"],
    [123n * S + 321_456_789n, "123.321456789s"],
  ];
  for (const [nanos, text] of cases) assert.equal(formatDuration(new Duration(nanos)), text);
});

test("timestamps parse RFC 3339 with offsets and fractions", () => {
  const cases: [string, bigint][] = [
    ["1970-01-01T00:00:00Z", 0n],
    ["2009-02-13T23:31:30Z", 1234567890n * S],
    ["2009-02-13T23:31:30.5z", 1234567890n * S + S / 2n],
    ["2009-02-14T00:31:30+01:00", 1234567890n * S],
    ["2009-02-13T21:01:30-02:30", 1234567890n * S],
    ["1969-12-31T23:59:59.999999999Z", -1n],
    ["2000-01-01t00:00:00.1234567891Z", 946684800n * S + 123456789n],
    ["0001-01-01T00:00:00Z", -62135596800n * S],
    ["9999-12-31T23:59:59.999999999Z", 253402300799n * S + 999999999n],
    ["2024-02-29T12:00:00Z", 1709208000n * S],
  ];
  for (const [text, nanos] of cases) assert.equal(ts(text).nanos, nanos, text);
});

test("malformed timestamps are conversion errors, out-of-range ones overflow", () => {
  for (const text of [
    "2009-02-13",
    "2009-02-13 23:31:30Z",
    "2009-2-13T23:31:30Z",
    "2009-02-13T23:31:30",
    "2009-02-13T23:31:30,5Z",
    "2009-02-13T23:31:30.Z",
    "2009-02-13T24:00:00Z",
    "2009-02-13T23:31:60Z",
    "2009-02-30T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2009-02-13T23:31:30+24:00",
    "2009-02-13T23:31:30+0100",
  ]) {
    throwsCel(() => ts(text), "type conversion error from 'string' to 'google.protobuf.Timestamp'");
  }
  throwsCel(() => ts("0000-01-01T00:00:00Z"), "timestamp overflow");
  throwsCel(() => ts("0001-01-01T00:00:00+00:01"), "timestamp overflow");
  throwsCel(
    () => ts("10000-01-01T00:00:00Z"),
    "type conversion error from 'string' to 'google.protobuf.Timestamp'",
  );
});

// cel-go common/types/timestamp.go: string(t) is t.Format(time.RFC3339Nano), in the location
// time.Parse gave t; Go writes a zero offset as "Z".
test("timestamps print in the zone they were parsed in, with the fraction trimmed", () => {
  const cases: [string, string][] = [
    ["2009-02-13T23:31:30Z", "2009-02-13T23:31:30Z"],
    ["2009-02-14T00:31:30.120+01:00", "2009-02-14T00:31:30.12+01:00"],
    ["2009-02-13T23:31:30-00:00", "2009-02-13T23:31:30Z"],
    ["2009-02-13T23:31:30+00:00", "2009-02-13T23:31:30Z"],
    ["2009-02-13T18:01:30-05:30", "2009-02-13T18:01:30-05:30"],
    ["9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999999Z"],
    ["0001-01-01T00:00:00.000000001Z", "0001-01-01T00:00:00.000000001Z"],
    ["1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.5Z"],
  ];
  for (const [input, out] of cases) assert.equal(formatTimestamp(ts(input)), out);
});

// cel-go common/types/timestamp.go: a Timestamp is a time.Time; Add and Subtract keep its location
// (Time.Add), string() formats in it, and the accessors without a zone argument ask in UTC
// (common/stdlib/standard.go passes utcTZ). Equality and ordering compare instants.
test("a timestamp keeps its parsed offset through arithmetic; accessors without a zone use UTC", () => {
  const cases: [string, CelValue][] = [
    [`string(timestamp('2011-08-18T19:03:37.01+01:00'))`, "2011-08-18T19:03:37.01+01:00"],
    [`string(timestamp('2011-08-18T19:03:37+01:00') + duration('1h'))`, "2011-08-18T20:03:37+01:00"],
    [`string(duration('30m') + timestamp('2011-08-18T19:03:37-07:00'))`, "2011-08-18T19:33:37-07:00"],
    [`string(timestamp('2011-08-18T00:30:00+01:00') - duration('1h'))`, "2011-08-17T23:30:00+01:00"],
    [`string(timestamp(timestamp('2011-08-18T19:03:37+05:45')))`, "2011-08-18T19:03:37+05:45"],
    // An int is seconds since the epoch, in UTC.
    [`string(timestamp(0))`, "1970-01-01T00:00:00Z"],
    [`timestamp('2011-08-18T19:03:37+01:00').getHours()`, 18n],
    [`timestamp('2011-08-18T00:30:00+01:00').getDate()`, 17n],
    [`timestamp('2011-08-18T00:30:00+01:00').getDate('+01:00')`, 18n],
    [`timestamp('2011-08-18T19:03:37+01:00') == timestamp('2011-08-18T18:03:37Z')`, true],
    [`timestamp('2011-08-18T19:03:37+01:00') - timestamp('2011-08-18T18:03:37Z')`, new Duration(0n)],
    [`timestamp('2011-08-18T19:03:37+01:00') < timestamp('2011-08-18T18:30:00Z')`, true],
  ];
  for (const [expr, want] of cases) {
    const got = valueInBothTiers(expr);
    if (want instanceof Duration) assert.ok(got instanceof Duration && got.nanos === want.nanos, expr);
    else assert.equal(got, want, expr);
  }
});

test("civil calendar conversions round-trip", () => {
  for (const days of [-719162, -1, 0, 1, 11016, 19782, 2932896]) {
    const { year, month, day } = civilFromDays(days);
    assert.equal(daysFromCivil(year, month, day), days);
  }
  assert.deepEqual(civilFromDays(0), { year: 1970, month: 1, day: 1 });
  assert.deepEqual(civilFromDays(-719162), { year: 1, month: 1, day: 1 });
});

test("duration() and timestamp() conversions", () => {
  throwsCel(
    () => call("int64_to_duration", 42n),
    "type conversion error from 'int' to 'google.protobuf.Duration'",
  );
  assert.equal((call("string_to_duration", "1m") as Duration).nanos, 60n * S);
  const d = new Duration(5n);
  assert.equal(call("duration_to_duration", d), d);
  assert.equal((call("int64_to_timestamp", 1000000000n) as Timestamp).nanos, 1000000000n * S);
  assert.equal((call("int64_to_timestamp", -62135596800n) as Timestamp).nanos, -62135596800n * S);
  throwsCel(() => call("int64_to_timestamp", 253402300800n), "timestamp overflow");
  throwsCel(() => call("int64_to_timestamp", -62135596801n), "timestamp overflow");
  const t = new Timestamp(7n);
  assert.equal(call("timestamp_to_timestamp", t), t);
});

// 2009-02-13T23:31:30.123456789Z was a Friday, day 43 of the year (0-based).
const T = ts("2009-02-13T23:31:30.123456789Z");

test("timestamp accessors in UTC", () => {
  const cases: [string, bigint][] = [
    ["timestamp_to_year", 2009n],
    ["timestamp_to_month", 1n],
    ["timestamp_to_day_of_year", 43n],
    ["timestamp_to_day_of_month", 12n],
    ["timestamp_to_day_of_month_1_based", 13n],
    ["timestamp_to_day_of_week", 5n],
    ["timestamp_to_hours", 23n],
    ["timestamp_to_minutes", 31n],
    ["timestamp_to_seconds", 30n],
    ["timestamp_to_milliseconds", 123n],
  ];
  for (const [id, want] of cases) assert.equal(call(id, T), want, id);
});

test("timestamp accessors with a time zone", () => {
  const cases: [string, string, bigint][] = [
    ["timestamp_to_day_of_month_1_based_with_tz", "Australia/Sydney", 14n],
    ["timestamp_to_day_of_month_with_tz", "US/Central", 12n],
    ["timestamp_to_day_of_month_with_tz", "+11:00", 13n],
    ["timestamp_to_day_of_week_with_tz", "UTC", 5n],
    ["timestamp_to_day_of_week_with_tz", "Asia/Tokyo", 6n],
    ["timestamp_to_day_of_year_with_tz", "US/Central", 43n],
    ["timestamp_to_year_with_tz", "-09:30", 2009n],
    ["timestamp_to_hours_with_tz", "02:00", 1n],
    ["timestamp_to_hours_with_tz", "+05:30", 5n],
    ["timestamp_to_hours_with_tz", "America/Los_Angeles", 15n],
    ["timestamp_to_minutes_with_tz", "Asia/Kathmandu", 16n],
    ["timestamp_to_minutes_with_tz", "+05:30", 1n],
    ["timestamp_to_minutes_with_tz", "-00:30", 1n],
    ["timestamp_to_seconds_tz", "-00:00", 30n],
    ["timestamp_to_milliseconds_with_tz", "Asia/Kathmandu", 123n],
    ["timestamp_to_month_with_tz", "UTC", 1n],
    ["timestamp_to_year_with_tz", "", 2009n],
  ];
  for (const [id, tz, want] of cases) assert.equal(call(id, T, tz), want, `${id}(${tz})`);
  // Daylight saving time: Los Angeles is UTC-7 in July.
  assert.equal(call("timestamp_to_hours_with_tz", ts("2024-07-01T12:00:00Z"), "America/Los_Angeles"), 5n);
  // New Year in one zone, still the old year in another.
  const newYear = ts("2024-01-01T03:00:00Z");
  assert.equal(call("timestamp_to_year_with_tz", newYear, "America/New_York"), 2023n);
  assert.equal(call("timestamp_to_day_of_year_with_tz", newYear, "America/New_York"), 364n);
  assert.equal(call("timestamp_to_month_with_tz", newYear, "America/New_York"), 11n);
  // The earliest timestamp west of UTC falls in year 0.
  assert.equal(call("timestamp_to_year_with_tz", ts("0001-01-01T00:00:00Z"), "-01:00"), 0n);
  assert.equal(call("timestamp_to_year_with_tz", ts("0001-01-01T00:00:00Z"), "America/New_York"), 0n);
});

test("bad time zones are errors", () => {
  throwsCel(
    () => call("timestamp_to_hours_with_tz", T, "Mars/Olympus_Mons"),
    "unknown time zone Mars/Olympus_Mons",
  );
  throwsCel(() => call("timestamp_to_hours_with_tz", T, "+05"), "unknown time zone +05");
  throwsCel(() => call("timestamp_to_hours_with_tz", T, "+05:60"), /minutes out of range/);
  throwsCel(() => call("timestamp_to_hours_with_tz", T, "+05:-1"), /minutes out of range/);
  throwsCel(() => call("timestamp_to_hours_with_tz", T, "ab:cd"), /invalid time zone offset/);
});

test("duration accessors give whole units, truncated toward zero", () => {
  const d = parseDuration("10000.5s");
  assert.equal(call("duration_to_hours", d), 2n);
  assert.equal(call("duration_to_minutes", parseDuration("3730s")), 62n);
  assert.equal(call("duration_to_seconds", parseDuration("3730s")), 3730n);
  assert.equal(call("duration_to_milliseconds", parseDuration("123.321456789s")), 123321n);
  assert.equal(call("duration_to_hours", parseDuration("-5399s")), -1n);
  assert.equal(call("duration_to_seconds", parseDuration("-1.9s")), -1n);
});

test("timestamp and duration arithmetic with range checks", () => {
  const add = (a: CelValue, b: CelValue, id: string) => call(id, a, b);
  assert.equal(
    (add(ts("2009-02-13T23:00:00Z"), parseDuration("240s"), "add_timestamp_duration") as Timestamp).nanos,
    ts("2009-02-13T23:04:00Z").nanos,
  );
  assert.equal(
    (add(parseDuration("120s"), ts("2009-02-13T23:01:00Z"), "add_duration_timestamp") as Timestamp).nanos,
    ts("2009-02-13T23:03:00Z").nanos,
  );
  assert.equal(
    (
      add(
        ts("0001-01-01T00:00:01.000000001Z"),
        parseDuration("-999999999ns"),
        "add_timestamp_duration",
      ) as Timestamp
    ).nanos,
    ts("0001-01-01T00:00:00.000000002Z").nanos,
  );
  assert.equal(
    (add(ts("2009-02-13T23:31:00Z"), ts("2009-02-13T23:29:00Z"), "subtract_timestamp_timestamp") as Duration)
      .nanos,
    120n * S,
  );
  assert.equal(
    (add(ts("2009-02-13T23:10:00Z"), parseDuration("600s"), "subtract_timestamp_duration") as Timestamp)
      .nanos,
    ts("2009-02-13T23:00:00Z").nanos,
  );
  assert.equal(
    (add(parseDuration("600s"), parseDuration("50s"), "add_duration_duration") as Duration).nanos,
    650n * S,
  );
  assert.equal(
    (add(parseDuration("900s"), parseDuration("42s"), "subtract_duration_duration") as Duration).nanos,
    858n * S,
  );

  throwsCel(
    () => add(ts("0001-01-01T00:00:00Z"), parseDuration("-1ns"), "add_timestamp_duration"),
    "timestamp overflow",
  );
  throwsCel(
    () => add(ts("9999-12-31T23:59:59.999999999Z"), parseDuration("1ns"), "add_timestamp_duration"),
    "timestamp overflow",
  );
  throwsCel(
    () => add(ts("9999-12-31T23:59:59Z"), parseDuration("1s"), "add_timestamp_duration"),
    "timestamp overflow",
  );
  throwsCel(
    () => add(ts("0001-01-01T00:00:00Z"), parseDuration("1s"), "subtract_timestamp_duration"),
    "timestamp overflow",
  );
  throwsCel(
    () => add(ts("9999-12-31T23:59:59Z"), ts("0001-01-01T00:00:00Z"), "subtract_timestamp_timestamp"),
    "integer overflow",
  );
  const max = new Duration(9223372036854775807n);
  const min = new Duration(-9223372036854775808n);
  throwsCel(() => add(max, new Duration(1n), "add_duration_duration"), "integer overflow");
  throwsCel(() => add(min, new Duration(1n), "subtract_duration_duration"), "integer overflow");
  throwsCel(() => add(ts("2000-01-01T00:00:00Z"), min, "subtract_timestamp_duration"), "integer overflow");
});

test("string() and int() of timestamps and durations", () => {
  assert.equal(call("timestamp_to_string", ts("2009-02-13T23:31:30Z")), "2009-02-13T23:31:30Z");
  assert.equal(call("duration_to_string", parseDuration("1h")), "3600s");
  assert.equal(call("timestamp_to_int64", ts("2009-02-13T23:31:30Z")), 1234567890n);
  assert.equal(call("timestamp_to_int64", ts("1969-12-31T23:59:59.5Z")), -1n);
  assert.equal(call("duration_to_int64", parseDuration("1.5s")), 1_500_000_000n);
});

// apiserver/pkg/admission/plugin/cel/filter.go objectToResolveVal: namespaceObject is the Namespace
// through runtime.DefaultUnstructuredConverter.ToUnstructured, so metav1.Time fields arrive as RFC 3339
// strings, whatever the declared Namespace type says (timestamps). At run time they are strings in
// the API server, and so here: string() gives the text back, a timestamp comparison has no overload.
test("namespaceObject's creationTimestamp is the string the API server passes, not a timestamp", () => {
  const namespaceObject = {
    metadata: { name: "ns", creationTimestamp: "2024-01-02T03:04:05Z" },
    status: { conditions: [{ type: "X", lastTransitionTime: "2024-01-02T03:04:05Z" }] },
  };
  assert.equal(
    valueInBothTiers("string(namespaceObject.metadata.creationTimestamp)", { namespaceObject }),
    "2024-01-02T03:04:05Z",
  );
  assert.equal(
    valueInBothTiers("type(namespaceObject.status.conditions[0].lastTransitionTime) == string", {
      namespaceObject,
    }),
    true,
  );
  const o = evaluateBothTiers(
    "namespaceObject.metadata.creationTimestamp < timestamp('2025-01-01T00:00:00Z')",
    {
      namespaceObject,
    },
  );
  assert.ok(!o.ok);
});
