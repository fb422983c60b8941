/**
 * JSON numbers read as the API server reads them, and written back as the same numbers.
 *
 * The API server decodes a request's object with sigs.k8s.io/json's PreserveInts (json.go,
 * internal/golang/encoding/json/kubernetes_patch.go; k8s.io/apimachinery/pkg/util/json's
 * convertNumber does the same): a number token is an int64 when its text has no `.` or exponent,
 * parses as an integer and fits in int64; otherwise a float64, and a token beyond float64's range
 * is a decoding error. JSON.parse makes every number a double, which loses the digits of an integer
 * beyond 2^53 and cannot tell `1.0` (a float64) from `1` (an int64). So text in which that can
 * matter (a number token of 16 or more digits, or one with a fraction or exponent and an integral
 * value) goes to an exact parser, whose values keep the difference:
 *
 * - an integer within ±(2^53-1) stays a `number` (as JSON.parse gives it);
 * - an integer beyond that and within int64 is a `bigint`;
 * - an integer beyond int64 is a `number` (the float64 Go gives it);
 * - a token with a fraction or exponent whose value is integral (and within int64's magnitude, where
 *   CEL would otherwise read it as an int) is a `Number` object, which CEL reads as a double; any
 *   other such token is a `number`.
 *
 * Text where none of this can occur goes to JSON.parse: an ordinary review pays for one regular
 * expression search. Node 22's JSON.parse passes the source text to a reviver, but a reviver costs
 * a call per value; the one exact path serves every Node version alike.
 *
 * request/json-deep.ts stringifyJson writes such values back: a bigint as its digits, a `Number`
 * object as the number (Go's encoder writes float64 1 as `1` too), so a value read and written is the
 * same number.
 */
import type { ScalarTag, Tags } from "yaml";

/**
 * A float64 whose value is integral, as {@link parseJson} reads `1.0` or `1e3`: a Number object,
 * which JSON.stringify, structuredClone and the YAML writer all take for the number it holds.
 */
// biome-ignore lint/complexity/noBannedTypes: the wrapper object is the mark itself.
export type FloatMark = Number;

/** A JSON number as read here: a number, an int64 beyond 2^53 as a bigint, or a {@link FloatMark}. */
export type JsonNumber = number | bigint | FloatMark;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TWO_63 = 2 ** 63;

/**
 * A number token right after `:`, `,` or `[` (where JSON puts values) with 16 or more leading
 * digits, or with a fraction or exponent. Inside a string the same characters only cost a look.
 */
const CANDIDATE = /[:,[][ \t\n\r]*(-?(?:\d{16}|\d+[.eE])[\d.eE+-]*)/g;
const TOP_LEVEL_NUMBER = /^[ \t\n\r]*[-\d]/;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** What may follow a value: whitespace, `,`, `]`, `}`, or the end of the text. */
const ENDS_VALUE = /^[ \t\n\r,\]}]?$/;

/** The value of a number token as the API server's decoder reads it (see the module comment). */
export function readNumberToken(token: string): JsonNumber {
  const n = Number(token);
  if (!Number.isFinite(n)) throw new RangeError(`number ${token} is beyond the range of a float64`);
  if (!/[.eE]/.test(token)) {
    if (Number.isSafeInteger(n)) return n === 0 ? 0 : n;
    const b = BigInt(token);
    return b >= INT64_MIN && b <= INT64_MAX ? b : n;
  }
  // A Number object marks a float64 whose value is integral.
  return Number.isInteger(n) && Math.abs(n) < TWO_63 ? new Number(n) : n;
}

/** Whether JSON.parse would read a number of `text` other than as the API server reads it. */
export function needsExactNumbers(text: string): boolean {
  // A number as the whole text (no review is one) is read exactly; CANDIDATE looks after `:,[`.
  if (TOP_LEVEL_NUMBER.test(text)) return true;
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    const token = m[1] as string;
    // Not a number token (an image tag `:2.14.1` in a string): JSON.parse reads the string.
    if (!JSON_NUMBER.test(token) || !ENDS_VALUE.test(text.charAt(CANDIDATE.lastIndex))) continue;
    if (!/[.eE]/.test(token)) return true;
    const n = Number(token);
    if (!Number.isFinite(n) || (Number.isInteger(n) && Math.abs(n) < TWO_63)) return true;
  }
  return false;
}

/**
 * JSON text parsed with its numbers read as the API server reads them. Throws a SyntaxError on text
 * that is not JSON (as JSON.parse does), a RangeError on a number beyond float64's range (which Go's
 * decoder refuses).
 */
export function parseJson(text: string): unknown {
  return needsExactNumbers(text) ? parseExact(text) : JSON.parse(text);
}

type Container = unknown[] | Record<string, unknown>;

interface Frame {
  readonly container: Container;
  key: string;
}

/** Sets a member as JSON.parse does: a `__proto__` key is an own member, not the prototype. */
function setMember(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

const NUMBER_TOKEN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class ExactParser {
  i = 0;
  constructor(readonly text: string) {}

  fail(what = "unexpected character"): never {
    throw new SyntaxError(`${what} in JSON at position ${this.i}`);
  }

  ws(): number {
    const t = this.text;
    let c = t.charCodeAt(this.i);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++this.i);
    return c;
  }

  /** A string token; JSON.parse validates and unescapes it. */
  string(): string {
    const t = this.text;
    let end = this.i;
    for (;;) {
      end = t.indexOf('"', end + 1);
      if (end < 0) this.fail("unterminated string");
      let slashes = 0;
      while (t.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
      if (slashes % 2 === 0) break;
    }
    const s = JSON.parse(t.slice(this.i, end + 1)) as string;
    this.i = end + 1;
    return s;
  }

  key(): string {
    if (this.ws() !== 0x22) this.fail();
    const k = this.string();
    if (this.ws() !== 0x3a) this.fail();
    this.i++;
    return k;
  }

  /** A scalar, or an empty container; undefined when a container opens (the caller pushes it). */
  scalar(stack: Frame[]): unknown {
    const t = this.text;
    const c = this.ws();
    if (c === 0x7b || c === 0x5b) {
      this.i++;
      const close = c === 0x7b ? 0x7d : 0x5d;
      if (this.ws() === close) {
        this.i++;
        return c === 0x7b ? {} : [];
      }
      if (c === 0x7b) {
        const container: Record<string, unknown> = {};
        stack.push({ container, key: this.key() });
      } else stack.push({ container: [], key: "" });
      return undefined;
    }
    if (c === 0x22) return this.string();
    for (const [word, value] of LITERALS)
      if (t.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    NUMBER_TOKEN.lastIndex = this.i;
    const m = NUMBER_TOKEN.exec(t);
    if (m === null) this.fail();
    this.i += m[0].length;
    return readNumberToken(m[0]);
  }

  parse(): unknown {
    const stack: Frame[] = [];
    for (;;) {
      let value = this.scalar(stack);
      if (value === undefined) continue;
      // Attach the value, closing every container it completes.
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) {
          this.ws();
          if (this.i !== this.text.length) this.fail();
          return value;
        }
        const isArray = Array.isArray(top.container);
        if (isArray) (top.container as unknown[]).push(value);
        else setMember(top.container as Record<string, unknown>, top.key, value);
        const c = this.ws();
        this.i++;
        if (c === 0x2c) {
          if (!isArray) top.key = this.key();
          break;
        }
        if (c !== (isArray ? 0x5d : 0x7d)) {
          this.i--;
          this.fail();
        }
        stack.pop();
        value = top.container;
      }
    }
  }
}

const LITERALS: readonly (readonly [string, unknown])[] = [
  ["true", true],
  ["false", false],
  ["null", null],
];

/** The exact parser on its own (iterative, so any depth JSON.parse takes parses on any thread). */
export function parseExact(text: string): unknown {
  return new ExactParser(text).parse();
}

/** Whether `v` is a JSON number as read here: a number, a bigint, or a Number object (a float64). */
export function isJsonNumber(v: unknown): v is JsonNumber {
  return typeof v === "number" || typeof v === "bigint" || v instanceof Number;
}

/** Whether `v` is a JSON object (a map): not an array, and not a Number object (a number). */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Number);
}

/**
 * Two JSON numbers compared by value, as Go compares the int64s and float64s it decoded them to
 * (a float64 and an int64 of one value are equal in a JSON Patch `test`, which decodes both alike).
 */
export function jsonNumbersEqual(a: JsonNumber, b: JsonNumber): boolean {
  const x = a instanceof Number ? a.valueOf() : a;
  const y = b instanceof Number ? b.valueOf() : b;
  if (typeof x === typeof y) return x === y;
  const n = typeof x === "number" ? x : (y as number);
  const big = typeof x === "bigint" ? x : (y as bigint);
  return Number.isInteger(n) && BigInt(n) === big;
}

/** An integer as the API server reads its digits: a number within ±(2^53-1), a bigint within int64, else a float64. */
function narrowInt(b: bigint): number | bigint {
  if (b >= -MAX_SAFE && b <= MAX_SAFE) return Number(b);
  return b >= INT64_MIN && b <= INT64_MAX ? b : Number(b);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT_TAG = "tag:yaml.org,2002:int";

/**
 * The yaml package's `customTags` for data that becomes objects: YAML integers read as kubectl and
 * the API server read YAML. sigs.k8s.io/yaml's YAMLToJSON decodes a YAML integer to an int64 (or a
 * uint64, or a float64 beyond) and writes it to JSON as its digits, which the API server's decoder
 * reads as an int64 when it fits, else as a float64: so an integer beyond 2^53 is kept exactly
 * (a bigint) and one beyond int64 is a double. A YAML float is written by Go's encoder with no
 * fraction when integral (`1.0` becomes `1`), so it is an int in the end, as the yaml package
 * reads it.
 */
export function exactYamlInts(tags: Tags): Tags {
  return tags.map((t) => {
    if (typeof t !== "object" || t.tag !== INT_TAG || !("resolve" in t) || t.resolve === undefined) return t;
    const scalar = t as ScalarTag;
    const resolve = scalar.resolve;
    return {
      ...scalar,
      resolve: (str, onError, options) => {
        const v = resolve(str, onError, { ...options, intAsBigInt: true });
        return typeof v === "bigint" ? narrowInt(v) : v;
      },
    } satisfies ScalarTag;
  });
}

/** The yaml package's options for data files: integers as {@link exactYamlInts} reads them. */
export const EXACT_YAML_NUMBERS = { customTags: exactYamlInts } as const;

const LOOKS_LIKE_JSON = /^\s*[[{]/;

/**
 * A data file's text read as JSON when it is JSON (it opens with `{` or `[` and parses), with
 * {@link parseJson}: so a JSON file's numbers are the API server's decoder's, whoever reads the file.
 * A RangeError for a number beyond float64's range; undefined for any other text, which the YAML
 * parser then reads (and locates any error in).
 */
export function readJsonText(text: string): { readonly value: unknown } | RangeError | undefined {
  if (!LOOKS_LIKE_JSON.test(text)) return undefined;
  try {
    return { value: parseJson(text) };
  } catch (e) {
    return e instanceof RangeError ? e : undefined;
  }
}
