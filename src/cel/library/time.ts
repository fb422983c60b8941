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
import { formatFloat } from "../go/strconv.ts";
import {
  civilFromDays,
  daysFromCivil,
  durationSeconds,
  floorDiv,
  formatRFC3339,
  NANOS_PER_SECOND,
  parseDuration as goParseDuration,
  parseRFC3339WithOffset,
} from "../go/time.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

/** Seconds from the epoch to 0001-01-01T00:00:00Z and to 9999-12-31T23:59:59Z. */
export const MIN_TIMESTAMP_SECONDS = -62_135_596_800n;
export const MAX_TIMESTAMP_SECONDS = 253_402_300_799n;

const TS = "google.protobuf.Timestamp";
const DUR = "google.protobuf.Duration";

function conversionError(to: string): CelError {
  return new CelError(`type conversion error from 'string' to '${to}'`);
}

// ---------------------------------------------------------------------------------------------
// Range checks and arithmetic.

/**
 * Builds a timestamp, failing as cel-go does when its instant falls outside years 0001-9999 (UTC),
 * in the zone `offset` (seconds east of UTC) it keeps.
 */
export function checkTimestamp(nanos: bigint, offset = 0): Timestamp {
  const secs = floorDiv(nanos, NANOS_PER_SECOND);
  if (secs < MIN_TIMESTAMP_SECONDS || secs > MAX_TIMESTAMP_SECONDS) throw new CelError("timestamp overflow");
  return new Timestamp(nanos, offset);
}

/** Builds a duration; like Go's time.Duration it must fit in int64 nanoseconds. */
export function checkDuration(nanos: bigint): Duration {
  if (nanos < INT64_MIN || nanos > INT64_MAX) throw new CelError("integer overflow");
  return new Duration(nanos);
}

/** `t + d`; Go's Time.Add keeps t's zone. */
export function addTimestampDuration(t: Timestamp, d: Duration): Timestamp {
  return checkTimestamp(t.nanos + d.nanos, t.offset);
}

export function subtractTimestampDuration(t: Timestamp, d: Duration): Timestamp {
  // cel-go negates the duration first, so negating the most negative duration overflows.
  checkDuration(-d.nanos);
  return checkTimestamp(t.nanos - d.nanos, t.offset);
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
// Timestamps as text.

/**
 * Parses an RFC 3339 timestamp, as `timestamp("2024-01-02T03:04:05.5+01:00")` does, keeping the
 * offset it was written with (cel-go's string_to_timestamp is time.Parse, whose result keeps it).
 */
export function parseTimestamp(text: string): Timestamp {
  const parsed = parseRFC3339WithOffset(text);
  if (parsed === undefined) throw conversionError(TS);
  return checkTimestamp(parsed.nanos, parsed.offset);
}

/**
 * RFC 3339 in the timestamp's own zone with the fraction's trailing zeros dropped: cel-go's
 * `string(t)` is t.Format(time.RFC3339Nano) (common/types/timestamp.go ConvertToType).
 */
export function formatTimestamp(t: Timestamp): string {
  return formatRFC3339(t.nanos, "fewest", t.offset);
}

// ---------------------------------------------------------------------------------------------
// Durations as text.

/** Go's time.ParseDuration, e.g. "1h2m3.5s", "-1.5h"; "0" alone needs no unit. */
export function parseDuration(text: string): Duration {
  const nanos = goParseDuration(text);
  if (nanos === undefined) throw conversionError(DUR);
  return new Duration(nanos);
}

/** Seconds with as many decimals as needed, e.g. "3600s", "1.5s", "0.000000001s" (cel-go's form). */
export function formatDuration(d: Duration): string {
  // cel-go prints time.Duration.Seconds() with strconv.FormatFloat(x, 'f', -1, 64).
  const seconds = durationSeconds(d.nanos);
  return formatFloat(seconds === 0 ? 0 : seconds, "f", -1) + "s";
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
      // Declared, but cel-go's Int.ConvertToType has no case for a duration (common/types/int.go).
      globalFn("int64_to_duration", ["int"], DUR, (): never => {
        throw new CelError(`type conversion error from 'int' to '${DUR}'`);
      }),
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
