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
import type { ListNode, MapNode, MergeNode, ScalarKind } from "../kube/schemas/index.ts";
import { goType, smdToString, smdValueSharpV, smdValueV } from "./go-format.ts";

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

type Part =
  | { readonly kind: "map"; readonly node: MapNode }
  | { readonly kind: "list"; readonly node: ListNode }
  | { readonly kind: "scalar"; readonly scalar: ScalarKind };

const UNTYPED_SCALAR_PART: Part = Object.freeze({ kind: "scalar", scalar: "untyped" });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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
  switch (n.kind) {
    case "map":
      return { kind: "map", node: n };
    case "list":
      return { kind: "list", node: n };
    case "scalar":
      return { kind: "scalar", scalar: n.scalar };
    case "untyped":
      if (Array.isArray(v)) return { kind: "list", node: n.list };
      if (v === null || v === undefined || isObject(v)) return { kind: "map", node: n.map };
      return UNTYPED_SCALAR_PART;
  }
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
      return t === "number" ? undefined : `expected numeric (int or float), got ${goType(v)}`;
    case "string":
      return t === "string" ? undefined : `expected string, got ${smdValueSharpV(v)}`;
    case "boolean":
      return t === "boolean" ? undefined : `expected boolean, got ${smdValueV(v)}`;
    case "untyped":
      return t === "number" || t === "string" || t === "boolean"
        ? undefined
        : `expected any scalar, got ${smdValueV(v)}`;
  }
}

/** An element's identity in an associative list (a PathElement), or why it has none. */
export type ItemKey =
  | { readonly id: string; readonly text: string }
  | { readonly id?: undefined; readonly error: string };

/** %q of a Go []string: `["a" "b"]`. */
function quotedList(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(" ")}]`;
}

/** keyedAssociativeListItemToPathElement and setItemToPathElement. */
export function itemKey(list: ListNode, item: unknown): ItemKey {
  if (list.keys.length === 0) {
    if (isObject(item)) return { error: "associative list without keys has an element that's a map type" };
    if (Array.isArray(item)) return { error: "not supported: associative list with lists as elements" };
    if (item === null)
      return { error: "associative list without keys has an element that's an explicit null" };
    return { id: JSON.stringify(item), text: `[=${smdToString(item)}]` };
  }
  if (item === null) return { error: "associative list with keys may not have a null element" };
  if (!isObject(item)) return { error: "associative list with keys may not have non-map elements" };
  const pairs: [string, unknown][] = [];
  for (const name of list.keys) {
    if (Object.hasOwn(item, name)) {
      pairs.push([name, item[name]]);
      continue;
    }
    const element = mapPart(list.element());
    if (element === undefined)
      return {
        error: `couldn't find default value for ${name}: associative list may not have non-map types`,
      };
    const def = element.fieldDefault(name);
    if (def !== undefined && def !== null) pairs.push([name, def]);
  }
  if (pairs.length === 0)
    return {
      error: `associative list with keys has an element that omits all key fields ${quotedList(list.keys)} (and doesn't have default values for any key fields)`,
    };
  // value.FieldList.Sort: by name, so the key reads the same whatever order the schema lists them in.
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return {
    id: JSON.stringify(pairs),
    text: `[${pairs.map(([k, v]) => `${k}=${smdToString(v)}`).join(",")}]`,
  };
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

function validateList(list: ListNode, v: unknown[], path: string, r: Reading): void {
  const seen = list.relationship === "associative" ? new Set<string>() : undefined;
  for (let i = 0; i < v.length; i++) {
    const child = v[i];
    let pe = `[${i}]`;
    if (seen !== undefined) {
      const key = itemKey(list, child);
      if (key.id === undefined) {
        r.errs.push({ path, message: `element ${i}: ${key.error}` });
        // Without its PathElement nothing deeper can be reported: the list is not looked at further.
        return;
      }
      if (seen.has(key.id)) r.errs.push({ path, message: `duplicate entries for key ${key.text}` });
      seen.add(key.id);
      pe = key.text;
    }
    validate(list.element(), child, path + pe, r);
  }
}

function validateMap(map: MapNode, v: Record<string, unknown>, path: string, r: Reading): void {
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const node = memberNode(map, key);
    if (node === undefined) {
      if (r.decoded) continue;
      r.errs.push({ path: path + fieldPe(key), message: "field not declared in schema" });
      // validate.go stops walking this map at its first undeclared field.
      return;
    }
    validate(node, v[key], path + fieldPe(key), r);
  }
}

function validate(n: MergeNode, v: unknown, path: string, r: Reading): void {
  const part = partFor(n, v);
  if (part.kind === "scalar") {
    const e = r.decoded ? undefined : scalarError(part.scalar, v);
    if (e !== undefined) r.errs.push({ path, message: e });
  } else if (part.kind === "map") {
    if (isObject(v)) validateMap(part.node, v, path, r);
    else if (v !== null && !r.decoded) r.errs.push({ path, message: `expected map, got ${smdValueV(v)}` });
  } else if (Array.isArray(v)) validateList(part.node, v, path, r);
  else if (v !== null && !r.decoded) r.errs.push({ path, message: `expected list, got ${smdValueV(v)}` });
}

/**
 * TypedValue.Validate without options: the errors that keep `v` from being a value of `root`.
 * `decoded`: `v` is the object a request brought (see Reading), not one an expression built.
 */
export function typedErrors(root: MergeNode, v: unknown, decoded = false): TypedError[] {
  const r: Reading = { errs: [], decoded };
  validate(root, v, "", r);
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
