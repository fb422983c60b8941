/**
 * Regular expressions with RE2 semantics (what CEL's `matches` and Kubernetes' `find`/`findAll` use in
 * Go), in time linear in the input.
 *
 * Every pattern is first parsed by `@bufbuild/re2` (a port of RE2/J), so syntax errors carry Go's
 * messages (`error parsing regexp: missing closing ): ...`). The pattern is then translated into an
 * equivalent JavaScript pattern that V8's linear-time engine accepts (checked by compiling it with the
 * `l` flag). It is run without that flag, on V8's ordinary compiled engine, which is tens of times
 * faster on everyday patterns; V8 is told to move an execution to the linear engine once it has
 * backtracked 50,000 times (`--enable-experimental-regexp-engine-on-excessive-backtracks`), which
 * bounds the worst case. That V8 flag is process-wide: it can only help other regular expressions.
 *
 * What cannot be translated faithfully (Unicode classes, case folding beyond ASCII, mixed single-line
 * and multi-line anchors, loops over sub-patterns that can match empty) runs on RE2/J's own automaton,
 * with a small Pike VM over its compiled program for match positions, since RE2/J's public API only
 * answers yes or no.
 */
import v8 from "node:v8";
import { RE2JS } from "@bufbuild/re2";
import type { CelRegex } from "./library/types.ts";
import { hasSurrogate } from "./runtime/code-points.ts";
import { CelError } from "./runtime/values.ts";

export type RegexEngine = "v8-linear" | "re2js";

const CACHE_LIMIT = 1000;

interface CacheEntry {
  readonly regex?: CompiledRegex;
  readonly error?: string;
}

// A Map iterates in insertion order, so re-inserting on a hit makes the first key the least recently used.
const cache = new Map<string, CacheEntry>();

/** Compiles a pattern with RE2 syntax and semantics; throws a CelError with Go's message if invalid. */
export function compileRegex(pattern: string): CelRegex {
  return lookup(pattern);
}

/** Which engine runs a (valid) pattern: V8's linear engine, or the RE2/J fallback. */
export function regexEngine(pattern: string): RegexEngine {
  return lookup(pattern).engine;
}

/** Compiles a pattern for one engine only, bypassing the cache; lets tests compare the two engines. */
export function compileRegexWith(pattern: string, engine: RegexEngine): CelRegex {
  const re2 = parseRe2(pattern);
  if (engine === "re2js") return new Re2Regex(re2);
  const js = buildLinear(pattern);
  if (js === undefined)
    throw new Error(`pattern ${JSON.stringify(pattern)} is not translated to V8's linear engine`);
  return new V8Regex(js.re, js.multiline, re2);
}

function lookup(pattern: string): CompiledRegex {
  const hit = cache.get(pattern);
  if (hit !== undefined) {
    cache.delete(pattern);
    cache.set(pattern, hit);
    if (hit.error !== undefined) throw new CelError(hit.error);
    return hit.regex as CompiledRegex;
  }
  let entry: CacheEntry;
  try {
    entry = { regex: build(pattern) };
  } catch (e) {
    if (!(e instanceof CelError)) throw e;
    entry = { error: e.message };
  }
  cache.set(pattern, entry);
  if (cache.size > CACHE_LIMIT) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  if (entry.error !== undefined) throw new CelError(entry.error);
  return entry.regex as CompiledRegex;
}

interface CompiledRegex extends CelRegex {
  readonly engine: RegexEngine;
}

function parseRe2(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    throw new CelError(e instanceof Error ? e.message : `error parsing regexp: ${String(e)}`);
  }
}

function build(pattern: string): CompiledRegex {
  const re2 = parseRe2(pattern);
  const js = buildLinear(pattern);
  return js === undefined ? new Re2Regex(re2) : new V8Regex(js.re, js.multiline, re2);
}

// ---------------------------------------------------------------------------------------------
// V8's linear engine

let linearAvailable: boolean | undefined;

/** The V8 flags are set once per process; without the linear engine every pattern uses the fallback. */
function linearEngineAvailable(): boolean {
  if (linearAvailable === undefined) {
    try {
      v8.setFlagsFromString("--enable-experimental-regexp-engine");
      v8.setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
      // Built from a variable: a literal `/a/l` would not parse where the flag is unknown.
      const probe = "l";
      new RegExp("a", probe);
      linearAvailable = true;
    } catch {
      linearAvailable = false;
    }
  }
  return linearAvailable;
}

function buildLinear(pattern: string): { re: RegExp; multiline: boolean } | undefined {
  if (!linearEngineAvailable()) return undefined;
  let translated: Translation;
  try {
    translated = translate(pattern);
  } catch (e) {
    if (e instanceof Untranslatable) return undefined;
    throw e;
  }
  const flags = translated.multiline ? "gm" : "g";
  try {
    // Only a pattern the linear engine accepts can be moved to it when backtracking gets excessive.
    new RegExp(translated.source, `l${flags}`);
  } catch {
    // V8 refuses some valid constructs in linear mode (a quantified `^`, very large patterns).
    return undefined;
  }
  return { re: new RegExp(translated.source, flags), multiline: translated.multiline };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

const OTHER_LINE_TERMINATORS = /[\r\u2028\u2029]/;

interface WellFormedCheck {
  isWellFormed(): boolean;
}

class V8Regex implements CompiledRegex {
  readonly engine = "v8-linear";
  private fallback: Re2Regex | undefined;
  /**
   * The pattern without the `g` flag, for `test`: a global RegExp reads and writes its lastIndex
   * on every test, which `matchAt` needs and a yes-or-no answer does not.
   */
  private readonly tester: RegExp;

  constructor(
    private readonly re: RegExp,
    private readonly multiline: boolean,
    private readonly re2: RE2JS,
  ) {
    this.tester = new RegExp(re.source, re.flags.replace("g", ""));
  }

  /**
   * The translation is exact for well-formed UTF-16; a lone surrogate (RE2 would read it as one rune),
   * or a line terminator JavaScript's `m` flag knows but RE2's `(?m)` does not, goes to RE2/J.
   */
  private slow(text: string): Re2Regex | undefined {
    const unsafe =
      !(text as unknown as WellFormedCheck).isWellFormed() ||
      (this.multiline && OTHER_LINE_TERMINATORS.test(text));
    if (!unsafe) return undefined;
    this.fallback ??= new Re2Regex(this.re2);
    return this.fallback;
  }

  test(text: string): boolean {
    return hasSurrogate(text) ? this.careful(text) : this.testWithoutSurrogates(text);
  }

  testWithoutSurrogates(text: string): boolean {
    // Without surrogates no match can start inside a pair, so V8's own test answers (no match
    // array, no substring): most of what this wrapper cost over a plain RegExp.
    if (this.multiline && OTHER_LINE_TERMINATORS.test(text)) return this.careful(text);
    return this.tester.test(text);
  }

  private careful(text: string): boolean {
    const slow = this.slow(text);
    if (slow) return slow.test(text);
    return this.matchAt(text, 0) !== undefined;
  }

  find(text: string): string | undefined {
    const slow = this.slow(text);
    if (slow) return slow.find(text);
    const m = this.matchAt(text, 0);
    return m === undefined ? undefined : text.slice(m[0], m[1]);
  }

  findAll(text: string, limit: number): string[] {
    const slow = this.slow(text);
    if (slow) return slow.findAll(text, limit);
    return findAllWith(text, limit, (pos) => this.matchAt(text, pos));
  }

  /** The leftmost-first match starting at or after `pos`, as [start, end). */
  private matchAt(text: string, pos: number): [number, number] | undefined {
    let from = pos;
    for (;;) {
      this.re.lastIndex = from;
      const m = this.re.exec(text);
      if (m === null) return undefined;
      const start = m.index;
      const end = start + m[0].length;
      // Only an empty match can fall between the halves of a surrogate pair, where RE2, reading
      // whole code points, never looks; the search goes on from the next position, as RE2's would.
      if (
        start > 0 &&
        isLowSurrogate(text.charCodeAt(start)) &&
        isHighSurrogate(text.charCodeAt(start - 1))
      ) {
        from = start + 1;
        continue;
      }
      return [start, end];
    }
  }
}

/** Go's `FindAllString`: successive matches, an empty match abutting the previous one skipped. */
function findAllWith(
  text: string,
  limit: number,
  matchAt: (pos: number) => [number, number] | undefined,
): string[] {
  const out: string[] = [];
  const max = limit < 0 ? Number.POSITIVE_INFINITY : limit;
  let pos = 0;
  let prevEnd = -1;
  while (out.length < max && pos <= text.length) {
    const m = matchAt(pos);
    if (m === undefined) break;
    const [start, end] = m;
    let accept = true;
    if (end === pos) {
      if (start === prevEnd) accept = false;
      pos += pos < text.length ? codePointWidth(text, pos) : 1;
    } else {
      pos = end;
    }
    prevEnd = end;
    if (accept) out.push(text.slice(start, end));
  }
  return out;
}

function codePointWidth(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return isHighSurrogate(c) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
}

// ---------------------------------------------------------------------------------------------
// Translation of RE2 syntax to a JavaScript pattern for the linear engine (no `u` or `i` flag:
// V8's linear engine refuses both, so code points and case folding are spelled out here).

class Untranslatable extends Error {}

interface Translation {
  source: string;
  multiline: boolean;
}

interface Flags {
  fold: boolean;
  multiline: boolean;
  dotNl: boolean;
  ungreedy: boolean;
}

/** A set of code points as sorted, disjoint, non-adjacent inclusive [lo, hi] ranges. */
type CharSet = Array<[number, number]>;

const MAX_RUNE = 0x10ffff;

function normalize(ranges: CharSet): CharSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: CharSet = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) {
      if (hi > last[1]) last[1] = hi;
    } else {
      out.push([lo, hi]);
    }
  }
  return out;
}

function complement(set: CharSet): CharSet {
  const out: CharSet = [];
  let next = 0;
  for (const [lo, hi] of normalize(set)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_RUNE) out.push([next, MAX_RUNE]);
  return out;
}

const DIGIT: CharSet = [[0x30, 0x39]];
const SPACE: CharSet = [
  [0x09, 0x0a],
  [0x0c, 0x0d],
  [0x20, 0x20],
];
const WORD: CharSet = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];

const POSIX_CLASSES: Record<string, CharSet> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: DIGIT,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: WORD,
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

const KELVIN = 0x212a;
const LONG_S = 0x17f;

/**
 * RE2's case folding of an ASCII set: each letter with its other case, plus the two non-ASCII
 * code points that fold to ASCII letters (K and k with the Kelvin sign, S and s with the long s).
 * Folding non-ASCII letters needs Unicode's tables, so such sets are left to the fallback.
 */
function foldAscii(set: CharSet): CharSet {
  const out: CharSet = [...set];
  const has = (c: number) => set.some(([lo, hi]) => lo <= c && c <= hi);
  for (const [lo, hi] of set) {
    if (hi > 0x7f) throw new Untranslatable();
    const upLo = Math.max(lo, 0x41);
    const upHi = Math.min(hi, 0x5a);
    if (upLo <= upHi) out.push([upLo + 0x20, upHi + 0x20]);
    const lowLo = Math.max(lo, 0x61);
    const lowHi = Math.min(hi, 0x7a);
    if (lowLo <= lowHi) out.push([lowLo - 0x20, lowHi - 0x20]);
  }
  if (has(0x4b) || has(0x6b)) out.push([KELVIN, KELVIN]);
  if (has(0x53) || has(0x73)) out.push([LONG_S, LONG_S]);
  return normalize(out);
}

function hex4(c: number): string {
  return `\\u${c.toString(16).padStart(4, "0")}`;
}

function unit(c: number): string {
  const isAlnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  return isAlnum ? String.fromCharCode(c) : hex4(c);
}

/** A code point set as one JavaScript atom; astral code points become surrogate-pair alternatives. */
function emitSet(set: CharSet): string {
  let bmp = "";
  const astral: string[] = [];
  const bmpRange = (lo: number, hi: number) => {
    if (lo > hi) return;
    bmp += lo === hi ? unit(lo) : `${unit(lo)}-${unit(hi)}`;
  };
  for (const [lo, hi] of set) {
    if (lo <= 0xffff) {
      // Surrogates never stand alone in the well-formed text this engine is given.
      const top = Math.min(hi, 0xffff);
      bmpRange(lo, Math.min(top, 0xd7ff));
      bmpRange(Math.max(lo, 0xe000), top);
    }
    if (hi >= 0x10000) {
      const a = Math.max(lo, 0x10000) - 0x10000;
      const b = hi - 0x10000;
      const h1 = 0xd800 + (a >> 10);
      const l1 = 0xdc00 + (a & 0x3ff);
      const h2 = 0xd800 + (b >> 10);
      const l2 = 0xdc00 + (b & 0x3ff);
      if (h1 === h2) {
        astral.push(`${hex4(h1)}[${hex4(l1)}-${hex4(l2)}]`);
      } else {
        astral.push(`${hex4(h1)}[${hex4(l1)}-\\udfff]`);
        if (h1 + 1 <= h2 - 1) astral.push(`[${hex4(h1 + 1)}-${hex4(h2 - 1)}][\\udc00-\\udfff]`);
        astral.push(`${hex4(h2)}[\\udc00-${hex4(l2)}]`);
      }
    }
  }
  const cls = `[${bmp}]`;
  if (astral.length === 0) return cls;
  return bmp === "" ? `(?:${astral.join("|")})` : `(?:${cls}|${astral.join("|")})`;
}

function emitLiteral(c: number, flags: Flags): string {
  if (flags.fold) {
    if (c > 0x7f) throw new Untranslatable();
    const folded = foldAscii([[c, c]]);
    if (folded.length > 1 || (folded[0] as [number, number])[0] !== (folded[0] as [number, number])[1]) {
      return emitSet(folded);
    }
  }
  if (c <= 0xffff) return unit(c);
  const v = c - 0x10000;
  return `(?:${hex4(0xd800 + (v >> 10))}${hex4(0xdc00 + (v & 0x3ff))})`;
}

function isOctal(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x37;
}

function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

/**
 * V8's linear engine refuses a counted repetition above 16; larger ones (RE2 allows up to 1000) are
 * written out: `x{3,5}` as `xxx(?:x(?:x)?)?`, which prefers the same matches in the same order.
 */
const LINEAR_MAX_COUNT = 16;
const MAX_TRANSLATION = 100_000;

function expandCount(atomSource: string, min: number, max: number, lazySuffix: string): string {
  let out = atomSource.repeat(min);
  if (max === Number.POSITIVE_INFINITY) return `${out}${atomSource}*${lazySuffix}`;
  let optional = "";
  for (let k = min; k < max; k++) optional = `(?:${atomSource}${optional})?${lazySuffix}`;
  out += optional;
  return out;
}

/** A group being translated: the flags to restore at its end, and whether it can match empty. */
interface Frame {
  readonly outer: Flags;
  /** Where the group's translation starts in the output. */
  readonly start: number;
  /** Some finished alternative can match the empty string. */
  anyAltNullable: boolean;
  /** Every atom of the current alternative so far can match the empty string. */
  seqNullable: boolean;
}

/**
 * Translates a pattern RE2 has already accepted. Works token by token: every RE2 atom becomes one
 * self-contained JavaScript atom, so quantifiers, alternation and grouping carry over unchanged.
 * Throws Untranslatable for anything it cannot render exactly.
 *
 * One semantic difference is avoided rather than translated: JavaScript rejects a loop iteration
 * that matches the empty string and backtracks into the loop body for a longer one, while RE2
 * (like Go) keeps the empty iteration. The two agree on whether a text matches but can disagree on
 * where, so a variable-count quantifier over a sub-pattern that can match empty is left to RE2/J.
 */
function translate(pattern: string): Translation {
  const cps = Array.from(pattern, (ch) => ch.codePointAt(0) as number);
  let i = 0;
  let out = "";
  let flags: Flags = { fold: false, multiline: false, dotNl: false, ungreedy: false };
  const stack: Frame[] = [];
  let frame: Frame = { outer: flags, start: 0, anyAltNullable: false, seqNullable: true };
  // Whether the last atom can match empty; undefined when no atom precedes (nothing to quantify).
  let pending: boolean | undefined;
  // Where the last atom starts in the output.
  let atomStart = 0;
  let lineAnchors = false;
  let textAnchors = false;
  const peek = (k = 0) => cps[i + k];

  const flush = () => {
    if (pending !== undefined) frame.seqNullable &&= pending;
    pending = undefined;
  };
  const atom = (source: string, nullable: boolean) => {
    flush();
    atomStart = out.length;
    out += source;
    pending = nullable;
  };
  const openGroup = () => {
    flush();
    stack.push(frame);
    frame = { outer: flags, start: out.length, anyAltNullable: false, seqNullable: true };
    out += "(?:";
  };
  const closeGroup = () => {
    flush();
    const nullable = frame.anyAltNullable || frame.seqNullable;
    flags = frame.outer;
    atomStart = frame.start;
    const outer = stack.pop();
    if (outer === undefined) throw new Untranslatable();
    frame = outer;
    out += ")";
    pending = nullable;
  };
  const quantifier = (source: string, min: number, max: number) => {
    if (pending === undefined || (pending && max !== min)) throw new Untranslatable();
    let lazy = false;
    if (peek() === 0x3f) {
      i++;
      lazy = true;
    }
    const suffix = lazy !== flags.ungreedy ? "?" : "";
    if (min <= LINEAR_MAX_COUNT && max <= LINEAR_MAX_COUNT) {
      out += source + suffix;
    } else if (source === "*" || source === "+") {
      out += source + suffix;
    } else {
      out = out.slice(0, atomStart) + expandCount(out.slice(atomStart), min, max, suffix);
      if (out.length > MAX_TRANSLATION) throw new Untranslatable();
    }
    pending = pending || min === 0;
  };

  const parseFlags = (): boolean => {
    // At `(?` + flags; returns true for a group `(?flags:`, false for `(?flags)` (already consumed).
    const next = { ...flags };
    let negate = false;
    for (;;) {
      const c = cps[i++];
      switch (c) {
        case 0x69: // i
          next.fold = !negate;
          break;
        case 0x6d: // m
          next.multiline = !negate;
          break;
        case 0x73: // s
          next.dotNl = !negate;
          break;
        case 0x55: // U
          next.ungreedy = !negate;
          break;
        case 0x2d: // -
          negate = true;
          break;
        case 0x3a: // :
          openGroup();
          flags = next;
          return true;
        case 0x29: // )
          flags = next;
          return false;
        default:
          throw new Untranslatable();
      }
    }
  };

  const parseEscape = (): number => {
    // After the backslash; returns a literal code point for the escapes that denote one.
    const c = cps[i++];
    if (c === undefined) throw new Untranslatable();
    if (c >= 0x31 && c <= 0x37 && !isOctal(peek())) throw new Untranslatable();
    if (c >= 0x30 && c <= 0x37) {
      let r = c - 0x30;
      for (let k = 1; k < 3 && isOctal(peek()); k++) r = r * 8 + ((cps[i++] as number) - 0x30);
      return r;
    }
    switch (c) {
      case 0x61: // \a
        return 7;
      case 0x66: // \f
        return 12;
      case 0x6e: // \n
        return 10;
      case 0x72: // \r
        return 13;
      case 0x74: // \t
        return 9;
      case 0x76: // \v
        return 11;
      case 0x78: {
        // \x
        if (peek() === 0x7b) {
          i++;
          let r = 0;
          let digits = 0;
          while (peek() !== 0x7d) {
            const h = hexValue(cps[i++]);
            if (h < 0) throw new Untranslatable();
            r = r * 16 + h;
            digits++;
          }
          i++;
          if (digits === 0 || r > MAX_RUNE) throw new Untranslatable();
          return r;
        }
        const h1 = hexValue(cps[i++]);
        const h2 = hexValue(cps[i++]);
        if (h1 < 0 || h2 < 0) throw new Untranslatable();
        return h1 * 16 + h2;
      }
      default: {
        const isWordChar = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
        if (c < 0x80 && !isWordChar) return c;
        throw new Untranslatable();
      }
    }
  };

  /** `\d`, `\s`, `\w` and their negations, or undefined if the escape at i is not one. */
  const perlClass = (): { set: CharSet; negated: boolean } | undefined => {
    if (peek() !== 0x5c) return undefined;
    const c = peek(1);
    const table: Record<number, [CharSet, boolean]> = {
      100: [DIGIT, false],
      68: [DIGIT, true],
      115: [SPACE, false],
      83: [SPACE, true],
      119: [WORD, false],
      87: [WORD, true],
    };
    const hit = c === undefined ? undefined : table[c];
    if (hit === undefined) return undefined;
    i += 2;
    return { set: hit[0], negated: hit[1] };
  };

  const itemSet = (set: CharSet, negated: boolean): CharSet => {
    const positive = flags.fold ? foldAscii(set) : set;
    return negated ? complement(positive) : positive;
  };

  const parseClass = (): CharSet => {
    // After the opening bracket.
    let negated = false;
    if (peek() === 0x5e) {
      negated = true;
      i++;
    }
    const parts: CharSet = [];
    let first = true;
    while (first || peek() !== 0x5d) {
      if (peek() === undefined) throw new Untranslatable();
      first = false;
      if (peek() === 0x5b && peek(1) === 0x3a) {
        // [:name:] or [:^name:]
        const rest = String.fromCodePoint(...cps.slice(i, i + 12));
        const m = /^\[:(\^?)([a-z]+):\]/.exec(rest);
        const named = m ? POSIX_CLASSES[m[2] as string] : undefined;
        if (m && named) {
          i += m[0].length;
          parts.push(...itemSet(named, m[1] === "^"));
          continue;
        }
      }
      const perl = perlClass();
      if (perl) {
        parts.push(...itemSet(perl.set, perl.negated));
        continue;
      }
      if (peek() === 0x5c && (peek(1) === 0x70 || peek(1) === 0x50)) throw new Untranslatable();
      const lo = classChar();
      let hi = lo;
      if (peek() === 0x2d && peek(1) !== 0x5d && peek(1) !== undefined) {
        i++;
        hi = classChar();
      }
      parts.push(...itemSet([[lo, hi]], false));
    }
    i++; // ]
    const set = normalize(parts);
    return negated ? complement(set) : set;
  };

  const classChar = (): number => {
    const c = cps[i++];
    if (c === undefined) throw new Untranslatable();
    return c === 0x5c ? parseEscape() : c;
  };

  /** A counted repetition `{n}`, `{n,}` or `{n,m}` at i; undefined if the `{` is a literal. */
  const repeatAt = (): { source: string; min: number; max: number } | undefined => {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(String.fromCodePoint(...cps.slice(i, i + 16)));
    if (m === null) return undefined;
    i += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]);
    return { source: m[0], min, max };
  };

  while (i < cps.length) {
    const c = cps[i] as number;
    switch (c) {
      case 0x28: {
        // (
        i++;
        if (peek() === 0x3f) {
          i++;
          const p = peek();
          if (p === 0x50 || p === 0x3c) {
            // (?P<name> or (?<name>: capturing groups are irrelevant to the match itself.
            while (cps[i] !== 0x3e) {
              if (cps[i] === undefined) throw new Untranslatable();
              i++;
            }
            i++;
            openGroup();
          } else {
            parseFlags();
          }
        } else {
          openGroup();
        }
        break;
      }
      case 0x29: // )
        i++;
        closeGroup();
        break;
      case 0x7c: // |
        i++;
        flush();
        frame.anyAltNullable ||= frame.seqNullable;
        frame.seqNullable = true;
        out += "|";
        break;
      case 0x5e: // ^
      case 0x24: // $
        i++;
        if (flags.multiline) lineAnchors = true;
        else textAnchors = true;
        atom(c === 0x5e ? "^" : "$", true);
        break;
      case 0x2e: // .
        i++;
        atom(emitSet(flags.dotNl ? [[0, MAX_RUNE]] : complement([[0x0a, 0x0a]])), false);
        break;
      case 0x5b: // [
        i++;
        atom(emitSet(parseClass()), false);
        break;
      case 0x2a: // *
        i++;
        quantifier("*", 0, Number.POSITIVE_INFINITY);
        break;
      case 0x2b: // +
        i++;
        quantifier("+", 1, Number.POSITIVE_INFINITY);
        break;
      case 0x3f: // ?
        i++;
        quantifier("?", 0, 1);
        break;
      case 0x7b: {
        // {
        const rep = repeatAt();
        if (rep === undefined) {
          i++;
          atom(emitLiteral(c, flags), false);
        } else {
          quantifier(rep.source, rep.min, rep.max);
        }
        break;
      }
      case 0x5c: {
        // backslash
        const e = peek(1);
        if (e === 0x41 || e === 0x7a) {
          // \A, \z
          i += 2;
          textAnchors = true;
          atom(e === 0x41 ? "^" : "$", true);
          break;
        }
        if (e === 0x62 || e === 0x42) {
          // \b, \B: ASCII word boundaries in both RE2 and JavaScript without the u flag.
          i += 2;
          atom(e === 0x62 ? "\\b" : "\\B", true);
          break;
        }
        if (e === 0x70 || e === 0x50) throw new Untranslatable(); // \p, \P: Unicode classes
        if (e === 0x51) {
          // \Q...\E
          i += 2;
          while (i < cps.length && !(cps[i] === 0x5c && cps[i + 1] === 0x45)) {
            atom(emitLiteral(cps[i++] as number, flags), false);
          }
          if (i < cps.length) i += 2;
          break;
        }
        const perl = perlClass();
        if (perl) {
          atom(emitSet(itemSet(perl.set, perl.negated)), false);
          break;
        }
        i++;
        atom(emitLiteral(parseEscape(), flags), false);
        break;
      }
      default:
        i++;
        atom(emitLiteral(c, flags), false);
    }
  }
  if (stack.length > 0) throw new Untranslatable();
  // JavaScript's `m` flag applies to the whole pattern, so both kinds of anchor cannot coexist.
  if (lineAnchors && textAnchors) throw new Untranslatable();
  return { source: out === "" ? "(?:)" : out, multiline: lineAnchors };
}

// ---------------------------------------------------------------------------------------------
// Fallback: RE2/J's automaton for yes/no, and a Pike VM over its program for match positions.

type Re2Prog = ReturnType<RE2JS["re2"]>["prog"];
type Re2Inst = Re2Prog["inst"][number];

// Instruction opcodes and empty-width conditions of RE2/J's program (Inst.js, Utils.js).
const OP_ALT = 1;
const OP_ALT_MATCH = 2;
const OP_CAPTURE = 3;
const OP_EMPTY_WIDTH = 4;
const OP_FAIL = 5;
const OP_MATCH = 6;
const OP_NOP = 7;
const OP_RUNE = 8;
const OP_RUNE1 = 9;
const OP_RUNE_ANY = 10;
const OP_RUNE_ANY_NOT_NL = 11;

const EMPTY_BEGIN_LINE = 0x01;
const EMPTY_END_LINE = 0x02;
const EMPTY_BEGIN_TEXT = 0x04;
const EMPTY_END_TEXT = 0x08;
const EMPTY_WORD_BOUNDARY = 0x10;
const EMPTY_NO_WORD_BOUNDARY = 0x20;

function isWordUnit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/** The empty-width conditions that hold at position `pos` of `text`. */
function contextAt(text: string, pos: number): number {
  let flag = 0;
  const before = pos > 0 ? text.charCodeAt(pos - 1) : -1;
  const after = pos < text.length ? text.charCodeAt(pos) : -1;
  if (before < 0) flag |= EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE;
  if (before === 0x0a) flag |= EMPTY_BEGIN_LINE;
  if (after < 0) flag |= EMPTY_END_TEXT | EMPTY_END_LINE;
  if (after === 0x0a) flag |= EMPTY_END_LINE;
  const wordBefore = before >= 0 && isWordUnit(before);
  const wordAfter = after >= 0 && isWordUnit(after);
  flag |= wordBefore !== wordAfter ? EMPTY_WORD_BOUNDARY : EMPTY_NO_WORD_BOUNDARY;
  return flag;
}

class ThreadList {
  readonly pcs: Int32Array;
  readonly starts: Int32Array;
  length = 0;
  private readonly seen: Uint32Array;
  private generation = 1;

  constructor(size: number) {
    this.pcs = new Int32Array(size);
    this.starts = new Int32Array(size);
    this.seen = new Uint32Array(size);
  }

  clear(): void {
    this.length = 0;
    if (this.generation === 0xffffffff) {
      // The marks are 32-bit; start over rather than let an old mark pass for a new one.
      this.seen.fill(0);
      this.generation = 0;
    }
    this.generation++;
  }

  /** Marks pc as visited in this step; false if it already was. */
  visit(pc: number): boolean {
    if (this.seen[pc] === this.generation) return false;
    this.seen[pc] = this.generation;
    return true;
  }

  push(pc: number, start: number): void {
    this.pcs[this.length] = pc;
    this.starts[this.length] = start;
    this.length++;
  }
}

/**
 * Leftmost-first matching in O(text × program), as Go's regexp does it: threads are kept in
 * priority order, a new thread starts at each position until something matches, and a match cuts
 * off every lower-priority thread.
 */
class PikeVM {
  private readonly insts: readonly Re2Inst[];
  private readonly start: number;
  private readonly anchoredStart: boolean;
  private readonly stack: number[] = [];
  // Reused by every search: findAll searches once per match.
  private clist: ThreadList;
  private nlist: ThreadList;

  constructor(prog: Re2Prog) {
    this.insts = prog.inst;
    this.start = prog.start;
    this.anchoredStart = (prog.startCond() & EMPTY_BEGIN_TEXT) !== 0;
    this.clist = new ThreadList(this.insts.length);
    this.nlist = new ThreadList(this.insts.length);
  }

  private add(list: ThreadList, pc0: number, start: number, flag: number): void {
    const stack = this.stack;
    stack.push(pc0);
    while (stack.length > 0) {
      const pc = stack.pop() as number;
      if (!list.visit(pc)) continue;
      const inst = this.insts[pc] as Re2Inst;
      switch (inst.op) {
        case OP_FAIL:
          break;
        case OP_ALT:
        case OP_ALT_MATCH:
          // `out` has priority over `arg`, so it goes on top.
          stack.push(inst.arg, inst.out);
          break;
        case OP_NOP:
        case OP_CAPTURE:
          stack.push(inst.out);
          break;
        case OP_EMPTY_WIDTH:
          if ((inst.arg & ~flag) === 0) stack.push(inst.out);
          break;
        default:
          list.push(pc, start);
      }
    }
  }

  private static matchesRune(inst: Re2Inst, r: number): boolean {
    switch (inst.op) {
      case OP_RUNE:
      case OP_RUNE1:
        return inst.matchRune(r);
      case OP_RUNE_ANY:
        return true;
      case OP_RUNE_ANY_NOT_NL:
        return r !== 0x0a;
      default:
        return false;
    }
  }

  match(text: string, pos: number): [number, number] | undefined {
    let clist = this.clist;
    let nlist = this.nlist;
    clist.clear();
    let matched: [number, number] | undefined;
    let i = pos;
    for (;;) {
      if (matched === undefined && (!this.anchoredStart || i === 0)) {
        this.add(clist, this.start, i, contextAt(text, i));
      } else if (clist.length === 0) {
        break;
      }
      const atEnd = i >= text.length;
      const r = atEnd ? -1 : (text.codePointAt(i) as number);
      const next = atEnd ? i : i + (r > 0xffff ? 2 : 1);
      let nextFlag = -1;
      nlist.clear();
      for (let k = 0; k < clist.length; k++) {
        const pc = clist.pcs[k] as number;
        const inst = this.insts[pc] as Re2Inst;
        if (inst.op === OP_MATCH) {
          matched = [clist.starts[k] as number, i];
          break;
        }
        if (atEnd || !PikeVM.matchesRune(inst, r)) continue;
        if (nextFlag < 0) nextFlag = contextAt(text, next);
        this.add(nlist, inst.out, clist.starts[k] as number, nextFlag);
      }
      if (atEnd) break;
      [clist, nlist] = [nlist, clist];
      i = next;
    }
    this.clist = clist;
    this.nlist = nlist;
    return matched;
  }
}

class Re2Regex implements CompiledRegex {
  readonly engine = "re2js";
  private vm: PikeVM | undefined;

  constructor(private readonly re2: RE2JS) {}

  private get pike(): PikeVM {
    this.vm ??= new PikeVM(this.re2.re2().prog);
    return this.vm;
  }

  test(text: string): boolean {
    return this.re2.test(text);
  }

  testWithoutSurrogates(text: string): boolean {
    return this.re2.test(text);
  }

  // The automaton answers "no match" much faster than the Pike VM finds one, so it goes first.
  find(text: string): string | undefined {
    if (!this.re2.test(text)) return undefined;
    const m = this.pike.match(text, 0);
    return m === undefined ? undefined : text.slice(m[0], m[1]);
  }

  findAll(text: string, limit: number): string[] {
    if (limit === 0 || !this.re2.test(text)) return [];
    return findAllWith(text, limit, (pos) => this.pike.match(text, pos));
  }
}
