/**
 * `string.format` as Kubernetes runs it: the strings extension pinned to version 2, whose format is
 * cel-go's first ("legacy") formatter (ext/formatting.go `stringFormatter`, v0.26), printing for
 * locale en_US. Inside lists and maps a value is written as a CEL literal would be (strings quoted
 * as Go's %q, bytes as b"...", doubles as %.6f with the infinities and NaN quoted, timestamps and
 * durations as `timestamp("...")` / `duration("...")`, maps as `{key:value, ...}` sorted by the
 * quoted key); a top-level `%s` of a double is Go's %g (`+Inf`, `2e-09`); `%d` takes integers
 * only; `%f` and `%e` take a double or the strings "NaN", "Infinity" and "-Infinity" and print
 * through x/text/message (../go/message.ts: `1,234.500000`, `2.718280×10⁰⁰`, `∞`).
 * The cel-spec suite pins the newer formatter (strings v4); test/helpers/cel-spec-format.ts lists
 * where Kubernetes departs from it.
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
import { printFixed, printScientific } from "../go/message.ts";
import { quote } from "../go/quote.ts";
import { formatFloat, numError, parseInt64 } from "../go/strconv.ts";
import { formatDuration, formatTimestamp } from "./time.ts";

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
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** cel-go's bytes → string conversion, which refuses invalid UTF-8 (common/types/bytes.go). */
function bytesText(b: Uint8Array): string {
  try {
    return strictUtf8.decode(b);
  } catch {
    // FormatString's "could not convert argument %q to string", %q of the conversion's error.
    throw new FormatError(
      `could not convert argument ${quote("invalid UTF-8 in bytes, cannot convert to string")} to string`,
    );
  }
}

/**
 * The top-level `%s` rendering (ext/formatting.go FormatString): scalars as `string(v)` gives them,
 * except a double, which is Go's %g; lists and maps as CEL literals.
 */
export function formatString(v: CelValue): string {
  switch (typeof v) {
    case "string":
      return v;
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "number":
      // Double.ConvertToType(StringType) is fmt.Sprintf("%g", d).
      return formatFloat(v, "g", -1);
    default:
      break;
  }
  if (v === null) return "null";
  if (v instanceof UInt) return v.value.toString();
  if (v instanceof Uint8Array) return bytesText(v);
  if (v instanceof Duration) return formatDuration(v);
  if (v instanceof Timestamp) return formatTimestamp(v);
  if (v instanceof CelType) return v.name;
  if (Array.isArray(v)) return formatList(v as CelList);
  if (isMap(v)) return formatMap(v);
  throw clauseError(
    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps",
    v,
  );
}

/** An element of a list or a map's value (clauseForType, then quoteForCEL). */
function formatMember(v: CelValue): string {
  switch (typeof v) {
    case "string":
      return quote(v);
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "number": {
      // fmt.Sprintf("%.6f"); the infinities and NaN are quoted to stay valid CEL.
      const text = formatFloat(v, "f", 6);
      return Number.isFinite(v) ? text : quote(text);
    }
    default:
      break;
  }
  if (v === null) return "null";
  if (v instanceof UInt) return v.value.toString();
  if (v instanceof Uint8Array) return `b${quote(bytesText(v))}`;
  if (v instanceof CelType) return v.name;
  if (v instanceof Timestamp) return `timestamp(${quote(formatTimestamp(v))})`;
  if (v instanceof Duration) return `duration(${quote(formatDuration(v))})`;
  if (Array.isArray(v)) return formatList(v as CelList);
  if (isMap(v)) return formatMap(v);
  throw new FormatError(`no formatting function for ${typeName(v)}`);
}

function formatList(list: CelList): string {
  return `[${list.map(formatMember).join(", ")}]`;
}

function formatMapKey(k: CelValue): string {
  if (typeof k === "string") return quote(k);
  if (typeof k === "boolean") return k ? "true" : "false";
  if (typeof k === "bigint") return k.toString();
  if (k instanceof UInt) return k.value.toString();
  throw new FormatError(`no formatting function for map key of type ${typeName(k)}`);
}

function formatMap(m: Parameters<typeof mapEntries>[0]): string {
  const pairs: [string, string][] = [];
  for (const [k, v] of mapEntries(m)) pairs.push([formatMapKey(k), formatMember(v)]);
  // sort.SliceStable on the quoted keys.
  pairs.sort((a, b) => compareCodePoints(a[0], b[0]));
  return `{${pairs.map(([k, v]) => `${k}:${v}`).join(", ")}}`;
}

function formatDecimal(v: CelValue): string {
  if (typeof v === "bigint") return v.toString();
  if (v instanceof UInt) return v.value.toString();
  throw clauseError("decimal clause can only be used on integers", v);
}

/** What %f and %e accept: a double, or one of the strings strconv.ParseFloat reads as special. */
function asDouble(v: CelValue, clause: string): number {
  if (typeof v === "number") return v;
  if (v === "NaN") return Number.NaN;
  if (v === "Infinity") return Number.POSITIVE_INFINITY;
  if (v === "-Infinity") return Number.NEGATIVE_INFINITY;
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
      return printFixed(asDouble(arg, "fixed-point"), precision);
    case "e":
      return printScientific(asDouble(arg, "scientific"), precision);
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
      verb = f[parsed.next] as string;
      if (!"sdfebxXo".includes(verb)) {
        // Go reads the clause as one byte (rune(formatStr[i])): the first byte of a UTF-8 sequence.
        const first = utf8Encoder.encode(String.fromCodePoint(f.codePointAt(parsed.next) as number))[0];
        throw new FormatError(`unrecognized formatting clause "${String.fromCharCode(first as number)}"`);
      }
      i = parsed.next + 1;
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
