/**
 * CEL runtime values as plain JavaScript, chosen so that JSON objects from Kubernetes can be used
 * without copying them into another map type:
 *
 * | CEL type          | JavaScript                                    |
 * |-------------------|-----------------------------------------------|
 * | null_type         | `null`                                        |
 * | bool              | `boolean`                                     |
 * | int               | `bigint` (kept within int64)                  |
 * | uint              | {@link UInt}                                  |
 * | double            | `number`                                      |
 * | string            | `string`                                      |
 * | bytes             | `Uint8Array`                                  |
 * | list              | `readonly CelValue[]`                         |
 * | map               | {@link CelMap}, or a plain object (string keys) from JSON |
 * | duration/timestamp| {@link Duration} / {@link Timestamp}          |
 * | type              | {@link CelType}                               |
 * | optional_type     | {@link Optional}                              |
 * | library types     | subclasses of {@link CelObject} (Quantity, IP, CIDR, URL, Semver, ...) |
 *
 * Integers are `bigint` so that int and double stay distinct types, as CEL requires. JSON input is
 * not converted up front: a map whose prototype is `Object.prototype` (or null) is JSON, and every
 * read out of it goes through {@link fromJson}, so a request costs what its policies read, not what
 * its object weighs. Maps the evaluator builds as plain objects have the {@link BuiltMap} prototype
 * instead: their values are CEL values already (a double 2.0 in one must stay a double).
 */

export class UInt {
  constructor(readonly value: bigint) {}
  toString(): string {
    return `${this.value}u`;
  }
}

/** A span of time in nanoseconds; CEL limits it to about ±10,000 years. */
export class Duration {
  constructor(readonly nanos: bigint) {}
}

/** An instant in nanoseconds since the Unix epoch, between years 0001 and 9999. */
export class Timestamp {
  /**
   * @param nanos the instant, nanoseconds since the Unix epoch
   * @param offset the zone it was parsed in, seconds east of UTC: Go's time.Time keeps the
   *   location time.Parse gave it, so `string()` prints it and arithmetic carries it; equality,
   *   ordering and the accessors without a zone argument look at the instant (UTC) only
   */
  constructor(
    readonly nanos: bigint,
    readonly offset = 0,
  ) {}
}

export class CelType {
  constructor(readonly name: string) {}
  toString(): string {
    return this.name;
  }
}

const NONE_MARK: unique symbol = Symbol("none");

/** optional_type: a value or none. */
export class Optional {
  static readonly none: Optional = new Optional(NONE_MARK);
  private constructor(private readonly inner: CelValue | typeof NONE_MARK) {}
  static of(value: CelValue): Optional {
    return new Optional(value);
  }
  hasValue(): boolean {
    return this.inner !== NONE_MARK;
  }
  /** The wrapped value; throws a CelError on none, as `value()` does in CEL. */
  value(): CelValue {
    if (this.inner === NONE_MARK) throw new CelError("optional.none() dereference");
    return this.inner;
  }
}

/**
 * Base of the library types (Quantity, IP, CIDR, URL, Semver, Format, authorizer values...).
 * A subclass names its CEL type, compares itself to other values, and says how it renders as JSON.
 */
export abstract class CelObject {
  /** The CEL type name, e.g. `kubernetes.Quantity` or `net.IP`. */
  abstract readonly celType: string;
  /** CEL `==`. Values of other types are never equal. */
  abstract equals(other: CelValue): boolean;
  /** The canonical JSON rendering (`"1Gi"`, `"10.0.0.0/8"`). */
  abstract toJSON(): unknown;
}

export type MapKey = string | bigint | boolean | UInt;

/**
 * A CEL map built by an expression (or from a JSON object with non-string keys). Keys are compared
 * with CEL's heterogeneous equality: `1`, `1u` and `1.0` find the same entry.
 */
export class CelMap {
  private readonly byKey = new Map<string | bigint | boolean, readonly [MapKey, CelValue]>();
  constructor(entries?: Iterable<readonly [MapKey, CelValue]>) {
    if (entries) for (const [k, v] of entries) this.set(k, v);
  }
  get size(): number {
    return this.byKey.size;
  }
  /** Adds an entry; returns false if the key was already present (a duplicate in a literal is an error). */
  set(key: MapKey, value: CelValue): boolean {
    const nk = normalizeKey(key);
    const had = this.byKey.has(nk);
    this.byKey.set(nk, [key, value]);
    return !had;
  }
  /** Looks a key up; numbers of any numeric type find integral keys. */
  get(key: CelValue): CelValue | undefined {
    const nk = lookupKey(key);
    if (nk === undefined) return undefined;
    return this.byKey.get(nk)?.[1];
  }
  has(key: CelValue): boolean {
    const nk = lookupKey(key);
    return nk !== undefined && this.byKey.has(nk);
  }
  *keys(): IterableIterator<MapKey> {
    for (const [k] of this.byKey.values()) yield k;
  }
  *entries(): IterableIterator<readonly [MapKey, CelValue]> {
    yield* this.byKey.values();
  }
}

function normalizeKey(key: MapKey): string | bigint | boolean {
  return key instanceof UInt ? key.value : key;
}

function lookupKey(key: CelValue): string | bigint | boolean | undefined {
  switch (typeof key) {
    case "string":
    case "bigint":
    case "boolean":
      return key;
    case "number":
      return Number.isInteger(key) ? BigInt(key) : undefined;
    default:
      return key instanceof UInt ? key.value : undefined;
  }
}

/** A map read from JSON: an object literal whose prototype is Object.prototype or null. */
export interface JsonMap {
  readonly [key: string]: CelValue;
}

export type CelList = readonly CelValue[];

export type CelValue =
  | null
  | boolean
  | bigint
  | number
  | string
  | Uint8Array
  | UInt
  | Duration
  | Timestamp
  | CelType
  | Optional
  | CelObject
  | CelMap
  | CelList
  | JsonMap;

/**
 * An evaluation error. Thrown inside the evaluator and the function libraries (so that `||`, `&&`
 * and the comprehension macros can absorb it as CEL requires) and returned as a value at the API.
 */
export class CelError extends Error {
  /** Id of the expression node that failed, set by the evaluator for the position in messages. */
  exprId: number | undefined;
  constructor(
    message: string,
    readonly kind: "runtime" | "cost" | "timeout" = "runtime",
  ) {
    super(message);
    this.name = "CelError";
  }
}

/**
 * The prototype of the plain-object maps the evaluator builds (map literals with constant string
 * keys, `Object{...}` values): what tells them from JSON input, whose values {@link fromJson} reads.
 * A class, not a null prototype, so V8 keeps these objects in fast mode.
 */
export class BuiltMap {}
const BUILT = BuiltMap.prototype;

/**
 * Sets a member of a plain object. A key `__proto__` (JSON.parse makes such members) would set the
 * object's prototype if assigned, losing the member; it is defined as an own member instead.
 */
export function setMember<T>(out: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** A new, empty built map (see {@link BuiltMap}). */
export function newBuiltMap(): Record<string, CelValue> {
  return new BuiltMap() as Record<string, CelValue>;
}

export function isPlainMap(v: unknown): v is JsonMap {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null || proto === BUILT;
}

/** A map of JSON input (from JSON.parse, YAML or `toCel`): its values are read through fromJson. */
export function isJsonMap(v: unknown): v is JsonMap {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Kubernetes decodes a JSON number as int64 when it is integral and fits, else as a double. */
export function isIntegral(v: number): boolean {
  return Number.isSafeInteger(v) || (Number.isInteger(v) && Math.abs(v) < 2 ** 63);
}

/**
 * A value read out of a JSON map, as CEL sees it: an integral number is an int, anything else a
 * double; a list has its elements converted the same way (copied only when one needs it, which
 * lists of objects and strings never do); a map stays as it is and is read through here in turn.
 * Idempotent, so input already converted by `toCel` reads the same.
 *
 * JSON read exactly (yaml/json-numbers.ts) also holds a `bigint` for an int64 beyond 2^53, read
 * as it is, and a `Number` object for a float64 written with a fraction or exponent whose value is
 * integral (`1.0`), read as a double, as the API server's decoder reads them.
 */
export function fromJson(x: unknown): CelValue {
  switch (typeof x) {
    case "number":
      return isIntegral(x) ? BigInt(x) : x;
    case "object":
      if (x === null) return null;
      if (Array.isArray(x)) return jsonList(x);
      return x instanceof Number ? x.valueOf() : (x as CelValue);
    case "undefined":
      return null;
    default:
      return x as CelValue;
  }
}

function jsonList(a: readonly unknown[]): CelList {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (typeof x === "number" ? isIntegral(x) : x === undefined || Array.isArray(x) || x instanceof Number)
      return convertList(a, i);
  }
  return a as CelList;
}

/** A list being converted by {@link convertList}: its source, the next index, and its copy once one is needed. */
interface ListFrame {
  readonly src: readonly unknown[];
  i: number;
  out: CelValue[] | undefined;
}

/**
 * The elements of a JSON list as CEL values, from index `start` on (those before it need no
 * conversion). Lists nested in it are converted here too, since a list's elements are read as they
 * are, while maps stay JSON and are read through {@link fromJson}. Each element is looked at once
 * and an explicit stack replaces recursion, so the work is linear in the list's size whatever its
 * depth (request data nests as deep as the API server's decoder lets it), and the same on every
 * thread whatever its stack size.
 */
function convertList(root: readonly unknown[], start: number): CelList {
  const stack: ListFrame[] = [{ src: root, i: start, out: undefined }];
  let finished: CelList | undefined;
  for (;;) {
    const f = stack[stack.length - 1] as ListFrame;
    if (finished !== undefined) {
      // The nested list at f.i has been converted.
      if (finished !== f.src[f.i] && f.out === undefined) f.out = f.src.slice(0, f.i) as CelValue[];
      f.out?.push(finished);
      f.i++;
      finished = undefined;
    }
    let nested: readonly unknown[] | undefined;
    while (f.i < f.src.length) {
      const x = f.src[f.i];
      if (Array.isArray(x)) {
        nested = x;
        break;
      }
      const y =
        typeof x === "number"
          ? isIntegral(x)
            ? BigInt(x)
            : x
          : x === undefined
            ? null
            : x instanceof Number
              ? x.valueOf()
              : (x as CelValue);
      if (y !== x && f.out === undefined) f.out = f.src.slice(0, f.i) as CelValue[];
      f.out?.push(y);
      f.i++;
    }
    if (nested !== undefined) {
      stack.push({ src: nested, i: 0, out: undefined });
      continue;
    }
    stack.pop();
    finished = f.out ?? (f.src as CelList);
    if (stack.length === 0) return finished;
  }
}

/**
 * The value of a string key of a plain-object map, converted if the map is JSON; undefined if absent.
 * A member holding undefined is absent, as in the JSON the map stands for (JSON.stringify leaves it
 * out). JSON.parse and YAML make no such member and toCel turns undefined into null, so this is
 * about objects built by hand; reading it this way spares generated code a second lookup (`in`)
 * for every missing field.
 */
export function plainGet(m: JsonMap, key: string): CelValue | undefined {
  if (!Object.hasOwn(m, key)) return undefined;
  const v = m[key];
  if (v === undefined) return undefined;
  return Object.getPrototypeOf(m) === BUILT ? v : fromJson(v);
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const UINT64_MAX = 2n ** 64n - 1n;

/** Checks an int result, as CEL reports int64 overflow as an error. */
export function checkInt(v: bigint): bigint {
  if (v < INT64_MIN || v > INT64_MAX) throw new CelError("integer overflow");
  return v;
}

export function checkUint(v: bigint): UInt {
  if (v < 0n || v > UINT64_MAX) throw new CelError("unsigned integer overflow");
  return new UInt(v);
}

/** The CEL type name of a value, as `type(v)` prints it and as overload errors name it. */
export function typeName(v: CelValue): string {
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "double";
    case "string":
      return "string";
    case "object":
      if (v === null) return "null_type";
      if (Array.isArray(v)) return "list";
      if (v instanceof CelMap || isPlainMap(v)) return "map";
      if (v instanceof UInt) return "uint";
      if (v instanceof Uint8Array) return "bytes";
      if (v instanceof Duration) return "google.protobuf.Duration";
      if (v instanceof Timestamp) return "google.protobuf.Timestamp";
      if (v instanceof Optional) return "optional_type";
      if (v instanceof CelType) return "type";
      if (v instanceof CelObject) return v.celType;
      return "unknown";
    default:
      return "unknown";
  }
}

/**
 * The run-time error when no overload of a function accepts the arguments' types: cel-go's
 * MaybeNoSuchOverload (common/decls/decls.go), the receiver first for a member function. The
 * checker's "found no matching overload for ..." is a compile-time text, never a run-time one.
 */
export function noSuchOverload(fn: string, args: readonly CelValue[]): CelError {
  return new CelError(`no such overload: ${fn}(${args.map(typeName).join(", ")})`);
}

/**
 * cel-go's bare `no such overload` (types.MaybeNoSuchOverloadErr), which `&&`, `||` and the
 * conditional give when an operand that decides is not a bool (interpreter/interpretable.go evalAnd,
 * evalOr; attributes.go conditionalAttribute).
 */
export function noSuchOverloadBare(): CelError {
  return new CelError("no such overload");
}

export function isMap(v: CelValue): v is CelMap | JsonMap {
  return v instanceof CelMap || isPlainMap(v);
}

export function isList(v: CelValue): v is CelList {
  return Array.isArray(v);
}

/** Iterates a map's keys whichever representation it has. */
export function mapKeys(m: CelMap | JsonMap): Iterable<MapKey> {
  return m instanceof CelMap ? m.keys() : Object.keys(m);
}

export function mapEntries(m: CelMap | JsonMap): Iterable<readonly [MapKey, CelValue]> {
  if (m instanceof CelMap) return m.entries();
  const entries = Object.entries(m) as [string, CelValue][];
  if (Object.getPrototypeOf(m) !== BUILT) for (const e of entries) e[1] = fromJson(e[1]);
  return entries;
}

export function mapSize(m: CelMap | JsonMap): number {
  return m instanceof CelMap ? m.size : Object.keys(m).length;
}

/** Map lookup; `undefined` when the key is absent. */
export function mapGet(m: CelMap | JsonMap, key: CelValue): CelValue | undefined {
  if (m instanceof CelMap) return m.get(key);
  return typeof key === "string" ? plainGet(m, key) : undefined;
}
