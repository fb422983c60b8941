/**
 * Code point sets for the V8 translation (translate.ts): RE2's classes and case folding spelled out
 * as JavaScript atoms without the `u` or `i` flag, which V8's linear engine refuses.
 */

/** A construct the translation cannot render exactly: such a pattern runs on the automata. */
export class Untranslatable extends Error {}

/** A set of code points as sorted, disjoint, non-adjacent inclusive [lo, hi] ranges. */
export type CharSet = Array<[number, number]>;

export const MAX_RUNE = 0x10ffff;

export function normalize(ranges: CharSet): CharSet {
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

export function complement(set: CharSet): CharSet {
  const out: CharSet = [];
  let next = 0;
  for (const [lo, hi] of normalize(set)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_RUNE) out.push([next, MAX_RUNE]);
  return out;
}

export const DIGIT: CharSet = [[0x30, 0x39]];
export const SPACE: CharSet = [
  [0x09, 0x0a],
  [0x0c, 0x0d],
  [0x20, 0x20],
];
export const WORD: CharSet = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];

export const POSIX_CLASSES: Record<string, CharSet> = {
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
export function foldAscii(set: CharSet): CharSet {
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
export function emitSet(set: CharSet): string {
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

/** One code point as a JavaScript atom, with its ASCII case variants when folding. */
export function emitLiteral(c: number, fold: boolean): string {
  if (fold) {
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
