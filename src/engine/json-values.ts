/** Small helpers on JSON values that the mutation modules share. */
import { isJsonNumber, isJsonObject, jsonNumbersEqual } from "../yaml/json-numbers.ts";

export type JsonObject = Record<string, unknown>;

/** A JSON object; a Number object (a float64 read exactly: yaml/json-numbers.ts) is a number. */
export function isObject(v: unknown): v is JsonObject {
  return isJsonObject(v);
}

/** Deep equality of JSON values (key order does not matter; an undefined member is absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isJsonNumber(a) || isJsonNumber(b)) return isJsonNumber(a) && isJsonNumber(b) && jsonNumbersEqual(a, b);
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
 * A shallow copy of a map, for a member to be set (`reshaped` false) or added or deleted (true).
 * V8 (Node 20) adds or deletes a member of a `{...spread}` copy slowly, building a new hidden class
 * each time, while `Object.assign({}, map)` gives a copy that takes new members quickly
 * (and a spread copy is the quicker one to set an existing member in). Object.assign sets members
 * as assignments do, so a map with an own `__proto__` member (JSON.parse makes those) is spread.
 */
export function copyMap(node: JsonObject, reshaped: boolean): JsonObject {
  if (reshaped && !Object.hasOwn(node, "__proto__")) return Object.assign({}, node);
  return { ...node };
}
