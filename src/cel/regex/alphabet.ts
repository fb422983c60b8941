/**
 * The alphabet of a compiled pattern: code points grouped into classes that no instruction of the
 * program tells apart, so an automaton has one transition per class instead of one per code point
 * (RE2 does the same with bytes). Every class also records what the empty-width assertions need to
 * know of a character: whether it is `\n` and whether it is an ASCII word character.
 *
 * Classes are exact by construction: the boundaries of every instruction's ranges (and of the case
 * folding orbit of a case-insensitive literal) split the code points into intervals on which each
 * instruction answers the same, and intervals with the same answers share a class.
 */
import { RE2JS } from "@bufbuild/re2";
import type { Re2Inst } from "./syntax.ts";

/** What an instruction that consumes a character asks of it. */
export interface RuneMatcher {
  matchRune(r: number): boolean;
}

const MAX_RUNE = 0x10ffff;
// RE2/J's instruction opcodes (Inst.js) and flags (RE2Flags.js).
const RUNE = 8;
const RUNE1 = 9;
const RUNE_ANY = 10;
const RUNE_ANY_NOT_NL = 11;
const FOLD_CASE = 0x01;

export const ANY_RUNE: RuneMatcher = { matchRune: () => true };

export function isWordRune(r: number): boolean {
  return (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a) || r === 0x5f;
}

// The case-folding orbit of a rune, as RE2/J folds it (its simpleFold tables are not exported):
// RE2/J expands a case-insensitive class into its orbits, so the class [\x00<r>] compiles to one
// instruction whose ranges are {0} and the orbit of r. Bounded: there are some 2,800 cased runes.
const orbits = new Map<number, readonly number[]>();

function foldOrbit(r: number): readonly number[] {
  let orbit = orbits.get(r);
  if (orbit === undefined) {
    const prog = RE2JS.compile(`(?i)[\\x{0}\\x{${r.toString(16)}}]`).re2().prog;
    const runes: number[] = [];
    for (const inst of prog.inst) {
      if (inst.op !== RUNE && inst.op !== RUNE1) continue;
      for (let k = 0; k + 1 < inst.runes.length; k += 2) {
        for (let c = inst.runes[k] as number; c <= (inst.runes[k + 1] as number); c++)
          if (c !== 0) runes.push(c);
      }
    }
    orbit = runes.includes(r) ? runes : [r];
    orbits.set(r, orbit);
  }
  return orbit;
}

/** Adds the starts of the intervals on which `inst` is constant. */
function addBoundaries(inst: Re2Inst, points: Set<number>): void {
  switch (inst.op) {
    case RUNE_ANY:
      return;
    case RUNE_ANY_NOT_NL:
      points.add(0x0a).add(0x0b);
      return;
  }
  const runes = inst.runes;
  if (runes.length === 1) {
    const r = runes[0] as number;
    const folded = (inst.arg & FOLD_CASE) !== 0 ? foldOrbit(r) : [r];
    for (const c of folded) points.add(c).add(c + 1);
    return;
  }
  for (let k = 0; k + 1 < runes.length; k += 2)
    points.add(runes[k] as number).add((runes[k + 1] as number) + 1);
}

// Where the empty-width assertions look: `\n` and the ASCII word characters [0-9A-Z_a-z].
const CONTEXT_POINTS = [0x0a, 0x0b, 0x30, 0x3a, 0x41, 0x5b, 0x5f, 0x60, 0x61, 0x7b];

export class Alphabet {
  /** Number of character classes; class `size` stands for the end of the text. */
  readonly size: number;
  /** The class of each ASCII code point. */
  readonly ascii: Uint16Array;
  /** Per class (and the end of text): 1 for `\n`, 0 otherwise. */
  readonly newline: Uint8Array;
  /** Per class (and the end of text): 1 for an ASCII word character, 0 otherwise. */
  readonly word: Uint8Array;
  /** Whether matcher m accepts class c: `accepts[m * (size + 1) + c]`. */
  readonly accepts: Uint8Array;
  /** Starts of the intervals from U+0080 up, ascending, and the class of each. */
  private readonly bounds: Int32Array;
  private readonly boundClass: Uint16Array;

  constructor(matchers: readonly Re2Inst[], extra: readonly RuneMatcher[], context: boolean) {
    const points = new Set<number>([0, 0x80]);
    for (const m of matchers) addBoundaries(m, points);
    if (context) for (const p of CONTEXT_POINTS) points.add(p);
    const starts = [...points].filter((p) => p <= MAX_RUNE).sort((a, b) => a - b);
    const all: readonly RuneMatcher[] = [...matchers, ...extra];
    const ids = new Map<string, number>();
    const intervalClass = new Uint16Array(starts.length);
    const representative: number[] = [];
    starts.forEach((p, i) => {
      let key = "";
      for (const m of all) key += m.matchRune(p) ? "1" : "0";
      if (context) key += `${p === 0x0a ? 1 : 0}${isWordRune(p) ? 1 : 0}`;
      let id = ids.get(key);
      if (id === undefined) {
        id = ids.size;
        ids.set(key, id);
        representative.push(p);
      }
      intervalClass[i] = id;
    });
    this.size = ids.size;
    const stride = this.size + 1;
    this.ascii = new Uint16Array(0x80);
    let k = 0;
    for (let c = 0; c < 0x80; c++) {
      while (k + 1 < starts.length && (starts[k + 1] as number) <= c) k++;
      this.ascii[c] = intervalClass[k] as number;
    }
    const first = starts.indexOf(0x80);
    this.bounds = Int32Array.from(starts.slice(first));
    this.boundClass = intervalClass.slice(first);
    this.newline = new Uint8Array(stride);
    this.word = new Uint8Array(stride);
    this.accepts = new Uint8Array(all.length * stride);
    representative.forEach((p, c) => {
      this.newline[c] = p === 0x0a ? 1 : 0;
      this.word[c] = isWordRune(p) ? 1 : 0;
      all.forEach((m, j) => {
        this.accepts[j * stride + c] = m.matchRune(p) ? 1 : 0;
      });
    });
  }

  /** The class of a code point from U+0080 up (a lone surrogate counts as the code point it names). */
  classOf(r: number): number {
    const bounds = this.bounds;
    let lo = 0;
    let hi = bounds.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((bounds[mid] as number) <= r) lo = mid;
      else hi = mid - 1;
    }
    return this.boundClass[lo] as number;
  }
}
