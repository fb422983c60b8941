/**
 * Applies one mutation's result to the working object: a list of JSONPatch operations (applied
 * and validated with fast-json-patch), or an ApplyConfiguration object merged with server-side
 * apply semantics — maps merge, lists of keyed items (containers by name, ports by containerPort
 * and protocol, ...) merge by key, every other list and every scalar is replaced, null removes.
 */
import fastJsonPatch from "fast-json-patch";
import { type CelValue, setMember, toJson } from "../cel/index.ts";
import type { PatchType } from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";
import type { JsonPatchOp } from "./types.ts";

type JsonObject = Record<string, unknown>;

const OPS: ReadonlySet<string> = new Set(["add", "remove", "replace", "move", "copy", "test"]);

/**
 * List fields whose items merge by key, from the Kubernetes API's `x-kubernetes-list-map-keys`.
 * We have no OpenAPI schemas offline, so the well-known core fields are listed by name; any other
 * list is atomic (replaced whole), which is also what server-side apply does for unknown schemas.
 */
const LIST_MAP_KEYS: Readonly<Record<string, readonly string[]>> = {
  containers: ["name"],
  initContainers: ["name"],
  ephemeralContainers: ["name"],
  env: ["name"],
  volumes: ["name"],
  volumeMounts: ["mountPath"],
  volumeDevices: ["devicePath"],
  imagePullSecrets: ["name"],
  hostAliases: ["ip"],
  resourceClaims: ["name"],
  topologySpreadConstraints: ["topologyKey", "whenUnsatisfiable"],
  conditions: ["type"],
  ownerReferences: ["uid"],
};

/** List fields that are sets of scalars: apply adds missing items and keeps the rest. */
const LIST_SETS: ReadonlySet<string> = new Set(["finalizers"]);

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function portKeys(items: readonly unknown[]): readonly string[] {
  return items.some((i) => isObject(i) && "containerPort" in i)
    ? ["containerPort", "protocol"]
    : ["port", "protocol"];
}

function keyOf(item: unknown, keys: readonly string[]): string | undefined {
  if (!isObject(item)) return undefined;
  // Kubernetes defaults a port's protocol to TCP, so `{containerPort: 80}` and `{..., protocol: TCP}` are the same item.
  return JSON.stringify(keys.map((k) => item[k] ?? (k === "protocol" ? "TCP" : null)));
}

/** Deep equality of JSON values (key order does not matter; an undefined member is absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a) && isObject(b)) {
    let na = 0;
    for (const k in a) {
      if (!Object.hasOwn(a, k) || a[k] === undefined) continue;
      na++;
      if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
    }
    let nb = 0;
    for (const k in b) if (Object.hasOwn(b, k) && b[k] !== undefined) nb++;
    return na === nb;
  }
  return false;
}

/** RFC 6901: `~` and `/` in a member name are escaped. */
export function pointerSegment(name: string): string {
  return name.includes("~") || name.includes("/") ? name.replace(/~/g, "~0").replace(/\//g, "~1") : name;
}

/**
 * The merge writes the JSON Patch that takes the base to the result as it goes, so the webhook's
 * patch is never computed by diffing whole objects. Unchanged values emit nothing.
 */
function mergeList(
  field: string,
  base: unknown[],
  patch: unknown[],
  path: string,
  ops: JsonPatchOp[],
): unknown[] {
  // Copied on the first change, so a merge that changes nothing returns the very list it was given.
  let out: unknown[] | undefined;
  const append = (item: unknown) => {
    out ??= [...base];
    ops.push({ op: "add", path: `${path}/${out.length}`, value: item });
    out.push(item);
  };
  if (LIST_SETS.has(field)) {
    for (const p of patch) if (!(out ?? base).some((b) => jsonEqual(b, p))) append(p);
    return out ?? base;
  }
  const keys = field === "ports" ? portKeys([...base, ...patch]) : LIST_MAP_KEYS[field];
  if (!keys) return replaced(base, patch, path, ops) as unknown[];
  for (const p of patch) {
    const k = keyOf(p, keys);
    const items = out ?? base;
    const i = k === undefined ? -1 : items.findIndex((b) => keyOf(b, keys) === k);
    if (i < 0) {
      append(p);
      continue;
    }
    const merged = mergeValue(field, items[i], p, `${path}/${i}`, ops);
    if (merged !== items[i]) {
      out ??= [...base];
      out[i] = merged;
    }
  }
  return out ?? base;
}

function replaced(base: unknown, patch: unknown, path: string, ops: JsonPatchOp[]): unknown {
  if (jsonEqual(base, patch)) return base;
  ops.push({ op: "replace", path, value: patch });
  return patch;
}

function mergeValue(field: string, base: unknown, patch: unknown, path: string, ops: JsonPatchOp[]): unknown {
  if (isObject(base) && isObject(patch)) return mergeObject(base, patch, path, ops);
  if (Array.isArray(base) && Array.isArray(patch)) return mergeList(field, base, patch, path, ops);
  return replaced(base, patch, path, ops);
}

/**
 * Server-side-apply style merge of an apply configuration into an object: a new object (sharing
 * what did not change) and the JSON Patch from base to it.
 */
export function mergeApplyConfiguration(
  base: JsonObject,
  patch: JsonObject,
): { readonly object: JsonObject; readonly ops: JsonPatchOp[] } {
  const ops: JsonPatchOp[] = [];
  return { object: mergeObject(base, patch, "", ops), ops };
}

function mergeObject(base: JsonObject, patch: JsonObject, path: string, ops: JsonPatchOp[]): JsonObject {
  let out: JsonObject | undefined;
  for (const k in patch) {
    if (!Object.hasOwn(patch, k)) continue;
    const v = patch[k];
    const p = `${path}/${pointerSegment(k)}`;
    const had = Object.hasOwn(base, k) && base[k] !== undefined;
    if (v === null) {
      if (!had) continue;
      out ??= copyMap(base, true);
      delete out[k];
      ops.push({ op: "remove", path: p });
      continue;
    }
    if (!had) {
      out ??= copyMap(base, true);
      // A `__proto__` key (a ConfigMap may have one) assigned would set the copy's prototype instead.
      setMember<unknown>(out, k, v);
      ops.push({ op: "add", path: p, value: v });
      continue;
    }
    const merged = mergeValue(k, base[k], v, p, ops);
    if (merged !== base[k]) {
      out ??= copyMap(base, false);
      setMember<unknown>(out, k, merged);
    }
  }
  return out ?? base;
}

function toPatchOps(value: unknown): Result<JsonPatchOp[], string> {
  if (!Array.isArray(value))
    return err(`JSONPatch mutation must evaluate to a list of JSONPatch, got ${typeof value}`);
  const ops: JsonPatchOp[] = [];
  for (let i = 0; i < value.length; i++) {
    const raw: unknown = value[i];
    if (!isObject(raw)) return err(`JSONPatch[${i}] is not a JSONPatch object`);
    const op = raw.op;
    if (typeof op !== "string" || !OPS.has(op))
      return err(
        `JSONPatch[${i}].op must be one of add, remove, replace, move, copy, test; got ${JSON.stringify(op)}`,
      );
    const path = raw.path;
    if (typeof path !== "string") return err(`JSONPatch[${i}].path is required`);
    // Members assigned in this order give the same key order (op, path, from, value) in the webhook's patch.
    const entry: { op: JsonPatchOp["op"]; path: string; from?: string; value?: unknown } = {
      op: op as JsonPatchOp["op"],
      path,
    };
    if (typeof raw.from === "string") entry.from = raw.from;
    if ("value" in raw) entry.value = raw.value;
    ops.push(entry);
  }
  return ok(ops);
}

/** What one mutation did: the object after it, and the JSON Patch from the object before it. */
export interface AppliedMutation {
  readonly object: JsonObject;
  readonly ops: readonly JsonPatchOp[];
}

/** RFC 6901 `~1` → `/` and `~0` → `~`, in one pass, so `~01` is `~1` (as decoding `~1` first, then `~0`). */
function unescapeToken(token: string): string {
  let out = "";
  let from = 0;
  for (let i = token.indexOf("~"); i >= 0; i = token.indexOf("~", from)) {
    const next = token.charCodeAt(i + 1);
    if (next === 0x31 /* 1 */ || next === 0x30 /* 0 */) {
      out += `${token.slice(from, i)}${next === 0x31 ? "/" : "~"}`;
      from = i + 2;
    } else {
      out += token.slice(from, i + 1);
      from = i + 1;
    }
  }
  return out + token.slice(from);
}

/**
 * RFC 6901 reference tokens of a pointer ("" is the whole document). What precedes the first `/`
 * is dropped, so they mean something only for a pointer that starts with one; fast-json-patch
 * rejects any other.
 */
function parseTokens(pointer: string): string[] {
  const parts = pointer.split("/");
  parts.shift();
  for (let i = 0; i < parts.length; i++) {
    const t = parts[i] as string;
    if (t.includes("~")) parts[i] = unescapeToken(t);
  }
  return parts;
}

/**
 * A policy's mutations name the same few pointers on every request, so their tokens are kept. The
 * bound keeps pointers computed from request data (one per list index, say) from growing it forever.
 */
const TOKENS_CACHE_SIZE = 512;
const tokensCache = new Map<string, readonly string[]>();

function tokens(pointer: string): readonly string[] {
  let cached = tokensCache.get(pointer);
  if (cached === undefined) {
    cached = parseTokens(pointer);
    if (tokensCache.size >= TOKENS_CACHE_SIZE) tokensCache.clear();
    tokensCache.set(pointer, cached);
  }
  return cached;
}

function child(node: unknown, key: string): unknown {
  if (typeof node !== "object" || node === null) return undefined;
  if (Array.isArray(node)) return node[Number(key)];
  return Object.hasOwn(node, key) ? (node as JsonObject)[key] : undefined;
}

/** The container holding the last token of `path` (undefined when there is none). */
function parentOf(doc: unknown, path: readonly string[]): unknown {
  let node = doc;
  for (let i = 0; i < path.length - 1 && node !== undefined; i++) node = child(node, path[i] as string);
  return node;
}

/**
 * A shallow copy of a map, for a member to be set (`reshaped` false) or added or deleted (true).
 * V8 (Node 20) adds or deletes a member of a `{...spread}` copy slowly, building a new hidden class
 * each time, while `Object.assign({}, map)` gives a copy that takes new members quickly
 * (and a spread copy is the quicker one to set an existing member in). Object.assign sets members
 * as assignments do, so a map with an own `__proto__` member (JSON.parse makes those) is spread.
 */
function copyMap(node: unknown, reshaped: boolean): JsonObject {
  if (reshaped && isObject(node) && !Object.hasOwn(node, "__proto__")) return Object.assign({}, node);
  return { ...(node as JsonObject) };
}

/**
 * Parent containers along a pointer, copied so a patch can change them without touching `doc`.
 * `reshaped`: the operation adds or deletes a member of the last container (the pointer's parent).
 */
function copyAlong(doc: JsonObject, path: readonly string[], reshaped: boolean): JsonObject {
  const parentDepth = path.length - 1;
  const root = copyMap(doc, reshaped && parentDepth === 0);
  let node: unknown = root;
  for (let i = 0; i < parentDepth; i++) {
    const key = path[i] as string;
    const container = node as Record<string, unknown>;
    const next = Array.isArray(container) ? container[Number(key)] : container[key];
    if (typeof next !== "object" || next === null) break;
    const copy = Array.isArray(next) ? [...next] : copyMap(next, reshaped && i === parentDepth - 1);
    container[key] = copy;
    node = copy;
  }
  return root;
}

/**
 * Applies JSON Patch operations with fast-json-patch (which validates them), copying only the
 * containers each operation changes. The operations that change something are the patch: a `test`
 * has been checked here, and an add/replace of an object member with its current value is a no-op.
 */
function applyJsonPatch(working: JsonObject, ops: readonly JsonPatchOp[]): AppliedMutation {
  let doc = working;
  const effective: JsonPatchOp[] = [];
  for (let op of ops) {
    if (op.op === "test") {
      fastJsonPatch.applyOperation(doc, op as fastJsonPatch.Operation, true, true);
      continue;
    }
    const path = tokens(op.path);
    // A pointer that does not start with "/" is fast-json-patch's to reject; read as tokens it
    // would name another member, and an operation on that could pass for a no-op.
    if (path.length > 0 && op.path.charCodeAt(0) === 0x2f /* / */) {
      const parent = parentOf(doc, path);
      const last = path[path.length - 1] as string;
      // An add or replace of a map member (or a replace of a list item) with its current value is a no-op.
      if (
        (op.op === "replace" || (op.op === "add" && !Array.isArray(parent))) &&
        jsonEqual(child(parent, last), op.value)
      )
        continue;
      // `/-` appends; the patch names the index it lands at, so it reads the same wherever it is replayed.
      if (op.op === "add" && last === "-" && Array.isArray(parent))
        op = { ...op, path: `${op.path.slice(0, -1)}${parent.length}` };
      doc = copyAlong(doc, path, op.op !== "replace");
    }
    if (op.from !== undefined && op.from !== "") doc = copyAlong(doc, tokens(op.from), op.op === "move");
    doc = fastJsonPatch.applyOperation(doc, op as fastJsonPatch.Operation, true, true)
      .newDocument as JsonObject;
    effective.push(op);
  }
  return { object: doc, ops: effective };
}

/** Applies one mutation result to the working object. Never throws; failures come back as messages. */
export function applyMutation(
  working: JsonObject,
  patchType: PatchType,
  result: CelValue,
): Result<AppliedMutation, string> {
  const value = toJson(result);
  if (patchType === "ApplyConfiguration") {
    if (!isObject(value))
      return err(
        `ApplyConfiguration mutation must evaluate to an Object, got ${Array.isArray(value) ? "list" : typeof value}`,
      );
    return ok(mergeApplyConfiguration(working, value));
  }
  const ops = toPatchOps(value);
  if (!ops.ok) return ops;
  try {
    return ok(applyJsonPatch(working, ops.value));
  } catch (e) {
    const name = (e as { name?: string }).name ?? "";
    // A failed `test` operation leaves the object unpatched without an error, as in Kubernetes.
    if (name === "TEST_OPERATION_FAILED") return ok({ object: working, ops: [] });
    const message = e instanceof Error ? e.message.split("\n")[0] : String(e);
    return err(`JSONPatch could not be applied: ${name ? `${name}: ` : ""}${message}`);
  }
}
