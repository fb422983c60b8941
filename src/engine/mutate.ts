/**
 * Applies one mutation's result to the working object: a list of JSONPatch operations (applied
 * and validated with fast-json-patch), or an ApplyConfiguration object merged with server-side
 * apply semantics — maps merge, lists of keyed items (containers by name, ports by containerPort
 * and protocol, ...) merge by key, every other list and every scalar is replaced, null removes.
 */
import fastJsonPatch from "fast-json-patch";
import { type CelValue, toJson } from "../cel/index.ts";
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

function mergeList(field: string, base: unknown[], patch: unknown[]): unknown[] {
  if (LIST_SETS.has(field)) {
    const out = [...base];
    for (const p of patch) if (!out.some((b) => JSON.stringify(b) === JSON.stringify(p))) out.push(p);
    return out;
  }
  const keys = field === "ports" ? portKeys([...base, ...patch]) : LIST_MAP_KEYS[field];
  if (!keys) return patch;
  const out = [...base];
  for (const p of patch) {
    const k = keyOf(p, keys);
    const i = k === undefined ? -1 : out.findIndex((b) => keyOf(b, keys) === k);
    if (i >= 0) out[i] = mergeValue(field, out[i], p);
    else out.push(p);
  }
  return out;
}

function mergeValue(field: string, base: unknown, patch: unknown): unknown {
  if (isObject(base) && isObject(patch)) return mergeObject(base, patch);
  if (Array.isArray(base) && Array.isArray(patch)) return mergeList(field, base, patch);
  return patch;
}

/** Server-side-apply style merge of an apply configuration into an object; returns a new object. */
export function mergeApplyConfiguration(base: JsonObject, patch: JsonObject): JsonObject {
  return mergeObject(base, patch);
}

function mergeObject(base: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = k in base ? mergeValue(k, base[k], v) : v;
  }
  return out;
}

function toPatchOps(value: unknown): Result<JsonPatchOp[], string> {
  if (!Array.isArray(value))
    return err(`JSONPatch mutation must evaluate to a list of JSONPatch, got ${typeof value}`);
  const ops: JsonPatchOp[] = [];
  for (const [i, raw] of value.entries()) {
    if (!isObject(raw)) return err(`JSONPatch[${i}] is not a JSONPatch object`);
    const op = raw.op;
    if (typeof op !== "string" || !OPS.has(op))
      return err(
        `JSONPatch[${i}].op must be one of add, remove, replace, move, copy, test; got ${JSON.stringify(op)}`,
      );
    if (typeof raw.path !== "string") return err(`JSONPatch[${i}].path is required`);
    const entry: JsonPatchOp = {
      op: op as JsonPatchOp["op"],
      path: raw.path,
      ...(typeof raw.from === "string" ? { from: raw.from } : {}),
      ...("value" in raw ? { value: raw.value } : {}),
    };
    ops.push(entry);
  }
  return ok(ops);
}

/** Applies one mutation result to the working object. Never throws; failures come back as messages. */
export function applyMutation(
  working: JsonObject,
  patchType: PatchType,
  result: CelValue,
): Result<JsonObject, string> {
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
    const doc = fastJsonPatch.deepClone(working) as JsonObject;
    const out = fastJsonPatch.applyPatch(doc, ops.value as fastJsonPatch.Operation[], true, true).newDocument;
    return ok(out);
  } catch (e) {
    const name = (e as { name?: string }).name ?? "";
    // A failed `test` operation leaves the object unpatched without an error, as in Kubernetes.
    if (name === "TEST_OPERATION_FAILED") return ok(working);
    const message = e instanceof Error ? e.message.split("\n")[0] : String(e);
    return err(`JSONPatch could not be applied: ${name ? `${name}: ` : ""}${message}`);
  }
}
