/**
 * Reading a value's fields and elements, as `a.b`, `has(a.b)`, `a[k]` and the optional forms
 * (`a.?b`, `a[?k]`) do at run time: the closures call these, and generated code calls them for
 * whatever it does not read inline.
 */
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

/** Field selection on a map-like value; `undefined` when the field is absent. */
export function selectField(v: CelValue, field: string, id: number): CelValue | undefined {
  // JSON maps are read inline by generated code; this is the closures' and the rest's path.
  if (isPlainMap(v)) return plainGet(v, field);
  if (v instanceof CelMap) return v.get(field);
  const err = new CelError(
    v === null ? `no such key: ${field}` : `type '${typeName(v)}' does not support field selection`,
  );
  err.exprId = id;
  throw err;
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

/** `container[key]` on a list or a map; `undefined` when the index or key is absent. */
export function indexValue(container: CelValue, key: CelValue, id: number): CelValue | undefined {
  if (Array.isArray(container)) {
    let i: number;
    if (typeof key === "bigint") i = Number(key);
    else if (key instanceof UInt) i = Number(key.value);
    else if (typeof key === "number" && Number.isInteger(key)) i = key;
    else {
      const err = noSuchOverload("_[_]", [container, key]);
      err.exprId = id;
      throw err;
    }
    if (i < 0 || i >= container.length) return undefined;
    return container[i];
  }
  if (container instanceof CelMap || isPlainMap(container)) return mapGet(container, key);
  const err = noSuchOverload("_[_]", [container, key]);
  err.exprId = id;
  throw err;
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

function indexError(container: CelValue, key: CelValue): CelError {
  if (Array.isArray(container))
    return new CelError(`index out of bounds: ${String(key instanceof UInt ? key.value : key)}`);
  return new CelError(
    `no such key: ${typeof key === "string" ? key : String(key instanceof UInt ? key.value : key)}`,
  );
}

/** The operand of `!_` (and other operators that take only a bool): a bool, or no matching overload. */
export function asBool(v: CelValue, fn: string): boolean {
  if (typeof v !== "boolean") throw noSuchOverload(fn, [v]);
  return v;
}
