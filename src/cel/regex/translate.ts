/**
 * Translation of RE2 syntax to an equivalent JavaScript pattern for V8 (v8.ts), without the `u` or
 * `i` flag, which V8's linear engine refuses: code points and case folding are spelled out
 * (charset.ts).
 */
import {
  type CharSet,
  complement,
  DIGIT,
  emitLiteral,
  emitSet,
  foldAscii,
  MAX_RUNE,
  normalize,
  POSIX_CLASSES,
  SPACE,
  Untranslatable,
  WORD,
} from "./charset.ts";

export interface Translation {
  readonly source: string;
  /** The translation needs JavaScript's `m` flag (RE2's `(?m)` anchors). */
  readonly multiline: boolean;
}

interface Flags {
  fold: boolean;
  multiline: boolean;
  dotNl: boolean;
  ungreedy: boolean;
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
 * where, so a variable-count quantifier over a sub-pattern that can match empty is left to the
 * automata.
 */
export function translate(pattern: string): Translation {
  return new Translator(pattern).run();
}

class Translator {
  private readonly cps: readonly number[];
  private i = 0;
  private out = "";
  private flags: Flags = { fold: false, multiline: false, dotNl: false, ungreedy: false };
  private readonly stack: Frame[] = [];
  private frame: Frame;
  /** Whether the last atom can match empty; undefined when no atom precedes (nothing to quantify). */
  private pending: boolean | undefined;
  /** Where the last atom starts in the output. */
  private atomStart = 0;
  private lineAnchors = false;
  private textAnchors = false;

  constructor(pattern: string) {
    this.cps = Array.from(pattern, (ch) => ch.codePointAt(0) as number);
    this.frame = { outer: this.flags, start: 0, anyAltNullable: false, seqNullable: true };
  }

  private peek(k = 0): number | undefined {
    return this.cps[this.i + k];
  }

  run(): Translation {
    while (this.i < this.cps.length) this.token();
    if (this.stack.length > 0) throw new Untranslatable();
    // JavaScript's `m` flag applies to the whole pattern, so both kinds of anchor cannot coexist.
    if (this.lineAnchors && this.textAnchors) throw new Untranslatable();
    return { source: this.out === "" ? "(?:)" : this.out, multiline: this.lineAnchors };
  }

  /** Translates the token at `i`. */
  private token(): void {
    const c = this.cps[this.i] as number;
    switch (c) {
      case 0x28: // (
        this.paren();
        break;
      case 0x29: // )
        this.i++;
        this.closeGroup();
        break;
      case 0x7c: // |
        this.i++;
        this.flush();
        this.frame.anyAltNullable ||= this.frame.seqNullable;
        this.frame.seqNullable = true;
        this.out += "|";
        break;
      case 0x5e: // ^
      case 0x24: // $
        this.i++;
        if (this.flags.multiline) this.lineAnchors = true;
        else this.textAnchors = true;
        this.atom(c === 0x5e ? "^" : "$", true);
        break;
      case 0x2e: // .
        this.i++;
        this.atom(emitSet(this.flags.dotNl ? [[0, MAX_RUNE]] : complement([[0x0a, 0x0a]])), false);
        break;
      case 0x5b: // [
        this.i++;
        this.atom(emitSet(this.parseClass()), false);
        break;
      case 0x2a: // *
        this.i++;
        this.quantifier("*", 0, Number.POSITIVE_INFINITY);
        break;
      case 0x2b: // +
        this.i++;
        this.quantifier("+", 1, Number.POSITIVE_INFINITY);
        break;
      case 0x3f: // ?
        this.i++;
        this.quantifier("?", 0, 1);
        break;
      case 0x7b: {
        // {
        const rep = this.repeatAt();
        if (rep === undefined) {
          this.i++;
          this.atom(emitLiteral(c, this.flags.fold), false);
        } else {
          this.quantifier(rep.source, rep.min, rep.max);
        }
        break;
      }
      case 0x5c: // backslash
        this.backslash();
        break;
      default:
        this.i++;
        this.atom(emitLiteral(c, this.flags.fold), false);
    }
  }

  /** At `(`: a group, a named group, or flags. */
  private paren(): void {
    this.i++;
    if (this.peek() === 0x3f) {
      this.i++;
      const p = this.peek();
      if (p === 0x50 || p === 0x3c) {
        // (?P<name> or (?<name>: capturing groups are irrelevant to the match itself.
        while (this.cps[this.i] !== 0x3e) {
          if (this.cps[this.i] === undefined) throw new Untranslatable();
          this.i++;
        }
        this.i++;
        this.openGroup();
      } else {
        this.parseFlags();
      }
    } else {
      this.openGroup();
    }
  }

  /** At a backslash. */
  private backslash(): void {
    const e = this.peek(1);
    if (e === 0x41 || e === 0x7a) {
      // \A, \z
      this.i += 2;
      this.textAnchors = true;
      this.atom(e === 0x41 ? "^" : "$", true);
      return;
    }
    if (e === 0x62 || e === 0x42) {
      // \b, \B: ASCII word boundaries in both RE2 and JavaScript without the u flag.
      this.i += 2;
      this.atom(e === 0x62 ? "\\b" : "\\B", true);
      return;
    }
    if (e === 0x70 || e === 0x50) throw new Untranslatable(); // \p, \P: Unicode classes
    if (e === 0x51) {
      // \Q...\E
      this.i += 2;
      while (this.i < this.cps.length && !(this.cps[this.i] === 0x5c && this.cps[this.i + 1] === 0x45)) {
        this.atom(emitLiteral(this.cps[this.i++] as number, this.flags.fold), false);
      }
      if (this.i < this.cps.length) this.i += 2;
      return;
    }
    const perl = this.perlClass();
    if (perl) {
      this.atom(emitSet(this.itemSet(perl.set, perl.negated)), false);
      return;
    }
    this.i++;
    this.atom(emitLiteral(this.parseEscape(), this.flags.fold), false);
  }

  private flush() {
    if (this.pending !== undefined) this.frame.seqNullable &&= this.pending;
    this.pending = undefined;
  }
  private atom(source: string, nullable: boolean) {
    this.flush();
    this.atomStart = this.out.length;
    this.out += source;
    this.pending = nullable;
  }
  private openGroup() {
    this.flush();
    this.stack.push(this.frame);
    this.frame = { outer: this.flags, start: this.out.length, anyAltNullable: false, seqNullable: true };
    this.out += "(?:";
  }
  private closeGroup() {
    this.flush();
    const nullable = this.frame.anyAltNullable || this.frame.seqNullable;
    this.flags = this.frame.outer;
    this.atomStart = this.frame.start;
    const outer = this.stack.pop();
    if (outer === undefined) throw new Untranslatable();
    this.frame = outer;
    this.out += ")";
    this.pending = nullable;
  }
  private quantifier(source: string, min: number, max: number) {
    if (this.pending === undefined || (this.pending && max !== min)) throw new Untranslatable();
    let lazy = false;
    if (this.peek() === 0x3f) {
      this.i++;
      lazy = true;
    }
    const suffix = lazy !== this.flags.ungreedy ? "?" : "";
    if (min <= LINEAR_MAX_COUNT && max <= LINEAR_MAX_COUNT) {
      this.out += source + suffix;
    } else if (source === "*" || source === "+") {
      this.out += source + suffix;
    } else {
      this.out =
        this.out.slice(0, this.atomStart) + expandCount(this.out.slice(this.atomStart), min, max, suffix);
      if (this.out.length > MAX_TRANSLATION) throw new Untranslatable();
    }
    this.pending = this.pending || min === 0;
  }

  private parseFlags(): boolean {
    // At `(?` + flags; returns true for a group `(?flags:`, false for `(?flags)` (already consumed).
    const next = { ...this.flags };
    let negate = false;
    for (;;) {
      const c = this.cps[this.i++];
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
          this.openGroup();
          this.flags = next;
          return true;
        case 0x29: // )
          this.flags = next;
          return false;
        default:
          throw new Untranslatable();
      }
    }
  }

  private parseEscape(): number {
    // After the backslash; returns a literal code point for the escapes that denote one.
    const c = this.cps[this.i++];
    if (c === undefined) throw new Untranslatable();
    if (c >= 0x31 && c <= 0x37 && !isOctal(this.peek())) throw new Untranslatable();
    if (c >= 0x30 && c <= 0x37) {
      let r = c - 0x30;
      for (let k = 1; k < 3 && isOctal(this.peek()); k++) r = r * 8 + ((this.cps[this.i++] as number) - 0x30);
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
        if (this.peek() === 0x7b) {
          this.i++;
          let r = 0;
          let digits = 0;
          while (this.peek() !== 0x7d) {
            const h = hexValue(this.cps[this.i++]);
            if (h < 0) throw new Untranslatable();
            r = r * 16 + h;
            digits++;
          }
          this.i++;
          if (digits === 0 || r > MAX_RUNE) throw new Untranslatable();
          return r;
        }
        const h1 = hexValue(this.cps[this.i++]);
        const h2 = hexValue(this.cps[this.i++]);
        if (h1 < 0 || h2 < 0) throw new Untranslatable();
        return h1 * 16 + h2;
      }
      default: {
        const isWordChar = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
        if (c < 0x80 && !isWordChar) return c;
        throw new Untranslatable();
      }
    }
  }

  /** `\d`, `\s`, `\w` and their negations, or undefined if the escape at i is not one. */
  private perlClass(): { set: CharSet; negated: boolean } | undefined {
    if (this.peek() !== 0x5c) return undefined;
    const c = this.peek(1);
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
    this.i += 2;
    return { set: hit[0], negated: hit[1] };
  }

  private itemSet(set: CharSet, negated: boolean): CharSet {
    const positive = this.flags.fold ? foldAscii(set) : set;
    return negated ? complement(positive) : positive;
  }

  private parseClass(): CharSet {
    // After the opening bracket.
    let negated = false;
    if (this.peek() === 0x5e) {
      negated = true;
      this.i++;
    }
    const parts: CharSet = [];
    let first = true;
    while (first || this.peek() !== 0x5d) {
      if (this.peek() === undefined) throw new Untranslatable();
      first = false;
      if (this.peek() === 0x5b && this.peek(1) === 0x3a) {
        // [:name:] or [:^name:]
        const rest = String.fromCodePoint(...this.cps.slice(this.i, this.i + 12));
        const m = /^\[:(\^?)([a-z]+):\]/.exec(rest);
        const named = m ? POSIX_CLASSES[m[2] as string] : undefined;
        if (m && named) {
          this.i += m[0].length;
          parts.push(...this.itemSet(named, m[1] === "^"));
          continue;
        }
      }
      const perl = this.perlClass();
      if (perl) {
        parts.push(...this.itemSet(perl.set, perl.negated));
        continue;
      }
      if (this.peek() === 0x5c && (this.peek(1) === 0x70 || this.peek(1) === 0x50))
        throw new Untranslatable();
      const lo = this.classChar();
      let hi = lo;
      if (this.peek() === 0x2d && this.peek(1) !== 0x5d && this.peek(1) !== undefined) {
        this.i++;
        hi = this.classChar();
      }
      parts.push(...this.itemSet([[lo, hi]], false));
    }
    this.i++; // ]
    const set = normalize(parts);
    return negated ? complement(set) : set;
  }

  private classChar(): number {
    const c = this.cps[this.i++];
    if (c === undefined) throw new Untranslatable();
    return c === 0x5c ? this.parseEscape() : c;
  }

  /** A counted repetition `{n}`, `{n,}` or `{n,m}` at i; undefined if the `{` is a literal. */
  private repeatAt(): { source: string; min: number; max: number } | undefined {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(String.fromCodePoint(...this.cps.slice(this.i, this.i + 16)));
    if (m === null) return undefined;
    this.i += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]);
    return { source: m[0], min, max };
  }
}
