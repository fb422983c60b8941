/**
 * Timestamps and durations: the `duration()` and `timestamp()` conversions, the calendar accessors
 * (`getFullYear`, `getHours`, ...) with their optional time-zone argument, and the parsing,
 * printing and range-checked arithmetic that std.ts uses for `+`, `-`, `string()` and `int()`.
 *
 * The semantics are cel-go's, since that is what the API server runs: a duration is a Go
 * time.Duration (int64 nanoseconds, about ±292 years, parsed with time.ParseDuration's grammar),
 * a timestamp lies between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z, and `string()`
 * prints RFC 3339 with the fraction trimmed and durations as seconds ("3600s", "1.5s").
 */
import { CelError, Duration, INT64_MAX, INT64_MIN, Timestamp } from "../runtime/values.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

export const NANOS_PER_SECOND = 1_000_000_000n;
/** Seconds from the epoch to 0001-01-01T00:00:00Z and to 9999-12-31T23:59:59Z. */
export const MIN_TIMESTAMP_SECONDS = -62_135_596_800n;
export const MAX_TIMESTAMP_SECONDS = 253_402_300_799n;

const TS = "google.protobuf.Timestamp";
const DUR = "google.protobuf.Duration";

// ---------------------------------------------------------------------------------------------
// Range checks and arithmetic.

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function floorMod(a: bigint, b: bigint): bigint {
  return a - floorDiv(a, b) * b;
}

/** Builds a timestamp, failing as cel-go does when it falls outside years 0001-9999. */
export function checkTimestamp(nanos: bigint): Timestamp {
  const secs = floorDiv(nanos, NANOS_PER_SECOND);
  if (secs < MIN_TIMESTAMP_SECONDS || secs > MAX_TIMESTAMP_SECONDS) throw new CelError("timestamp overflow");
  return new Timestamp(nanos);
}

/** Builds a duration; like Go's time.Duration it must fit in int64 nanoseconds. */
export function checkDuration(nanos: bigint): Duration {
  if (nanos < INT64_MIN || nanos > INT64_MAX) throw new CelError("integer overflow");
  return new Duration(nanos);
}

export function addTimestampDuration(t: Timestamp, d: Duration): Timestamp {
  return checkTimestamp(t.nanos + d.nanos);
}

export function subtractTimestampDuration(t: Timestamp, d: Duration): Timestamp {
  // cel-go negates the duration first, so negating the most negative duration overflows.
  checkDuration(-d.nanos);
  return checkTimestamp(t.nanos - d.nanos);
}

export function subtractTimestamps(a: Timestamp, b: Timestamp): Duration {
  return checkDuration(a.nanos - b.nanos);
}

/** Whole seconds since the epoch, rounded down (Go's Time.Unix). */
export function timestampSeconds(t: Timestamp): bigint {
  return floorDiv(t.nanos, NANOS_PER_SECOND);
}

export function timestampFromSeconds(seconds: bigint): Timestamp {
  return checkTimestamp(seconds * NANOS_PER_SECOND);
}

// ---------------------------------------------------------------------------------------------
// Civil calendar arithmetic (proleptic Gregorian), so that years 1-9999 need no Date quirks.

/** Days from 1970-01-01 to the given date. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The date of a day number counted from 1970-01-01. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// ---------------------------------------------------------------------------------------------
// Timestamps as text.

// RFC 3339 as newer cel-go enforces it: two-digit fields in range, '.' before the fraction, and
// an offset that is Z or ±hh:mm.
const RFC3339 =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(?:\.(\d+))?(?:([Zz])|([+-])([01]\d|2[0-3]):([0-5]\d))$/;

function timestampConversionError(): CelError {
  return new CelError(`type conversion error from 'string' to '${TS}'`);
}

/** Parses an RFC 3339 timestamp, as `timestamp("2024-01-02T03:04:05.5+01:00")` does. */
export function parseTimestamp(text: string): Timestamp {
  const m = RFC3339.exec(text);
  if (!m) throw timestampConversionError();
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const second = Number(m[6]);
  // Go's time.Parse rejects a leap second and days past the end of the month.
  if (second === 60 || day > daysInMonth(year, month)) throw timestampConversionError();
  let offsetSeconds = 0;
  if (m[8] === undefined) {
    offsetSeconds = (Number(m[10]) * 60 + Number(m[11])) * 60;
    if (m[9] === "-") offsetSeconds = -offsetSeconds;
  }
  const secs =
    BigInt(daysFromCivil(year, month, day)) * 86400n +
    BigInt(Number(m[4]) * 3600 + Number(m[5]) * 60 + second - offsetSeconds);
  // Go reads at most nine fraction digits and ignores the rest.
  const frac = BigInt(((m[7] ?? "") + "000000000").slice(0, 9));
  return checkTimestamp(secs * NANOS_PER_SECOND + frac);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** RFC 3339 in UTC with the fraction's trailing zeros dropped (Go's RFC3339Nano layout). */
export function formatTimestamp(t: Timestamp): string {
  const secs = timestampSeconds(t);
  const nanos = Number(t.nanos - secs * NANOS_PER_SECOND);
  const days = Number(floorDiv(secs, 86400n));
  const inDay = Number(floorMod(secs, 86400n));
  const { year, month, day } = civilFromDays(days);
  let out = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(Math.floor(inDay / 3600), 2)}:${pad(Math.floor(inDay / 60) % 60, 2)}:${pad(inDay % 60, 2)}`;
  if (nanos !== 0) out += "." + pad(nanos, 9).replace(/0+$/, "");
  return out + "Z";
}

// ---------------------------------------------------------------------------------------------
// Durations as text.

const UNIT_NANOS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n, // micro sign
  "\u03bcs": 1_000n, // Greek small letter mu
  ms: 1_000_000n,
  s: NANOS_PER_SECOND,
  m: 60n * NANOS_PER_SECOND,
  h: 3600n * NANOS_PER_SECOND,
};

function durationConversionError(): CelError {
  return new CelError(`type conversion error from 'string' to '${DUR}'`);
}

const DURATION_PART = /(\d*)(?:\.(\d*))?([^\d.]+)/y;

/**
 * Go's time.ParseDuration: an optional sign, then one or more decimal numbers each with a unit
 * (ns, us/µs, ms, s, m, h), e.g. "1h2m3.5s", "-1.5h"; "0" alone needs no unit.
 */
export function parseDuration(text: string): Duration {
  let rest = text;
  let negative = false;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    negative = rest.startsWith("-");
    rest = rest.slice(1);
  }
  if (rest === "0") return new Duration(0n);
  if (rest === "") throw durationConversionError();
  let total = 0n;
  let pos = 0;
  while (pos < rest.length) {
    DURATION_PART.lastIndex = pos;
    const m = DURATION_PART.exec(rest);
    if (!m) throw durationConversionError();
    const whole = m[1] ?? "";
    const frac = m[2] ?? "";
    if (whole === "" && frac === "") throw durationConversionError();
    const unit = UNIT_NANOS[m[3] ?? ""];
    if (unit === undefined) throw durationConversionError();
    let part = BigInt(whole === "" ? "0" : whole) * unit;
    if (frac !== "") part += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += part;
    // Go allows exactly 2^63 only for a negative duration.
    if (total > 2n ** 63n) throw durationConversionError();
    pos = DURATION_PART.lastIndex;
  }
  if (!negative && total > INT64_MAX) throw durationConversionError();
  return new Duration(negative ? -total : total);
}

/** Shortest round-trip decimal digits of a finite non-zero double, and where the point goes. */
export function shortestDigits(x: number): { digits: string; point: number } {
  const [mant = "0", exp = "0"] = Math.abs(x).toExponential().split("e");
  return { digits: mant.replace(".", ""), point: Number(exp) + 1 };
}

/** Places a decimal point `point` digits into `digits`, padding with zeros (Go's %f layout). */
export function placePoint(digits: string, point: number): string {
  if (point <= 0) return "0." + "0".repeat(-point) + digits;
  if (point >= digits.length) return digits + "0".repeat(point - digits.length);
  return digits.slice(0, point) + "." + digits.slice(point);
}

/** Go's strconv.FormatFloat(x, 'f', -1, 64). */
export function formatFloatFixed(x: number): string {
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const { digits, point } = shortestDigits(x);
  return (x < 0 ? "-" : "") + placePoint(digits, point);
}

/** Seconds with as many decimals as needed, e.g. "3600s", "1.5s", "0.000000001s" (cel-go's form). */
export function formatDuration(d: Duration): string {
  // cel-go prints time.Duration.Seconds(), a double built from the whole and fractional parts.
  const whole = d.nanos / NANOS_PER_SECOND;
  const frac = d.nanos - whole * NANOS_PER_SECOND;
  const seconds = Number(whole) + Number(frac) / 1e9;
  return formatFloatFixed(seconds === 0 ? 0 : seconds) + "s";
}

// ---------------------------------------------------------------------------------------------
// Time zones.

interface Zone {
  /** Offset east of UTC in seconds at the given instant (whole seconds since the epoch). */
  offsetAt(epochSeconds: number): number;
}

const zoneCache = new Map<string, Zone>();

function fixedZone(offset: number): Zone {
  return { offsetAt: () => offset };
}

const UTC_ZONE = fixedZone(0);

const DIGITS = /^[+-]?\d+$/;

/** A ±hh:mm offset as cel-go reads it: hours and minutes as integers, minutes within 0-59. */
function parseOffset(spec: string, colon: number): Zone {
  const hours = spec.slice(0, colon);
  const minutes = spec.slice(colon + 1);
  if (!DIGITS.test(hours) || !DIGITS.test(minutes)) {
    throw new CelError(`invalid time zone offset '${spec}'`);
  }
  const min = Number(minutes);
  if (min < 0 || min > 59) throw new CelError(`timezone offset minutes out of range [0, 59]: ${spec}`);
  const hr = Number(hours);
  const offsetMinutes = spec.startsWith("-") ? hr * 60 - min : hr * 60 + min;
  return fixedZone(offsetMinutes * 60);
}

const PART_FIELDS = ["year", "month", "day", "hour", "minute", "second"] as const;

function ianaZone(name: string): Zone {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: name,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    throw new CelError(`unknown time zone ${name}`);
  }
  return {
    offsetAt(epochSeconds: number): number {
      const values: Record<string, number> = {};
      let bc = false;
      for (const part of format.formatToParts(epochSeconds * 1000)) {
        if (part.type === "era") bc = part.value.startsWith("B");
        else if ((PART_FIELDS as readonly string[]).includes(part.type))
          values[part.type] = Number(part.value);
      }
      const year = bc ? 1 - (values.year ?? 0) : (values.year ?? 1970);
      const wall =
        daysFromCivil(year, values.month ?? 1, values.day ?? 1) * 86400 +
        (values.hour ?? 0) * 3600 +
        (values.minute ?? 0) * 60 +
        (values.second ?? 0);
      return wall - epochSeconds;
    },
  };
}

/** Resolves a zone argument: an IANA name ("America/Los_Angeles", "UTC") or an offset ("+05:30"). */
export function resolveZone(spec: string): Zone {
  const cached = zoneCache.get(spec);
  if (cached) return cached;
  let zone: Zone;
  const colon = spec.indexOf(":");
  if (colon >= 0) zone = parseOffset(spec, colon);
  else if (spec === "" || spec === "UTC") zone = UTC_ZONE;
  else if (/^[+\-\d]/.test(spec)) throw new CelError(`unknown time zone ${spec}`);
  // Go's "Local" is the server's zone; Intl's default zone is the same thing here.
  else zone = ianaZone(spec === "Local" ? Intl.DateTimeFormat().resolvedOptions().timeZone : spec);
  // Zone arguments can come from request data; keep the cache from growing without bound.
  if (zoneCache.size >= 256) zoneCache.clear();
  zoneCache.set(spec, zone);
  return zone;
}

interface CivilTime {
  readonly year: number;
  readonly month: number; // 1-12
  readonly day: number; // 1-31
  readonly dayOfYear: number; // 0-365
  readonly dayOfWeek: number; // 0 = Sunday
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

/** The wall-clock fields of a timestamp in a zone (UTC when none is given). */
export function civilTime(t: Timestamp, zone: Zone = UTC_ZONE): CivilTime {
  const secs = timestampSeconds(t);
  const millisecond = Number((t.nanos - secs * NANOS_PER_SECOND) / 1_000_000n);
  const epochSeconds = Number(secs);
  const local = epochSeconds + zone.offsetAt(epochSeconds);
  const days = Math.floor(local / 86400);
  const inDay = local - days * 86400;
  const { year, month, day } = civilFromDays(days);
  return {
    year,
    month,
    day,
    dayOfYear: days - daysFromCivil(year, 1, 1),
    dayOfWeek: (((days + 4) % 7) + 7) % 7,
    hour: Math.floor(inDay / 3600),
    minute: Math.floor(inDay / 60) % 60,
    second: inDay % 60,
    millisecond,
  };
}

// ---------------------------------------------------------------------------------------------
// The library.

type Accessor = (c: CivilTime) => number;

/** The timestamp overloads of one accessor: in UTC, and with a zone argument. */
function timestampAccessor(id: string, tzId: string, get: Accessor) {
  return [
    memberFn(id, [TS], "int", (t: Timestamp) => BigInt(get(civilTime(t)))),
    memberFn(tzId, [TS, "string"], "int", (t: Timestamp, tz: string) =>
      BigInt(get(civilTime(t, resolveZone(tz)))),
    ),
  ];
}

function durationAccessor(id: string, unitNanos: bigint) {
  // Go truncates toward zero, as bigint division does.
  return memberFn(id, [DUR], "int", (d: Duration) => d.nanos / unitNanos);
}

export const timeLibrary: Library = {
  name: "time",
  availability: "kubernetes",
  functions: [
    fn(
      "duration",
      globalFn("duration_to_duration", [DUR], DUR, (d: Duration) => d),
      globalFn("int64_to_duration", ["int"], DUR, (n: bigint) => new Duration(n)),
      globalFn("string_to_duration", ["string"], DUR, (s: string) => parseDuration(s)),
    ),
    fn(
      "timestamp",
      globalFn("timestamp_to_timestamp", [TS], TS, (t: Timestamp) => t),
      globalFn("int64_to_timestamp", ["int"], TS, (n: bigint) => timestampFromSeconds(n)),
      globalFn("string_to_timestamp", ["string"], TS, (s: string) => parseTimestamp(s)),
    ),
    fn("getFullYear", ...timestampAccessor("timestamp_to_year", "timestamp_to_year_with_tz", (c) => c.year)),
    fn(
      "getMonth",
      ...timestampAccessor("timestamp_to_month", "timestamp_to_month_with_tz", (c) => c.month - 1),
    ),
    fn(
      "getDayOfYear",
      ...timestampAccessor(
        "timestamp_to_day_of_year",
        "timestamp_to_day_of_year_with_tz",
        (c) => c.dayOfYear,
      ),
    ),
    fn(
      "getDayOfMonth",
      ...timestampAccessor(
        "timestamp_to_day_of_month",
        "timestamp_to_day_of_month_with_tz",
        (c) => c.day - 1,
      ),
    ),
    fn(
      "getDate",
      ...timestampAccessor(
        "timestamp_to_day_of_month_1_based",
        "timestamp_to_day_of_month_1_based_with_tz",
        (c) => c.day,
      ),
    ),
    fn(
      "getDayOfWeek",
      ...timestampAccessor(
        "timestamp_to_day_of_week",
        "timestamp_to_day_of_week_with_tz",
        (c) => c.dayOfWeek,
      ),
    ),
    fn(
      "getHours",
      ...timestampAccessor("timestamp_to_hours", "timestamp_to_hours_with_tz", (c) => c.hour),
      durationAccessor("duration_to_hours", 3600n * NANOS_PER_SECOND),
    ),
    fn(
      "getMinutes",
      ...timestampAccessor("timestamp_to_minutes", "timestamp_to_minutes_with_tz", (c) => c.minute),
      durationAccessor("duration_to_minutes", 60n * NANOS_PER_SECOND),
    ),
    fn(
      "getSeconds",
      ...timestampAccessor("timestamp_to_seconds", "timestamp_to_seconds_tz", (c) => c.second),
      durationAccessor("duration_to_seconds", NANOS_PER_SECOND),
    ),
    fn(
      "getMilliseconds",
      ...timestampAccessor(
        "timestamp_to_milliseconds",
        "timestamp_to_milliseconds_with_tz",
        (c) => c.millisecond,
      ),
      durationAccessor("duration_to_milliseconds", 1_000_000n),
    ),
  ],
};
