/**
 * Merge metadata for server-side apply: how each node of a kind's objects merges, as
 * structured-merge-diff reads it (sigs.k8s.io/structured-merge-diff schema/elements.go) after
 * kube-openapi converts the OpenAPI schema (k8s.io/kube-openapi/pkg/schemaconv openapi.go, smd.go
 * ToSchemaFromOpenAPI). The MutatingAdmissionPolicy merge of an ApplyConfiguration walks these nodes.
 *
 * The conversion, rule by rule:
 * - `type: object` is a map atom: its properties are its fields; unknown fields take the
 *   additionalProperties schema, are deduced at run time when there are no properties, when
 *   additionalProperties is `true` or under x-kubernetes-preserve-unknown-fields (which holds for the
 *   whole subtree below it), and are not allowed otherwise. x-kubernetes-map-type `atomic` makes it
 *   atomic, `granular` separable, and unset is separable too (elements.go: "the default behavior for
 *   maps is separable").
 * - `type: array` is a list: x-kubernetes-list-type `atomic` (and no marker at all) atomic, `set`
 *   associative without keys, `map` associative keyed by x-kubernetes-list-map-keys; without a list
 *   type, x-kubernetes-patch-strategy `merge` with a merge key is a keyed list and without one a set,
 *   `retainKeys` atomic. Items missing mean untyped elements.
 * - integer and number are numeric scalars, boolean boolean, string string (format byte too); a
 *   string of any other format (date-time, int-or-string) is untyped.
 * - No type (x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields alone) is untyped: the
 *   value decides, a scalar as a scalar, a list as an atomic list of untyped, a map as a separable map
 *   of deduced values.
 * - A `$ref` names its definition; an x-kubernetes-map-type beside it overrides the relationship of
 *   the type it names, for that field only. resource.Quantity is an untyped scalar and
 *   runtime.RawExtension untyped with atomic list and map (hard-coded in schemaconv).
 */
import { type DefinitionLookup, type KindSchema, refOf, type Schema } from "./schema.ts";

export type ScalarKind = "numeric" | "string" | "boolean" | "untyped";

export interface ScalarNode {
  readonly kind: "scalar";
  readonly scalar: ScalarKind;
}

export interface ListNode {
  readonly kind: "list";
  /** `atomic`: replaced whole. `associative`: a set (no keys) or a map-list merged by its keys. */
  readonly relationship: "atomic" | "associative";
  readonly keys: readonly string[];
  element(): MergeNode;
}

export interface MapNode {
  readonly kind: "map";
  /** `atomic`: replaced whole, never merged into. `separable`: each field or key merges on its own. */
  readonly relationship: "atomic" | "separable";
  /** The declared fields, in schema order. */
  readonly fields: readonly string[];
  /** A declared field's node; undefined for a name that is not a field. */
  field(name: string): MergeNode | undefined;
  /** A declared field's default (server-side apply uses it for a list-map key left out). */
  fieldDefault(name: string): unknown;
  /** The node of keys that are not fields; undefined when such keys are not allowed. */
  elements(): MergeNode | undefined;
}

/** A value whose shape decides: scalar, list or map. */
export interface UntypedNode {
  readonly kind: "untyped";
  readonly list: ListNode;
  readonly map: MapNode;
}

export type MergeNode = ScalarNode | ListNode | MapNode | UntypedNode;

/** How a node merges, in the words of the server-side apply documentation. */
export type MergeStrategy =
  | "scalar"
  | "atomic-struct"
  | "granular-struct"
  | "atomic-map"
  | "granular-map"
  | "atomic-list"
  | "set"
  | "map-list"
  | "deduced";

export function mergeStrategy(n: MergeNode): MergeStrategy {
  switch (n.kind) {
    case "scalar":
      return "scalar";
    case "untyped":
      return "deduced";
    case "list":
      return n.relationship === "atomic" ? "atomic-list" : n.keys.length > 0 ? "map-list" : "set";
    case "map": {
      // A map atom with fields is a struct; one with only an element type is a map.
      const isMap = n.fields.length === 0 && n.elements() !== undefined;
      if (isMap) return n.relationship === "atomic" ? "atomic-map" : "granular-map";
      return n.relationship === "atomic" ? "atomic-struct" : "granular-struct";
    }
  }
}

const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension";

const UNTYPED_SCALAR: ScalarNode = Object.freeze({ kind: "scalar", scalar: "untyped" });

function memo<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}

/** smd.go's __untyped_atomic_ (atomic list and map of itself) and __untyped_deduced_ (separable map). */
function untypedNode(mapRelationship: "atomic" | "separable"): UntypedNode {
  const self: UntypedNode = {
    kind: "untyped",
    list: { kind: "list", relationship: "atomic", keys: [], element: () => UNTYPED_ATOMIC },
    map: {
      kind: "map",
      relationship: mapRelationship,
      fields: [],
      field: () => undefined,
      fieldDefault: () => undefined,
      elements: () => (mapRelationship === "atomic" ? UNTYPED_ATOMIC : UNTYPED_DEDUCED),
    },
  };
  return self;
}
const UNTYPED_ATOMIC: UntypedNode = untypedNode("atomic");
const UNTYPED_DEDUCED: UntypedNode = untypedNode("separable");

/** The element relationship x-kubernetes-map-type asks for (getMapElementRelationship); "" when unset. */
function mapRelationship(s: Schema): "atomic" | "separable" | "" {
  const t = s["x-kubernetes-map-type"];
  return t === "atomic" ? "atomic" : t === "granular" ? "separable" : "";
}

/** getListElementRelationship. */
function listRelationship(s: Schema): {
  relationship: "atomic" | "associative";
  keys: readonly string[];
} {
  const listType = s["x-kubernetes-list-type"];
  if (listType !== undefined) {
    if (listType === "set") return { relationship: "associative", keys: [] };
    if (listType === "map")
      return { relationship: "associative", keys: s["x-kubernetes-list-map-keys"] ?? [] };
    return { relationship: "atomic", keys: [] };
  }
  const strategy = s["x-kubernetes-patch-strategy"];
  if (strategy === "merge" || strategy === "merge,retainKeys") {
    const key = s["x-kubernetes-patch-merge-key"];
    return { relationship: "associative", keys: typeof key === "string" ? [key] : [] };
  }
  return { relationship: "atomic", keys: [] };
}

class Converter {
  private readonly named = new Map<string, MergeNode>();

  constructor(private readonly definition: DefinitionLookup) {}

  /** A named type, converted once (preserve-unknown-fields starts afresh in each, as in ToSchemaFromOpenAPI). */
  namedType(name: string): MergeNode {
    let n = this.named.get(name);
    if (n === undefined) {
      if (name === QUANTITY) n = UNTYPED_SCALAR;
      else if (name === RAW_EXTENSION) n = UNTYPED_ATOMIC;
      else {
        const def = this.definition(name);
        // A reference to nothing: deduce from the value rather than refuse it.
        n = def === undefined ? UNTYPED_DEDUCED : this.schema(def, false);
      }
      this.named.set(name, n);
    }
    return n;
  }

  /** makeOpenAPIRef: a reference (with a field-level map-type override) or an inline schema. */
  typeRef(s: Schema, preserve: boolean): MergeNode {
    const ref = refOf(s);
    if (ref === undefined) return this.schema(s, preserve);
    const target = this.namedType(ref);
    const override = mapRelationship(s);
    if (override === "" || target.kind !== "map") return target;
    return { ...target, relationship: override };
  }

  /** visitSpec + parseSchema. */
  schema(s: Schema, inherited: boolean): MergeNode {
    const preserve = inherited || s["x-kubernetes-preserve-unknown-fields"] === true;
    switch (s.type ?? "") {
      case "":
        return { kind: "untyped", list: this.list(s, preserve), map: this.map(s, preserve) };
      case "object":
        return this.map(s, preserve);
      case "array":
        return this.list(s, preserve);
      case "integer":
      case "number":
        return { kind: "scalar", scalar: "numeric" };
      case "boolean":
        return { kind: "scalar", scalar: "boolean" };
      case "string":
        return { kind: "scalar", scalar: !s.format || s.format === "byte" ? "string" : "untyped" };
      default:
        return UNTYPED_SCALAR;
    }
  }

  /** parseObject. */
  map(s: Schema, preserve: boolean): MapNode {
    const props = s.properties ?? {};
    const names = Object.keys(props);
    const fieldNodes = new Map<string, () => MergeNode>();
    for (const name of names)
      fieldNodes.set(
        name,
        memo(() => this.typeRef(props[name]!, preserve)),
      );
    const ap = s.additionalProperties;
    const elements = memo((): MergeNode | undefined => {
      if (ap === undefined) return preserve || names.length === 0 ? UNTYPED_DEDUCED : undefined;
      if (typeof ap === "object") return this.typeRef(ap, preserve);
      return ap ? UNTYPED_DEDUCED : undefined;
    });
    return {
      kind: "map",
      relationship: mapRelationship(s) === "atomic" ? "atomic" : "separable",
      fields: names,
      field: (name) => (Object.hasOwn(props, name) ? fieldNodes.get(name)?.() : undefined),
      fieldDefault: (name) => (Object.hasOwn(props, name) ? props[name]!.default : undefined),
      elements,
    };
  }

  /** parseList. */
  list(s: Schema, preserve: boolean): ListNode {
    const { relationship, keys } = listRelationship(s);
    const items = s.items;
    return {
      kind: "list",
      relationship,
      keys,
      element: memo(() => (items === undefined ? UNTYPED_ATOMIC : this.typeRef(items, preserve))),
    };
  }
}

/**
 * What structured-merge-diff deduces a value without a schema to be (smd.go __untyped_deduced_):
 * a scalar, an atomic list, or a granular map of the same again.
 */
export function deducedMergeSchema(): MergeNode {
  return UNTYPED_DEDUCED;
}

/**
 * The merge metadata of a kind's objects. Nodes are converted as they are first visited, and each
 * named definition once per call.
 */
export function kindMergeSchema(k: KindSchema): MergeNode {
  return new Converter(k.definition).typeRef(k.schema, false);
}

/**
 * The node at a path below `root`: a string steps into a map's field or key, a number into a list's
 * element (any index: a list's elements share one node). Undefined where the schema allows nothing
 * (an unknown field of a struct that has no element type, a step into a scalar).
 */
export function mergeNodeAt(root: MergeNode, path: readonly (string | number)[]): MergeNode | undefined {
  let n: MergeNode | undefined = root;
  for (const seg of path) {
    if (n === undefined) return undefined;
    if (n.kind === "untyped") n = typeof seg === "number" ? n.list : n.map;
    if (typeof seg === "number") n = n.kind === "list" ? n.element() : undefined;
    else if (n.kind === "map") n = n.field(seg) ?? (n.fields.includes(seg) ? undefined : n.elements());
    else n = undefined;
  }
  return n;
}
