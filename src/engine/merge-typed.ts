/**
 * Reading a JSON value as a typed value of a kind's schema, as structured-merge-diff does before a
 * MutatingAdmissionPolicy merges an ApplyConfiguration (sigs.k8s.io/structured-merge-diff/v6
 * typed/validate.go, typed/helpers.go, fieldpath/element.go; kubernetes staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/policy/mutating/patch/smd.go ObjectToTyped and validatePatch):
 *
 * - `typedErrors`: what makes a value not of its type — a field the schema does not declare, a
 *   scalar of the wrong kind, a map or list where the other is declared, an element of a keyed list
 *   that is not a map or has none of its keys, a set element that is a map, a list or null, and two
 *   elements with the same key (no `AllowDuplicates`: the MAP plugin passes none, for the
 *   ApplyConfiguration and for the object it is applied to alike).
 * - `atomicPaths`: the atomic maps, structs and lists an ApplyConfiguration sets, which the plugin
 *   refuses to merge into (findAtomics).
 * - `itemKey`: an element's identity in a set or keyed list, with schema defaults for keys left out.
 *
 * A node's atom is resolved from the value as deduceAtom does: an untyped node takes the part that
 * fits the value, and a value that fits no part (null among them) gets the whole atom, whose map
 * part handleAtom tries first.
 */
import type { ListNode, MapNode, MergeNode, ScalarKind, ScalarNode } from "../kube/schemas/index.ts";
import { goType, smdToString, smdValueSharpV, smdValueV } from "./go-format.ts";
import { stringifyJson } from "../request/json-deep.ts";
import { isJsonNumber, isJsonObject } from "../yaml/json-numbers.ts";

/** One of SMD's ValidationErrors: the path of PathElement strings down to the value, and what is wrong. */
export interface TypedError {
  readonly path: string;
  readonly message: string;
}

/** ValidationErrors.Error(): one error as `path: message`, several as an indented list. */
export function typedErrorsText(errs: readonly TypedError[]): string {
  const one = (e: TypedError) => (e.path === "" ? e.message : `${e.path}: ${e.message}`);
  if (errs.length === 1) return one(errs[0] as TypedError);
  return ["errors:", ...errs.map((e) => `  ${one(e)}`)].join("\n");
}

/** The part of an atom that handles a value: the node itself for a typed node. */
export type Part = MapNode | ListNode | ScalarNode;

const UNTYPED_SCALAR: ScalarNode = Object.freeze({ kind: "scalar", scalar: "untyped" });

function isObject(v: unknown): v is Record<string, unknown> {
  return isJsonObject(v);
}

/** The map part of a node's atom, if it has one. */
export function mapPart(n: MergeNode): MapNode | undefined {
  return n.kind === "map" ? n : n.kind === "untyped" ? n.map : undefined;
}

/** The list part of a node's atom, if it has one. */
export function listPart(n: MergeNode): ListNode | undefined {
  return n.kind === "list" ? n : n.kind === "untyped" ? n.list : undefined;
}

/**
 * deduceAtom then handleAtom: the part of `n` that handles `v`. A typed node has one part, which
 * handles every value (a mismatch is reported there); an untyped node picks by the value's shape,
 * and null takes the map part.
 */
export function partFor(n: MergeNode, v: unknown): Part {
  if (n.kind !== "untyped") return n;
  if (Array.isArray(v)) return n.list;
  if (v === null || v === undefined || isObject(v)) return n.map;
  return UNTYPED_SCALAR;
}

/** The node of a map's key: its field, else the element type; undefined where neither exists. */
export function memberNode(m: MapNode, key: string): MergeNode | undefined {
  return m.field(key) ?? m.elements();
}

/** validateScalar: undefined when `v` is a value of the scalar kind (null always is). */
export function scalarError(kind: ScalarKind, v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  const t = typeof v;
  switch (kind) {
    case "numeric":
      return isJsonNumber(v) ? undefined : `expected numeric (int or float), got ${goType(v)}`;
    case "string":
      return t === "string" ? undefined : `expected string, got ${smdValueSharpV(v)}`;
    case "boolean":
      return t === "boolean" ? undefined : `expected boolean, got ${smdValueV(v)}`;
    case "untyped":
      return isJsonNumber(v) || t === "string" || t === "boolean"
        ? undefined
        : `expected any scalar, got ${smdValueV(v)}`;
  }
}

/**
 * An element's identity in an associative list (its PathElement, as a string to compare within
 * one list), or why it has none.
 */
export type ItemKey = string | { readonly error: string };

/** %q of a Go []string: `["a" "b"]`. */
function quotedList(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(" ")}]`;
}

/** A keyed list's key names sorted as value.FieldList.Sort sorts them, so a key reads one way. */
const sortedKeys = new WeakMap<ListNode, readonly string[]>();

function keysOf(list: ListNode): readonly string[] {
  let keys = sortedKeys.get(list);
  if (keys === undefined) {
    keys = [...list.keys].sort();
    sortedKeys.set(list, keys);
  }
  return keys;
}

/** The value of key `name` in `item`: its own, else the schema default; undefined when neither. */
function keyValue(list: ListNode, item: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(item, name)) return item[name];
  const element = mapPart(list.element());
  const def = element?.fieldDefault(name);
  return def === null ? undefined : def;
}

/** keyedAssociativeListItemToPathElement and setItemToPathElement. */
export function itemKey(list: ListNode, item: unknown): ItemKey {
  if (list.keys.length === 0) {
    if (isObject(item)) return { error: "associative list without keys has an element that's a map type" };
    if (Array.isArray(item)) return { error: "not supported: associative list with lists as elements" };
    if (item === null)
      return { error: "associative list without keys has an element that's an explicit null" };
    return stringifyJson(item);
  }
  if (item === null) return { error: "associative list with keys may not have a null element" };
  if (!isObject(item)) return { error: "associative list with keys may not have non-map elements" };
  const keys = keysOf(list);
  // The common key: one name with a string value, which is its own identity.
  if (keys.length === 1) {
    const v = Object.hasOwn(item, keys[0] as string) ? item[keys[0] as string] : undefined;
    if (typeof v === "string" && !v.startsWith("\u0000")) return v;
  }
  let id = "\u0000";
  let found = false;
  for (const name of keys) {
    if (!Object.hasOwn(item, name) && mapPart(list.element()) === undefined)
      return {
        error: `couldn't find default value for ${name}: associative list may not have non-map types`,
      };
    const v = keyValue(list, item, name);
    // A key with neither value nor default is left out: a key list where it is set is another element.
    if (v === undefined) continue;
    found = true;
    id += `${name}\u0000${stringifyJson(v)}\u0001`;
  }
  if (!found)
    return {
      error: `associative list with keys has an element that omits all key fields ${quotedList(list.keys)} (and doesn't have default values for any key fields)`,
    };
  return id;
}

/** The PathElement string of an element whose key was read (`[name="a"]`, `[=x]`), for messages. */
export function itemKeyText(list: ListNode, item: unknown): string {
  if (list.keys.length === 0) return `[=${smdToString(item)}]`;
  const parts: string[] = [];
  for (const name of keysOf(list)) {
    const v = keyValue(list, item as Record<string, unknown>, name);
    if (v !== undefined) parts.push(`${name}=${smdToString(v)}`);
  }
  return `[${parts.join(",")}]`;
}

/** ".name": a field's PathElement string. */
function fieldPe(key: string): string {
  return `.${key}`;
}

/**
 * What to report. The object a request brings has been decoded into its Go type already: a field
 * the type does not declare was dropped (or the request refused) and a wrong type refused, before
 * admission, so only what decoding lets through (duplicate keys, elements without keys) is looked
 * for in it.
 */
interface Reading {
  readonly errs: TypedError[];
  readonly decoded: boolean;
}

/**
 * WithLazyPrefix: the errors a child added (from `from` on) get the child's PathElement in front.
 * Callers check that there are some before they build the PathElement.
 */
function prefixed(r: Reading, from: number, p: string): void {
  for (let i = from; i < r.errs.length; i++) {
    const e = r.errs[i] as TypedError;
    r.errs[i] = { path: p + e.path, message: e.message };
  }
}

/** Whether a value can hold nothing decoding lets through wrong (a scalar or null). */
function leafOf(v: unknown): boolean {
  return typeof v !== "object" || v === null;
}

/**
 * Whether values of a node can hold a set or keyed list, the one thing a decoded object can have
 * wrong: the other subtrees of a decoded object are not walked. Worked out once per node; a node
 * met again on its own path (a recursive schema) counts as holding one.
 */
const holds = new WeakMap<MergeNode, boolean>();

function holdsAssociative(n: MergeNode): boolean {
  let h = holds.get(n);
  if (h !== undefined) return h;
  holds.set(n, true);
  h = false;
  if (n.kind === "list") h = n.relationship === "associative" || holdsAssociative(n.element());
  else if (n.kind === "untyped") h = holdsAssociative(n.list) || holdsAssociative(n.map);
  else if (n.kind === "map") {
    const el = n.elements();
    h = el !== undefined && holdsAssociative(el);
    for (const f of n.fields) {
      if (h) break;
      const node = n.field(f);
      h = node !== undefined && holdsAssociative(node);
    }
  }
  holds.set(n, h);
  return h;
}

function validateList(list: ListNode, v: unknown[], r: Reading): void {
  // What decoding lets through is only a repeated key (an element that is no map, or has no key,
  // does not decode): a decoded list of one element is not looked at for keys.
  const associative = list.relationship === "associative";
  const keyed = associative && !(r.decoded && v.length < 2);
  const seen = keyed && v.length > 1 ? new Set<string>() : undefined;
  for (let i = 0; i < v.length; i++) {
    const child = v[i];
    if (keyed) {
      const key = itemKey(list, child);
      if (typeof key !== "string") {
        r.errs.push({ path: "", message: `element ${i}: ${key.error}` });
        // Without its PathElement nothing deeper can be reported: the list is not looked at further.
        return;
      }
      if (seen?.has(key))
        r.errs.push({ path: "", message: `duplicate entries for key ${itemKeyText(list, child)}` });
      seen?.add(key);
    }
    if (r.decoded && (leafOf(child) || !holdsAssociative(list.element()))) continue;
    const from = r.errs.length;
    validate(list.element(), child, r);
    if (r.errs.length > from) prefixed(r, from, associative ? itemKeyText(list, child) : `[${i}]`);
  }
}

function validateMap(map: MapNode, v: Record<string, unknown>, r: Reading): void {
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const value = v[key];
    if (r.decoded && leafOf(value)) continue;
    const node = memberNode(map, key);
    if (node === undefined || (r.decoded && !holdsAssociative(node))) {
      if (r.decoded) continue;
      r.errs.push({ path: fieldPe(key), message: "field not declared in schema" });
      // validate.go stops walking this map at its first undeclared field.
      return;
    }
    const from = r.errs.length;
    validate(node, value, r);
    if (r.errs.length > from) prefixed(r, from, fieldPe(key));
  }
}

function validate(n: MergeNode, v: unknown, r: Reading): void {
  const part = partFor(n, v);
  if (part.kind === "scalar") {
    const e = r.decoded ? undefined : scalarError(part.scalar, v);
    if (e !== undefined) r.errs.push({ path: "", message: e });
  } else if (part.kind === "map") {
    if (isObject(v)) validateMap(part, v, r);
    else if (v !== null && !r.decoded)
      r.errs.push({ path: "", message: `expected map, got ${smdValueV(v)}` });
  } else if (Array.isArray(v)) validateList(part, v, r);
  else if (v !== null && !r.decoded) r.errs.push({ path: "", message: `expected list, got ${smdValueV(v)}` });
}

/**
 * TypedValue.Validate without options: the errors that keep `v` from being a value of `root`.
 * `decoded`: `v` is the object a request brought (see Reading), not one an expression built.
 */
export function typedErrors(root: MergeNode, v: unknown, decoded = false): TypedError[] {
  const r: Reading = { errs: [], decoded };
  validate(root, v, r);
  return r.errs;
}

/**
 * findAtomics: the path of every atomic map, struct or list `v` sets, parents before what they
 * hold. It looks at the node's own parts, not at one deduced from the value, and goes on into the
 * declared fields of an atomic struct and the elements of an atomic list, which it reports too.
 */
export function atomicPaths(n: MergeNode, v: unknown, path = "", out: string[] = []): string[] {
  const map = mapPart(n);
  if (map !== undefined && isObject(v)) {
    if (map.relationship === "atomic") out.push(path);
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      const field = map.field(key);
      if (field !== undefined) atomicPaths(field, v[key], path + fieldPe(key), out);
    }
  }
  const list = listPart(n);
  if (list !== undefined && Array.isArray(v)) {
    if (list.relationship === "atomic") out.push(path);
    for (let i = 0; i < v.length; i++) atomicPaths(list.element(), v[i], `${path}[${i}]`, out);
  }
  return out;
}
