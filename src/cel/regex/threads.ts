/**
 * One step of a program over one character: the work behind every DFA state (dfa.ts), and the
 * whole search when the DFA gives up its cache (a simulation of the NFA, as Go's regexp runs long
 * inputs). A state is an ordered list of targets: where each thread that consumed the previous
 * character goes next. A step closes the targets over the instructions that consume nothing, in
 * priority order and with the empty-width assertions decided by the character read now, exactly as
 * Go's Pike VM (regexp/exec.go) adds threads; then notes a match and steps the character tests.
 * Closing later than Go does (when the targets were made) would have to leave the assertions open
 * and would then visit instructions in another order, which changes leftmost-first results on
 * patterns such as `(?:^|a??)*`.
 *
 * Memory is fixed by the program's size: every buffer is allocated once, here.
 */
import type { Alphabet } from "./alphabet.ts";
import {
  EMPTY_BEGIN_LINE,
  EMPTY_BEGIN_TEXT,
  EMPTY_END_LINE,
  EMPTY_END_TEXT,
  EMPTY_NO_WORD_BOUNDARY,
  EMPTY_WORD_BOUNDARY,
  OP_ALT,
  OP_EMPTY,
  OP_MATCH,
  OP_NOP,
  OP_RUNE,
  type Program,
} from "./program.ts";

/** Stop at the first match found: whether there is one. */
export const EARLIEST = 0;
/** Leftmost-first (Go, RE2, Perl): a match cuts off every lower-priority thread. */
export const FIRST = 1;
/** Every thread runs on: where the last match ends (the reverse search for a match's start). */
export const LONGEST = 2;
export type Mode = typeof EARLIEST | typeof FIRST | typeof LONGEST;

// What a state remembers of the character before it, for the assertions of the next step. Reading
// backwards, "before" is the character to the right, and the text's start is its end.
export const AT_TEXT_START = 1;
export const AFTER_NEWLINE = 2;
export const AFTER_WORD = 4;

/** The flags after a character of class `cls`. */
export function flagsAfter(alphabet: Alphabet, cls: number): number {
  return (alphabet.newline[cls] === 1 ? AFTER_NEWLINE : 0) | (alphabet.word[cls] === 1 ? AFTER_WORD : 0);
}

/** The flags at a position preceded by UTF-16 unit `before` (-1 at the text's start). */
export function flagsBefore(before: number): number {
  if (before < 0) return AT_TEXT_START;
  if (before === 0x0a) return AFTER_NEWLINE;
  const word =
    (before >= 0x30 && before <= 0x39) ||
    (before >= 0x41 && before <= 0x5a) ||
    (before >= 0x61 && before <= 0x7a) ||
    before === 0x5f;
  return word ? AFTER_WORD : 0;
}

/**
 * For each instruction, whether an empty-width assertion can be reached from it without consuming a
 * character: only then does a state's step depend on the character before it (its flags).
 */
function reachesAssertion(prog: Program): Uint8Array {
  const { op, out, arg } = prog;
  const into: number[][] = Array.from({ length: prog.length }, () => []);
  const found = new Uint8Array(prog.length);
  const work: number[] = [];
  for (let pc = 0; pc < prog.length; pc++) {
    if (op[pc] === OP_ALT) {
      into[out[pc] as number]?.push(pc);
      into[arg[pc] as number]?.push(pc);
    } else if (op[pc] === OP_NOP) into[out[pc] as number]?.push(pc);
    else if (op[pc] === OP_EMPTY) {
      found[pc] = 1;
      work.push(pc);
    }
  }
  while (work.length > 0) {
    for (const from of into[work.pop() as number] ?? []) {
      if (found[from] === 0) {
        found[from] = 1;
        work.push(from);
      }
    }
  }
  return found;
}

export class Stepper {
  /** The end-of-text class. */
  readonly eot: number;
  private readonly stride: number;
  private readonly assertions: Uint8Array;
  private readonly cur: Int32Array;
  private readonly stack: Int32Array;
  private readonly marks: Uint32Array;
  private readonly seen: Uint32Array;
  private mark = 0;

  constructor(
    private readonly prog: Program,
    private readonly alphabet: Alphabet,
    private readonly mode: Mode,
  ) {
    this.eot = alphabet.size;
    this.stride = alphabet.size + 1;
    this.assertions = reachesAssertion(prog);
    this.cur = new Int32Array(prog.length);
    // Each instruction, visited once per step, pushes at most two more.
    this.stack = new Int32Array(2 * prog.length + 2);
    this.marks = new Uint32Array(prog.length);
    this.seen = new Uint32Array(prog.length);
  }

  /** The empty-width conditions that hold between a character described by `flags` and class `cls`. */
  private context(flags: number, cls: number): number {
    const a = this.alphabet;
    let ctx = 0;
    if (flags & AT_TEXT_START) ctx |= EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE;
    if (flags & AFTER_NEWLINE) ctx |= EMPTY_BEGIN_LINE;
    if (cls === this.eot) ctx |= EMPTY_END_TEXT | EMPTY_END_LINE;
    else if (a.newline[cls] === 1) ctx |= EMPTY_END_LINE;
    const wordBefore = (flags & AFTER_WORD) !== 0;
    ctx |= wordBefore !== (a.word[cls] === 1) ? EMPTY_WORD_BOUNDARY : EMPTY_NO_WORD_BOUNDARY;
    return ctx;
  }

  /**
   * Appends to `cur` (from `len`) the character tests and matches reachable from `pc0` without
   * consuming a character, in priority order, assertions decided by `ctx`. Returns the new length.
   */
  private closure(pc0: number, ctx: number, len: number): number {
    const { op, out, arg } = this.prog;
    const cur = this.cur;
    const marks = this.marks;
    const mark = this.mark;
    const stack = this.stack;
    let top = 0;
    let n = len;
    stack[top++] = pc0;
    while (top > 0) {
      const pc = stack[--top] as number;
      if (marks[pc] === mark) continue;
      marks[pc] = mark;
      switch (op[pc]) {
        case OP_ALT:
          // `out` has priority over `arg`, so it goes on top.
          stack[top++] = arg[pc] as number;
          stack[top++] = out[pc] as number;
          break;
        case OP_NOP:
          stack[top++] = out[pc] as number;
          break;
        case OP_EMPTY:
          if (((arg[pc] as number) & ~ctx) === 0) stack[top++] = out[pc] as number;
          break;
        case OP_RUNE:
        case OP_MATCH:
          cur[n++] = pc;
          break;
        // OP_FAIL: the thread dies.
      }
    }
    return n;
  }

  /** A fresh generation of visit marks for both mark arrays. */
  private newMarks(): number {
    if (this.mark === 0xffffffff) {
      this.marks.fill(0);
      this.seen.fill(0);
      this.mark = 0;
    }
    return ++this.mark;
  }

  /**
   * Steps the targets `input[0, len)`, at a position described by `flags`, over a character of
   * class `cls` (or the end of text): notes whether a match ends here (before the character) and
   * writes the targets after it to `output`. Returns their number times 2, plus 1 for a match.
   */
  step(input: Int32Array, len: number, flags: number, cls: number, output: Int32Array): number {
    const { op, out, arg } = this.prog;
    const cur = this.cur;
    const ctx = this.context(flags, cls);
    const mark = this.newMarks();
    let curLen = 0;
    for (let k = 0; k < len; k++) curLen = this.closure(input[k] as number, ctx, curLen);
    const accepts = this.alphabet.accepts;
    const stride = this.stride;
    const seen = this.seen;
    const atEnd = cls === this.eot;
    let matched = 0;
    let n = 0;
    for (let k = 0; k < curLen; k++) {
      const pc = cur[k] as number;
      if (op[pc] === OP_MATCH) {
        matched = 1;
        if (this.mode !== LONGEST) break;
        continue;
      }
      if (!atEnd && accepts[(arg[pc] as number) * stride + cls] === 1) {
        const target = out[pc] as number;
        // A target already listed adds nothing: everything it reaches is marked by then.
        if (seen[target] !== mark) {
          seen[target] = mark;
          output[n++] = target;
        }
      }
    }
    return (n << 1) | matched;
  }

  /** Whether the step of targets `list[0, len)` depends on the character before them. */
  needsFlags(list: Int32Array, len: number): boolean {
    const assertions = this.assertions;
    for (let k = 0; k < len; k++) if (assertions[list[k] as number] === 1) return true;
    return false;
  }
}
