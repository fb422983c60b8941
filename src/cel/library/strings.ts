/**
 * The CEL strings extension (cel-go ext/strings.go) as the Kubernetes admission environment has it:
 * charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join,
 * format and strings.quote: version 2, which Kubernetes pins from 1.29 (environment/base.go
 * `ext.StringsVersion(2)`), as cel-go v0.26 implements it. `reverse` is version 3: Kubernetes does
 * not have it, and {@link stringsV3Library} is enabled by no environment.
 *
 * Indices count code points (Go runes), never UTF-16 units, so `'😀a'.charAt(1)` is `'a'`.
 *
 * The offset forms of indexOf/lastIndexOf return -1 for an offset at or past the end of the string
 * and fail only on a negative one (cel-go v0.22 and later, in Kubernetes from 1.32; the cel-spec
 * suite still expects the older error); the one-argument forms never fail (`''.lastIndexOf('@@')`
 * is -1). `format` lives in string-format.ts.
 */
import { checkBuiltSize } from "../runtime/built-size.ts";
import { codePointLength } from "../runtime/code-points.ts";
import {
  CelError,
  type CelList,
  type CelValue,
  isMap,
  mapEntries,
  noSuchOverload,
  typeName,
} from "../runtime/values.ts";
import { quoteWith } from "../go/quote.ts";
import { format, formatString } from "./string-format.ts";
import { fn, globalFn, type Library, memberFn, type Overload } from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Code points

function codePoints(s: string): string[] {
  return Array.from(s);
}

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Number of UTF-16 units taken by the first `count` code points of `s`. */
function utf16Offset(s: string, count: number): number {
  let units = 0;
  let seen = 0;
  for (const ch of s) {
    if (seen === count) break;
    units += ch.length;
    seen++;
  }
  return units;
}

/** Code-point index of the UTF-16 position `units` in `s`. */
function codePointIndex(s: string, units: number): number {
  return runeCount(s.slice(0, units));
}

/** Bytes of the UTF-8 encoding, which is how Go measures a string's length. */
function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

function outOfRange(i: bigint | number): CelError {
  return new CelError(`index out of range: ${i}`);
}

// ---------------------------------------------------------------------------------------------
// The member functions

function charAt(s: string, i: bigint): string {
  const cps = codePoints(s);
  if (i < 0n || i > BigInt(cps.length)) throw outOfRange(i);
  return i === BigInt(cps.length) ? "" : (cps[Number(i)] as string);
}

function indexOf(s: string, sub: string): bigint {
  if (sub === "") return 0n;
  const at = s.indexOf(sub);
  return at < 0 ? -1n : BigInt(codePointIndex(s, at));
}

/** cel-go ext/strings.go indexOfOffset: an empty `sub` is found at any offset, even a negative one. */
function indexOfFrom(s: string, sub: string, offset: bigint): bigint {
  if (sub === "") return offset;
  const n = runeCount(s);
  if (offset < 0n) throw outOfRange(offset);
  if (offset >= BigInt(n)) return -1n;
  const at = s.indexOf(sub, utf16Offset(s, Number(offset)));
  return at < 0 ? -1n : BigInt(codePointIndex(s, at));
}

function lastIndexOf(s: string, sub: string): bigint {
  const n = runeCount(s);
  if (sub === "") return BigInt(n);
  if (n === 0) return -1n;
  return lastIndexOfFrom(s, sub, BigInt(n - 1));
}

/** cel-go ext/strings.go lastIndexOfOffset, with indexOfFrom's rules for the offset. */
function lastIndexOfFrom(s: string, sub: string, offset: bigint): bigint {
  if (sub === "") return offset;
  const n = runeCount(s);
  if (offset < 0n) throw outOfRange(offset);
  if (offset >= BigInt(n)) return -1n;
  // A match must start at or before the offset and also fit inside the string.
  const last = Math.min(Number(offset), n - runeCount(sub));
  if (last < 0) return -1n;
  const at = s.lastIndexOf(sub, utf16Offset(s, last));
  return at < 0 ? -1n : BigInt(codePointIndex(s, at));
}

/**
 * cel-go before v0.22 (Kubernetes before 1.32, ext/strings.go indexOfOffset/lastIndexOfOffset): an
 * offset at or past the end is `index out of range` too, and so `''.lastIndexOf('x')` (its offset
 * is -1) fails.
 */
function indexOfFromBefore122(s: string, sub: string, offset: bigint): bigint {
  if (sub === "") return offset;
  if (offset < 0n || offset >= BigInt(runeCount(s))) throw outOfRange(offset);
  return indexOfFrom(s, sub, offset);
}

function lastIndexOfFromBefore122(s: string, sub: string, offset: bigint): bigint {
  if (sub === "") return offset;
  if (offset < 0n || offset >= BigInt(runeCount(s))) throw outOfRange(offset);
  return lastIndexOfFrom(s, sub, offset);
}

function lastIndexOfBefore122(s: string, sub: string): bigint {
  const n = runeCount(s);
  if (sub === "") return BigInt(n);
  return lastIndexOfFromBefore122(s, sub, BigInt(n - 1));
}

/**
 * The overloads whose behaviour a release before 1.32 has otherwise, by id: an environment for such
 * a release uses these in place of the library's (cel/env/environment.ts).
 */
export const STRINGS_BEFORE_CEL_GO_0_22: ReadonlyMap<string, Overload> = new Map(
  [
    memberFn(
      "string_index_of_string_int",
      ["string", "string", "int"],
      "int",
      indexOfFromBefore122,
      searchCost,
    ),
    memberFn("string_last_index_of_string", ["string", "string"], "int", lastIndexOfBefore122, searchCost),
    memberFn(
      "string_last_index_of_string_int",
      ["string", "string", "int"],
      "int",
      lastIndexOfFromBefore122,
      searchCost,
    ),
  ].map((o) => [o.id, o]),
);

function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function upperAscii(s: string): string {
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}

/** How many matches a Go-style count allows: negative means all. */
function limitOf(n: bigint | undefined): number {
  if (n === undefined || n < 0n) return Number.POSITIVE_INFINITY;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** Go's strings.Replace: an empty `old` matches before every code point and at the end. */
function replace(s: string, old: string, repl: string, n?: bigint): string {
  let left = limitOf(n);
  if (left === 0 || old === repl) return s;
  if (repl.length > old.length) checkBuiltSize(replacedSize(s, old, repl, left), "string");
  let out = "";
  if (old === "") {
    for (const ch of s) {
      if (left > 0) {
        out += repl;
        left--;
      }
      out += ch;
    }
    return left > 0 ? out + repl : out;
  }
  let from = 0;
  while (left > 0) {
    const at = s.indexOf(old, from);
    if (at < 0) break;
    out += s.slice(from, at) + repl;
    from = at + old.length;
    left--;
  }
  return out + s.slice(from);
}

/**
 * The length of `replace(s, old, repl)` with at most `limit` replacements, counted before it is
 * built: Kubernetes charges replace by its input alone, whatever the replacement makes of it.
 */
function replacedSize(s: string, old: string, repl: string, limit: number): number {
  let count = 0;
  if (old === "") count = Math.min(limit, codePointLength(s) + 1);
  else for (let at = s.indexOf(old); at >= 0 && count < limit; at = s.indexOf(old, at + old.length)) count++;
  return s.length + count * (repl.length - old.length);
}

/** Go's strings.SplitN: an empty separator splits into code points; n limits the parts. */
function split(s: string, sep: string, n?: bigint): string[] {
  const limit = limitOf(n);
  if (limit === 0) return [];
  if (sep === "") {
    const cps = codePoints(s);
    if (cps.length <= limit) return cps;
    return [...cps.slice(0, limit - 1), cps.slice(limit - 1).join("")];
  }
  const parts: string[] = [];
  let from = 0;
  while (parts.length < limit - 1) {
    const at = s.indexOf(sep, from);
    if (at < 0) break;
    parts.push(s.slice(from, at));
    from = at + sep.length;
  }
  parts.push(s.slice(from));
  return parts;
}

function substring(s: string, start: bigint): string {
  const cps = codePoints(s);
  if (start < 0n || start > BigInt(cps.length)) throw outOfRange(start);
  return cps.slice(Number(start)).join("");
}

function substringRange(s: string, start: bigint, end: bigint): string {
  if (start > end) throw new CelError(`invalid substring range. start: ${start}, end: ${end}`);
  const cps = codePoints(s);
  const n = BigInt(cps.length);
  if (start < 0n || start > n) throw outOfRange(start);
  if (end < 0n || end > n) throw outOfRange(end);
  return cps.slice(Number(start), Number(end)).join("");
}

/**
 * Go's unicode.IsSpace, which strings.TrimSpace uses. Unlike JavaScript's trim it includes U+0085
 * and excludes U+FEFF.
 */
function isGoSpace(cp: number): boolean {
  if (cp <= 0xff) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d) || cp === 0x85 || cp === 0xa0;
  return (
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

function trim(s: string): string {
  let start = 0;
  let end = s.length;
  // Every Go space is in the BMP, so checking single UTF-16 units is enough.
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

function reverse(s: string): string {
  return codePoints(s).reverse().join("");
}

/**
 * cel-go declares join on list(string), and its dispatcher checks a list argument by its first
 * element only (common/types/types.go defaultIsAssignableRuntimeType): a first element of another
 * type is no overload at all (decls.go MaybeNoSuchOverload), a later one join's own error.
 */
function join(list: CelList, sep?: string): string {
  if (list.length > 0 && typeof list[0] !== "string")
    throw noSuchOverload("join", sep === undefined ? [list] : [list, sep]);
  sep ??= "";
  let size = list.length > 0 ? (list.length - 1) * sep.length : 0;
  for (const elem of list) if (typeof elem === "string") size += elem.length;
  checkBuiltSize(size, "string");
  let out = "";
  list.forEach((elem, i) => {
    if (typeof elem !== "string") throw new CelError(`join: invalid input: ${describe(elem)}`);
    out += i === 0 ? elem : sep + elem;
  });
  return out;
}

/** A value as Go's %v would print it in an error message, as near as we can tell. */
export function describe(v: CelValue): string {
  try {
    return formatString(v);
  } catch {
    return typeName(v);
  }
}

// ---------------------------------------------------------------------------------------------
// strings.quote

/**
 * cel-go's strings.quote (ext/strings.go): Go's escapes for the quote, the backslash and the C
 * control characters, every other rune as it is (a NUL stays a NUL), invalid UTF-8 as U+FFFD.
 */
function quote(s: string): string {
  return quoteWith(s, () => true);
}

// ---------------------------------------------------------------------------------------------
// Costs: Kubernetes' library/cost.go (CallCost) where it names the function, else a traversal of
// the receiver as newer cel-go charges. Kubernetes' figure replaces the base cost of 1, so each
// declared cost is what lies beyond that base.

const TRAVERSAL = 0.1;

function traversal(s: string, factor = 1): number {
  return Math.ceil(runeCount(s) * factor * TRAVERSAL);
}

function beyondBase(total: number): number {
  return Math.max(0, total - 1);
}

/** Kubernetes' traversalCost: whole units per tenth of a UTF-8 byte, rounded down. */
function searchCost(s: string): number {
  return beyondBase(Math.floor(utf8Length(s) * TRAVERSAL));
}

const receiverCost = (s: string): number => beyondBase(traversal(s));
const rebuildCost = (s: string): number => beyondBase(traversal(s, 2));

/** Kubernetes charges join by the size of its result, twice. */
function joinCost(list: CelList, sep = ""): number {
  let size = 0;
  for (const elem of list) if (typeof elem === "string") size += runeCount(elem);
  if (list.length > 1) size += runeCount(sep) * (list.length - 1);
  return beyondBase(Math.ceil(size * 2 * TRAVERSAL));
}

/** A format call reads its string once and every value it renders. */
function valueSize(v: CelValue): number {
  if (typeof v === "string") return runeCount(v);
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) {
    let n = 0;
    for (const e of v as CelList) n += valueSize(e);
    return n;
  }
  if (v !== null && typeof v === "object" && isMap(v)) {
    let n = 0;
    for (const [k, e] of mapEntries(v)) n += valueSize(k) + valueSize(e);
    return n;
  }
  return 1;
}

function formatCost(f: string, args: CelList): number {
  return beyondBase(Math.ceil((runeCount(f) + valueSize(args)) * TRAVERSAL));
}

// ---------------------------------------------------------------------------------------------
// The library

export const stringsLibrary: Library = {
  name: "cel.lib.ext.strings",
  availability: "kubernetes",
  functions: [
    fn("charAt", memberFn("string_char_at_int", ["string", "int"], "string", charAt, receiverCost)),
    fn(
      "indexOf",
      memberFn("string_index_of_string", ["string", "string"], "int", indexOf, searchCost),
      memberFn("string_index_of_string_int", ["string", "string", "int"], "int", indexOfFrom, searchCost),
    ),
    fn(
      "lastIndexOf",
      memberFn("string_last_index_of_string", ["string", "string"], "int", lastIndexOf, searchCost),
      memberFn(
        "string_last_index_of_string_int",
        ["string", "string", "int"],
        "int",
        lastIndexOfFrom,
        searchCost,
      ),
    ),
    fn("lowerAscii", memberFn("string_lower_ascii", ["string"], "string", lowerAscii, receiverCost)),
    fn("upperAscii", memberFn("string_upper_ascii", ["string"], "string", upperAscii, receiverCost)),
    fn(
      "replace",
      memberFn(
        "string_replace_string_string",
        ["string", "string", "string"],
        "string",
        (s: string, old: string, repl: string) => replace(s, old, repl),
        rebuildCost,
      ),
      memberFn(
        "string_replace_string_string_int",
        ["string", "string", "string", "int"],
        "string",
        (s: string, old: string, repl: string, n: bigint) => replace(s, old, repl, n),
        rebuildCost,
      ),
    ),
    fn(
      "split",
      memberFn(
        "string_split_string",
        ["string", "string"],
        "list",
        (s: string, sep: string) => split(s, sep),
        rebuildCost,
      ),
      memberFn(
        "string_split_string_int",
        ["string", "string", "int"],
        "list",
        (s: string, sep: string, n: bigint) => split(s, sep, n),
        rebuildCost,
      ),
    ),
    fn(
      "substring",
      memberFn("string_substring_int", ["string", "int"], "string", substring, receiverCost),
      memberFn("string_substring_int_int", ["string", "int", "int"], "string", substringRange, receiverCost),
    ),
    fn("trim", memberFn("string_trim", ["string"], "string", trim, receiverCost)),
    fn(
      "join",
      memberFn(
        "list_join",
        ["list"],
        "string",
        (l: CelList) => join(l),
        (l: CelList) => joinCost(l),
      ),
      memberFn(
        "list_join_string",
        ["list", "string"],
        "string",
        (l: CelList, sep: string) => join(l, sep),
        joinCost,
      ),
    ),
    fn("format", memberFn("string_format", ["string", "list"], "string", checkedFormat, formatCost)),
    fn("strings.quote", globalFn("strings_quote", ["string"], "string", quote, receiverCost)),
  ],
};

/**
 * `format` with celgate's size limit (runtime/built-size.ts) on its result. Checked once the result
 * is made, unlike the other builders: what each argument prints as is known only then. The result
 * is at most the sum of the arguments' renderings, and each argument is within the limit already.
 */
function checkedFormat(f: string, args: CelList): string {
  const out = format(f, args);
  checkBuiltSize(out.length, "string");
  return out;
}

/**
 * Version 3 of the strings extension adds `reverse`, which no Kubernetes release has: kept as a
 * library of its own, as check/decls/strings.ts keeps its declaration, that no environment
 * enables, so `'abc'.reverse()` does not compile.
 */
export const stringsV3Library: Library = {
  name: "cel.lib.ext.strings.v3",
  availability: "none",
  functions: [fn("reverse", memberFn("string_reverse", ["string"], "string", reverse, receiverCost))],
};
