/**
 * RE2's matching, in time linear in the text and memory fixed by the pattern: three lazy DFAs over
 * RE2/J's compiled program (program.ts, dfa.ts), each built on first use, as RE2 runs them.
 *
 * - `test`: the forward program, stopping at the first match found (`matches` asks no more).
 * - Match positions: the forward program finds where the leftmost-first match ends; the reverse
 *   program, read backwards from there, finds the leftmost position where a match ending there
 *   starts, which is where the leftmost-first match starts (any earlier start would be a more
 *   leftmost match). RE2 finds positions the same way.
 */
import type { DeadlineCheck } from "../library/types.ts";
import { type DfaOptions, LazyDfa } from "./dfa.ts";
import { buildPrograms, type Programs } from "./program.ts";
import type { Re2Prog } from "./syntax.ts";
import { EARLIEST, FIRST, LONGEST } from "./threads.ts";

export class Automaton {
  private readonly programs: Programs;
  private tester: LazyDfa | undefined;
  private ender: LazyDfa | undefined;
  private starter: LazyDfa | undefined;

  constructor(
    prog: Re2Prog,
    private readonly options: DfaOptions = {},
  ) {
    this.programs = buildPrograms(prog);
  }

  /** Where a forward search starts: a pattern that begins at the text's start needs no prefix loop. */
  private get entry(): number {
    const p = this.programs;
    return p.beginsAtTextStart ? p.anchoredStart : p.unanchoredStart;
  }

  /** Whether the pattern matches anywhere in `text`. */
  test(text: string, deadline?: DeadlineCheck): boolean {
    const p = this.programs;
    this.tester ??= new LazyDfa(p.forward, p.alphabet, this.entry, EARLIEST, this.options);
    return this.tester.forward(text, 0, deadline) >= 0;
  }

  /** The leftmost-first match starting at or after `pos`, as [start, end) in UTF-16 units. */
  matchAt(text: string, pos: number, deadline?: DeadlineCheck): [number, number] | undefined {
    const p = this.programs;
    if (p.beginsAtTextStart && pos > 0) return undefined;
    this.ender ??= new LazyDfa(p.forward, p.alphabet, this.entry, FIRST, this.options);
    const end = this.ender.forward(text, pos, deadline);
    if (end < 0) return undefined;
    this.starter ??= new LazyDfa(p.reverse, p.alphabet, p.reverseStart, LONGEST, this.options);
    const start = this.starter.backward(text, end, pos, deadline);
    if (start < 0) throw new Error(`the reverse search found no start for the match ending at ${end}`);
    return [start, end];
  }
}
