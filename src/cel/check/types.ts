/**
 * CEL types as the checker sees them, with cel-go's semantics (common/types/types.go): a kind, the
 * runtime type name, type parameters (a list's element, a map's key and value, an optional's value,
 * the T of type(T)), and for protobuf wrapper types the flag that makes them accept null.
 *
 * Types are plain immutable values compared structurally; the functions here are the parts of
 * cel-go's *types.Type the checker relies on: IsExactType, IsEquivalentType, IsAssignableType,
 * DeclaredTypeName, String, and the checker's FormatCELType for messages.
 */

export type Kind =
  | "any"
  | "bool"
  | "bytes"
  | "double"
  | "duration"
  | "dyn"
  | "error"
  | "int"
  | "list"
  | "map"
  | "null"
  | "opaque"
  | "string"
  | "struct"
  | "timestamp"
  | "type"
  | "typeParam"
  | "uint"
  /** A field type left undeclared by a type provider (Kubernetes' JSONPatch for unknown fields). */
  | "unspecified";

export interface CelType {
  readonly kind: Kind;
  /** The runtime type name (`int`, `list`, `google.protobuf.Timestamp`, a message name), or a type parameter's name. */
  readonly name: string;
  readonly params: readonly CelType[];
  /** A protobuf wrapper type (`google.protobuf.Int64Value`): the primitive, or null. */
  readonly wrapper?: true;
}

const NO_PARAMS: readonly CelType[] = Object.freeze([]);

function prim(kind: Kind, name: string): CelType {
  return Object.freeze({ kind, name, params: NO_PARAMS });
}

export const ANY = prim("any", "google.protobuf.Any");
export const BOOL = prim("bool", "bool");
export const BYTES = prim("bytes", "bytes");
export const DOUBLE = prim("double", "double");
export const DURATION = prim("duration", "google.protobuf.Duration");
export const DYN = prim("dyn", "dyn");
export const ERROR = prim("error", "error");
export const INT = prim("int", "int");
export const NULL = prim("null", "null_type");
export const STRING = prim("string", "string");
export const TIMESTAMP = prim("timestamp", "google.protobuf.Timestamp");
/** `type` without a parameter: the type of every type value at run time. */
export const TYPE = prim("type", "type");
export const UINT = prim("uint", "uint");
export const UNSPECIFIED = prim("unspecified", "");

export function listOf(elem: CelType): CelType {
  return Object.freeze({ kind: "list", name: "list", params: Object.freeze([elem]) });
}

export function mapOf(key: CelType, value: CelType): CelType {
  return Object.freeze({ kind: "map", name: "map", params: Object.freeze([key, value]) });
}

export function opaque(name: string, ...params: CelType[]): CelType {
  return Object.freeze({ kind: "opaque", name, params: Object.freeze(params) });
}

export function optionalOf(value: CelType): CelType {
  return opaque("optional_type", value);
}

/** `type(T)`: the type of an expression naming the type T. */
export function typeOf(t: CelType): CelType {
  return Object.freeze({ kind: "type", name: "type", params: Object.freeze([t]) });
}

export function typeParam(name: string): CelType {
  return Object.freeze({ kind: "typeParam", name, params: NO_PARAMS });
}

/** A nullable primitive, as protobuf wrappers are: `wrapper(int)` accepts an int or null. */
export function wrapperOf(t: CelType): CelType {
  return Object.freeze({ kind: t.kind, name: t.name, params: t.params, wrapper: true });
}

/** Protobuf well-known types as cel-go maps them when named as message types (types.go checkedWellKnowns). */
const WELL_KNOWN: ReadonlyMap<string, CelType> = new Map([
  ["google.protobuf.BoolValue", wrapperOf(BOOL)],
  ["google.protobuf.BytesValue", wrapperOf(BYTES)],
  ["google.protobuf.DoubleValue", wrapperOf(DOUBLE)],
  ["google.protobuf.FloatValue", wrapperOf(DOUBLE)],
  ["google.protobuf.Int64Value", wrapperOf(INT)],
  ["google.protobuf.Int32Value", wrapperOf(INT)],
  ["google.protobuf.UInt64Value", wrapperOf(UINT)],
  ["google.protobuf.UInt32Value", wrapperOf(UINT)],
  ["google.protobuf.StringValue", wrapperOf(STRING)],
  ["google.protobuf.Any", ANY],
  ["google.protobuf.Duration", DURATION],
  ["google.protobuf.Timestamp", TIMESTAMP],
  ["google.protobuf.ListValue", listOf(DYN)],
  ["google.protobuf.NullValue", NULL],
  ["google.protobuf.Struct", mapOf(STRING, DYN)],
  ["google.protobuf.Value", DYN],
]);

/** A message (struct) type by name; well-known protobuf names map to their CEL types, as in cel-go. */
export function objectType(name: string): CelType {
  return WELL_KNOWN.get(name) ?? Object.freeze({ kind: "struct", name, params: NO_PARAMS });
}

/** cel-go's Type.isDyn(): dyn, any, or a type parameter. */
function isDynLike(t: CelType): boolean {
  return t.kind === "dyn" || t.kind === "any" || t.kind === "typeParam";
}

function sameShape(a: CelType, b: CelType): boolean {
  return a.kind === b.kind && a.name === b.name && a.params.length === b.params.length;
}

/** Type.IsExactType: same kind, name and parameters (a wrapper is exactly its primitive, as in cel-go). */
export function isExactType(a: CelType, b: CelType): boolean {
  if (a === b) return true;
  if (!sameShape(a, b)) return false;
  return a.params.every((p, i) => isExactType(p, b.params[i] as CelType));
}

/** Type.IsEquivalentType: as isExactType, but type parameters match whatever their names. */
export function isEquivalentType(a: CelType, b: CelType): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind || a.params.length !== b.params.length) return false;
  if (a.kind !== "typeParam" && a.name !== b.name) return false;
  return a.params.every((p, i) => isEquivalentType(p, b.params[i] as CelType));
}

/** Type.IsAssignableType: whether a value of type `from` may be used where `t` is expected. */
export function isAssignableType(t: CelType, from: CelType): boolean {
  if (t.wrapper) return defaultAssignable(NULL, from) || defaultAssignable(unwrap(t), from);
  return defaultAssignable(t, from);
}

function unwrap(t: CelType): CelType {
  return { kind: t.kind, name: t.name, params: t.params };
}

function defaultAssignable(t: CelType, from: CelType): boolean {
  if (t === from || isDynLike(t)) return true;
  if (!sameShape(t, from)) return false;
  return t.params.every((p, i) => isAssignableType(p, from.params[i] as CelType));
}

/** Type.DeclaredTypeName: the name, as `wrapper(int)` for a wrapper. */
export function declaredTypeName(t: CelType): string {
  if (t.kind !== "null" && !isDynLike(t) && isAssignableType(t, NULL)) return `wrapper(${t.name})`;
  return t.name;
}

/**
 * The checker's FormatCELType (checker/format.go), the spelling of every type in cel-go's
 * messages: `list(int)`, `map(string, dyn)`, `timestamp`, `null`, `wrapper(int)`, `!error!`.
 */
export function formatType(t: CelType): string {
  switch (t.kind) {
    case "any":
      return "any";
    case "duration":
      return "duration";
    case "error":
      return "!error!";
    case "null":
      return "null";
    case "timestamp":
      return "timestamp";
    case "typeParam":
      return t.name;
    case "unspecified":
      return "";
    default:
      if (t.params.length === 0) return declaredTypeName(t);
      return `${t.name}(${t.params.map(formatType).join(", ")})`;
  }
}

/**
 * cel-go's Type.String(), which Kubernetes prints in "must evaluate to bool but got ...":
 * `google.protobuf.Timestamp` rather than `timestamp`, and `<T>` for a type parameter.
 */
export function typeString(t: CelType): string {
  if (t.kind === "typeParam") return `<${declaredTypeName(t)}>`;
  if (t.params.length === 0) return declaredTypeName(t);
  return `${declaredTypeName(t)}(${t.params.map(typeString).join(", ")})`;
}

/** The checker's isDyn: dyn or google.protobuf.Any (not type parameters). */
export function isDyn(t: CelType): boolean {
  return t.kind === "dyn" || t.kind === "any";
}

export function isError(t: CelType): boolean {
  return t.kind === "error";
}

export function isDynOrError(t: CelType): boolean {
  return isError(t) || isDyn(t);
}

export function isOptionalType(t: CelType): boolean {
  return t.kind === "opaque" && t.name === "optional_type";
}

/** The value type of an optional, and whether it was one. */
export function maybeUnwrapOptional(t: CelType): [CelType, boolean] {
  if (isOptionalType(t)) return [t.params[0] ?? DYN, true];
  return [t, false];
}

/** checker.go isWellKnownType / getWellKnownTypeName: the protobuf name a struct literal of it uses. */
export function wellKnownTypeName(t: CelType): string | undefined {
  switch (t.kind) {
    case "any":
      return "google.protobuf.Any";
    case "timestamp":
      return "google.protobuf.Timestamp";
    case "duration":
      return "google.protobuf.Duration";
    case "dyn":
      return "google.protobuf.Value";
    case "null":
      return "google.protobuf.NullValue";
    case "list":
      return t.params[0]?.kind === "dyn" ? "google.protobuf.ListValue" : undefined;
    case "map":
      return t.params[0]?.kind === "string" && t.params[1]?.kind === "dyn"
        ? "google.protobuf.Struct"
        : undefined;
    default:
      if (!t.wrapper) return undefined;
      return WRAPPER_NAMES[t.kind];
  }
}

const WRAPPER_NAMES: Partial<Record<string, string>> = {
  bool: "google.protobuf.BoolValue",
  bytes: "google.protobuf.BytesValue",
  double: "google.protobuf.DoubleValue",
  int: "google.protobuf.Int64Value",
  string: "google.protobuf.StringValue",
  uint: "google.protobuf.UInt64Value",
};
