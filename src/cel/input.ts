/**
 * JSON ⇄ CEL values. Kubernetes decodes integral JSON numbers as int64 and the rest as float64;
 * `toCel` does the same, all at once, so a value handed to the public API comes back fully typed
 * (the engine skips it: runtime/values.ts reads JSON input lazily), and `toJson` turns any CEL value back
 * into JSON without losing precision: an int beyond 2^53 becomes a decimal string, as cel-go writes
 * it as a JSON value (common/types/int.go, ConvertToNative to structpb.Value: what the API server
 * writes a JSONPatch value with), or with `exactInts` stays a bigint, as an ApplyConfiguration's
 * Object keeps its int64 (ObjectVal.Value()), for a writer that writes bigints as numbers
 * (yaml/json-numbers.ts stringifyJson).
 */
import {
  CelMap,
  CelObject,
  CelType,
  type CelValue,
  Duration,
  fromJson,
  isIntegral,
  isJsonMap,
  isPlainMap,
  type JsonMap,
  Optional,
  setMember,
  Timestamp,
  UInt,
} from "./runtime/values.ts";
import { formatRFC3339 } from "./go/time.ts";

/**
 * Converts parsed JSON (or YAML) into CEL values: integral numbers become int. A Number object (a
 * float64 with an integral value, read exactly: yaml/json-numbers.ts) is a double; within a list
 * or map it stays as it is, since a double 1 stored there as a number would read back as an int,
 * and runtime/values.ts fromJson reads it as a double.
 */
export function toCel(v: unknown): CelValue {
  if (v instanceof Number) return v.valueOf();
  // A list's elements are read as they are: fromJson unwraps the Number objects, at any depth.
  return Array.isArray(v) ? fromJson(convertJson(v)) : convertJson(v);
}

function convertJson(v: unknown): CelValue {
  switch (typeof v) {
    case "number":
      // Kubernetes decodes a JSON number as int64 when it is integral and fits, else as a double.
      return isIntegral(v) ? BigInt(v) : v;
    case "string":
    case "boolean":
    case "bigint":
      return v;
    case "undefined":
      return null;
    case "object": {
      if (v === null) return null;
      if (v instanceof Number) return v as unknown as CelValue;
      if (Array.isArray(v)) {
        const out: CelValue[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = convertJson(v[i]);
        return out;
      }
      // A map the evaluator built holds CEL values already (a double 2.0 must stay a double).
      if (isJsonMap(v)) {
        const out: Record<string, CelValue> = {};
        for (const k in v)
          if (Object.hasOwn(v, k)) setMember(out, k, convertJson((v as Record<string, unknown>)[k]));
        return out as JsonMap;
      }
      return v as CelValue;
    }
    default:
      return null;
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function intToJson(i: bigint, exact: boolean): number | bigint | string {
  if (i <= MAX_SAFE && i >= -MAX_SAFE) return Number(i);
  return exact ? i : i.toString();
}

export interface ToJsonOptions {
  /** Ints (and uints) beyond 2^53 stay bigints rather than becoming decimal strings. */
  readonly exactInts?: boolean;
}

/** Seconds with up to nine fractional digits and an `s` suffix, as protobuf's JSON prints durations. */
export function formatDuration(d: Duration): string {
  const neg = d.nanos < 0n;
  const abs = neg ? -d.nanos : d.nanos;
  const secs = abs / 1_000_000_000n;
  const frac = abs % 1_000_000_000n;
  let s = secs.toString();
  if (frac !== 0n) s += `.${frac.toString().padStart(9, "0").replace(/0+$/, "")}`;
  return `${neg ? "-" : ""}${s}s`;
}

/** RFC 3339 in UTC with the fractional seconds needed (none, milli, micro or nano). */
export function formatTimestamp(t: Timestamp): string {
  return formatRFC3339(t.nanos, "groupsOfThree");
}

function bytesToBase64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
}

/** Renders a CEL value as JSON (the `celgate expr` output format and mutation results). */
export function toJson(v: CelValue, options: ToJsonOptions = {}): unknown {
  const exact = options.exactInts === true;
  const inner = (x: CelValue): unknown => toJson(x, options);
  switch (typeof v) {
    case "bigint":
      return intToJson(v, exact);
    case "number":
      return Number.isFinite(v) ? v : String(v);
    case "string":
    case "boolean":
      return v;
    case "object": {
      if (v === null) return null;
      if (Array.isArray(v)) return v.map(inner);
      // A JSON map's member read exactly: a float64 with an integral value (yaml/json-numbers.ts).
      if (v instanceof Number) return v.valueOf();
      if (isPlainMap(v)) {
        const out: Record<string, unknown> = {};
        for (const k in v) if (Object.hasOwn(v, k)) setMember(out, k, inner(v[k] as CelValue));
        return out;
      }
      if (v instanceof CelMap) {
        const out: Record<string, unknown> = {};
        for (const [k, val] of v.entries())
          setMember(out, k instanceof UInt ? k.value.toString() : String(k), inner(val));
        return out;
      }
      if (v instanceof UInt) return intToJson(v.value, exact);
      if (v instanceof Uint8Array) return bytesToBase64(v);
      if (v instanceof Duration) return formatDuration(v);
      if (v instanceof Timestamp) return formatTimestamp(v);
      if (v instanceof CelType) return v.name;
      if (v instanceof Optional)
        return v.hasValue() ? { optional: true, value: inner(v.value()) } : { optional: true };
      if (v instanceof CelObject) return v.toJSON();
      return null;
    }
    default:
      return null;
  }
}
