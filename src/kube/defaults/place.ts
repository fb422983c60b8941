/**
 * Writing defaults into a JSON object the way the API server's Go defaulting functions write them
 * into typed structs, and recording each field written.
 *
 * Go's zero values decide what "unset" means, so each kind of field has its own test: a string is
 * unset when empty, a pointer when nil, an integer when 0, a slice or map when it has no elements. In
 * JSON, absent and null decode to those zero values. A field holding the wrong JSON type would not
 * have decoded at all; it is left as it is. A struct field (a Go value, never nil) is made only when
 * a default is written into it, so defaulting adds no empty objects the API server would not show.
 */

export type JsonObject = Record<string, unknown>;

/** One change the API server's defaulting made to an object. */
export interface DefaultedField {
  /** Where: `spec.template.spec.containers[0].imagePullPolicy`, `metadata.labels["kubernetes.io/metadata.name"]`. */
  readonly path: string;
  /** The value written; absent when the field was removed. */
  readonly value?: unknown;
  /** Defaulting removed the field (SetDefaults_Service drops sessionAffinityConfig when affinity is None). */
  readonly removed?: true;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Go's zero-value tests, for JSON values. */
export const unset = {
  /** A string field: absent, null or "". */
  string: (v: unknown): boolean => v === undefined || v === null || v === "",
  /** A pointer field: absent or null. */
  pointer: (v: unknown): boolean => v === undefined || v === null,
  /** A non-pointer integer field: absent, null or 0. */
  integer: (v: unknown): boolean => v === undefined || v === null || v === 0,
  /** `len(x) == 0` on a slice, map or string. */
  empty: (v: unknown): boolean =>
    v === undefined ||
    v === null ||
    v === "" ||
    (Array.isArray(v) && v.length === 0) ||
    (isObject(v) && Object.keys(v).length === 0),
} as const;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function childPath(path: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === "" ? key : `${path}.${key}`;
}

/** RFC 6901: the pointer to `key` inside the value at `pointer`. */
function childPointer(pointer: string, key: string): string {
  return `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * A place in the object being defaulted: an object that exists, or a struct field that will be made
 * when something is first written into it.
 */
export class Place {
  private constructor(
    private obj: JsonObject | undefined,
    private readonly parent: Place | undefined,
    private readonly key: string,
    readonly path: string,
    private readonly changes: DefaultedField[],
    /** Each change's JSON Pointer, in the order of `changes`, when the caller wants them. */
    private readonly pointers: string[] | undefined,
    private readonly jsonPointer: string,
  ) {}

  /** The top of an object, recording its changes into `changes` (and their JSON Pointers into `pointers`). */
  static root(obj: JsonObject, changes: DefaultedField[], pointers?: string[]): Place {
    return new Place(obj, undefined, "", "", changes, pointers, "");
  }

  private child(obj: JsonObject | undefined, key: string, path: string): Place {
    return new Place(obj, this, key, path, this.changes, this.pointers, childPointer(this.jsonPointer, key));
  }

  private record(key: string, change: DefaultedField): void {
    this.changes.push(change);
    this.pointers?.push(childPointer(this.jsonPointer, key));
  }

  /** The value of a field, undefined when absent (or when this place is not made yet). */
  get(key: string): unknown {
    return this.obj?.[key];
  }

  /** The names of the fields present (none for a struct field not made yet). */
  keys(): string[] {
    return this.obj ? Object.keys(this.obj) : [];
  }

  /** A struct field: the object there, made when first written into; undefined if the field holds a non-object. */
  struct(key: string): Place | undefined {
    const v = this.get(key);
    if (v === undefined || v === null) return this.child(undefined, key, childPath(this.path, key));
    return isObject(v) ? this.child(v, key, childPath(this.path, key)) : undefined;
  }

  /** A pointer field: the object there, or undefined when it is nil (absent or null) or not an object. */
  pointer(key: string): Place | undefined {
    const v = this.get(key);
    return isObject(v) ? this.child(v, key, childPath(this.path, key)) : undefined;
  }

  /** The elements of a list field that are objects, each with its place. */
  items(key: string): Place[] {
    const v = this.get(key);
    if (!Array.isArray(v)) return [];
    const out: Place[] = [];
    v.forEach((item, i) => {
      if (isObject(item)) {
        const list = new Place(
          undefined,
          this,
          key,
          "",
          this.changes,
          this.pointers,
          childPointer(this.jsonPointer, key),
        );
        out.push(list.child(item, String(i), `${childPath(this.path, key)}[${i}]`));
      }
    });
    return out;
  }

  /** The object itself, made (with its parents) if it is a struct field not written yet. */
  private made(): JsonObject {
    if (this.obj) return this.obj;
    const created: JsonObject = {};
    (this.parent as Place).made()[this.key] = created;
    this.obj = created;
    return created;
  }

  /** Writes a field and records it. */
  set(key: string, value: unknown): void {
    this.made()[key] = value;
    this.record(key, { path: childPath(this.path, key), value: structuredClone(value) });
  }

  /** Writes a field when `isUnset` says Go would see its zero value; says whether it wrote. */
  default(key: string, value: unknown, isUnset: (v: unknown) => boolean): boolean {
    if (!isUnset(this.get(key))) return false;
    this.set(key, value);
    return true;
  }

  /** Removes a field (a pointer set back to nil) and records it, if it held something. */
  remove(key: string): void {
    const v = this.get(key);
    if (!this.obj || v === undefined || v === null) return;
    delete this.obj[key];
    this.record(key, { path: childPath(this.path, key), removed: true });
  }
}
