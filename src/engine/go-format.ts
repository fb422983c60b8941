/**
 * JSON values printed as Go prints the unstructured values structured-merge-diff holds, for its
 * error texts: a JSON value is the `interface{}` k8s.io/apimachinery decodes it to (an integral
 * number an int64, any other a float64, an object a map[string]interface{}, an array an
 * []interface{}), and SMD wraps it in a `*value.valueUnstructured` whose fmt verbs show the wrapper
 * (`expected map, got &{abc}`). fmt sorts map keys; structured-merge-diff's own value.ToString
 * walks a map in Go's (random) order, which here is the object's key order.
 */
import { formatFloat, goQuote as quote } from "../cel/index.ts";
import { isJsonNumber, isJsonObject, type JsonNumber } from "../yaml/json-numbers.ts";

/** Whether the API server's JSON decoding gives this number as an int64 (else a float64). */
function isInt64(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return isJsonObject(v);
}

/**
 * fmt's %v of a number: an int64 in decimal, a float64 as %g with the shortest digits. A bigint is
 * an int64, a Number object a float64 (read exactly: yaml/json-numbers.ts).
 */
function goNumber(n: JsonNumber): string {
  if (typeof n === "bigint") return String(n);
  if (n instanceof Number) return formatFloat(n.valueOf(), "g", -1);
  return isInt64(n) ? String(n) : formatFloat(n, "g", -1);
}

/** fmt's %v of an unstructured value (`map[a:1 b:[x y]]`, `<nil>`). */
export function goV(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (isJsonNumber(v)) return goNumber(v);
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(goV).join(" ")}]`;
  const o = v as Record<string, unknown>;
  return `map[${Object.keys(o)
    .sort()
    .map((k) => `${k}:${goV(o[k])}`)
    .join(" ")}]`;
}

/** fmt's %#v of an unstructured value held in an interface{} (`map[string]interface {}{"a":1}`). */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return "interface {}(nil)";
  if (isJsonNumber(v)) return goNumber(v);
  if (typeof v === "string") return quote(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(", ")}}`;
  const o = v as Record<string, unknown>;
  return `map[string]interface {}{${Object.keys(o)
    .sort()
    .map((k) => `${quote(k)}:${goSharpV(o[k])}`)
    .join(", ")}}`;
}

/** fmt's %T of an unstructured value. */
export function goType(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "number") return isInt64(v) ? "int64" : "float64";
  if (typeof v === "bigint") return "int64";
  if (v instanceof Number) return "float64";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  return Array.isArray(v) ? "[]interface {}" : "map[string]interface {}";
}

/** %v of SMD's value wrapper: `&{abc}`. */
export function smdValueV(v: unknown): string {
  return `&{${goV(v)}}`;
}

/** %#v of SMD's value wrapper: `&value.valueUnstructured{Value:1}`. */
export function smdValueSharpV(v: unknown): string {
  return `&value.valueUnstructured{Value:${goSharpV(v)}}`;
}

/** structured-merge-diff value.ToString: strings quoted, lists `[a,b]`, maps `k=v` run together. */
export function smdToString(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (isJsonNumber(v)) return goNumber(v);
  if (typeof v === "string") return quote(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(smdToString).join(",")}]`;
  if (isObject(v)) {
    let out = "";
    for (const k in v) if (Object.hasOwn(v, k)) out += `${k}=${smdToString(v[k])}`;
    return out;
  }
  return "{{undefined}}";
}
