/**
 * JSON Patch as a MutatingAdmissionPolicy applies it: kubernetes staging/src/k8s.io/apiserver/pkg/
 * admission/plugin/policy/mutating/patch/json_patch.go hands the operations to
 * gopkg.in/evanphx/json-patch.v4 (v4.13.0) `Patch.Apply` with the package defaults
 * (SupportNegativeIndices true, no copy size limit). Its rules, which differ from RFC 6902 here and
 * there, are followed to the letter, error texts included:
 *
 * - a pointer is split on "/" and its first token dropped, so "spec/replicas" names the root's
 *   "replicas"; "" is the whole document for `replace` and `test` only;
 * - a map member's `replace` adds it when it is missing; `add` of an existing member replaces it;
 * - list indices may be negative (from the end; for `add`, -1 appends), "-" appends for `add`;
 * - `copy` from a missing map member adds null; `move` removes before it resolves the destination;
 * - a null member is a nil node: a pointer cannot pass through it, and `test` finds it as if it
 *   were missing (it holds only for a `test` without a value); a `test` value null equals an empty
 *   object or list;
 * - an operation without a value adds or sets null.
 *
 * The patch is applied to copies of the containers it changes, never to the object it is given,
 * and gives back the operations that changed something, written so that any RFC 6902 applier
 * replays them: canonical pointers, concrete list indices, a `replace` that added as `add`, a
 * `copy` of nothing as an `add` of null; `test`s and writes of a member's own value left out.
 */
import { numError, parseInt64 } from "../cel/index.ts";
import { setMember } from "../cel/index.ts";
import { copyMap, isObject, type JsonObject, jsonEqual, pointerSegment } from "./json-values.ts";
import { cloneJson } from "../request/json-deep.ts";
import type { JsonPatchOp } from "./types.ts";

/** One operation as the expression gave it: any op name, a path ("" when unset), maybe a value. */
export interface PatchOperation {
  readonly op: string;
  readonly path: string;
  /** Absent when empty: json_patch.go writes `from` only when it is non-empty. */
  readonly from?: string;
  /** Present only when the operation has one (`"value" in op`). */
  readonly value?: unknown;
}

/** A value the patch put somewhere: where it landed (canonical pointer and tokens), and the value. */
export interface Write {
  readonly path: string;
  /** The decoded tokens of the container it landed in. */
  readonly parents: readonly string[];
  /** The member name or list index it landed at. */
  readonly last: string;
  readonly value: unknown;
}

export type PatchOutcome =
  | {
      readonly kind: "applied";
      readonly object: JsonObject;
      readonly ops: JsonPatchOp[];
      /** The values the operations wrote (add, replace, and where move and copy put theirs). */
      readonly writes: readonly Write[];
    }
  /** A `test` failed: json_patch.go leaves the object as it was, without an error. */
  | { readonly kind: "test-failed" }
  /** The evanphx/json-patch error text (json_patch.go prefixes it with "JSON Patch: "). */
  | { readonly kind: "error"; readonly message: string };

type Container = JsonObject | unknown[];

const MISSING = "missing value";
const INVALID_INDEX = "invalid index referenced";

/** decodePatchKey: strings.NewReplacer("~1", "/", "~0", "~"), one pass left to right. */
function decodeKey(k: string): string {
  if (!k.includes("~")) return k;
  let out = "";
  for (let i = 0; i < k.length; i++) {
    const c = k[i] as string;
    const next = k[i + 1];
    if (c === "~" && (next === "1" || next === "0")) {
      out += next === "1" ? "/" : "~";
      i++;
    } else out += c;
  }
  return out;
}

/** strconv.Atoi: the index, or the *NumError's text. */
function atoi(key: string): bigint | string {
  const v = parseInt64(key);
  return typeof v === "bigint" ? v : numError("Atoi", key, v);
}

/** partialArray.get: the index of `key` in a list of `length`, or the error. */
function arrayGet(length: number, key: string): number | string {
  const parsed = atoi(key);
  if (typeof parsed === "string") return parsed;
  let idx = parsed;
  const len = BigInt(length);
  if (idx < 0n) {
    if (idx < -len) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
    idx += len;
  }
  if (idx >= len) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
  return Number(idx);
}

/** partialArray.add: where `key` inserts into a list of `length`, or the error. */
function arrayAdd(length: number, key: string): number | string {
  if (key === "-") return length;
  const parsed = atoi(key);
  if (typeof parsed === "string") return `value was not a proper array index: '${key}': ${parsed}`;
  let idx = parsed;
  const size = BigInt(length + 1);
  if (idx >= size) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
  if (idx < 0n) {
    if (idx < -size) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
    idx += size;
  }
  return Number(idx);
}

/** partialArray.remove: the index `key` removes from a list of `length`, or the error. */
function arrayRemove(length: number, key: string): number | string {
  const parsed = atoi(key);
  if (typeof parsed === "string") return parsed;
  let idx = parsed;
  const len = BigInt(length);
  if (idx >= len) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
  if (idx < 0n) {
    if (idx < -len) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
    idx += len;
  }
  return Number(idx);
}

/** A pointer split as findObject splits it: the decoded tokens after the first. */
interface Parsed {
  readonly tokens: readonly string[];
  /** The pointer is written as the canonical form of its tokens (so it can stand for them). */
  readonly canonical: boolean;
}

/**
 * A policy's mutations name the same few pointers on every request, so their parses are kept. The
 * bound keeps pointers computed from request data (one per list index, say) from growing it forever.
 */
const PARSE_CACHE_SIZE = 512;
const parses = new Map<string, Parsed | null>();

function parse(path: string): Parsed | undefined {
  let p = parses.get(path);
  if (p === undefined) {
    const split = path.split("/");
    if (split.length < 2) p = null;
    else {
      const tokens: string[] = [];
      let canonical = split[0] === "";
      for (let i = 1; i < split.length; i++) {
        const raw = split[i] as string;
        const t = decodeKey(raw);
        if (pointerSegment(t) !== raw) canonical = false;
        tokens.push(t);
      }
      p = { tokens, canonical };
    }
    if (parses.size >= PARSE_CACHE_SIZE) parses.clear();
    parses.set(path, p);
  }
  return p ?? undefined;
}

/** What findObject finds: the container of the pointer's last token, with the pointer made canonical. */
interface Location {
  readonly container: Container;
  /** The last token, decoded. */
  readonly key: string;
  /** The tokens leading to the container: decoded member names and resolved list indices. */
  readonly parents: readonly string[];
  /** The pointer as given, when it is already canonical for `parents` and `key`. */
  readonly path: string | undefined;
}

/** findObject: undefined when the pointer leads nowhere (through a missing member, a null or a scalar). */
function findObject(doc: JsonObject, path: string): Location | undefined {
  const p = parse(path);
  if (p === undefined) return undefined;
  const tokens = p.tokens;
  const last = tokens.length - 1;
  let exact = p.canonical;
  let parents = tokens.slice(0, last);
  let node: Container = doc;
  for (let i = 0; i < last; i++) {
    const part = tokens[i] as string;
    let next: unknown;
    if (Array.isArray(node)) {
      const idx = arrayGet(node.length, part);
      if (typeof idx === "string") return undefined;
      next = node[idx];
      const canon = String(idx);
      if (canon !== part) {
        if (exact) parents = [...parents];
        exact = false;
        parents[i] = canon;
      }
    } else next = Object.hasOwn(node, part) ? node[part] : undefined;
    if (typeof next !== "object" || next === null) return undefined;
    node = next as Container;
  }
  return { container: node, key: tokens[last] as string, parents, path: exact ? path : undefined };
}

/** The canonical pointer to `last` in the location's container. */
function pointer(loc: Location, last: string): string {
  if (loc.path !== undefined && last === loc.key) return loc.path;
  let out = "";
  for (const t of loc.parents) out += `/${pointerSegment(t)}`;
  return `${out}/${pointerSegment(last)}`;
}

/**
 * lazyNode.equal of a document's (non-null) value and a test value: an object or list against the
 * value decoded as one, which a null test value decodes into empty; scalars by their JSON text.
 * Members and elements that are null are nil nodes, equal only to null.
 */
function nodesEqual(a: unknown, b: unknown): boolean {
  if (isObject(a)) {
    if (b !== null && !isObject(b)) return false;
    const y = b ?? {};
    const kx = Object.keys(a);
    if (kx.length !== Object.keys(y).length) return false;
    for (const k of kx) if (!Object.hasOwn(y, k) || !childEqual(a[k], y[k])) return false;
    return true;
  }
  if (Array.isArray(a)) {
    if (b !== null && !Array.isArray(b)) return false;
    const y = b ?? [];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) if (!childEqual(a[i], y[i])) return false;
    return true;
  }
  return a === b;
}

function childEqual(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  return nodesEqual(a, b);
}

/** A value placed at a second spot: copied, so that changing one place never changes the other. */
function cloned(v: unknown): unknown {
  return typeof v === "object" && v !== null ? cloneJson(v) : v;
}

/** The document being patched, copied container by container as operations change them. */
class Patching {
  doc: JsonObject;
  readonly effective: JsonPatchOp[] = [];
  readonly writes: Write[] = [];
  /**
   * Containers this patch made (copies), which later operations may change in place; not kept for
   * a patch of one operation, which writes once.
   */
  private readonly owned: Set<object> | undefined;

  constructor(doc: JsonObject, operations: number) {
    this.doc = doc;
    this.owned = operations > 1 ? new Set() : undefined;
  }

  /** The container at `parents`, copied (with every container above it) unless this patch made it. */
  writable(parents: readonly string[], reshaped: boolean): JsonObject | unknown[] {
    const owned = this.owned;
    if (owned === undefined || !owned.has(this.doc)) {
      this.doc = copyMap(this.doc, reshaped && parents.length === 0);
      owned?.add(this.doc);
    }
    let node: JsonObject | unknown[] = this.doc;
    for (let i = 0; i < parents.length; i++) {
      const t = parents[i] as string;
      const child = (Array.isArray(node) ? node[Number(t)] : node[t]) as JsonObject | unknown[];
      let c = child;
      if (owned === undefined || !owned.has(c)) {
        c = Array.isArray(child) ? [...child] : copyMap(child, reshaped && i === parents.length - 1);
        owned?.add(c);
        if (Array.isArray(node)) node[Number(t)] = c;
        else setMember<unknown>(node, t, c);
      }
      node = c;
    }
    return node;
  }

  /** Sets a member or inserts into a list (con.add); the error text when it cannot. */
  add(loc: Location, value: unknown): { path: string } | { error: string } {
    const c = loc.container;
    let last = loc.key;
    if (Array.isArray(c)) {
      const idx = arrayAdd(c.length, loc.key);
      if (typeof idx === "string") return { error: idx };
      (this.writable(loc.parents, true) as unknown[]).splice(idx, 0, value);
      last = String(idx);
    } else setMember<unknown>(this.writable(loc.parents, true) as JsonObject, loc.key, value);
    const path = pointer(loc, last);
    this.writes.push({ path, parents: loc.parents, last, value });
    return { path };
  }

  /** Removes a member or a list element (con.remove); the error text when it cannot. */
  remove(loc: Location): { path: string } | { error: string } {
    const c = loc.container;
    if (Array.isArray(c)) {
      const idx = arrayRemove(c.length, loc.key);
      if (typeof idx === "string") return { error: idx };
      (this.writable(loc.parents, true) as unknown[]).splice(idx, 1);
      return { path: pointer(loc, String(idx)) };
    }
    if (!Object.hasOwn(c, loc.key))
      return { error: `Unable to remove nonexistent key: ${loc.key}: ${MISSING}` };
    delete (this.writable(loc.parents, true) as JsonObject)[loc.key];
    return { path: pointer(loc, loc.key) };
  }
}

/** con.get: the value (undefined for a missing member) or, for a list, the index error. */
function get(loc: Location): { value: unknown } | { error: string } {
  const c = loc.container;
  if (Array.isArray(c)) {
    const idx = arrayGet(c.length, loc.key);
    return typeof idx === "string" ? { error: idx } : { value: c[idx] };
  }
  return { value: Object.hasOwn(c, loc.key) ? c[loc.key] : undefined };
}

function opValue(op: PatchOperation): unknown {
  return "value" in op ? op.value : null;
}

function add(p: Patching, op: PatchOperation): string | undefined {
  const loc = findObject(p.doc, op.path);
  if (loc === undefined) return `add operation does not apply: doc is missing path: "${op.path}": ${MISSING}`;
  const value = opValue(op);
  const c = loc.container;
  if (isObject(c) && Object.hasOwn(c, loc.key) && jsonEqual(c[loc.key], value)) return undefined;
  const r = p.add(loc, value);
  if ("error" in r) return `error in add for path: '${op.path}': ${r.error}`;
  p.effective.push({ op: "add", path: r.path, value });
  return undefined;
}

function remove(p: Patching, op: PatchOperation): string | undefined {
  const loc = findObject(p.doc, op.path);
  if (loc === undefined)
    return `remove operation does not apply: doc is missing path: "${op.path}": ${MISSING}`;
  const r = p.remove(loc);
  if ("error" in r) return `error in remove for path: '${op.path}': ${r.error}`;
  p.effective.push({ op: "remove", path: r.path });
  return undefined;
}

function replace(p: Patching, op: PatchOperation): string | undefined {
  const value = opValue(op);
  if (op.path === "") {
    // The document itself; evanphx formats the nil error it wraps as %!w(<nil>).
    if (!isObject(value)) return "replace operation value must be object or array: %!w(<nil>)";
    if (!jsonEqual(p.doc, value)) {
      p.doc = value;
      p.effective.push({ op: "replace", path: "", value });
      p.writes.push({ path: "", parents: [], last: "", value });
    }
    return undefined;
  }
  const loc = findObject(p.doc, op.path);
  if (loc === undefined)
    return `replace operation does not apply: doc is missing path: ${op.path}: ${MISSING}`;
  const c = loc.container;
  if (Array.isArray(c)) {
    const idx = arrayGet(c.length, loc.key);
    if (typeof idx === "string")
      return `replace operation does not apply: doc is missing key: ${op.path}: ${MISSING}`;
    if (jsonEqual(c[idx], value)) return undefined;
    (p.writable(loc.parents, false) as unknown[])[idx] = value;
    const path = pointer(loc, String(idx));
    p.effective.push({ op: "replace", path, value });
    p.writes.push({ path, parents: loc.parents, last: String(idx), value });
    return undefined;
  }
  const had = Object.hasOwn(c, loc.key);
  if (had && jsonEqual(c[loc.key], value)) return undefined;
  setMember<unknown>(p.writable(loc.parents, !had) as JsonObject, loc.key, value);
  // A replace that added the member is written as the add it was.
  const path = pointer(loc, loc.key);
  p.effective.push({ op: had ? "replace" : "add", path, value });
  p.writes.push({ path, parents: loc.parents, last: loc.key, value });
  return undefined;
}

function move(p: Patching, op: PatchOperation): string | undefined {
  if (op.from === undefined)
    return `move operation failed to decode from: operation, missing from field: ${MISSING}`;
  const src = findObject(p.doc, op.from);
  if (src === undefined)
    return `move operation does not apply: doc is missing from path: ${op.from}: ${MISSING}`;
  const got = get(src);
  if ("error" in got) return `error in move for path: '${src.key}': ${got.error}`;
  const removed = p.remove(src);
  if ("error" in removed) return `error in move for path: '${src.key}': ${removed.error}`;
  const dst = findObject(p.doc, op.path);
  if (dst === undefined)
    return `move operation does not apply: doc is missing destination path: ${op.path}: ${MISSING}`;
  const added = p.add(dst, got.value);
  if ("error" in added) return `error in move for path: '${op.path}': ${added.error}`;
  p.effective.push({ op: "move", path: added.path, from: removed.path });
  return undefined;
}

function copy(p: Patching, op: PatchOperation): string | undefined {
  if (op.from === undefined)
    return `copy operation failed to decode from: operation, missing from field: ${MISSING}`;
  const src = findObject(p.doc, op.from);
  if (src === undefined)
    return `copy operation does not apply: doc is missing from path: ${op.from}: ${MISSING}`;
  const got = get(src);
  if ("error" in got) return `error in copy for from: '${op.from}': ${got.error}`;
  const dst = findObject(p.doc, op.path);
  if (dst === undefined)
    return `copy operation does not apply: doc is missing destination path: ${op.path}: ${MISSING}`;
  // A copy of a missing member copies a nil node, which is written as null.
  const value = got.value === undefined ? null : cloned(got.value);
  const c = dst.container;
  if (isObject(c) && Object.hasOwn(c, dst.key) && jsonEqual(c[dst.key], value)) return undefined;
  const added = p.add(dst, value);
  if ("error" in added) return `error while adding value during copy: ${added.error}`;
  // Written as the add of what was copied when the source was missing, or when it is a list
  // element whose index a later replay could not resolve the same way.
  p.effective.push(
    got.value === undefined
      ? { op: "add", path: added.path, value }
      : { op: "copy", path: added.path, from: canonicalFrom(src) },
  );
  return undefined;
}

function canonicalFrom(loc: Location): string {
  const c = loc.container;
  if (Array.isArray(c)) return pointer(loc, String(arrayGet(c.length, loc.key)));
  return pointer(loc, loc.key);
}

/** The test operation: true when it holds, else the error text (ErrTestFailed is "test failed"). */
function test(p: Patching, op: PatchOperation): boolean | string {
  const has = "value" in op;
  if (op.path === "") return has && nodesEqual(p.doc, op.value);
  const loc = findObject(p.doc, op.path);
  if (loc === undefined) return `test operation does not apply: is missing path: ${op.path}: ${MISSING}`;
  const got = get(loc);
  if ("error" in got) return `error in test for path: '${op.path}': ${got.error}`;
  // A missing or null member is a nil node: only a test without a value holds for it.
  if (got.value === undefined || got.value === null) return !has;
  return has && nodesEqual(got.value, op.value);
}

/** Applies the operations in order. Never throws. */
export function applyJsonPatch(object: JsonObject, ops: readonly PatchOperation[]): PatchOutcome {
  const p = new Patching(object, ops.length);
  for (const op of ops) {
    let error: string | undefined;
    switch (op.op) {
      case "add":
        error = add(p, op);
        break;
      case "remove":
        error = remove(p, op);
        break;
      case "replace":
        error = replace(p, op);
        break;
      case "move":
        error = move(p, op);
        break;
      case "copy":
        error = copy(p, op);
        break;
      case "test": {
        const held = test(p, op);
        if (held === false) return { kind: "test-failed" };
        if (typeof held === "string") error = held;
        break;
      }
      default:
        error = `Unexpected kind: ${op.op}`;
    }
    if (error !== undefined) return { kind: "error", message: error };
  }
  return {
    kind: "applied",
    object: p.effective.length > 0 ? p.doc : object,
    ops: p.effective,
    writes: p.writes,
  };
}
