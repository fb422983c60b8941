/**
 * Reading a value's fields and elements, as `a.b`, `has(a.b)`, `a[k]` and the optional forms
 * (`a.?b`, `a[?k]`) do at run time: the closures call these, and generated code calls them for
 * whatever it does not read inline.
 */
import { formatFloat } from "../go/strconv.ts";
import { withPosition } from "./errors.ts";
import {
  CelError,
  CelMap,
  type CelValue,
  isPlainMap,
  mapGet,
  noSuchOverload,
  Optional,
  plainGet,
  typeName,
  UInt,
} from "./values.ts";

/**
 * What an optional chain's raw evaluator (`a.?b.?c` read without its Optional wrapper) returns for
 * optional.none().
 */
export const ABSENT: unique symbol = Symbol("absent");

/*
 * Presence tests and strict reads follow cel-go's attribute qualification (interpreter/attributes.go
 * refQualify, as cel-go v0.26 ships in Kubernetes, which never sets EnableErrorOnBadPresenceTest):
 * a presence test (`has(a.b)`, `a.?b`, `a[?k]`, and every select or index after the first `?` of a
 * chain) on a map tests the key, on a list the index (a key that is no valid index is an error),
 * and on any other value (null, bool, number, string, bytes, timestamp, duration, a library object)
 * is false, with no error. A strict read on such a value is `no such key: <key>`.
 */

/**
 * A field selection as a presence test: the field's value, or `undefined` when the field is absent
 * or `v` is neither a map nor a list.
 */
export function selectField(v: CelValue, field: string, id: number): CelValue | undefined {
  // JSON maps are read inline by generated code; this is the closures' and the rest's path.
  if (isPlainMap(v)) return plainGet(v, field);
  if (v instanceof CelMap) return v.get(field);
  if (Array.isArray(v)) withPosition(unsupportedIndex(field), id);
  return undefined;
}

/** `v.field` outside optional chains: a missing field is an error; through an Optional it stays optional. */
export function selectValue(v: CelValue, field: string, id: number): CelValue {
  if (v instanceof Optional) {
    // Selecting through an optional keeps the chain optional: `a.?b.c` is optional.
    if (!v.hasValue()) return v;
    const r = selectField(v.value(), field, id);
    return r === undefined ? Optional.none : Optional.of(r);
  }
  const r = selectField(v, field, id);
  if (r !== undefined) return r;
  const err = new CelError(`no such key: ${field}`);
  err.exprId = id;
  throw err;
}

/** `has(v.field)`. */
export function hasField(v: CelValue, field: string, id: number): boolean {
  if (v instanceof Optional) return v.hasValue() && selectField(v.value(), field, id) !== undefined;
  return selectField(v, field, id) !== undefined;
}

/**
 * `container[key]` as a presence test: the element or the entry, or `undefined` when the index is
 * out of range, the key is absent, or `container` is neither a list nor a map.
 */
export function indexValue(container: CelValue, key: CelValue, id: number): CelValue | undefined {
  if (Array.isArray(container)) {
    const i = listIndex(key);
    if (i === undefined) withPosition(unsupportedIndex(key), id);
    if (i < 0 || i >= container.length) return undefined;
    return container[i];
  }
  if (container instanceof CelMap || isPlainMap(container)) return mapGet(container, key);
  return undefined;
}

/**
 * A list index as cel-go's types.IndexOrError reads it: an int, a uint or a double that converts
 * to an int64 without loss; `undefined` for anything else.
 */
function listIndex(key: CelValue): number | undefined {
  if (typeof key === "bigint") return Number(key);
  if (key instanceof UInt) return key.value <= INT64_MAX ? Number(key.value) : undefined;
  if (typeof key === "number" && Number.isInteger(key) && key >= -(2 ** 63) && key < 2 ** 63) return key;
  return undefined;
}

const INT64_MAX = 2n ** 63n - 1n;

/** cel-go's types.IndexOrError message for a key that is no list index. */
function unsupportedIndex(key: CelValue): CelError {
  return typeof key === "number" || key instanceof UInt
    ? new CelError(`unsupported index value ${goValue(key)} in list`)
    : new CelError(`unsupported index type '${typeName(key)}' in list`);
}

/** `c[k]` outside optional chains: a missing key or index is an error; through an Optional it stays optional. */
export function indexOrError(cv: CelValue, kv: CelValue, id: number): CelValue {
  if (cv instanceof Optional) {
    if (!cv.hasValue()) return cv;
    const r = indexValue(cv.value(), kv, id);
    return r === undefined ? Optional.none : Optional.of(r);
  }
  const r = indexValue(cv, kv, id);
  if (r === undefined) return withPosition(indexError(cv, kv), id);
  return r;
}

/** interpreter/attributes.go resolutionError: `index out of bounds` on a list, else `no such key`. */
function indexError(container: CelValue, key: CelValue): CelError {
  if (Array.isArray(container)) return new CelError(`index out of bounds: ${goValue(key)}`);
  return new CelError(`no such key: ${goValue(key)}`);
}

/** A map key or list index as Go's %v prints the cel-go value in an error message. */
function goValue(key: CelValue): string {
  if (typeof key === "number") return formatFloat(key, "g", -1);
  if (key instanceof UInt) return String(key.value);
  if (typeof key === "string" || typeof key === "bigint" || typeof key === "boolean") return String(key);
  return typeName(key);
}

/** The operand of `!_` (and other operators that take only a bool): a bool, or no matching overload. */
export function asBool(v: CelValue, fn: string, id: number): boolean {
  if (typeof v !== "boolean") withPosition(noSuchOverload(fn, [v]), id);
  return v;
}
