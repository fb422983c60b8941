/**
 * Whether a CustomResourceDefinition's schema is structural, as the API server decides before it
 * accepts the CRD: apiextensions-apiserver pkg/apiserver/schema/validation.go (ValidateStructural:
 * the invariants), pkg/apiserver/schema/listtype/validation.go and the schema checks of
 * pkg/apis/apiextensions/validation/validation.go that concern structure ($ref, properties beside
 * additionalProperties, the x-kubernetes-list-type and -map-type rules). Each fault is reported at
 * its path inside the schema, with Kubernetes' words.
 *
 * Left out: validateStructuralCompleteness (a field named in a value validation must also be
 * specified outside it), default and enum value checks, x-kubernetes-validations rules.
 */
import { childPath } from "./paths.ts";
import type { Schema } from "./schema.ts";

export interface StructuralIssue {
  /** The path below the schema's root (`properties.spec.properties.replicas.type`). */
  readonly path: string;
  readonly message: string;
}

type Level = "root" | "item" | "field";

/** The x-kubernetes-int-or-string patterns validation.go lets carry `type` in anyOf. */
function isIntOrStringAnyOf(list: readonly Schema[] | undefined): boolean {
  return (
    list?.length === 2 &&
    list.every((s) => Object.keys(s).length === 1) &&
    list[0]?.type === "integer" &&
    list[1]?.type === "string"
  );
}

/** Keys a value validation (inside allOf/anyOf/oneOf/not) must not carry, and what to say. */
const FORBIDDEN_NESTED: readonly (readonly [keyof Schema, string])[] = [
  ["type", "must be empty to be structural"],
  ["additionalProperties", "must be undefined to be structural"],
  ["default", "must be undefined to be structural"],
  ["description", "must be empty to be structural"],
  ["title", "must be empty to be structural"],
  ["nullable", "must be false to be structural"],
  ["x-kubernetes-preserve-unknown-fields", "must be false to be structural"],
  ["x-kubernetes-embedded-resource", "must be false to be structural"],
  ["x-kubernetes-int-or-string", "must be false to be structural"],
  ["x-kubernetes-list-map-keys", "must be empty to be structural"],
  ["x-kubernetes-list-type", "must be undefined to be structural"],
  ["x-kubernetes-map-type", "must be undefined to be structural"],
  ["x-kubernetes-validations", "must be empty to be structural"],
] as unknown as readonly (readonly [keyof Schema, string])[];

class Validator {
  readonly issues: StructuralIssue[] = [];

  private add(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  node(s: Schema, lvl: Level, path: string): void {
    const at = (k: string) => childPath(path, k);
    if (s.$ref !== undefined)
      this.add(at("$ref"), "Forbidden: $ref is not allowed in a CustomResourceDefinition schema");
    if (s.type === "array" && s.items === undefined)
      this.add(at("items"), "Required value: must be specified");
    if (s.items !== undefined) {
      if (Array.isArray(s.items) || typeof s.items !== "object")
        this.add(at("items"), "Forbidden: items must be a schema object and not an array");
      else this.node(s.items, "item", at("items"));
    }
    for (const [k, v] of Object.entries(s.properties ?? {}))
      this.node(v, "field", childPath(at("properties"), k));
    const ap = s.additionalProperties;
    if (ap !== undefined) {
      if (lvl === "root") this.add(at("additionalProperties"), "Forbidden: must not be used at the root");
      if (typeof ap === "object") this.node(ap, "field", at("additionalProperties"));
      if (s.properties !== undefined && Object.keys(s.properties).length > 0 && ap !== false)
        this.add(
          at("additionalProperties"),
          "Forbidden: additionalProperties and properties are mutual exclusive",
        );
    }
    this.extensions(s, path);
    this.valueValidation(s, path, isIntOrStringAnyOf(s.anyOf), isIntOrStringAnyOf(s.allOf?.[0]?.anyOf));
    this.typeRules(s, lvl, path);
    this.listType(s, path);
    if (s.properties?.metadata !== undefined && lvl === "root")
      this.rootMetadata(s.properties.metadata, at("properties"));
  }

  private typeRules(s: Schema, lvl: Level, path: string): void {
    const at = (k: string) => childPath(path, k);
    const embedded = s["x-kubernetes-embedded-resource"] === true;
    const preserve = s["x-kubernetes-preserve-unknown-fields"] === true;
    const intOrString = s["x-kubernetes-int-or-string"] === true;
    if (embedded && s.type !== "object") {
      if (s.type === undefined)
        this.add(at("type"), "Required value: must be object if x-kubernetes-embedded-resource is true");
      else
        this.add(
          at("type"),
          `Invalid value: "${s.type}": must be object if x-kubernetes-embedded-resource is true`,
        );
    } else if ((s.type === undefined || s.type === "") && !intOrString && !preserve) {
      const where = {
        root: "at the root",
        item: "for specified array items",
        field: "for specified object fields",
      };
      this.add(at("type"), `Required value: must not be empty ${where[lvl]}`);
    }
    if (embedded && s.additionalProperties !== undefined)
      this.add(
        at("additionalProperties"),
        "Forbidden: must not be used if x-kubernetes-embedded-resource is set",
      );
    if (lvl === "root" && s.type !== undefined && s.type !== "" && s.type !== "object")
      this.add(at("type"), `Invalid value: "${s.type}": must be object at the root`);
    if (embedded && !preserve && Object.keys(s.properties ?? {}).length === 0)
      this.add(
        at("properties"),
        "Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
      );
    if ((lvl === "root" || embedded) && s.properties) {
      for (const k of ["kind", "apiVersion"] as const) {
        const p = s.properties[k];
        if (p !== undefined && p.type !== "string")
          this.add(
            childPath(childPath(at("properties"), k), "type"),
            `Invalid value: "${p.type ?? ""}": must be string`,
          );
      }
      const m = s.properties.metadata;
      if (m !== undefined && m.type !== "object")
        this.add(
          childPath(childPath(at("properties"), "metadata"), "type"),
          `Invalid value: "${m.type ?? ""}": must be object`,
        );
    }
  }

  private extensions(s: Schema, path: string): void {
    if (s["x-kubernetes-int-or-string"] === true && s["x-kubernetes-preserve-unknown-fields"] === true)
      this.add(
        childPath(path, "x-kubernetes-preserve-unknown-fields"),
        "Invalid value: true: must be false if x-kubernetes-int-or-string is true",
      );
    if (s["x-kubernetes-int-or-string"] === true && s["x-kubernetes-embedded-resource"] === true)
      this.add(
        childPath(path, "x-kubernetes-embedded-resource"),
        "Invalid value: true: must be false if x-kubernetes-int-or-string is true",
      );
  }

  /**
   * validateValueValidation: the members of allOf, anyOf, oneOf and not are value validations.
   * An anyOf of exactly `{type: integer}, {type: string}` (directly, or as allOf's first member) is
   * how int-or-string is written and is not looked into.
   */
  private valueValidation(s: Schema, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): void {
    const at = (j: string, i: number) => childPath(childPath(path, j), i);
    const each = (j: "allOf" | "anyOf" | "oneOf", skipFirst: boolean) => {
      (s[j] ?? []).forEach((v, i) => {
        this.nested(v, at(j, i), skipFirst && i === 0, false);
      });
    };
    if (!skipAnyOf) each("anyOf", false);
    each("allOf", skipFirstAllOfAnyOf);
    each("oneOf", false);
    if (s.not !== undefined) this.nested(s.not, childPath(path, "not"), false, false);
  }

  /** validateNestedValueValidation. */
  private nested(v: Schema, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): void {
    this.valueValidation(v, path, skipAnyOf, skipFirstAllOfAnyOf);
    if (v.items !== undefined && typeof v.items === "object")
      this.nested(v.items, childPath(path, "items"), false, false);
    for (const [k, p] of Object.entries(v.properties ?? {}))
      this.nested(p, childPath(childPath(path, "properties"), k), false, false);
    for (const [key, message] of FORBIDDEN_NESTED) {
      const value = (v as Record<string, unknown>)[key];
      if (
        value === undefined ||
        value === false ||
        value === "" ||
        (Array.isArray(value) && value.length === 0)
      )
        continue;
      this.add(childPath(path, key), `Forbidden: ${message}`);
    }
    if (v.properties?.metadata !== undefined)
      this.add(
        childPath(childPath(path, "properties"), "metadata"),
        "Forbidden: must not be specified in a nested context",
      );
  }

  /**
   * validateStructuralMetadataInvariants at the root: metadata may name `name` and `generateName`
   * (with whatever they say) and nothing else; anything more, a description included, is refused.
   */
  private rootMetadata(m: Schema, propertiesPath: string): void {
    const { type: _type, default: _default, properties, ...rest } = m;
    const names = Object.keys(properties ?? {});
    const onlyNames = names.every((n) => n === "name" || n === "generateName");
    const droppedProperties = properties === undefined || (names.length > 0 && onlyNames);
    if (!droppedProperties || Object.keys(rest).length > 0)
      this.add(
        childPath(propertiesPath, "metadata"),
        "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
      );
  }

  /** listtype/validation.go and the map-type rule of the CRD API validation. */
  private listType(s: Schema, path: string): void {
    const lt = s["x-kubernetes-list-type"];
    const keys = s["x-kubernetes-list-map-keys"];
    const at = (k: string) => childPath(path, k);
    if (s["x-kubernetes-map-type"] !== undefined) {
      const mt = s["x-kubernetes-map-type"];
      if (mt !== "atomic" && mt !== "granular")
        this.add(
          at("x-kubernetes-map-type"),
          `Unsupported value: "${mt}": supported values: "atomic", "granular"`,
        );
      else if (s.type !== "object")
        this.add(
          at("type"),
          `Invalid value: "${s.type ?? ""}": must be object if x-kubernetes-map-type is specified`,
        );
    }
    if (keys !== undefined && lt !== "map")
      this.add(
        at("x-kubernetes-list-map-keys"),
        'Forbidden: must only be used if x-kubernetes-list-type is "map"',
      );
    if (lt === undefined) return;
    if (s.type !== "array") {
      this.add(at("x-kubernetes-list-type"), "Invalid value: must only be used if type is array");
      return;
    }
    const items = s.items;
    switch (lt) {
      case "atomic":
        return;
      case "set":
        if (items && items.type === "object" && items["x-kubernetes-map-type"] !== "atomic")
          this.add(
            at("items"),
            'Invalid value: must be of scalar type or atomic when x-kubernetes-list-type is "set"',
          );
        if (items && items.type === "array" && items["x-kubernetes-list-type"] !== "atomic")
          this.add(
            at("items"),
            'Invalid value: must be of scalar type or atomic when x-kubernetes-list-type is "set"',
          );
        return;
      case "map":
        this.mapList(s, path);
        return;
      default:
        this.add(
          at("x-kubernetes-list-type"),
          `Unsupported value: "${lt}": supported values: "atomic", "map", "set"`,
        );
    }
  }

  private mapList(s: Schema, path: string): void {
    const keys = s["x-kubernetes-list-map-keys"] ?? [];
    const items = s.items;
    const at = (k: string) => childPath(path, k);
    if (keys.length === 0)
      this.add(
        at("x-kubernetes-list-map-keys"),
        'Required value: must not be empty if x-kubernetes-list-type is "map"',
      );
    if (items === undefined) return;
    if (items.type !== "object") {
      this.add(
        childPath(at("items"), "type"),
        'Invalid value: must be object when x-kubernetes-list-type is "map"',
      );
      return;
    }
    if (items["x-kubernetes-map-type"] === "atomic")
      this.add(
        childPath(at("items"), "x-kubernetes-map-type"),
        'Invalid value: must be granular when x-kubernetes-list-type is "map"',
      );
    const required = new Set(items.required ?? []);
    keys.forEach((key, i) => {
      const p = items.properties?.[key];
      const keyPath = childPath(at("x-kubernetes-list-map-keys"), i);
      if (p === undefined) {
        this.add(keyPath, `Invalid value: "${key}": entries must all be names of item properties`);
        return;
      }
      if (p.type !== "string" && p.type !== "integer" && p.type !== "number" && p.type !== "boolean")
        this.add(keyPath, `Invalid value: "${key}": must be of scalar type`);
      if (!required.has(key) && p.default === undefined)
        this.add(keyPath, `Invalid value: "${key}": all map keys must be required or have a default value`);
    });
  }
}

/** The faults that make a schema not structural; empty for a structural schema. */
export function structuralIssues(root: Schema): StructuralIssue[] {
  const v = new Validator();
  v.node(root, "root", "");
  return v.issues;
}
