/**
 * Go's time package where CEL meets it: time.Parse with the RFC 3339 layout, Time.Format with
 * RFC3339Nano in UTC (time/format.go), time.ParseDuration and Duration.Seconds (time/time.go),
 * and the proleptic Gregorian calendar they stand on, for years 0001 to 9999 without Date's quirks.
 *
 * Instants are int64-range nanoseconds since the Unix epoch, as bigint; the range checks CEL adds
 * (timestamp and duration overflow) are the caller's.
 */

export const NANOS_PER_SECOND = 1_000_000_000n;
const SECONDS_PER_DAY = 86400n;

export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function floorMod(a: bigint, b: bigint): bigint {
  return a - floorDiv(a, b) * b;
}

// ---------------------------------------------------------------------------------------------
// The civil calendar.

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

/** Days in a month (1-12) of a year, as time.daysIn counts them. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// ---------------------------------------------------------------------------------------------
// RFC 3339.

// time.RFC3339 as newer Go enforces it when parsing: two-digit fields in range, '.' before the
// fraction, and an offset that is Z or ±hh:mm.
const RFC3339 =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(?:\.(\d+))?(?:([Zz])|([+-])([01]\d|2[0-3]):([0-5]\d))$/;

/** An instant and the offset east of UTC (in seconds) its text was written in. */
export interface ParsedInstant {
  readonly nanos: bigint;
  readonly offset: number;
}

/** time.Parse(time.RFC3339, text) as nanoseconds since the epoch, or undefined where Go fails. */
export function parseRFC3339(text: string): bigint | undefined {
  return parseRFC3339WithOffset(text)?.nanos;
}

/** time.Parse(time.RFC3339, text): the instant and the offset it was written with ("Z" is 0). */
export function parseRFC3339WithOffset(text: string): ParsedInstant | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const second = Number(m[6]);
  // Go's time.Parse rejects a leap second and days past the end of the month.
  if (second === 60 || day > daysInMonth(year, month)) return undefined;
  let offsetSeconds = 0;
  if (m[8] === undefined) {
    offsetSeconds = (Number(m[10]) * 60 + Number(m[11])) * 60;
    if (m[9] === "-") offsetSeconds = -offsetSeconds;
  }
  const secs =
    BigInt(daysFromCivil(year, month, day)) * SECONDS_PER_DAY +
    BigInt(Number(m[4]) * 3600 + Number(m[5]) * 60 + second - offsetSeconds);
  // Go reads at most nine fraction digits and ignores the rest.
  const frac = BigInt(((m[7] ?? "") + "000000000").slice(0, 9));
  return { nanos: secs * NANOS_PER_SECOND + frac, offset: offsetSeconds };
}

/**
 * How many fraction digits a formatted instant shows: as few as needed (Go's RFC3339Nano layout,
 * ".999999999"), or 0, 3, 6 or 9 (how protobuf's JSON mapping writes a Timestamp).
 */
export type FractionDigits = "fewest" | "groupsOfThree";

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

function fractionText(nanos: number, digits: FractionDigits): string {
  if (nanos === 0) return "";
  const nine = pad(nanos, 9);
  if (digits === "fewest") return `.${nine.replace(/0+$/, "")}`;
  if (nine.endsWith("000000")) return `.${nine.slice(0, 3)}`;
  if (nine.endsWith("000")) return `.${nine.slice(0, 6)}`;
  return `.${nine}`;
}

/**
 * An instant as RFC 3339 text, in UTC or at a fixed offset east of UTC (seconds):
 * Time.Format(time.RFC3339Nano) for "fewest". Go writes a zero offset as "Z" and any other as
 * ±hh:mm, the seconds of an odd offset dropped.
 */
export function formatRFC3339(instant: bigint, digits: FractionDigits, offset = 0): string {
  const utcSecs = floorDiv(instant, NANOS_PER_SECOND);
  const nanos = Number(instant - utcSecs * NANOS_PER_SECOND);
  const secs = utcSecs + BigInt(offset);
  const days = Number(floorDiv(secs, SECONDS_PER_DAY));
  const inDay = Number(floorMod(secs, SECONDS_PER_DAY));
  const { year, month, day } = civilFromDays(days);
  const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  const time = `${pad(Math.floor(inDay / 3600), 2)}:${pad(Math.floor(inDay / 60) % 60, 2)}:${pad(inDay % 60, 2)}`;
  return `${date}T${time}${fractionText(nanos, digits)}${offsetText(offset)}`;
}

function offsetText(offset: number): string {
  if (offset === 0) return "Z";
  const minutes = Math.trunc(Math.abs(offset) / 60);
  return `${offset < 0 ? "-" : "+"}${pad(Math.floor(minutes / 60), 2)}:${pad(minutes % 60, 2)}`;
}

// ---------------------------------------------------------------------------------------------
// Durations.

const UNIT_NANOS: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1_000n],
  ["\u00b5s", 1_000n], // micro sign
  ["\u03bcs", 1_000n], // Greek small letter mu
  ["ms", 1_000_000n],
  ["s", NANOS_PER_SECOND],
  ["m", 60n * NANOS_PER_SECOND],
  ["h", 3600n * NANOS_PER_SECOND],
]);

const INT64_MAX = 2n ** 63n - 1n;
const DURATION_PART = /(\d*)(?:\.(\d*))?([^\d.]+)/y;

/**
 * time.ParseDuration as nanoseconds, or undefined where Go fails: an optional sign, then one or
 * more decimal numbers each with a unit (ns, us/µs, ms, s, m, h), e.g. "1h2m3.5s", "-1.5h"; "0"
 * alone needs no unit.
 */
export function parseDuration(text: string): bigint | undefined {
  let rest = text;
  let negative = false;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    negative = rest.startsWith("-");
    rest = rest.slice(1);
  }
  if (rest === "0") return 0n;
  if (rest === "") return undefined;
  let total = 0n;
  let pos = 0;
  while (pos < rest.length) {
    DURATION_PART.lastIndex = pos;
    const m = DURATION_PART.exec(rest);
    if (!m) return undefined;
    const whole = m[1] ?? "";
    const frac = m[2] ?? "";
    if (whole === "" && frac === "") return undefined;
    const unit = UNIT_NANOS.get(m[3] ?? "");
    if (unit === undefined) return undefined;
    let part = BigInt(whole === "" ? "0" : whole) * unit;
    if (frac !== "") part += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += part;
    // Go allows exactly 2^63 only for a negative duration.
    if (total > 2n ** 63n) return undefined;
    pos = DURATION_PART.lastIndex;
  }
  if (!negative && total > INT64_MAX) return undefined;
  return negative ? -total : total;
}

/** Duration.Seconds(): a double built from the whole seconds and the remaining nanoseconds. */
export function durationSeconds(nanos: bigint): number {
  const whole = nanos / NANOS_PER_SECOND;
  const frac = nanos - whole * NANOS_PER_SECOND;
  return Number(whole) + Number(frac) / 1e9;
}
