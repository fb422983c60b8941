/** Small helpers on JSON values that the mutation modules share. */
import { isJsonNumber, isJsonObject, jsonNumbersEqual } from "../yaml/json-numbers.ts";

export type JsonObject = Record<string, unknown>;

/** A JSON object; a Number object (a float64 read exactly: yaml/json-numbers.ts) is a number. */
export function isObject(v: unknown): v is JsonObject {
  return isJsonObject(v);
}

/** Deep equality of JSON values (key order does not matter; an undefined member is absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  // Pairs still to compare: an explicit stack, so any depth of request data compares (recursion
  // would run out of stack on the deepest objects the API server decodes).
  const pending: unknown[] = [a, b];
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (x === y) continue;
    if (isJsonNumber(x) || isJsonNumber(y)) {
      if (isJsonNumber(x) && isJsonNumber(y) && jsonNumbersEqual(x, y)) continue;
      return false;
    }
    if (Array.isArray(x) || Array.isArray(y)) {
      if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
      for (let i = x.length - 1; i >= 0; i--) pending.push(x[i], y[i]);
      continue;
    }
    if (!isObject(x) || !isObject(y)) return false;
    let nx = 0;
    for (const k in x) {
      if (!Object.hasOwn(x, k) || x[k] === undefined) continue;
      nx++;
      if (!Object.hasOwn(y, k)) return false;
      pending.push(x[k], y[k]);
    }
    let ny = 0;
    for (const k in y) if (Object.hasOwn(y, k) && y[k] !== undefined) ny++;
    if (nx !== ny) return false;
  }
  return true;
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
