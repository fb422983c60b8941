/**
 * CEL equality and ordering with heterogeneous numeric semantics: `1 == 1u == 1.0`, `1 < 1.5`,
 * values of unrelated types are simply unequal (never an error), and NaN equals nothing.
 */
import {
  CelMap,
  CelObject,
  CelType,
  type CelValue,
  Duration,
  isPlainMap,
  mapGet,
  mapKeys,
  mapSize,
  noSuchOverload,
  Optional,
  Timestamp,
  UInt,
} from "./values.ts";

/** Numeric value as one of the three kinds, for cross-type comparison. */
function numeric(v: CelValue): bigint | number | undefined {
  if (typeof v === "bigint" || typeof v === "number") return v;
  if (v instanceof UInt) return v.value;
  return undefined;
}

/** Compares two numbers of any CEL numeric type exactly (no rounding of large ints through double). */
function compareNumeric(a: bigint | number, b: bigint | number): number {
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number" && typeof b === "number")
    return a < b ? -1 : a > b ? 1 : a === b ? 0 : Number.NaN;
  // One bigint, one double.
  const [i, d, sign] = typeof a === "bigint" ? [a, b as number, 1] : [b as bigint, a as number, -1];
  if (Number.isNaN(d)) return Number.NaN;
  if (d === Number.POSITIVE_INFINITY) return -sign;
  if (d === Number.NEGATIVE_INFINITY) return sign;
  const fl = Math.floor(d);
  const fi = BigInt(fl);
  if (i < fi) return -sign;
  if (i > fi) return sign;
  return fl === d ? 0 : -sign;
}

/** What {@link shallowEquals} says of two values: equal, unequal, or two containers to compare member by member. */
const DEEP = 2;
type Shallow = boolean | typeof DEEP;

export function celEquals(a: CelValue, b: CelValue): boolean {
  const r = shallowEquals(a, b);
  return r === DEEP ? deepEquals(a, b) : r;
}

/**
 * Two lists, maps or optionals compared member by member. An explicit stack of pending pairs
 * replaces recursion, so equality is linear in the values' size whatever their depth (request data
 * nests as deep as the API server's decoder lets it) and decides the same on every thread, whatever
 * its stack size, as Go's growable stacks let cel-go decide.
 */
function deepEquals(a: CelValue, b: CelValue): boolean {
  const pending: CelValue[] = [a, b];
  while (pending.length > 0) {
    const y = pending.pop() as CelValue;
    const x = pending.pop() as CelValue;
    const r = shallowEquals(x, y);
    if (r === false) return false;
    if (r === true) continue;
    if (Array.isArray(x)) {
      // Pushed last to first, so members are compared in order, as cel-go's list Equal does.
      const ys = y as readonly CelValue[];
      for (let i = x.length - 1; i >= 0; i--) pending.push(x[i] as CelValue, ys[i] as CelValue);
    } else if (x instanceof Optional) {
      pending.push(x.value(), (y as Optional).value());
    } else {
      for (const k of mapKeys(x as CelMap)) {
        const vy = mapGet(y as CelMap, k);
        if (vy === undefined) return false;
        pending.push(mapGet(x as CelMap, k) as CelValue, vy);
      }
    }
  }
  return true;
}

/**
 * Equality of two values but for the members of containers: {@link DEEP} for two lists of one
 * length, two maps of one size or two optionals that both hold a value, whose members decide.
 */
function shallowEquals(a: CelValue, b: CelValue): Shallow {
  // An object type's own Equal decides even against itself (Kubernetes' quantity arithmetic results
  // equal nothing, library/quantity.ts).
  if (a === b) return typeof a === "number" ? !Number.isNaN(a) : !(a instanceof CelObject) || a.equals(b);
  const ta = typeof a;
  const tb = typeof b;
  if (ta === "string" || tb === "string" || ta === "boolean" || tb === "boolean") return false;
  const na = numeric(a);
  if (na !== undefined) {
    const nb = numeric(b);
    return nb !== undefined && compareNumeric(na, nb) === 0;
  }
  if (a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && (a.length === 0 || DEEP);
  if (a instanceof CelMap || isPlainMap(a)) {
    if (!(b instanceof CelMap || isPlainMap(b))) return false;
    const size = mapSize(a);
    return size === mapSize(b) && (size === 0 || DEEP);
  }
  if (a instanceof Uint8Array) {
    if (!(b instanceof Uint8Array) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (a instanceof Duration) return b instanceof Duration && a.nanos === b.nanos;
  if (a instanceof Timestamp) return b instanceof Timestamp && a.nanos === b.nanos;
  if (a instanceof CelType) return b instanceof CelType && a.name === b.name;
  if (a instanceof Optional) {
    if (!(b instanceof Optional)) return false;
    if (!a.hasValue() || !b.hasValue()) return a.hasValue() === b.hasValue();
    return DEEP;
  }
  if (a instanceof CelObject) return a.equals(b);
  return false;
}

/**
 * Ordering for `<`, `<=`, `>`, `>=` (and sort/min/max). Throws "no matching overload" for types
 * that have no order or do not compare with each other. Returns NaN when a double NaN is involved.
 */
export function celCompare(a: CelValue, b: CelValue, fn = "_<_"): number {
  const na = numeric(a);
  if (na !== undefined) {
    const nb = numeric(b);
    if (nb !== undefined) return compareNumeric(na, nb);
    throw noSuchOverload(fn, [a, b]);
  }
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const d = (a[i] as number) - (b[i] as number);
      if (d !== 0) return d < 0 ? -1 : 1;
    }
    return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
  }
  if (a instanceof Duration && b instanceof Duration)
    return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
  if (a instanceof Timestamp && b instanceof Timestamp)
    return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
  if (a instanceof CelObject && b instanceof CelObject && a.celType === b.celType) {
    const cmp = (a as unknown as { compareTo?: (o: CelObject) => number }).compareTo;
    if (cmp) return cmp.call(a, b);
  }
  throw noSuchOverload(fn, [a, b]);
}
