/**
 * The CEL strings extension (cel-go ext/strings.go) as the Kubernetes admission environment has it:
 * charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, reverse,
 * join, format and strings.quote.
 *
 * Indices count code points (Go runes), never UTF-16 units, so `'😀a'.charAt(1)` is `'a'`.
 *
 * Where cel-go versions disagree, the cel-spec conformance suite "string_ext" decides:
 * - `format` renders values the way cel-go's second formatter does (`%s` of a list is
 *   `[abc, 3.14]`, `%d` accepts NaN and the infinities), with the error texts of the first one
 *   ("decimal clause can only be used on integers, was given ...").
 * - The offset forms of indexOf/lastIndexOf reject an offset outside the string; the one-argument
 *   forms never fail (`''.lastIndexOf('@@')` is -1).
 */
import {
  CelError,
  CelType,
  type CelList,
  type CelValue,
  Duration,
  isMap,
  mapEntries,
  Timestamp,
  typeName,
  UInt,
} from "../runtime/values.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Code points

function codePoints(s: string): string[] {
  return Array.from(s);
}

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Number of UTF-16 units taken by the first `count` code points of `s`. */
function utf16Offset(s: string, count: number): number {
  let units = 0;
  let seen = 0;
  for (const ch of s) {
    if (seen === count) break;
    units += ch.length;
    seen++;
  }
  return units;
}

/** Code-point index of the UTF-16 position `units` in `s`. */
function codePointIndex(s: string, units: number): number {
  return runeCount(s.slice(0, units));
}

/** Bytes of the UTF-8 encoding, which is how Go measures a string's length. */
function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

function outOfRange(i: bigint | number): CelError {
  return new CelError(`index out of range: ${i}`);
}

// ---------------------------------------------------------------------------------------------
// The member functions

function charAt(s: string, i: bigint): string {
  const cps = codePoints(s);
  if (i < 0n || i > BigInt(cps.length)) throw outOfRange(i);
  return i === BigInt(cps.length) ? "" : (cps[Number(i)] as string);
}

function indexOf(s: string, sub: string): bigint {
  if (sub === "") return 0n;
  const at = s.indexOf(sub);
  return at < 0 ? -1n : BigInt(codePointIndex(s, at));
}

function indexOfFrom(s: string, sub: string, offset: bigint): bigint {
  if (sub === "") return offset;
  const n = runeCount(s);
  if (offset < 0n || offset >= BigInt(n)) throw outOfRange(offset);
  const at = s.indexOf(sub, utf16Offset(s, Number(offset)));
  return at < 0 ? -1n : BigInt(codePointIndex(s, at));
}

function lastIndexOf(s: string, sub: string): bigint {
  const n = runeCount(s);
  if (sub === "") return BigInt(n);
  if (n === 0) return -1n;
  return lastIndexOfFrom(s, sub, BigInt(n - 1));
}

function lastIndexOfFrom(s: string, sub: string, offset: bigint): bigint {
  if (sub === "") return offset;
  const n = runeCount(s);
  if (offset < 0n || offset >= BigInt(n)) throw outOfRange(offset);
  // A match must start at or before the offset and also fit inside the string.
  const last = Math.min(Number(offset), n - runeCount(sub));
  if (last < 0) return -1n;
  const at = s.lastIndexOf(sub, utf16Offset(s, last));
  return at < 0 ? -1n : BigInt(codePointIndex(s, at));
}

function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function upperAscii(s: string): string {
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}

/** How many matches a Go-style count allows: negative means all. */
function limitOf(n: bigint | undefined): number {
  if (n === undefined || n < 0n) return Number.POSITIVE_INFINITY;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** Go's strings.Replace: an empty `old` matches before every code point and at the end. */
function replace(s: string, old: string, repl: string, n?: bigint): string {
  let left = limitOf(n);
  if (left === 0 || old === repl) return s;
  let out = "";
  if (old === "") {
    for (const ch of s) {
      if (left > 0) {
        out += repl;
        left--;
      }
      out += ch;
    }
    return left > 0 ? out + repl : out;
  }
  let from = 0;
  while (left > 0) {
    const at = s.indexOf(old, from);
    if (at < 0) break;
    out += s.slice(from, at) + repl;
    from = at + old.length;
    left--;
  }
  return out + s.slice(from);
}

/** Go's strings.SplitN: an empty separator splits into code points; n limits the parts. */
function split(s: string, sep: string, n?: bigint): string[] {
  const limit = limitOf(n);
  if (limit === 0) return [];
  if (sep === "") {
    const cps = codePoints(s);
    if (cps.length <= limit) return cps;
    return [...cps.slice(0, limit - 1), cps.slice(limit - 1).join("")];
  }
  const parts: string[] = [];
  let from = 0;
  while (parts.length < limit - 1) {
    const at = s.indexOf(sep, from);
    if (at < 0) break;
    parts.push(s.slice(from, at));
    from = at + sep.length;
  }
  parts.push(s.slice(from));
  return parts;
}

function substring(s: string, start: bigint): string {
  const cps = codePoints(s);
  if (start < 0n || start > BigInt(cps.length)) throw outOfRange(start);
  return cps.slice(Number(start)).join("");
}

function substringRange(s: string, start: bigint, end: bigint): string {
  if (start > end) throw new CelError(`invalid substring range. start: ${start}, end: ${end}`);
  const cps = codePoints(s);
  const n = BigInt(cps.length);
  if (start < 0n || start > n) throw outOfRange(start);
  if (end < 0n || end > n) throw outOfRange(end);
  return cps.slice(Number(start), Number(end)).join("");
}

/**
 * Go's unicode.IsSpace, which strings.TrimSpace uses. Unlike JavaScript's trim it includes U+0085
 * and excludes U+FEFF.
 */
function isGoSpace(cp: number): boolean {
  if (cp <= 0xff) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d) || cp === 0x85 || cp === 0xa0;
  return (
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

function trim(s: string): string {
  let start = 0;
  let end = s.length;
  // Every Go space is in the BMP, so checking single UTF-16 units is enough.
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

function reverse(s: string): string {
  return codePoints(s).reverse().join("");
}

function join(list: CelList, sep = ""): string {
  let out = "";
  list.forEach((elem, i) => {
    if (typeof elem !== "string") throw new CelError(`join: invalid input: ${describe(elem)}`);
    out += i === 0 ? elem : sep + elem;
  });
  return out;
}

/** A value as Go's %v would print it in an error message, as near as we can tell. */
function describe(v: CelValue): string {
  try {
    return formatString(v);
  } catch {
    return typeName(v);
  }
}

// ---------------------------------------------------------------------------------------------
// strings.quote

const QUOTE_ESCAPES: Readonly<Record<string, string>> = {
  "\u0007": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  "\\": "\\\\",
  '"': '\\"',
};

function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    // Invalid UTF-8 becomes U+FFFD in cel-go; a lone surrogate is our equivalent.
    if (cp >= 0xd800 && cp <= 0xdfff) out += "\ufffd";
    else out += QUOTE_ESCAPES[ch] ?? ch;
  }
  return out + '"';
}

// ---------------------------------------------------------------------------------------------
// Number rendering with Go's fmt/strconv rules

/** The exact value of a finite, non-negative double as digits / 10^scale. */
function exactDecimal(x: number): { digits: bigint; scale: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (biased === 0) {
    exp = -1074;
  } else {
    mantissa |= 1n << 52n;
    exp = biased - 1075;
  }
  if (exp >= 0) return { digits: mantissa << BigInt(exp), scale: 0 };
  return { digits: mantissa * 5n ** BigInt(-exp), scale: -exp };
}

/** q rounded after dividing by `divisor`, ties to even (the exact value decides, as in Go). */
function divRoundHalfEven(n: bigint, divisor: bigint): bigint {
  const q = n / divisor;
  const twice = (n % divisor) * 2n;
  if (twice > divisor || (twice === divisor && q % 2n === 1n)) return q + 1n;
  return q;
}

function isNegative(x: number): boolean {
  return x < 0 || Object.is(x, -0);
}

function nonFinite(x: number): string | undefined {
  if (Number.isNaN(x)) return "NaN";
  if (x === Number.POSITIVE_INFINITY) return "Infinity";
  if (x === Number.NEGATIVE_INFINITY) return "-Infinity";
  return undefined;
}

/** Go's fmt %.Nf. */
function formatFixed(x: number, precision: number): string {
  const special = nonFinite(x);
  if (special !== undefined) return special;
  const { digits, scale } = exactDecimal(Math.abs(x));
  const scaled =
    precision >= scale
      ? digits * 10n ** BigInt(precision - scale)
      : divRoundHalfEven(digits, 10n ** BigInt(scale - precision));
  let text = scaled.toString().padStart(precision + 1, "0");
  if (precision > 0) text = `${text.slice(0, -precision)}.${text.slice(-precision)}`;
  return (isNegative(x) ? "-" : "") + text;
}

/** Go's fmt %.Ne: one leading digit, N decimals, and an exponent of at least two digits. */
function formatScientific(x: number, precision: number): string {
  const special = nonFinite(x);
  if (special !== undefined) return special;
  const { digits, scale } = exactDecimal(Math.abs(x));
  const want = precision + 1;
  let mantissa: bigint;
  let exponent: number;
  if (digits === 0n) {
    mantissa = 0n;
    exponent = 0;
  } else {
    const length = digits.toString().length;
    exponent = length - 1 - scale;
    if (length > want) {
      mantissa = divRoundHalfEven(digits, 10n ** BigInt(length - want));
      if (mantissa.toString().length > want) {
        mantissa /= 10n;
        exponent++;
      }
    } else {
      mantissa = digits * 10n ** BigInt(want - length);
    }
  }
  const m = mantissa.toString().padStart(want, "0");
  const body = precision > 0 ? `${m.slice(0, 1)}.${m.slice(1)}` : m;
  const e = Math.abs(exponent).toString().padStart(2, "0");
  return `${isNegative(x) ? "-" : ""}${body}e${exponent < 0 ? "-" : "+"}${e}`;
}

/** Go's strconv.FormatFloat(x, 'f', -1, 64): the shortest digits that round-trip, never an exponent. */
function formatShortest(x: number): string {
  const special = nonFinite(x);
  if (special !== undefined) return special;
  const sign = isNegative(x) ? "-" : "";
  // toExponential() without an argument gives the same shortest round-trip digits as Go.
  const [mant, expText] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = mant.replace(".", "");
  const exp = Number(expText);
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  if (exp >= digits.length - 1) return sign + digits + "0".repeat(exp - digits.length + 1);
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

// ---------------------------------------------------------------------------------------------
// Timestamps and durations as cel-go's string conversion prints them

const NANOS_PER_SECOND = 1_000_000_000n;

/** RFC 3339 in UTC with the fraction trimmed of trailing zeros, as Go's time.RFC3339Nano. */
export function formatTimestamp(t: Timestamp): string {
  let seconds = t.nanos / NANOS_PER_SECOND;
  let frac = t.nanos % NANOS_PER_SECOND;
  if (frac < 0n) {
    frac += NANOS_PER_SECOND;
    seconds -= 1n;
  }
  const d = new Date(Number(seconds) * 1000);
  const pad = (n: number, w = 2): string => n.toString().padStart(w, "0");
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const fraction = frac === 0n ? "" : `.${frac.toString().padStart(9, "0").replace(/0+$/, "")}`;
  return `${date}T${time}${fraction}Z`;
}

/** Seconds with the shortest decimal fraction, as Go's strconv of Duration.Seconds(). */
export function formatDuration(d: Duration): string {
  const whole = d.nanos / NANOS_PER_SECOND;
  const nanos = d.nanos % NANOS_PER_SECOND;
  return `${formatShortest(Number(whole) + Number(nanos) / 1e9)}s`;
}

// ---------------------------------------------------------------------------------------------
// string.format

class FormatError extends Error {}

function clauseError(message: string, v: CelValue): FormatError {
  return new FormatError(`${message}, was given ${typeName(v)}`);
}

/** Go's byte-wise string order (UTF-8 order is code point order). */
function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const ca = ia.next();
    const cb = ib.next();
    if (ca.done || cb.done) return ca.done && cb.done ? 0 : ca.done ? -1 : 1;
    const d = (ca.value.codePointAt(0) as number) - (cb.value.codePointAt(0) as number);
    if (d !== 0) return d;
  }
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** The `%s` rendering of any value. */
function formatString(v: CelValue): string {
  switch (typeof v) {
    case "string":
      return v;
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "number":
      return formatShortest(v);
    default:
      break;
  }
  if (v === null) return "null";
  if (v instanceof UInt) return v.value.toString();
  if (v instanceof Uint8Array) return utf8Decoder.decode(v);
  if (v instanceof Duration) return formatDuration(v);
  if (v instanceof Timestamp) return formatTimestamp(v);
  if (v instanceof CelType) return v.name;
  if (Array.isArray(v)) return `[${(v as CelList).map(formatString).join(", ")}]`;
  if (isMap(v)) {
    const entries: [string, string][] = [];
    for (const [k, val] of mapEntries(v)) entries.push([formatString(k), formatString(val)]);
    entries.sort((a, b) => compareCodePoints(a[0], b[0]));
    return `{${entries.map(([k, val]) => `${k}: ${val}`).join(", ")}}`;
  }
  throw clauseError(
    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps",
    v,
  );
}

function formatDecimal(v: CelValue): string {
  if (typeof v === "bigint") return v.toString();
  if (v instanceof UInt) return v.value.toString();
  if (typeof v === "number") return formatShortest(v);
  throw clauseError("decimal clause can only be used on integers", v);
}

/** %f and %e take doubles, and ints and uints converted to double. */
function asDouble(v: CelValue, clause: string): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof UInt) return Number(v.value);
  throw clauseError(`${clause} clause can only be used on doubles`, v);
}

function integerText(v: CelValue, radix: number): string | undefined {
  if (typeof v === "bigint") return v.toString(radix);
  if (v instanceof UInt) return v.value.toString(radix);
  return undefined;
}

function formatBinary(v: CelValue): string {
  if (typeof v === "boolean") return v ? "1" : "0";
  const text = integerText(v, 2);
  if (text === undefined) throw clauseError("only integers and bools can be formatted as binary", v);
  return text;
}

function formatOctal(v: CelValue): string {
  const text = integerText(v, 8);
  if (text === undefined) throw clauseError("octal clause can only be used on integers", v);
  return text;
}

function hexBytes(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

function formatHex(v: CelValue, upper: boolean): string {
  let text = integerText(v, 16);
  if (text === undefined && typeof v === "string") text = hexBytes(utf8Encoder.encode(v));
  if (text === undefined && v instanceof Uint8Array) text = hexBytes(v);
  if (text === undefined)
    throw clauseError("only integers, byte buffers, and strings can be formatted as hex", v);
  return upper ? text.toUpperCase() : text;
}

const DEFAULT_PRECISION = 6;
/**
 * Go's fmt accepts any precision; we stop at this one, since a policy could otherwise ask for a
 * gigabyte of zeros and the cost model would only see the format string.
 */
const MAX_PRECISION = 1000;
const INT64_MAX_TEXT = "9223372036854775807";

/** Reads `.N` at `i` (just after the `%`); returns the precision and where the verb is. */
function parsePrecision(f: string, i: number): { precision: number; next: number } {
  if (f[i] !== ".") return { precision: DEFAULT_PRECISION, next: i };
  let j = i + 1;
  while (j < f.length && (f[j] as string) >= "0" && (f[j] as string) <= "9") j++;
  if (j >= f.length)
    throw new FormatError("error while parsing precision: could not find end of precision specifier");
  const text = f.slice(i + 1, j);
  const trimmed = text.replace(/^0+(?=\d)/, "");
  if (text === "") {
    throw new FormatError(
      'error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax',
    );
  }
  if (
    trimmed.length > INT64_MAX_TEXT.length ||
    (trimmed.length === INT64_MAX_TEXT.length && trimmed > INT64_MAX_TEXT)
  ) {
    throw new FormatError(
      `error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "${text}": value out of range`,
    );
  }
  const precision = Number(trimmed);
  if (precision > MAX_PRECISION) {
    throw new FormatError(
      `error while parsing precision: precision ${trimmed} exceeds maximum allowed precision ${MAX_PRECISION}`,
    );
  }
  return { precision, next: j };
}

function applyClause(verb: string, precision: number, arg: CelValue): string {
  switch (verb) {
    case "s":
      return formatString(arg);
    case "d":
      return formatDecimal(arg);
    case "f":
      return formatFixed(asDouble(arg, "fixed-point"), precision);
    case "e":
      return formatScientific(asDouble(arg, "scientific"), precision);
    case "b":
      return formatBinary(arg);
    case "o":
      return formatOctal(arg);
    case "x":
    case "X":
      return formatHex(arg, verb === "X");
    default:
      throw new FormatError(`unrecognized formatting clause "${verb}"`);
  }
}

function format(f: string, args: CelList): string {
  let out = "";
  let argIndex = 0;
  let i = 0;
  while (i < f.length) {
    const c = f[i] as string;
    if (c !== "%") {
      out += c;
      i++;
      continue;
    }
    if (f[i + 1] === "%") {
      out += "%";
      i += 2;
      continue;
    }
    // cel-go looks the argument up before it looks at the clause, so that error comes first.
    if (argIndex >= args.length) throw new CelError(`index ${argIndex} out of range`);
    const arg = args[argIndex] as CelValue;
    if (i + 1 >= f.length) throw new CelError("unexpected end of string");
    let verb: string;
    let precision: number;
    try {
      const parsed = parsePrecision(f, i + 1);
      precision = parsed.precision;
      verb = String.fromCodePoint(f.codePointAt(parsed.next) as number);
      if (!"sdfebxXo".includes(verb)) throw new FormatError(`unrecognized formatting clause "${verb}"`);
      i = parsed.next + verb.length;
    } catch (e) {
      if (e instanceof FormatError) throw new CelError(`could not parse formatting clause: ${e.message}`);
      throw e;
    }
    try {
      out += applyClause(verb, precision, arg);
    } catch (e) {
      if (e instanceof FormatError) throw new CelError(`error during formatting: ${e.message}`);
      throw e;
    }
    argIndex++;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Costs: Kubernetes' library/cost.go (CallCost) where it names the function, else a traversal of
// the receiver as newer cel-go charges. Kubernetes' figure replaces the base cost of 1, so each
// declared cost is what lies beyond that base.

const TRAVERSAL = 0.1;

function traversal(s: string, factor = 1): number {
  return Math.ceil(runeCount(s) * factor * TRAVERSAL);
}

function beyondBase(total: number): number {
  return Math.max(0, total - 1);
}

/** Kubernetes' traversalCost: whole units per tenth of a UTF-8 byte, rounded down. */
function searchCost(s: string): number {
  return beyondBase(Math.floor(utf8Length(s) * TRAVERSAL));
}

const receiverCost = (s: string): number => beyondBase(traversal(s));
const rebuildCost = (s: string): number => beyondBase(traversal(s, 2));

/** Kubernetes charges join by the size of its result, twice. */
function joinCost(list: CelList, sep = ""): number {
  let size = 0;
  for (const elem of list) if (typeof elem === "string") size += runeCount(elem);
  if (list.length > 1) size += runeCount(sep) * (list.length - 1);
  return beyondBase(Math.ceil(size * 2 * TRAVERSAL));
}

/** A format call reads its string once and every value it renders. */
function valueSize(v: CelValue): number {
  if (typeof v === "string") return runeCount(v);
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) {
    let n = 0;
    for (const e of v as CelList) n += valueSize(e);
    return n;
  }
  if (v !== null && typeof v === "object" && isMap(v)) {
    let n = 0;
    for (const [k, e] of mapEntries(v)) n += valueSize(k) + valueSize(e);
    return n;
  }
  return 1;
}

function formatCost(f: string, args: CelList): number {
  return beyondBase(Math.ceil((runeCount(f) + valueSize(args)) * TRAVERSAL));
}

// ---------------------------------------------------------------------------------------------
// The library

export const stringsLibrary: Library = {
  name: "cel.lib.ext.strings",
  availability: "kubernetes",
  functions: [
    fn("charAt", memberFn("string_char_at_int", ["string", "int"], "string", charAt, receiverCost)),
    fn(
      "indexOf",
      memberFn("string_index_of_string", ["string", "string"], "int", indexOf, searchCost),
      memberFn("string_index_of_string_int", ["string", "string", "int"], "int", indexOfFrom, searchCost),
    ),
    fn(
      "lastIndexOf",
      memberFn("string_last_index_of_string", ["string", "string"], "int", lastIndexOf, searchCost),
      memberFn(
        "string_last_index_of_string_int",
        ["string", "string", "int"],
        "int",
        lastIndexOfFrom,
        searchCost,
      ),
    ),
    fn("lowerAscii", memberFn("string_lower_ascii", ["string"], "string", lowerAscii, receiverCost)),
    fn("upperAscii", memberFn("string_upper_ascii", ["string"], "string", upperAscii, receiverCost)),
    fn(
      "replace",
      memberFn(
        "string_replace_string_string",
        ["string", "string", "string"],
        "string",
        (s: string, old: string, repl: string) => replace(s, old, repl),
        rebuildCost,
      ),
      memberFn(
        "string_replace_string_string_int",
        ["string", "string", "string", "int"],
        "string",
        (s: string, old: string, repl: string, n: bigint) => replace(s, old, repl, n),
        rebuildCost,
      ),
    ),
    fn(
      "split",
      memberFn(
        "string_split_string",
        ["string", "string"],
        "list",
        (s: string, sep: string) => split(s, sep),
        rebuildCost,
      ),
      memberFn(
        "string_split_string_int",
        ["string", "string", "int"],
        "list",
        (s: string, sep: string, n: bigint) => split(s, sep, n),
        rebuildCost,
      ),
    ),
    fn(
      "substring",
      memberFn("string_substring_int", ["string", "int"], "string", substring, receiverCost),
      memberFn("string_substring_int_int", ["string", "int", "int"], "string", substringRange, receiverCost),
    ),
    fn("trim", memberFn("string_trim", ["string"], "string", trim, receiverCost)),
    fn("reverse", memberFn("string_reverse", ["string"], "string", reverse, receiverCost)),
    fn(
      "join",
      memberFn(
        "list_join",
        ["list"],
        "string",
        (l: CelList) => join(l),
        (l: CelList) => joinCost(l),
      ),
      memberFn(
        "list_join_string",
        ["list", "string"],
        "string",
        (l: CelList, sep: string) => join(l, sep),
        joinCost,
      ),
    ),
    fn("format", memberFn("string_format", ["string", "list"], "string", format, formatCost)),
    fn("strings.quote", globalFn("strings_quote", ["string"], "string", quote, receiverCost)),
  ],
};
