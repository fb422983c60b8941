/**
 * Reading Kubernetes structs from YAML: the policy format's wording of the reader's problems
 * (apimachinery's "must be ..." style), and the field rules admissionregistration's validation
 * applies again and again (required and optional strings, enums, string lists, list bounds, unique
 * names, wildcards that must stand alone).
 */
import { isMap, isScalar, isSeq } from "yaml";
import type { Field, Wording, YamlMap, YamlNode, YamlReader } from "../yaml/reader.ts";
import { closestName } from "./fields.ts";

/** How a value reads in a message: `"text"`, `number 3`, `a list`. */
export function describe(node: YamlNode): string {
  if (isMap(node)) return "a mapping";
  if (isSeq(node)) return "a list";
  const v = node.value;
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "bigint") return `number ${String(v)}`;
  if (typeof v === "boolean") return `boolean ${String(v)}`;
  return String(v);
}

/** The policy format's wording: Kubernetes' field errors; unknown fields only warn, as kubectl's lenient decoding would drop them. */
export const POLICY_WORDING: Wording = {
  typeCode: "PE_FIELD_TYPE",
  wrongType: (expected, got) => `must be a ${expected}; got ${describe(got)}`,
  missingItem: "must be a value",
  fieldName(key) {
    if (!isScalar(key) || key.value === null || typeof key.value === "object") return undefined;
    return String(key.value);
  },
  refusedKey: "field names must be strings",
  unknownFieldCode: "PE_FIELD_VALUE",
  unknownFieldSeverity: "warning",
  unknownField(key, known) {
    const hint = closestName(key, known);
    return `unknown field "${key}"${hint ? ` (did you mean "${hint}"?)` : ""}`;
  },
};

export function quoteList(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

function isBlank(s: string): boolean {
  return s.trim().length === 0;
}

export function missing(view: YamlMap, key: string, message = `missing required field "${key}"`): void {
  view.r.report("PE_MISSING_FIELD", view.child(key), view.offset, message);
}

/** A string that must be present and not blank. */
export function requiredString(view: YamlMap, key: string, message?: string): string | undefined {
  const f = view.field(key);
  if (!f) {
    missing(view, key, message);
    return undefined;
  }
  const s = view.r.string(f);
  if (s === undefined) return undefined;
  if (isBlank(s)) {
    view.r.report("PE_FIELD_VALUE", f.path, f.offset, "must not be empty");
    return undefined;
  }
  return s;
}

/** A string that may be absent (or "", which Kubernetes reads as unset) but must not be only blanks. */
export function optionalNonEmptyString(view: YamlMap, key: string): string | undefined {
  const f = view.field(key);
  if (!f) return undefined;
  const s = view.r.string(f);
  if (s === "") return undefined;
  if (s !== undefined && isBlank(s)) {
    view.r.report("PE_FIELD_VALUE", f.path, f.offset, "must be non-empty if specified");
    return undefined;
  }
  return s;
}

/** A list of strings and where each is written. */
export interface StringList {
  readonly field: Field;
  readonly items: { value: string; field: Field }[];
}

/** A list of strings; wrongly typed items are reported and left out. */
export function stringList(view: YamlMap, key: string): StringList | undefined {
  const f = view.field(key);
  if (!f) return undefined;
  const items = view.r.list(f);
  if (!items) return undefined;
  const out: { value: string; field: Field }[] = [];
  for (const item of items) {
    const s = view.r.string(item);
    if (s !== undefined) out.push({ value: s, field: item });
  }
  return { field: f, items: out };
}

export function oneOf<T extends string>(
  r: YamlReader,
  f: Field,
  value: string,
  allowed: readonly T[],
): T | undefined {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  r.report(
    "PE_FIELD_VALUE",
    f.path,
    f.offset,
    `must be one of ${quoteList(allowed)}; got ${JSON.stringify(value)}`,
  );
  return undefined;
}

/** An enum field; `fallback` when it is absent, undefined when it is wrong (and reported). */
export function enumValue<T extends string>(
  view: YamlMap,
  key: string,
  allowed: readonly T[],
  fallback: T,
): T | undefined {
  const f = view.field(key);
  if (!f) return fallback;
  const s = view.r.string(f);
  return s === undefined ? undefined : oneOf(view.r, f, s, allowed);
}

/** Reports each of a format check's errors at the value; true when there were none. */
export function reportFormat(r: YamlReader, f: Field, value: string, errors: readonly string[]): boolean {
  for (const e of errors) r.report("PE_FIELD_VALUE", f.path, f.offset, `${e}; got ${JSON.stringify(value)}`);
  return errors.length === 0;
}

/** A list field that must have at least one item. */
export function requireItems<T>(
  view: YamlMap,
  key: string,
  list: { field: Field; items: T[] } | undefined,
): void {
  if (list === undefined) {
    if (!view.field(key)) missing(view, key);
  } else if (isSeq(list.field.node) && list.field.node.items.length === 0) {
    view.r.report("PE_FIELD_VALUE", list.field.path, list.field.offset, "must contain at least one item");
  }
}

/** `*` matches everything, so listing anything next to it is a mistake the API server rejects. */
export function wildcardAlone(r: YamlReader, list: StringList, what: string): void {
  if (list.items.length > 1 && list.items.some((i) => i.value === "*")) {
    r.report(
      "PE_FIELD_VALUE",
      list.field.path,
      list.field.offset,
      `if '*' is present, must not specify other ${what}`,
    );
  }
}

/** A list field's items; more than `max` is reported (the items are still read, to report them too). */
export function boundedSeq(r: YamlReader, spec: YamlMap, key: string, max?: number): Field[] {
  const f = spec.field(key);
  const items = f ? r.list(f) : undefined;
  if (!f || !items) return [];
  if (max !== undefined && items.length > max)
    r.report("PE_FIELD_VALUE", f.path, f.offset, `must have at most ${max} items; got ${items.length}`);
  return items;
}

/**
 * Names that must be unique within one list. `first` reports a repeat, with the line of its first
 * use, and returns false for it.
 */
export class UniqueNames {
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly r: YamlReader,
    private readonly what: string,
  ) {}
  first(field: Field, name: string): boolean {
    const line = this.seen.get(name);
    if (line !== undefined) {
      this.r.report(
        "PE_DUPLICATE",
        field.path,
        field.offset,
        `duplicate ${this.what} ${JSON.stringify(name)} (first at line ${line})`,
      );
      return false;
    }
    this.seen.set(name, this.r.locate(field.path, field.offset).line);
    return true;
  }
}
