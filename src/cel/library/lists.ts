/**
 * List functions of the Kubernetes admission environment:
 *
 * - Kubernetes' own lists library (k8s.io/apiserver/pkg/cel/library/lists.go): isSorted, sum, min,
 *   max, indexOf, lastIndexOf; and, from version 1 (1.37), includes.
 * - cel-go's lists extension (ext/lists.go) at version 3: slice, flatten, distinct, reverse, sort,
 *   lists.range, and `@sortByAssociatedKeys`, which the `sortBy` macro expands to.
 *
 * Element types are not tracked at compile time, so where cel-go declares one overload per element
 * type and picks among them at run time by the first element (sum's zero, min of an empty list),
 * one overload here looks at the first element itself.
 *
 * Costs follow cel-go's runtime cost tracking. Kubernetes charges isSorted, sum, min, max, indexOf
 * and lastIndexOf one traversal of the list (library/cost.go); the lists extension charges the size
 * of what it builds plus 10 for the new list (version 3 trackers). Either figure replaces the base
 * cost of 1, so the declared costs here are that figure minus 1.
 */
import { celCompare, celEquals } from "../runtime/equality.ts";
import {
  CelError,
  CelObject,
  type CelList,
  type CelValue,
  checkInt,
  checkUint,
  Duration,
  isMap,
  mapEntries,
  noSuchOverload,
  Timestamp,
  typeName,
  UInt,
} from "../runtime/values.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

const STRING_TRAVERSAL_COST_FACTOR = 0.1;
const LIST_CREATE_BASE_COST = 10;

function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/** Kubernetes' traversalCost: 0.1 per byte of strings and bytes, 1 per other leaf, through lists and maps. */
export function traversalCost(v: CelValue): number {
  if (typeof v === "string") return Math.floor(utf8Length(v) * STRING_TRAVERSAL_COST_FACTOR);
  if (v instanceof Uint8Array) return Math.floor(v.length * STRING_TRAVERSAL_COST_FACTOR);
  if (Array.isArray(v)) {
    let cost = 0;
    for (const e of v as CelList) cost += traversalCost(e);
    return cost;
  }
  if (v !== null && isMap(v)) {
    let cost = 0;
    for (const [k, e] of mapEntries(v)) cost += traversalCost(k) + traversalCost(e);
    return cost;
  }
  return 1;
}

/** The types cel-go can order (traits.Comparer), plus library types that define an order. */
function isComparable(v: CelValue): boolean {
  switch (typeof v) {
    case "bigint":
    case "number":
    case "string":
    case "boolean":
      return true;
    default:
      if (v instanceof UInt || v instanceof Uint8Array || v instanceof Duration || v instanceof Timestamp)
        return true;
      return (
        v instanceof CelObject && typeof (v as unknown as { compareTo?: unknown }).compareTo === "function"
      );
  }
}

/**
 * cel-go's `Compare`, where a failure (values of unrelated types, NaN) is an error value that the
 * Kubernetes functions simply do not act on; undefined stands for that here.
 */
function compareOrUndefined(a: CelValue, b: CelValue): number | undefined {
  try {
    const c = celCompare(a, b);
    return Number.isNaN(c) ? undefined : c;
  } catch (e) {
    if (e instanceof CelError) return undefined;
    throw e;
  }
}

function requireComparable(fnName: string, v: CelValue): void {
  if (!isComparable(v)) throw noSuchOverload(fnName, [v]);
}

// ---------------------------------------------------------------------------------------------
// Kubernetes' lists library

function isSorted(list: CelList): boolean {
  for (let i = 0; i < list.length; i++) {
    const next = list[i] as CelValue;
    requireComparable("isSorted", next);
    if (i > 0 && compareOrUndefined(list[i - 1] as CelValue, next) === 1) return false;
  }
  return true;
}

function zeroLike(first: CelValue | undefined): CelValue {
  if (first === undefined || typeof first === "bigint") return 0n;
  if (typeof first === "number") return 0;
  if (first instanceof UInt) return new UInt(0n);
  if (first instanceof Duration) return new Duration(0n);
  throw noSuchOverload("sum", [[first]]);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function add(acc: CelValue, next: CelValue): CelValue {
  if (typeof acc === "bigint" && typeof next === "bigint") return checkInt(acc + next);
  if (typeof acc === "number" && typeof next === "number") return acc + next;
  if (acc instanceof UInt && next instanceof UInt) return checkUint(acc.value + next.value);
  if (acc instanceof Duration && next instanceof Duration) {
    const nanos = acc.nanos + next.nanos;
    if (nanos < INT64_MIN || nanos > INT64_MAX) throw new CelError("integer overflow");
    return new Duration(nanos);
  }
  throw noSuchOverload("_+_", [acc, next]);
}

/** Starts from the zero of the first element's type (int for an empty list), as cel-go's dispatch does. */
function sum(list: CelList): CelValue {
  let acc = zeroLike(list[0]);
  for (const v of list) acc = add(acc, v);
  return acc;
}

function extreme(name: "min" | "max", list: CelList): CelValue {
  // cel-go replaces the running result when Compare gives 1 (min) or -1 (max); an error result
  // (unrelated types, NaN) leaves it as it is.
  const prefer = name === "min" ? 1 : -1;
  if (list.length === 0) throw new CelError(`${name} called on empty list`);
  let result = list[0] as CelValue;
  requireComparable(name, result);
  for (let i = 1; i < list.length; i++) {
    const next = list[i] as CelValue;
    requireComparable(name, next);
    if (compareOrUndefined(result, next) === prefer) result = next;
  }
  return result;
}

function indexOf(list: CelList, item: CelValue): bigint {
  for (let i = 0; i < list.length; i++) if (celEquals(list[i] as CelValue, item)) return BigInt(i);
  return -1n;
}

function lastIndexOf(list: CelList, item: CelValue): bigint {
  for (let i = list.length - 1; i >= 0; i--) if (celEquals(list[i] as CelValue, item)) return BigInt(i);
  return -1n;
}

/** lists.go includes (version 1): a list holds the item, or any other receiver equals it. */
function includes(target: CelValue, item: CelValue): boolean {
  if (Array.isArray(target)) return (target as CelList).some((e) => celEquals(e, item));
  return celEquals(target, item);
}

const traversalBeyondBase = (list: CelList): number => traversalCost(list) - 1;

export const kubernetesListsLibrary: Library = {
  name: "kubernetes.lists",
  availability: "kubernetes",
  functions: [
    fn("isSorted", memberFn("list_is_sorted_bool", ["list"], "bool", isSorted, traversalBeyondBase)),
    fn("sum", memberFn("list_sum", ["list"], "dyn", sum, traversalBeyondBase)),
    fn(
      "min",
      memberFn("list_min", ["list"], "dyn", (l: CelList) => extreme("min", l), traversalBeyondBase),
    ),
    fn(
      "max",
      memberFn("list_max", ["list"], "dyn", (l: CelList) => extreme("max", l), traversalBeyondBase),
    ),
    fn("indexOf", memberFn("list_a_index_of_int", ["list", "dyn"], "int", indexOf, traversalBeyondBase)),
    fn(
      "lastIndexOf",
      memberFn("list_a_last_index_of_int", ["list", "dyn"], "int", lastIndexOf, traversalBeyondBase),
    ),
    // Version 1 (1.37); which releases have it is the checker's to say. cost.go charges one traversal
    // of the receiver, whatever it is.
    fn(
      "includes",
      memberFn(
        "list_includes_dyn_dyn",
        ["dyn", "dyn"],
        "bool",
        includes,
        (t: CelValue) => traversalCost(t) - 1,
      ),
    ),
  ],
};

// ---------------------------------------------------------------------------------------------
// cel-go's lists extension

/** cel-go's trackAllocatingListCall: the result's size times a factor, plus the list allocation. */
function allocatingCost(size: number, factor: number): number {
  return Math.floor(size * factor) + LIST_CREATE_BASE_COST;
}

/** Sorting and distinct: quadratic in the list, a little more for strings and bytes. */
function selfCompareCost(list: CelList): number {
  const first = list[0];
  const factor =
    first !== undefined && (typeof first === "string" || first instanceof Uint8Array)
      ? 2 + STRING_TRAVERSAL_COST_FACTOR
      : 2;
  return allocatingCost(list.length * list.length, factor);
}

function slice(list: CelList, start: bigint, end: bigint): CelList {
  if (start < 0n || end < 0n)
    throw new CelError(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end) {
    throw new CelError(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  }
  if (BigInt(list.length) < end)
    throw new CelError(`cannot slice(${start}, ${end}), list is length ${list.length}`);
  return list.slice(Number(start), Number(end));
}

function flatten(list: CelList, depth: bigint): CelList {
  if (depth < 0n) throw new CelError("level must be non-negative");
  const out: CelValue[] = [];
  const walk = (l: CelList, level: bigint) => {
    for (const v of l) {
      if (Array.isArray(v) && level > 0n) walk(v as CelList, level - 1n);
      else out.push(v);
    }
  };
  walk(list, depth);
  return out;
}

function distinct(list: CelList): CelList {
  const out: CelValue[] = [];
  for (const v of list) if (!out.some((u) => celEquals(v, u))) out.push(v);
  return out;
}

/**
 * Orders `list` by the keys at the same positions. The keys must all be of one comparable type.
 * Keys that compare equal keep their relative order; Go's sort.Slice (which cel-go uses) keeps it
 * too for up to 12 elements, and is unspecified beyond.
 */
function sortByAssociatedKeys(list: CelList, keys: CelList): CelList {
  if (list.length !== keys.length) {
    throw new CelError(
      `@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got ${list.length} and ${keys.length} elements respectively`,
    );
  }
  if (list.length === 0) return list;
  const first = keys[0] as CelValue;
  if (!isComparable(first)) throw new CelError("list elements must be comparable");
  const type = typeName(first);
  for (const k of keys) if (typeName(k) !== type) throw new CelError("list elements must have the same type");
  const order = keys.map((_, i) => i);
  order.sort((i, j) => compareOrUndefined(keys[i] as CelValue, keys[j] as CelValue) ?? 0);
  return order.map((i) => list[i] as CelValue);
}

const MAX_RANGE_SIZE = 10_000_000n;

/**
 * cel-go v0.26's genRange (ext/lists.go), the one of every release celgate models (1.34 to 1.36):
 * the integers from 0 while below n, so a negative size gives an empty list (cel-go v0.29, in
 * Kubernetes 1.37, refuses it). The maximum is v0.29's and stays for every release: v0.26 has none
 * and would build the list until memory ran out, before the cost limit looked.
 */
function range(n: bigint): CelList {
  if (n > MAX_RANGE_SIZE)
    throw new CelError(`lists.range: size ${n} exceeds maximum allowed (${MAX_RANGE_SIZE})`);
  const out: bigint[] = [];
  for (let i = 0n; i < n; i++) out.push(i);
  return out;
}

export const celListsLibrary: Library = {
  name: "cel.lib.ext.lists",
  availability: "kubernetes",
  functions: [
    fn(
      "slice",
      memberFn("list_slice", ["list", "int", "int"], "list", slice, (_l: CelList, s: bigint, e: bigint) =>
        allocatingCost(e > s ? Number(e - s) : 0, 1),
      ),
    ),
    fn(
      "flatten",
      memberFn(
        "list_flatten",
        ["list"],
        "list",
        (l: CelList) => flatten(l, 1n),
        (l: CelList) => allocatingCost(l.length, 1),
      ),
      memberFn("list_flatten_int", ["list", "int"], "list", flatten, (l: CelList, depth: bigint) =>
        allocatingCost(l.length, Number(depth)),
      ),
    ),
    fn("distinct", memberFn("list_distinct", ["list"], "list", distinct, selfCompareCost)),
    fn(
      "reverse",
      memberFn(
        "list_reverse",
        ["list"],
        "list",
        (l: CelList) => [...l].reverse(),
        (l: CelList) => allocatingCost(l.length, 1),
      ),
    ),
    fn(
      "sort",
      memberFn("list_sort", ["list"], "list", (l: CelList) => sortByAssociatedKeys(l, l), selfCompareCost),
    ),
    fn(
      "@sortByAssociatedKeys",
      globalFn(
        "list_sortByAssociatedKeys",
        ["list", "list"],
        "list",
        sortByAssociatedKeys,
        (_l: CelList, keys: CelList) => selfCompareCost(keys),
      ),
    ),
    fn(
      "lists.range",
      globalFn("lists_range", ["int"], "list", range, (n: bigint) =>
        allocatingCost(n > 0n ? Number(n) : 0, 1),
      ),
    ),
  ],
};
