/**
 * The programs the automata run, built from RE2/J's compiled program (a Thompson NFA in the style of
 * Go's regexp/syntax.Prog): the forward program, with an unanchored entry that tries a match at every
 * position (RE2's `.*?` prefix), and the reverse program, which reads the text backwards from the
 * end of a match to find where the leftmost match starts (what RE2's reverse DFA does).
 *
 * Instructions are stored column-wise in typed arrays. Captures are dropped (celgate never reports
 * submatches), so RE2/J's capture and no-op instructions both become NOP.
 */
import { ANY_RUNE, Alphabet } from "./alphabet.ts";
import type { Re2Inst, Re2Prog } from "./syntax.ts";

export const OP_ALT = 1;
export const OP_EMPTY = 2;
export const OP_MATCH = 3;
export const OP_RUNE = 4;
export const OP_NOP = 5;
export const OP_FAIL = 6;

// Empty-width conditions (RE2/J's Utils.js, Go's syntax.EmptyOp).
export const EMPTY_BEGIN_LINE = 0x01;
export const EMPTY_END_LINE = 0x02;
export const EMPTY_BEGIN_TEXT = 0x04;
export const EMPTY_END_TEXT = 0x08;
export const EMPTY_WORD_BOUNDARY = 0x10;
export const EMPTY_NO_WORD_BOUNDARY = 0x20;

// RE2/J's opcodes (Inst.js).
const RE2_ALT = 1;
const RE2_ALT_MATCH = 2;
const RE2_CAPTURE = 3;
const RE2_EMPTY_WIDTH = 4;
const RE2_MATCH = 6;
const RE2_NOP = 7;
const RE2_RUNE = 8;
const RE2_RUNE_ANY_NOT_NL = 11;

export interface Program {
  readonly op: Uint8Array;
  readonly out: Int32Array;
  /** ALT: the lower-priority branch; EMPTY: the conditions; RUNE: the matcher (Alphabet.accepts). */
  readonly arg: Int32Array;
  readonly length: number;
  /** Whether any instruction is an empty-width assertion (states then carry the previous character). */
  readonly hasEmpty: boolean;
}

export interface Programs {
  readonly alphabet: Alphabet;
  readonly forward: Program;
  /** Where a match anchored at the search position starts. */
  readonly anchoredStart: number;
  /** Where a search for a match starting anywhere from the search position starts. */
  readonly unanchoredStart: number;
  /** The pattern begins with `^` or `\A` outside multi-line mode: a match starts at 0 or nowhere. */
  readonly beginsAtTextStart: boolean;
  readonly reverse: Program;
  /** Where the reverse program starts, at the end of a match. */
  readonly reverseStart: number;
}

class Builder {
  readonly op: number[] = [];
  readonly out: number[] = [];
  readonly arg: number[] = [];

  add(op: number, out: number, arg: number): number {
    this.op.push(op);
    this.out.push(out);
    this.arg.push(arg);
    return this.op.length - 1;
  }

  set(pc: number, op: number, out: number, arg: number): void {
    this.op[pc] = op;
    this.out[pc] = out;
    this.arg[pc] = arg;
  }

  /** Points `pc` at every target, in order of priority: a NOP for one, a chain of ALTs for more. */
  fanOut(pc: number, targets: readonly number[]): void {
    if (targets.length === 0) {
      this.set(pc, OP_FAIL, 0, 0);
      return;
    }
    let at = pc;
    for (let k = 0; k < targets.length - 1; k++) {
      const rest = k + 1 === targets.length - 1 ? (targets[k + 1] as number) : this.add(OP_FAIL, 0, 0);
      this.set(at, OP_ALT, targets[k] as number, rest);
      at = rest;
    }
    if (targets.length === 1) this.set(pc, OP_NOP, targets[0] as number, 0);
  }

  build(): Program {
    const op = Uint8Array.from(this.op);
    return {
      op,
      out: Int32Array.from(this.out),
      arg: Int32Array.from(this.arg),
      length: op.length,
      hasEmpty: op.includes(OP_EMPTY),
    };
  }
}

function isRuneOp(op: number): boolean {
  return op >= RE2_RUNE && op <= RE2_RUNE_ANY_NOT_NL;
}

/** Instructions that match the same runes share a matcher. */
function matcherKey(inst: Re2Inst): string {
  return `${inst.op}/${inst.arg}/${inst.runes.join(",")}`;
}

// Reading the text backwards swaps the ends of lines and texts; word boundaries look both ways.
function reverseConditions(cond: number): number {
  let out = cond & (EMPTY_WORD_BOUNDARY | EMPTY_NO_WORD_BOUNDARY);
  if (cond & EMPTY_BEGIN_LINE) out |= EMPTY_END_LINE;
  if (cond & EMPTY_END_LINE) out |= EMPTY_BEGIN_LINE;
  if (cond & EMPTY_BEGIN_TEXT) out |= EMPTY_END_TEXT;
  if (cond & EMPTY_END_TEXT) out |= EMPTY_BEGIN_TEXT;
  return out;
}

/**
 * The reverse program. Node `y` (same number as in the forward program) stands for "a forward thread
 * at y here reaches a match at the end": it fans out to every way of reaching y, each one step back
 * in the text: from an ALT or NOP directly, from an assertion through the same assertion (its ends
 * swapped), from an instruction that consumed a character through that character. Reaching the
 * forward start is a match: a match may start here.
 */
function reverseProgram(insts: readonly Re2Inst[], start: number, matcherOf: Int32Array): [Program, number] {
  const b = new Builder();
  for (let pc = 0; pc < insts.length; pc++) b.add(OP_FAIL, 0, 0);
  const into: number[][] = insts.map(() => []);
  const matchPcs: number[] = [];
  insts.forEach((inst, x) => {
    switch (inst.op) {
      case RE2_ALT:
      case RE2_ALT_MATCH:
        into[inst.out]?.push(x);
        into[inst.arg]?.push(x);
        break;
      case RE2_NOP:
      case RE2_CAPTURE:
        into[inst.out]?.push(x);
        break;
      case RE2_EMPTY_WIDTH:
        into[inst.out]?.push(b.add(OP_EMPTY, x, reverseConditions(inst.arg)));
        break;
      case RE2_MATCH:
        matchPcs.push(x);
        break;
      default:
        if (isRuneOp(inst.op)) into[inst.out]?.push(b.add(OP_RUNE, x, matcherOf[x] as number));
    }
  });
  into[start]?.push(b.add(OP_MATCH, 0, 0));
  into.forEach((targets, y) => {
    b.fanOut(y, targets);
  });
  const entry = b.add(OP_FAIL, 0, 0);
  b.fanOut(entry, matchPcs);
  return [b.build(), entry];
}

export function buildPrograms(prog: Re2Prog): Programs {
  const insts = prog.inst;
  const keys = new Map<string, number>();
  const matchers: Re2Inst[] = [];
  const matcherOf = new Int32Array(insts.length);
  insts.forEach((inst, pc) => {
    if (!isRuneOp(inst.op)) return;
    const key = matcherKey(inst);
    let m = keys.get(key);
    if (m === undefined) {
      m = matchers.length;
      keys.set(key, m);
      matchers.push(inst);
    }
    matcherOf[pc] = m;
  });
  const hasEmpty = insts.some((inst) => inst.op === RE2_EMPTY_WIDTH);
  const alphabet = new Alphabet(matchers, [ANY_RUNE], hasEmpty);
  const anyMatcher = matchers.length;

  const f = new Builder();
  insts.forEach((inst, pc) => {
    switch (inst.op) {
      case RE2_ALT:
      case RE2_ALT_MATCH:
        f.add(OP_ALT, inst.out, inst.arg);
        break;
      case RE2_NOP:
      case RE2_CAPTURE:
        f.add(OP_NOP, inst.out, 0);
        break;
      case RE2_EMPTY_WIDTH:
        f.add(OP_EMPTY, inst.out, inst.arg);
        break;
      case RE2_MATCH:
        f.add(OP_MATCH, 0, 0);
        break;
      default:
        if (isRuneOp(inst.op)) f.add(OP_RUNE, inst.out, matcherOf[pc] as number);
        else f.add(OP_FAIL, 0, 0);
    }
  });
  // The unanchored entry: try a match here first, else consume any character and try again.
  const loop = f.add(OP_ALT, prog.start, 0);
  f.arg[loop] = f.add(OP_RUNE, loop, anyMatcher);
  const [reverse, reverseStart] = reverseProgram(insts, prog.start, matcherOf);
  return {
    alphabet,
    forward: f.build(),
    anchoredStart: prog.start,
    unanchoredStart: loop,
    beginsAtTextStart: (prog.startCond() & EMPTY_BEGIN_TEXT) !== 0,
    reverse,
    reverseStart,
  };
}
