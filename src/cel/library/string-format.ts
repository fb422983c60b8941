/**
 * `string.format` of the CEL strings extension (cel-go ext/formatting.go), as the cel-spec
 * conformance suite "string_ext" pins it: `%s` renders any value the way cel-go's second formatter
 * does (a list is `[abc, 3.14]`, a map's keys are sorted), `%d` accepts NaN and the infinities, and
 * the error texts are the first formatter's ("decimal clause can only be used on integers, was
 * given ..."). Numbers are laid out by Go's strconv (../go/strconv.ts).
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
import { formatFloat, numError, parseInt64 } from "../go/strconv.ts";
import { formatDuration, formatTimestamp } from "./time.ts";

// ---------------------------------------------------------------------------------------------
// Numbers: Go's strconv layouts, but cel-go's format names the special doubles itself.

function nonFinite(x: number): string | undefined {
  if (Number.isNaN(x)) return "NaN";
  if (x === Number.POSITIVE_INFINITY) return "Infinity";
  if (x === Number.NEGATIVE_INFINITY) return "-Infinity";
  return undefined;
}

/** Go's strconv.FormatFloat(x, fmt, prec, 64) with cel-go's names for NaN and the infinities. */
function formatNumber(x: number, fmt: "e" | "f", prec: number): string {
  return nonFinite(x) ?? formatFloat(x, fmt, prec);
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
export function formatString(v: CelValue): string {
  switch (typeof v) {
    case "string":
      return v;
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "number":
      return formatNumber(v, "f", -1);
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
  if (typeof v === "number") return formatNumber(v, "f", -1);
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

/** Reads `.N` at `i` (just after the `%`); returns the precision and where the verb is. */
function parsePrecision(f: string, i: number): { precision: number; next: number } {
  if (f[i] !== ".") return { precision: DEFAULT_PRECISION, next: i };
  let j = i + 1;
  while (j < f.length && (f[j] as string) >= "0" && (f[j] as string) <= "9") j++;
  if (j >= f.length)
    throw new FormatError("error while parsing precision: could not find end of precision specifier");
  const text = f.slice(i + 1, j);
  const parsed = parseInt64(text);
  if (typeof parsed === "string") {
    throw new FormatError(
      `error while parsing precision: error while converting precision to integer: ${numError("Atoi", text, parsed)}`,
    );
  }
  if (parsed > BigInt(MAX_PRECISION)) {
    throw new FormatError(
      `error while parsing precision: precision ${parsed} exceeds maximum allowed precision ${MAX_PRECISION}`,
    );
  }
  const precision = Number(parsed);
  return { precision, next: j };
}

function applyClause(verb: string, precision: number, arg: CelValue): string {
  switch (verb) {
    case "s":
      return formatString(arg);
    case "d":
      return formatDecimal(arg);
    case "f":
      return formatNumber(asDouble(arg, "fixed-point"), "f", precision);
    case "e":
      return formatNumber(asDouble(arg, "scientific"), "e", precision);
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

/** cel-go's `string.format(list)`: `%s %d %f %e %b %o %x %X` clauses, `%%`, and `.N` precisions. */
export function format(f: string, args: CelList): string {
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
