/**
 * Schema → CEL type, as Kubernetes converts them for type checking (k8s.io/apiserver/pkg/cel/
 * common/schemas.go SchemaDeclType, cel/types.go DeclType and MaybeAssignTypeName), into the
 * checker's representation (src/cel/check/types.ts, read through the checker's facade
 * check/index.ts): an object schema becomes a message type whose fields the checker looks up by
 * name (a MessageType), a map schema `map(string, V)`, an array `list(T)`.
 *
 * What Kubernetes does, rule by rule (SchemaDeclType):
 * - x-kubernetes-int-or-string (built-ins: format int-or-string): dyn, before anything else;
 * - the root of a resource, and every x-kubernetes-embedded-resource object, gets `kind`,
 *   `apiVersion` (strings) and `metadata` with `name` and `generateName` unless it has them all
 *   (WithTypeAndObjectMeta);
 * - array: list of its items' type; no type for the items (or no items) means no type at all;
 * - object with an additionalProperties schema: map(string, V), or nothing when V has none; else an
 *   object with a field per property that has a type, named by escapeFieldName (a property that
 *   cannot be escaped is left out); x-kubernetes-preserve-unknown-fields exposes no unknown field;
 * - string: bytes for format byte, duration for duration, timestamp for date and date-time, else
 *   string; boolean: bool; number: double; integer: int;
 * - anything else (no type, as resource.Quantity's oneOf has in OpenAPI v3, or x-kubernetes-preserve-
 *   unknown-fields without a type) has no type: the field holding it is not declared at all.
 *
 * Nullable plays no part. Object types are named after where they stand: the root gets the name the
 * caller gives, a field `<parent>.<field>`, a map's values `<map>.@elem`, a list's items `<list>.@idx`
 * (MaybeAssignTypeName); Kubernetes' type checker names the root `<Kind><nanoseconds>`, which no test
 * can repeat, so the name is the caller's to choose.
 *
 * Left out: MaxElements and MinSerializedSize, which only Kubernetes' static cost estimator reads
 * (celgate has none), and field enums and defaults, which no checker rule reads.
 */
import { type CelType, celTypes, type MessageType, messageType } from "../../cel/check/index.ts";
import { CEL_RESERVED_SYMBOLS, escapeFieldName } from "./escaping.ts";
import { type DefinitionLookup, deref, isIntOrString, type KindSchema, type Schema } from "./schema.ts";

const { BOOL, BYTES, DOUBLE, DURATION, DYN, INT, listOf, mapOf, objectType, STRING, TIMESTAMP } = celTypes;

/** A CEL declaration of a schema (DeclType): an object with fields, a list, a map, or a simple type. */
export type DeclType =
  | { readonly kind: "object"; readonly name: string; readonly fields: ReadonlyMap<string, DeclType> }
  | { readonly kind: "list"; readonly elem: DeclType }
  | { readonly kind: "map"; readonly elem: DeclType }
  | { readonly kind: "simple"; readonly type: CelType };

const UNNAMED = "object";
const NO_PROPERTIES: Readonly<Record<string, Schema>> = Object.freeze({});

/**
 * WithTypeAndObjectMeta: a resource root has kind, apiVersion and metadata.name/generateName. The
 * properties are looked at with their references followed, as Kubernetes looks at them after
 * PopulateRefs.
 */
function withTypeAndObjectMeta(
  s: Schema,
  definition: DefinitionLookup,
  expanding: ReadonlySet<string>,
): Schema {
  const p = s.properties;
  const at = (node: Schema | undefined): Schema | undefined =>
    node && deref(node, definition, expanding)?.schema;
  const meta = at(p?.metadata);
  if (
    at(p?.kind)?.type === "string" &&
    at(p?.apiVersion)?.type === "string" &&
    meta?.type === "object" &&
    at(meta.properties?.name)?.type === "string" &&
    at(meta.properties?.generateName)?.type === "string"
  )
    return s;
  const str: Schema = { type: "string" };
  return {
    ...s,
    properties: {
      ...(p ?? NO_PROPERTIES),
      kind: str,
      apiVersion: str,
      metadata: { type: "object", properties: { name: str, generateName: str } },
    },
  };
}

function stringType(format: string | undefined): CelType {
  switch (format) {
    case "byte":
      return BYTES;
    case "duration":
      return DURATION;
    case "date":
    case "date-time":
      return TIMESTAMP;
    default:
      return STRING;
  }
}

/**
 * SchemaDeclType: the CEL declaration of a schema, or undefined when Kubernetes exposes none.
 * References are followed as PopulateRefs follows them (`expanding` holds the definitions above).
 */
export function schemaDeclType(
  node: Schema | undefined,
  isResourceRoot: boolean,
  definition: DefinitionLookup,
  expanding: ReadonlySet<string> = new Set(),
  /** A property, item or value with no CEL type is dyn instead of left out (TypeProviderOptions). */
  untypedAsDyn = false,
): DeclType | undefined {
  if (node === undefined) return undefined;
  const untyped: DeclType | undefined = untypedAsDyn ? { kind: "simple", type: DYN } : undefined;
  const resolved = deref(node, definition, expanding);
  if (resolved === undefined) return undefined;
  let s = resolved.schema;
  const below = resolved.expanding;
  if (isIntOrString(s)) return { kind: "simple", type: DYN };
  if (isResourceRoot) s = withTypeAndObjectMeta(s, definition, below);
  const embedded = (c: Schema): boolean =>
    deref(c, definition, below)?.schema["x-kubernetes-embedded-resource"] === true;
  switch (s.type) {
    case "array": {
      if (s.items === undefined) return untyped;
      const elem = schemaDeclType(s.items, embedded(s.items), definition, below, untypedAsDyn);
      return elem && { kind: "list", elem };
    }
    case "object": {
      const ap = s.additionalProperties;
      if (ap !== undefined && typeof ap === "object") {
        const elem = schemaDeclType(ap, embedded(ap), definition, below, untypedAsDyn);
        return elem && { kind: "map", elem };
      }
      const fields = new Map<string, DeclType>();
      for (const [name, prop] of Object.entries(s.properties ?? NO_PROPERTIES)) {
        const t = schemaDeclType(prop, embedded(prop), definition, below, untypedAsDyn);
        const escaped = t && escapeFieldName(name);
        if (t && escaped !== undefined) fields.set(escaped, t);
      }
      return { kind: "object", name: UNNAMED, fields };
    }
    case "string":
      return { kind: "simple", type: stringType(s.format) };
    case "boolean":
      return { kind: "simple", type: BOOL };
    case "number":
      return { kind: "simple", type: DOUBLE };
    case "integer":
      return { kind: "simple", type: INT };
    default:
      return untyped;
  }
}

/**
 * MaybeAssignTypeName: names every object type after its place under `name`. An object already named
 * keeps its name, and so do the objects inside it (their names then start from it).
 */
export function assignTypeNames(t: DeclType, name: string): DeclType {
  switch (t.kind) {
    case "object": {
      const own = t.name === UNNAMED ? name : t.name;
      const fields = new Map<string, DeclType>();
      for (const [f, ft] of t.fields) fields.set(f, assignTypeNames(ft, `${own}.${f}`));
      return { kind: "object", name: own, fields };
    }
    case "map":
      return { kind: "map", elem: assignTypeNames(t.elem, `${name}.@elem`) };
    case "list":
      return { kind: "list", elem: assignTypeNames(t.elem, `${name}.@idx`) };
    default:
      return t;
  }
}

/** DeclType.CelType: an object is the message type of its name. */
export function celTypeOf(t: DeclType): CelType {
  switch (t.kind) {
    case "object":
      return objectType(t.name);
    case "list":
      return listOf(celTypeOf(t.elem));
    case "map":
      return mapOf(STRING, celTypeOf(t.elem));
    default:
      return t.type;
  }
}

export interface TypeProviderOptions {
  /**
   * A field whose schema has no CEL type (a Quantity, preserve-unknown-fields alone) is dyn rather
   * than undeclared. Kubernetes leaves it undeclared (a type-checking warning on
   * `resources.limits`); celgate's schema-typed `check` warns only where the expression is wrong.
   */
  readonly untypedAsDyn?: boolean;
  /**
   * DeclTypeProvider.SetRecognizeKeywordAsFieldName: let `x.namespace` find the field Kubernetes
   * declares as `__namespace__`. Kubernetes' admission type checking leaves this off, so there
   * `object.metadata.namespace` is an undefined field; off by default here too.
   */
  readonly recognizeKeywordAsFieldName?: boolean;
}

/**
 * The message types an object declaration brings into an environment, one per object type inside it
 * (FieldTypeMap), each resolving its fields as DeclTypeProvider.FindStructFieldType does.
 */
export function messageTypesOf(t: DeclType, options: TypeProviderOptions = {}): MessageType[] {
  const out: MessageType[] = [];
  const visit = (d: DeclType): void => {
    if (d.kind === "object") {
      const fields: Record<string, CelType> = {};
      for (const [f, ft] of d.fields) {
        fields[f] = celTypeOf(ft);
        visit(ft);
      }
      const plain = messageType(d.name, fields);
      out.push(
        options.recognizeKeywordAsFieldName
          ? {
              name: d.name,
              field: (f) =>
                plain.field(f) ?? (CEL_RESERVED_SYMBOLS.has(f) ? plain.field(`__${f}__`) : undefined),
            }
          : plain,
      );
    } else if (d.kind === "list" || d.kind === "map") visit(d.elem);
  };
  visit(t);
  return out;
}

/** A kind's type for `object`, `oldObject` or `params`, and the message types it needs declared. */
export interface KindCelType {
  readonly type: CelType;
  readonly messages: readonly MessageType[];
  /** Each message type's declared field names (escaped), for a did-you-mean on an undefined field. */
  readonly fieldNames: ReadonlyMap<string, readonly string[]>;
}

/** The declared field names of every object type inside `t`, by type name. */
function fieldNamesOf(
  t: DeclType,
  out: Map<string, readonly string[]> = new Map(),
): Map<string, readonly string[]> {
  if (t.kind === "object") {
    out.set(t.name, [...t.fields.keys()]);
    for (const ft of t.fields.values()) fieldNamesOf(ft, out);
  } else if (t.kind === "list" || t.kind === "map") fieldNamesOf(t.elem, out);
  return out;
}

/**
 * The CEL type of a kind's objects, the root named `rootName` (typechecking.go declType: the schema
 * is a resource root). Undefined when the schema yields no type (then the variable stays dyn).
 */
export function kindCelType(
  k: KindSchema,
  rootName: string,
  options: TypeProviderOptions = {},
): KindCelType | undefined {
  const decl = schemaDeclType(k.schema, true, k.definition, new Set(), options.untypedAsDyn === true);
  if (decl === undefined) return undefined;
  const named = assignTypeNames(decl, rootName);
  return {
    type: celTypeOf(named),
    messages: messageTypesOf(named, options),
    fieldNames: fieldNamesOf(named),
  };
}
