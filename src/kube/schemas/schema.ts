/**
 * The structural schema model shared by built-in kinds and custom resources: OpenAPI v3 as the API
 * server hands it to CEL and to server-side apply, reduced to what typing and merging read.
 *
 * Built-in schemas refer to shared definitions by name (`$ref`); a reference replaces the whole node
 * it stands in, and a reference back to a definition being expanded becomes an empty object, as
 * k8s.io/apiserver/pkg/cel/openapi/resolver/refs.go PopulateRefs does. Custom resources' schemas
 * have no references except the ObjectMeta of their published root (see crd.ts).
 */

export interface Schema {
  readonly type?: string;
  readonly format?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: Schema | boolean;
  readonly items?: Schema;
  readonly required?: readonly string[];
  readonly nullable?: boolean;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly maxLength?: number;
  readonly maxItems?: number;
  readonly maxProperties?: number;
  /** A definition's name (built-ins), or `#/components/schemas/<name>`. */
  readonly $ref?: string;
  readonly allOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly not?: Schema;
  readonly "x-kubernetes-int-or-string"?: boolean;
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean;
  readonly "x-kubernetes-embedded-resource"?: boolean;
  readonly "x-kubernetes-list-type"?: string;
  readonly "x-kubernetes-list-map-keys"?: readonly string[];
  readonly "x-kubernetes-map-type"?: string;
  /** Strategic-merge-patch markers: server-side apply reads them where no list type is given. */
  readonly "x-kubernetes-patch-strategy"?: string;
  readonly "x-kubernetes-patch-merge-key"?: string;
}

/** Finds a definition by the name a `$ref` gives. */
export type DefinitionLookup = (name: string) => Schema | undefined;

/** The schema of one kind (built-in or custom), with the definitions its references name. */
export interface KindSchema {
  readonly apiVersion: string;
  readonly kind: string;
  readonly schema: Schema;
  readonly definition: DefinitionLookup;
  /** Where the schema comes from: `builtin` data, or the CRD's file. */
  readonly origin: "builtin" | "crd";
  /** The definition the kind's schema is (built-ins: `io.k8s.api.apps.v1.Deployment`). */
  readonly definitionName?: string;
  /** A custom resource's resource name (its CRD's `spec.names.plural`), as resourceRules name it. */
  readonly resource?: string;
}

const COMPONENTS = "#/components/schemas/";

/**
 * The definition a node refers to: its `$ref`, or the single `$ref` inside `allOf` that OpenAPI v3
 * wraps references in to keep their description (refs.go refOf).
 */
export function refOf(s: Schema): string | undefined {
  if (s.$ref !== undefined) return s.$ref.startsWith(COMPONENTS) ? s.$ref.slice(COMPONENTS.length) : s.$ref;
  for (const a of s.allOf ?? []) {
    const r = refOf(a);
    if (r !== undefined) return r;
  }
  return undefined;
}

/** refs.go's placeholder for a reference back into a definition being expanded. */
const CIRCULAR: Schema = Object.freeze({ type: "object" });

/**
 * A schema node with its reference followed: the definition replaces the node wholesale (siblings of
 * the `$ref` are dropped, as PopulateRefs does), `expanding` holds the definitions on the way down,
 * and a circular reference is an empty object. Undefined when a reference names no definition.
 */
export function deref(
  s: Schema,
  definition: DefinitionLookup,
  expanding: ReadonlySet<string>,
): { readonly schema: Schema; readonly expanding: ReadonlySet<string> } | undefined {
  const ref = refOf(s);
  if (ref === undefined) return { schema: s, expanding };
  if (expanding.has(ref)) return { schema: CIRCULAR, expanding };
  const target = definition(ref);
  if (target === undefined) return undefined;
  const next = new Set(expanding);
  next.add(ref);
  return deref(target, definition, next);
}

/** common.Schema IsXIntOrString: built-in types carry the format, custom resources the extension. */
export function isIntOrString(s: Schema): boolean {
  return s.format === "int-or-string" || s["x-kubernetes-int-or-string"] === true;
}
