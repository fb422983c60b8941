/**
 * Whether a JSON-patched object still decodes into its built-in Go type, as the MAP plugin decodes
 * it (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/
 * json_patch.go: the patched JSON goes through the strict JSON serializer of
 * k8s.io/apimachinery/pkg/runtime/serializer/json, which is sigs.k8s.io/json UnmarshalStrict).
 * Upstream wraps a failure in an InternalError; its text is what this module gives:
 *
 * - an UnmarshalJSON of a custom type that fails (Quantity, IntOrString, Time) stops the decoding
 *   and is the error: `quantities must match the regular expression ...`,
 *   `json: cannot unmarshal bool into Go value of type int32`;
 * - else the first value of the wrong JSON type: `json: cannot unmarshal string into Go struct
 *   field DeploymentSpec.spec.replicas of type int32` (the innermost struct's name, the path of
 *   struct fields from the root without list indices or map keys, the Go type decoded into);
 * - else every member the type does not declare: `strict decoding error: unknown field
 *   "spec.template.spec.containers[1].ports[0].containerPortZ", unknown field "spec.x"`.
 *
 * Only what the patch wrote is read: the object the request brought has decoded already. Custom
 * resources decode into unstructured objects, which take anything, so they are not checked.
 * Where the schema cannot say what Go says (a named string type such as v1.Protocol prints as
 * `string`; Time's string parsing is not checked) the text is as close as the schema allows.
 */
import { isJsonNumber, type JsonNumber } from "../yaml/json-numbers.ts";
import { type KindSchema, refOf, type Schema } from "../kube/schemas/index.ts";
import type { Write } from "./json-patch.ts";
import { isObject } from "./json-values.ts";

const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const INT_OR_STRING_FORMAT = "int-or-string";
const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_TEXT = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const QUANTITY_SUFFIX = /^(|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)$/;

/** Where a value sits, in the decoder's terms. */
interface Context {
  /** Name of the innermost struct type whose field holds the value ("" at the root). */
  readonly struct: string;
  /** The struct fields from the root (errorContext.FieldStack). */
  readonly fields: readonly string[];
  /** The strict decoder's path: fields and map keys joined by ".", list indices as [i]. */
  readonly strict: string;
}

interface Findings {
  custom: string | undefined;
  typeError: string | undefined;
  readonly unknown: string[];
}

/** A schema node with its reference followed, and the definition it came from. */
interface Resolved {
  readonly schema: Schema;
  readonly name: string | undefined;
}

function resolve(kind: KindSchema, s: Schema): Resolved {
  const ref = refOf(s);
  if (ref === undefined) return { schema: s, name: undefined };
  return { schema: kind.definition(ref) ?? {}, name: ref };
}

/** A definition's Go type as reflect prints it: `v1.PodSpec`. */
function goTypeName(definition: string): string {
  const parts = definition.split(".");
  return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
}

function shortName(definition: string): string {
  return definition.slice(definition.lastIndexOf(".") + 1);
}

function isStruct(s: Schema): boolean {
  return s.type === "object" && s.properties !== undefined;
}

/** What Go decodes a schema node into, as reflect.Type.String() prints it. */
function goType(kind: KindSchema, node: Schema): string {
  const { schema: s, name } = resolve(kind, node);
  if (name !== undefined && (isStruct(s) || name === QUANTITY || s.format === INT_OR_STRING_FORMAT))
    return goTypeName(name);
  switch (s.type) {
    case "object":
      return typeof s.additionalProperties === "object"
        ? `map[string]${goType(kind, s.additionalProperties)}`
        : "map[string]interface {}";
    case "array":
      return `[]${s.items ? goType(kind, s.items) : "interface {}"}`;
    case "string":
      return s.format === "byte" ? "[]uint8" : "string";
    case "integer":
      return s.format === "int32" ? "int32" : s.format === "int64" ? "int64" : "int";
    case "number":
      return s.format === "float" ? "float32" : "float64";
    case "boolean":
      return "bool";
    default:
      return "interface {}";
  }
}

/** The JSON kind UnmarshalTypeError names: `string`, `number`, `bool`, `array`, `object`. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (isJsonNumber(v)) return "number";
  if (typeof v === "object") return "object";
  return typeof v === "boolean" ? "bool" : "string";
}

/**
 * A number as the JSON text Go read (for `number 1.5`). A Number object (a float64 written with a
 * fraction or exponent, read exactly: yaml/json-numbers.ts) has lost its text; it is written as a
 * float with one decimal, as `1.0` is the likeliest way it was written.
 */
function numberText(n: JsonNumber): string {
  if (typeof n === "bigint") return String(n);
  if (n instanceof Number)
    return Number.isInteger(n.valueOf()) ? n.valueOf().toFixed(1) : String(n.valueOf());
  return JSON.stringify(n);
}

function typeError(f: Findings, ctx: Context, value: string, type: string): void {
  if (f.typeError !== undefined) return;
  f.typeError =
    ctx.struct !== "" || ctx.fields.length > 0
      ? `json: cannot unmarshal ${value} into Go struct field ${ctx.struct}.${ctx.fields.join(".")} of type ${type}`
      : `json: cannot unmarshal ${value} into Go value of type ${type}`;
}

/** Whether Go decodes the number into an int32 or int64 field: an integer's text, in range. */
function inIntRange(n: JsonNumber, format: string | undefined): boolean {
  if (n instanceof Number) return false;
  if (typeof n === "bigint") return format !== "int32";
  if (!Number.isInteger(n)) return false;
  if (format === "int32") return n >= -(2 ** 31) && n < 2 ** 31;
  return n >= -(2 ** 63) && n < 2 ** 63;
}

/** Quantity.UnmarshalJSON (ParseQuantity's format and suffix checks). */
function quantityError(v: unknown): string | undefined {
  if (typeof v !== "string" && !isJsonNumber(v)) return QUANTITY_FORMAT_ERROR;
  const text = (typeof v === "string" ? v : numberText(v)).trim();
  if (text === "0") return undefined;
  const m = QUANTITY_TEXT.exec(text);
  if (m === null) return QUANTITY_FORMAT_ERROR;
  return QUANTITY_SUFFIX.test(m[2] as string) ? undefined : "unable to parse quantity's suffix";
}

/** IntOrString.UnmarshalJSON: a string, or json.Unmarshal into an int32. */
function intOrStringError(v: unknown): string | undefined {
  if (typeof v === "string") return undefined;
  if (isJsonNumber(v)) {
    if (inIntRange(v, "int32")) return undefined;
    return `json: cannot unmarshal number ${numberText(v)} into Go value of type int32`;
  }
  return `json: cannot unmarshal ${jsonKind(v)} into Go value of type int32`;
}

function child(ctx: Context, struct: string | undefined, field: string | undefined, strict: string): Context {
  return {
    struct: struct ?? ctx.struct,
    fields: field === undefined ? ctx.fields : [...ctx.fields, field],
    strict,
  };
}

function strictKey(ctx: Context, key: string): string {
  return ctx.strict === "" ? key : `${ctx.strict}.${key}`;
}

function check(kind: KindSchema, node: Schema, v: unknown, ctx: Context, f: Findings): void {
  if (v === null || f.custom !== undefined) return;
  // The common write: a string where the schema has a plain string.
  if (typeof v === "string" && node.type === "string" && node.format === undefined) return;
  const { schema: s, name } = resolve(kind, node);
  if (name === QUANTITY) {
    f.custom ??= quantityError(v);
    return;
  }
  if (s.format === INT_OR_STRING_FORMAT || s["x-kubernetes-int-or-string"] === true) {
    f.custom ??= intOrStringError(v);
    return;
  }
  if (s.type === "string" && s.format === "date-time") {
    if (typeof v !== "string")
      f.custom ??= `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`;
    return;
  }
  switch (s.type) {
    case "object":
      checkObject(kind, s, name, v, ctx, f);
      return;
    case "array":
      if (!Array.isArray(v)) {
        typeError(f, ctx, jsonKind(v), goType(kind, node));
        return;
      }
      for (let i = 0; i < v.length; i++)
        if (s.items) check(kind, s.items, v[i], { ...ctx, strict: `${ctx.strict}[${i}]` }, f);
      return;
    case "string":
      if (typeof v !== "string") typeError(f, ctx, jsonKind(v), goType(kind, node));
      return;
    case "integer":
      if (!isJsonNumber(v)) typeError(f, ctx, jsonKind(v), goType(kind, node));
      else if (!inIntRange(v, s.format)) typeError(f, ctx, `number ${numberText(v)}`, goType(kind, node));
      return;
    case "number":
      if (!isJsonNumber(v)) typeError(f, ctx, jsonKind(v), goType(kind, node));
      return;
    case "boolean":
      if (typeof v !== "boolean") typeError(f, ctx, jsonKind(v), goType(kind, node));
      return;
    default:
      // No type: decoded by a type of its own, which takes any JSON.
      return;
  }
}

function checkObject(
  kind: KindSchema,
  s: Schema,
  name: string | undefined,
  v: unknown,
  ctx: Context,
  f: Findings,
): void {
  const props = s.properties;
  const ap = s.additionalProperties;
  // An object type with neither fields nor an element type (RawExtension, FieldsV1) takes any JSON.
  if (props === undefined && typeof ap !== "object") return;
  if (!isObject(v)) {
    typeError(f, ctx, jsonKind(v), goType(kind, name ? { $ref: name } : s));
    return;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (props !== undefined) {
      const field = Object.hasOwn(props, k) ? props[k] : undefined;
      if (field === undefined) f.unknown.push(`unknown field ${JSON.stringify(strictKey(ctx, k))}`);
      else check(kind, field, v[k], child(ctx, name ? shortName(name) : "", k, strictKey(ctx, k)), f);
    } else if (typeof ap === "object")
      check(kind, ap, v[k], child(ctx, undefined, undefined, strictKey(ctx, k)), f);
  }
}

/** A container a patch writes into: its schema (reference followed), the definition, the decoder's context. */
interface Place {
  readonly schema: Schema;
  readonly name: string | undefined;
  readonly ctx: Context;
}

const ROOT_CONTEXT: Context = Object.freeze({ struct: "", fields: Object.freeze([]), strict: "" });

/** Where the container at `parents` is in the schema; undefined where the schema has nothing. */
function place(kind: KindSchema, parents: readonly string[]): Place | undefined {
  let schema = kind.schema;
  let name = kind.definitionName;
  let ctx = ROOT_CONTEXT;
  for (const t of parents) {
    let node: Schema;
    if (schema.type === "array" && schema.items) {
      ctx = { ...ctx, strict: `${ctx.strict}[${t}]` };
      node = schema.items;
    } else if (schema.type === "object" && schema.properties !== undefined) {
      const field = Object.hasOwn(schema.properties, t) ? schema.properties[t] : undefined;
      if (field === undefined) return undefined;
      ctx = child(ctx, name ? shortName(name) : "", t, strictKey(ctx, t));
      node = field;
    } else if (schema.type === "object" && typeof schema.additionalProperties === "object") {
      ctx = child(ctx, undefined, undefined, strictKey(ctx, t));
      node = schema.additionalProperties;
    } else return undefined;
    const r = resolve(kind, node);
    schema = r.schema;
    name = r.name;
  }
  return { schema, name, ctx };
}

/**
 * The places patches write into, per kind and container pointer: a policy's patches name the same
 * few on every request. Bounded, as pointers may be computed from request data.
 */
const PLACES_SIZE = 512;
const places = new WeakMap<KindSchema, Map<string, Place | null>>();

function placeOf(kind: KindSchema, w: Write): Place | undefined {
  let byPointer = places.get(kind);
  if (byPointer === undefined) {
    byPointer = new Map();
    places.set(kind, byPointer);
  }
  const key = w.path.slice(0, w.path.lastIndexOf("/"));
  let p = byPointer.get(key);
  if (p === undefined) {
    p = place(kind, w.parents) ?? null;
    if (byPointer.size >= PLACES_SIZE) byPointer.clear();
    byPointer.set(key, p);
  }
  return p ?? undefined;
}

/** Checks one written value where it landed. */
function checkWrite(kind: KindSchema, w: Write, f: Findings): void {
  if (w.path === "") {
    check(kind, kind.definitionName ? { $ref: kind.definitionName } : kind.schema, w.value, ROOT_CONTEXT, f);
    return;
  }
  // A write under a member the schema does not know: that member was there before the patch.
  const at = placeOf(kind, w);
  if (at === undefined) return;
  const { schema: s, ctx } = at;
  const last = w.last;
  if (s.type === "array" && s.items) {
    check(kind, s.items, w.value, { ...ctx, strict: `${ctx.strict}[${last}]` }, f);
  } else if (s.type === "object" && s.properties !== undefined) {
    const field = Object.hasOwn(s.properties, last) ? s.properties[last] : undefined;
    if (field === undefined) f.unknown.push(`unknown field ${JSON.stringify(strictKey(ctx, last))}`);
    else
      check(
        kind,
        field,
        w.value,
        child(ctx, at.name ? shortName(at.name) : "", last, strictKey(ctx, last)),
        f,
      );
  } else if (s.type === "object" && typeof s.additionalProperties === "object") {
    check(kind, s.additionalProperties, w.value, child(ctx, undefined, undefined, strictKey(ctx, last)), f);
  }
}

/**
 * The decoding error of a built-in kind's object after the writes, as upstream words it (without
 * the InternalError's "Internal error occurred: "), or undefined when it decodes.
 */
export function decodeError(kind: KindSchema, writes: readonly Write[]): string | undefined {
  const f: Findings = { custom: undefined, typeError: undefined, unknown: [] };
  for (const w of writes) checkWrite(kind, w, f);
  if (f.custom !== undefined) return f.custom;
  if (f.typeError !== undefined) return f.typeError;
  if (f.unknown.length > 0) return `strict decoding error: ${f.unknown.join(", ")}`;
  return undefined;
}
