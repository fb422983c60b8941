/**
 * Optional values (cel-go's OptionalTypes, which Kubernetes enables): constructors and accessors.
 * The `a.?b`, `m[?k]`, `[?x]` and `{?k: v}` syntax and the `optMap`/`optFlatMap` macros are
 * handled by syntax/parse.ts and the planner; these are the functions they and users call. `or`
 * and `orValue` are declared here but evaluated by the planner (plan/optional.ts planOptionalAccessor),
 * as cel-go evaluates them: short-circuiting, and passing a non-optional receiver through.
 *
 * Kubernetes enables the library without a version (`cel.OptionalTypes()`), so it gets the newest
 * of the cel-go it ships: version 2 since cel-go v0.23 (Kubernetes 1.33), which adds `first`,
 * `last`, `optional.unwrap` and `unwrapOpt` on lists. None has a cost of its own in Kubernetes'
 * library/cost.go or cel-go's runtimecost.go, so each costs the base 1 of a call.
 */
import { celEquals } from "../runtime/equality.ts";
import {
  CelError,
  CelMap,
  type CelList,
  type CelValue,
  Duration,
  isPlainMap,
  type JsonMap,
  mapEntries,
  noSuchOverload,
  Optional,
  Timestamp,
  UInt,
} from "../runtime/values.ts";
import { describe } from "./strings.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

/** Whether a value is its type's zero value, for `optional.ofNonZeroValue`. */
function isZero(v: CelValue): boolean {
  if (v === null || v === false || v === 0n || v === 0 || v === "") return true;
  if (v instanceof UInt) return v.value === 0n;
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length === 0;
  if (v instanceof CelMap) return v.size === 0;
  if (isPlainMap(v)) return Object.keys(v).length === 0;
  if (v instanceof Duration || v instanceof Timestamp) return v.nanos === 0n;
  return false;
}

/**
 * The present values of a list of optionals (cel-go cel/library.go optUnwrap); an element that is
 * not an optional at all (a `dyn` list) is an error with Go's %v of the element.
 */
function unwrap(list: CelList): CelList {
  const out: CelValue[] = [];
  for (const e of list) {
    if (!(e instanceof Optional)) throw new CelError(`value ${describe(e)} is not optional`);
    if (e.hasValue()) out.push(e.value());
  }
  return out;
}

export const optionalLibrary: Library = {
  name: "optional",
  availability: "kubernetes",
  functions: [
    fn(
      "optional.of",
      globalFn("optional_of", ["dyn"], "optional_type", (v: CelValue) => Optional.of(v)),
    ),
    fn(
      "optional.none",
      globalFn("optional_none", [], "optional_type", () => Optional.none),
    ),
    fn(
      "optional.ofNonZeroValue",
      globalFn("optional_ofNonZeroValue", ["dyn"], "optional_type", (v: CelValue) =>
        isZero(v) ? Optional.none : Optional.of(v),
      ),
    ),
    fn(
      "hasValue",
      memberFn("optional_hasValue", ["optional_type"], "bool", (o: Optional) => o.hasValue()),
    ),
    fn(
      "value",
      memberFn("optional_value", ["optional_type"], "dyn", (o: Optional) => o.value()),
    ),
    fn(
      "orValue",
      memberFn("optional_orValue_value", ["optional_type", "dyn"], "dyn", (o: Optional, d: CelValue) =>
        o.hasValue() ? o.value() : d,
      ),
    ),
    fn(
      "or",
      memberFn(
        "optional_or_optional",
        ["optional_type", "optional_type"],
        "optional_type",
        (o: Optional, other: Optional) => (o.hasValue() ? o : other),
      ),
    ),
    // Version 2 (cel-go v0.23, Kubernetes 1.33).
    fn(
      "first",
      memberFn("list_first", ["list"], "optional_type", (l: CelList) =>
        l.length === 0 ? Optional.none : Optional.of(l[0] as CelValue),
      ),
    ),
    fn(
      "last",
      memberFn("list_last", ["list"], "optional_type", (l: CelList) =>
        l.length === 0 ? Optional.none : Optional.of(l[l.length - 1] as CelValue),
      ),
    ),
    fn("optional.unwrap", globalFn("optional_unwrap", ["list"], "list", unwrap)),
    fn("unwrapOpt", memberFn("optional_unwrapOpt", ["list"], "list", unwrap)),
  ],
};

/** Helpers the macro expansions call; their names start with `@` so users cannot call them. */
export const internalLibrary: Library = {
  name: "internal",
  availability: "kubernetes",
  functions: [
    fn(
      "@mapInsert",
      globalFn(
        "map_insert_key_value",
        ["map", "dyn", "dyn"],
        "map",
        (m: CelMap, k: CelValue, v: CelValue) => {
          if (
            !(typeof k === "string" || typeof k === "bigint" || typeof k === "boolean" || k instanceof UInt)
          )
            throw new CelError(`unsupported map key type: ${String(k)}`);
          if (!m.set(k, v)) throw new CelError(`insert failed: key ${String(k)} already exists`);
          return m;
        },
      ),
      globalFn("map_insert_map", ["map", "map"], "map", (m: CelMap, entry: CelMap | JsonMap) => {
        for (const [k, v] of [...mapEntries(entry)]) {
          if (m.has(k)) throw new CelError(`insert failed: key ${String(k)} already exists`);
          m.set(k, v);
        }
        return m;
      }),
    ),
    fn(
      "@in",
      globalFn(
        "in_dyn",
        ["dyn", "dyn"],
        "bool",
        (x: CelValue, c: CelValue) => {
          if (Array.isArray(c)) {
            // A string or bool equals only the same string or bool, so strict identity decides.
            if (typeof x === "string" || typeof x === "boolean") return c.includes(x);
            return c.some((e) => celEquals(x, e));
          }
          if (c instanceof CelMap) return c.has(x);
          if (isPlainMap(c)) return typeof x === "string" && Object.hasOwn(c, x);
          throw noSuchOverload("@in", [x, c]);
        },
        // cel-go charges a list membership test one unit per element (beyond the call's base cost).
        (_x: CelValue, c: CelValue) => (Array.isArray(c) ? Math.max(0, c.length - 1) : 0),
      ),
    ),
  ],
};
