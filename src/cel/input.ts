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
  return toJsonAt(v, 0, options.exactInts === true);
}

/**
 * Containers nested deeper than this are rendered with an explicit stack: values from request data
 * nest as deep as the API server's decoder allows (10,000 levels), past what recursion can take.
 */
const RECURSE_DEPTH = 256;

function toJsonAt(v: CelValue, depth: number, exact: boolean): unknown {
  const scalar = scalarToJson(v, exact);
  if (scalar !== NESTED) return scalar;
  if (depth >= RECURSE_DEPTH) return toJsonDeep(v, exact);
  const d = depth + 1;
  if (Array.isArray(v)) return v.map((x) => toJsonAt(x, d, exact));
  if (isPlainMap(v)) {
    const out: Record<string, unknown> = {};
    for (const k in v) if (Object.hasOwn(v, k)) setMember(out, k, toJsonAt(v[k] as CelValue, d, exact));
    return out;
  }
  if (v instanceof CelMap) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of v.entries()) setMember(out, mapKeyToJson(k), toJsonAt(val, d, exact));
    return out;
  }
  const opt = v as Optional;
  return { optional: true, value: toJsonAt(opt.value(), d, exact) };
}

/** What {@link scalarToJson} gives for a list, a map or an optional holding a value. */
const NESTED: unique symbol = Symbol("nested");

function scalarToJson(v: CelValue, exact: boolean): unknown {
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
      if (Array.isArray(v) || isPlainMap(v) || v instanceof CelMap) return NESTED;
      // A JSON map's member read exactly: a float64 with an integral value (yaml/json-numbers.ts).
      if (v instanceof Number) return v.valueOf();
      if (v instanceof UInt) return intToJson(v.value, exact);
      if (v instanceof Uint8Array) return bytesToBase64(v);
      if (v instanceof Duration) return formatDuration(v);
      if (v instanceof Timestamp) return formatTimestamp(v);
      if (v instanceof CelType) return v.name;
      if (v instanceof Optional) return v.hasValue() ? NESTED : { optional: true };
      if (v instanceof CelObject) return v.toJSON();
      return null;
    }
    default:
      return null;
  }
}

function mapKeyToJson(k: CelValue): string {
  return k instanceof UInt ? k.value.toString() : String(k);
}

/** A container's members to render, with the keys of a map (an optional is a map of `value`). */
interface Pending {
  readonly values: readonly CelValue[];
  readonly keys: readonly string[] | undefined;
  readonly out: unknown[] | Record<string, unknown>;
  i: number;
}

function pendingOf(v: CelValue): Pending {
  if (Array.isArray(v)) return { values: v, keys: undefined, out: new Array(v.length), i: 0 };
  if (v instanceof Optional) return { values: [v.value()], keys: ["value"], out: { optional: true }, i: 0 };
  const keys: string[] = [];
  const values: CelValue[] = [];
  if (v instanceof CelMap)
    for (const [k, val] of v.entries()) {
      keys.push(mapKeyToJson(k));
      values.push(val);
    }
  else
    for (const k in v as Record<string, CelValue>)
      if (Object.hasOwn(v as object, k)) {
        keys.push(k);
        values.push((v as Record<string, CelValue>)[k] as CelValue);
      }
  return { values, keys, out: {}, i: 0 };
}

/** {@link toJson} of a container with an explicit stack: the same result at any depth. */
function toJsonDeep(v: CelValue, exact: boolean): unknown {
  const root = pendingOf(v);
  const stack = [root];
  while (stack.length > 0) {
    const p = stack[stack.length - 1] as Pending;
    if (p.i === p.values.length) {
      stack.pop();
      continue;
    }
    const i = p.i++;
    const x = p.values[i] as CelValue;
    let y = scalarToJson(x, exact);
    if (y === NESTED) {
      const child = pendingOf(x);
      stack.push(child);
      y = child.out;
    }
    if (p.keys === undefined) (p.out as unknown[])[i] = y;
    else setMember(p.out as Record<string, unknown>, p.keys[i] as string, y);
  }
  return root.out;
}
