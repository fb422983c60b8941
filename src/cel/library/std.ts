/**
 * The CEL standard library (cel-spec langdef "List of Standard Definitions", as cel-go implements
 * it): arithmetic, ordering, `size`, the string predicates, `matches` and the type conversions.
 * The logical operators, equality, indexing, `in`, `has()` and the macros live in the compiler;
 * the timestamp/duration constructors and accessors are in time.ts.
 *
 * Overload ids are cel-go's. Error texts are cel-go's ("integer overflow", "division by zero",
 * "type conversion error from 'string' to 'int'", ...), since the API server shows them to users.
 * Costs follow cel-go's runtime cost tracker (interpreter/runtimecost.go): string traversal is 0.1
 * per character, and a call's declared cost replaces the base cost of 1 (hence the `- 1`s below).
 */
import {
  CelError,
  CelType,
  type CelValue,
  checkInt,
  checkUint,
  type Duration,
  INT64_MIN,
  type JsonMap,
  type CelMap,
  mapSize,
  type Timestamp,
  typeName,
  UInt,
} from "../runtime/values.ts";
import { checkBuiltSize } from "../runtime/built-size.ts";
import { codePointLength } from "../runtime/code-points.ts";
import { celCompare } from "../runtime/equality.ts";
import { formatFloat, parseBool, parseFloat64, parseInt64, parseUint64 } from "../go/strconv.ts";
import {
  addTimestampDuration,
  checkDuration,
  formatDuration,
  formatTimestamp,
  subtractTimestampDuration,
  subtractTimestamps,
  timestampSeconds,
} from "./time.ts";
import {
  type CallContext,
  fn,
  globalFn,
  type Library,
  memberFn,
  type Overload,
  type TypeTag,
} from "./types.ts";

const TS = "google.protobuf.Timestamp";
const DUR = "google.protobuf.Duration";

/** cel-go's common.StringTraversalCostFactor and RegexStringLengthCostFactor. */
const TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;

// ---------------------------------------------------------------------------------------------
// Helpers.

/** cel-go's actualSize: code points for strings, length for bytes, 1 for scalars. */
function costSize(v: string | Uint8Array): number {
  return typeof v === "string" ? codePointLength(v) : v.length;
}

/**
 * `a + b` for lists, copied by index: spreading goes through the iterator protocol, which is
 * slower for short lists (every Pod policy's "all containers" list is such a sum).
 */
function concatLists(a: readonly CelValue[], b: readonly CelValue[]): CelValue[] {
  checkBuiltSize(a.length + b.length, "list");
  const out = new Array<CelValue>(a.length + b.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] as CelValue;
  for (let i = 0; i < b.length; i++) out[a.length + i] = b[i] as CelValue;
  return out;
}

function traversal(size: number): number {
  return Math.ceil(size * TRAVERSAL);
}

/**
 * cel-go's cost of concatenating two strings of `size` code points in all, less the call's base
 * unit (the generated code charges it from a size it has counted already: plan/dispatch.ts).
 */
export function stringConcatCost(size: number): number {
  return traversal(size) - 1;
}

/**
 * cel-go's cost of the member form `s.matches(p)`, from the sizes of `s` and `p` in code points
 * (the compiler prices a constant pattern with it too, from sizes it knows: plan/matches.ts).
 */
export function matchesCost(subject: number, pattern: number): number {
  return traversal(1 + subject) * Math.ceil(pattern * REGEX_LENGTH) - 1;
}

/**
 * Orders strings by code point (as Go's byte-wise UTF-8 comparison does) rather than by UTF-16
 * unit: surrogates are lifted above the rest of the BMP before comparing the first difference.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800) x += x <= 0xdfff ? 0x2000 : -0x800;
      if (y >= 0xd800) y += y <= 0xdfff ? 0x2000 : -0x800;
      return x < y ? -1 : 1;
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

const TWO_TO_63 = 2 ** 63;
const TWO_TO_64 = 2 ** 64;

function compareDoubles(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function nanError(): CelError {
  return new CelError("NaN values cannot be ordered");
}

/**
 * An int or uint against a double, as cel-go compares them: a double beyond the integer type's
 * range orders outside it, otherwise the integer is converted to double (lossily: int64 max
 * compares equal to 2^63).
 */
function compareIntegerDouble(i: bigint, d: number, min: number, max: number): number {
  if (Number.isNaN(d)) throw nanError();
  if (d < min) return 1;
  if (d > max) return -1;
  return compareDoubles(Number(i), d);
}

/** Ordering as cel-go defines it for `<`, `<=`, `>`, `>=`. NaN cannot be ordered. */
function order(a: CelValue, b: CelValue, fnName: string): number {
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  if (typeof a === "number") {
    if (typeof b === "number") {
      if (Number.isNaN(a) || Number.isNaN(b)) throw nanError();
      return compareDoubles(a, b);
    }
    if (typeof b === "bigint") return -compareIntegerDouble(b, a, -TWO_TO_63, TWO_TO_63);
    if (b instanceof UInt) return -compareIntegerDouble(b.value, a, 0, TWO_TO_64);
  } else if (typeof b === "number") {
    if (typeof a === "bigint") return compareIntegerDouble(a, b, -TWO_TO_63, TWO_TO_63);
    if (a instanceof UInt) return compareIntegerDouble(a.value, b, 0, TWO_TO_64);
  }
  return celCompare(a, b, fnName);
}

/**
 * cel-go's string(double), Go's fmt "%g": shortest round-trip digits, exponent form below 1e-4 or
 * from 1e+06 on ("1e+06", "1.5e-05"), and "+Inf", "-Inf", "NaN".
 */
export function formatDouble(x: number): string {
  return formatFloat(x, "g", -1);
}

function conversionError(from: string, to: string): CelError {
  return new CelError(`type conversion error from '${from}' to '${to}'`);
}

/** Go's strconv.ParseInt(s, 10, 64). */
function stringToInt(s: string): bigint {
  const v = parseInt64(s);
  if (typeof v === "string") throw conversionError("string", "int");
  return v;
}

/** Go's strconv.ParseUint(s, 10, 64): digits only, no sign. */
function stringToUint(s: string): UInt {
  const v = parseUint64(s);
  if (typeof v === "string") throw conversionError("string", "uint");
  return new UInt(v);
}

/** Go's strconv.ParseFloat(s, 64): decimal or hex (0x1p-2) forms, inf/infinity/nan; overflow fails. */
export function parseDouble(s: string): number {
  const v = parseFloat64(s);
  if (typeof v === "string") throw conversionError("string", "double");
  return v;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function bytesToString(b: Uint8Array): string {
  try {
    return utf8Decoder.decode(b);
  } catch {
    throw new CelError("invalid UTF-8 in bytes, cannot convert to string");
  }
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  checkBuiltSize(a.length + b.length, "bytes");
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function doubleToInt(x: number): bigint {
  // -2^63 itself is rejected too: cel-go compares against float64(MinInt64) with <=.
  if (!Number.isFinite(x) || x <= -TWO_TO_63 || x >= TWO_TO_63) throw new CelError("integer overflow");
  return BigInt(Math.trunc(x));
}

function doubleToUint(x: number): UInt {
  if (!Number.isFinite(x) || x < 0 || x >= TWO_TO_64) throw new CelError("unsigned integer overflow");
  return new UInt(BigInt(Math.trunc(x)));
}

function divideInt(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new CelError("division by zero");
  return checkInt(a / b);
}

function moduloInt(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new CelError("modulus by zero");
  // cel-go reports MIN % -1 as an overflow, as it does MIN / -1.
  if (a === INT64_MIN && b === -1n) throw new CelError("integer overflow");
  return a % b;
}

// ---------------------------------------------------------------------------------------------
// Ordering: one overload per operand type pair, as cel-go declares them.

const ORDERED_PAIRS: readonly (readonly [string, TypeTag, TypeTag])[] = [
  ["bool", "bool", "bool"],
  ["int64", "int", "int"],
  ["int64_double", "int", "double"],
  ["int64_uint64", "int", "uint"],
  ["uint64", "uint", "uint"],
  ["uint64_double", "uint", "double"],
  ["uint64_int64", "uint", "int"],
  ["double", "double", "double"],
  ["double_int64", "double", "int"],
  ["double_uint64", "double", "uint"],
  ["string", "string", "string"],
  ["bytes", "bytes", "bytes"],
  ["timestamp", TS, TS],
  ["duration", DUR, DUR],
];

function orderingFn(name: string, idPrefix: string, holds: (c: number) => boolean) {
  return fn(
    name,
    ...ORDERED_PAIRS.map(([suffix, left, right]): Overload => {
      const impl = (a: CelValue, b: CelValue) => holds(order(a, b, name));
      if (left === "string" || left === "bytes") {
        const cost = (a: string | Uint8Array, b: string | Uint8Array) =>
          traversal(Math.min(costSize(a), costSize(b))) - 1;
        return globalFn(`${idPrefix}_${suffix}`, [left, right], "bool", impl, cost);
      }
      return globalFn(`${idPrefix}_${suffix}`, [left, right], "bool", impl);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// The library.

type AnyMap = CelMap | JsonMap;

export const stdLibrary: Library = {
  name: "std",
  availability: "kubernetes",
  functions: [
    // Arithmetic.
    fn(
      "_+_",
      globalFn("add_int64", ["int", "int"], "int", (a: bigint, b: bigint) => checkInt(a + b)),
      globalFn("add_uint64", ["uint", "uint"], "uint", (a: UInt, b: UInt) => checkUint(a.value + b.value)),
      globalFn("add_double", ["double", "double"], "double", (a: number, b: number) => a + b),
      globalFn(
        "add_string",
        ["string", "string"],
        "string",
        (a: string, b: string) => {
          checkBuiltSize(a.length + b.length, "string");
          return a + b;
        },
        (a: string, b: string) => stringConcatCost(codePointLength(a) + codePointLength(b)),
      ),
      globalFn(
        "add_bytes",
        ["bytes", "bytes"],
        "bytes",
        concatBytes,
        (a: Uint8Array, b: Uint8Array) => traversal(a.length + b.length) - 1,
      ),
      // cel-go counts list concatenation as O(1): its lists are concatenated lazily. CEL lists are
      // immutable once built (only a comprehension's own accumulator grows in place, and it is never
      // an operand here), so adding an empty list can return the other one as it is.
      globalFn("add_list", ["list", "list"], "list", (a: readonly CelValue[], b: readonly CelValue[]) =>
        b.length === 0 ? a : a.length === 0 ? b : concatLists(a, b),
      ),
      globalFn("add_timestamp_duration", [TS, DUR], TS, addTimestampDuration),
      globalFn("add_duration_timestamp", [DUR, TS], TS, (d: Duration, t: Timestamp) =>
        addTimestampDuration(t, d),
      ),
      globalFn("add_duration_duration", [DUR, DUR], DUR, (a: Duration, b: Duration) =>
        checkDuration(a.nanos + b.nanos),
      ),
    ),
    fn(
      "_-_",
      globalFn("subtract_int64", ["int", "int"], "int", (a: bigint, b: bigint) => checkInt(a - b)),
      globalFn("subtract_uint64", ["uint", "uint"], "uint", (a: UInt, b: UInt) =>
        checkUint(a.value - b.value),
      ),
      globalFn("subtract_double", ["double", "double"], "double", (a: number, b: number) => a - b),
      globalFn("subtract_timestamp_timestamp", [TS, TS], DUR, subtractTimestamps),
      globalFn("subtract_timestamp_duration", [TS, DUR], TS, subtractTimestampDuration),
      globalFn("subtract_duration_duration", [DUR, DUR], DUR, (a: Duration, b: Duration) =>
        checkDuration(a.nanos - b.nanos),
      ),
    ),
    fn(
      "_*_",
      globalFn("multiply_int64", ["int", "int"], "int", (a: bigint, b: bigint) => checkInt(a * b)),
      globalFn("multiply_uint64", ["uint", "uint"], "uint", (a: UInt, b: UInt) =>
        checkUint(a.value * b.value),
      ),
      globalFn("multiply_double", ["double", "double"], "double", (a: number, b: number) => a * b),
    ),
    fn(
      "_/_",
      globalFn("divide_int64", ["int", "int"], "int", divideInt),
      globalFn("divide_uint64", ["uint", "uint"], "uint", (a: UInt, b: UInt) => {
        if (b.value === 0n) throw new CelError("division by zero");
        return new UInt(a.value / b.value);
      }),
      globalFn("divide_double", ["double", "double"], "double", (a: number, b: number) => a / b),
    ),
    fn(
      "_%_",
      globalFn("modulo_int64", ["int", "int"], "int", moduloInt),
      globalFn("modulo_uint64", ["uint", "uint"], "uint", (a: UInt, b: UInt) => {
        if (b.value === 0n) throw new CelError("modulus by zero");
        return new UInt(a.value % b.value);
      }),
    ),
    fn(
      "-_",
      globalFn("negate_int64", ["int"], "int", (a: bigint) => checkInt(-a)),
      globalFn("negate_double", ["double"], "double", (a: number) => -a),
    ),

    // Ordering.
    orderingFn("_<_", "less", (c) => c < 0),
    orderingFn("_<=_", "less_equals", (c) => c <= 0),
    orderingFn("_>_", "greater", (c) => c > 0),
    orderingFn("_>=_", "greater_equals", (c) => c >= 0),

    // Size.
    fn(
      "size",
      globalFn("size_string", ["string"], "int", (s: string) => BigInt(codePointLength(s))),
      memberFn("string_size", ["string"], "int", (s: string) => BigInt(codePointLength(s))),
      globalFn("size_bytes", ["bytes"], "int", (b: Uint8Array) => BigInt(b.length)),
      memberFn("bytes_size", ["bytes"], "int", (b: Uint8Array) => BigInt(b.length)),
      globalFn("size_list", ["list"], "int", (l: readonly CelValue[]) => BigInt(l.length)),
      memberFn("list_size", ["list"], "int", (l: readonly CelValue[]) => BigInt(l.length)),
      globalFn("size_map", ["map"], "int", (m: AnyMap) => BigInt(mapSize(m))),
      memberFn("map_size", ["map"], "int", (m: AnyMap) => BigInt(mapSize(m))),
    ),

    // String predicates and regular expressions.
    fn(
      "contains",
      memberFn(
        "contains_string",
        ["string", "string"],
        "bool",
        (s: string, sub: string) => s.includes(sub),
        (s: string, sub: string) => traversal(codePointLength(s)) * traversal(codePointLength(sub)) - 1,
      ),
    ),
    fn(
      "startsWith",
      memberFn(
        "starts_with_string",
        ["string", "string"],
        "bool",
        (s: string, prefix: string) => s.startsWith(prefix),
        (s: string) => traversal(codePointLength(s)) - 1,
      ),
    ),
    fn(
      "endsWith",
      memberFn(
        "ends_with_string",
        ["string", "string"],
        "bool",
        (s: string, suffix: string) => s.endsWith(suffix),
        (s: string) => traversal(codePointLength(s)) - 1,
      ),
    ),
    fn(
      "matches",
      // cel-go prices only the member form by size; the global form costs 1.
      globalFn("matches", ["string", "string"], "bool", (s: string, pattern: string, ctx: CallContext) =>
        ctx.regex(pattern).test(s, ctx),
      ),
      memberFn(
        "matches_string",
        ["string", "string"],
        "bool",
        (s: string, pattern: string, ctx: CallContext) => ctx.regex(pattern).test(s, ctx),
        (s: string, pattern: string) => matchesCost(codePointLength(s), codePointLength(pattern)),
      ),
    ),

    // Conversions.
    fn(
      "type",
      globalFn("type", ["dyn"], "type", (v: CelValue) => new CelType(typeName(v))),
    ),
    fn(
      "dyn",
      globalFn("to_dyn", ["dyn"], "dyn", (v: CelValue) => v),
    ),
    fn(
      "int",
      globalFn("int64_to_int64", ["int"], "int", (n: bigint) => n),
      globalFn("uint64_to_int64", ["uint"], "int", (u: UInt) => checkInt(u.value)),
      globalFn("double_to_int64", ["double"], "int", doubleToInt),
      globalFn("string_to_int64", ["string"], "int", stringToInt),
      globalFn("timestamp_to_int64", [TS], "int", timestampSeconds),
      globalFn("duration_to_int64", [DUR], "int", (d: Duration) => d.nanos),
    ),
    fn(
      "uint",
      globalFn("uint64_to_uint64", ["uint"], "uint", (u: UInt) => u),
      globalFn("int64_to_uint64", ["int"], "uint", (n: bigint) => checkUint(n)),
      globalFn("double_to_uint64", ["double"], "uint", doubleToUint),
      globalFn("string_to_uint64", ["string"], "uint", stringToUint),
    ),
    fn(
      "double",
      globalFn("double_to_double", ["double"], "double", (x: number) => x),
      globalFn("int64_to_double", ["int"], "double", (n: bigint) => Number(n)),
      globalFn("uint64_to_double", ["uint"], "double", (u: UInt) => Number(u.value)),
      globalFn("string_to_double", ["string"], "double", parseDouble),
    ),
    fn(
      "string",
      globalFn("string_to_string", ["string"], "string", (s: string) => s),
      globalFn("bool_to_string", ["bool"], "string", (b: boolean) => (b ? "true" : "false")),
      globalFn(
        "bytes_to_string",
        ["bytes"],
        "string",
        bytesToString,
        (b: Uint8Array) => traversal(b.length) - 1,
      ),
      globalFn("double_to_string", ["double"], "string", formatDouble),
      globalFn("duration_to_string", [DUR], "string", formatDuration),
      globalFn("int64_to_string", ["int"], "string", (n: bigint) => n.toString()),
      globalFn("timestamp_to_string", [TS], "string", formatTimestamp),
      globalFn("uint64_to_string", ["uint"], "string", (u: UInt) => u.value.toString()),
    ),
    fn(
      "bytes",
      globalFn("bytes_to_bytes", ["bytes"], "bytes", (b: Uint8Array) => b),
      globalFn(
        "string_to_bytes",
        ["string"],
        "bytes",
        (s: string) => utf8Encoder.encode(s),
        (s: string) => traversal(codePointLength(s)) - 1,
      ),
    ),
    fn(
      "bool",
      globalFn("bool_to_bool", ["bool"], "bool", (b: boolean) => b),
      globalFn("string_to_bool", ["string"], "bool", (s: string) => {
        const b = parseBool(s);
        if (typeof b === "string") throw conversionError("string", "bool");
        return b;
      }),
    ),
  ],
};
