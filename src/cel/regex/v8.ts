/**
 * V8's own engine, for what it does safely and fast: patterns translated exactly (translate.ts) on
 * short texts. V8 runs them on its compiled backtracking engine, tens of times faster than a
 * JavaScript automaton on everyday patterns and short strings, and moves an execution to its linear
 * engine once it has backtracked 50,000 times (`--enable-experimental-regexp-engine-on-excessive-
 * backtracks`, process-wide: it can only help other regular expressions). That engine's time and
 * memory grow with the text times the pattern, so V8 only ever sees texts of at most V8_MAX_INPUT
 * UTF-16 units: its worst case is then bounded by the pattern alone. Longer texts, and texts V8
 * could read differently from RE2, go to the automata (automaton.ts).
 */
import v8 from "node:v8";
import type { CelRegex, DeadlineCheck } from "../library/types.ts";
import { hasSurrogate } from "../runtime/code-points.ts";
import { Automaton } from "./automaton.ts";
import { Untranslatable } from "./charset.ts";
import { findAllWith, isHighSurrogate, isLowSurrogate } from "./find-all.ts";
import type { Re2Prog } from "./syntax.ts";
import { type Translation, translate } from "./translate.ts";

/**
 * The longest text V8 is given. Policies match names, labels, image references and versions, well
 * under this; longer texts are where V8's fallback engine costs memory per character.
 */
export const V8_MAX_INPUT = 256;

let linearAvailable: boolean | undefined;

/** The V8 flags are set once per process; without the linear engine every pattern uses the automata. */
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

/** The pattern as a global JavaScript RegExp, or undefined when V8 cannot run it as RE2 would. */
export function buildLinear(pattern: string): { re: RegExp; multiline: boolean } | undefined {
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

const OTHER_LINE_TERMINATORS = /[\r\u2028\u2029]/;

interface WellFormedCheck {
  isWellFormed(): boolean;
}

export class V8Regex implements CelRegex {
  readonly engine = "v8-linear";
  private automaton: Automaton | undefined;
  /**
   * The pattern without the `g` flag, for `test`: a global RegExp reads and writes its lastIndex
   * on every test, which `matchAt` needs and a yes-or-no answer does not.
   */
  private readonly tester: RegExp;

  constructor(
    private readonly re: RegExp,
    private readonly multiline: boolean,
    private readonly prog: Re2Prog,
  ) {
    this.tester = new RegExp(re.source, re.flags.replace("g", ""));
  }

  /**
   * The automaton for a text V8 must not see: a long one, or one it could read differently (the
   * translation is exact for well-formed UTF-16, but RE2 reads a lone surrogate as one rune, and
   * JavaScript's `m` flag knows line terminators RE2's `(?m)` does not).
   */
  private slow(text: string): Automaton | undefined {
    const unsafe =
      text.length > V8_MAX_INPUT ||
      !(text as unknown as WellFormedCheck).isWellFormed() ||
      (this.multiline && OTHER_LINE_TERMINATORS.test(text));
    if (!unsafe) return undefined;
    this.automaton ??= new Automaton(this.prog);
    return this.automaton;
  }

  test(text: string, deadline?: DeadlineCheck): boolean {
    return hasSurrogate(text) ? this.careful(text, deadline) : this.testWithoutSurrogates(text, deadline);
  }

  testWithoutSurrogates(text: string, deadline?: DeadlineCheck): boolean {
    // Without surrogates no match can start inside a pair, so V8's own test answers (no match
    // array, no substring): most of what this wrapper cost over a plain RegExp.
    if (text.length > V8_MAX_INPUT || (this.multiline && OTHER_LINE_TERMINATORS.test(text)))
      return this.careful(text, deadline);
    return this.tester.test(text);
  }

  private careful(text: string, deadline: DeadlineCheck | undefined): boolean {
    const slow = this.slow(text);
    if (slow) return slow.test(text, deadline);
    return this.matchAt(text, 0) !== undefined;
  }

  find(text: string, deadline?: DeadlineCheck): string | undefined {
    const slow = this.slow(text);
    const m = slow ? slow.matchAt(text, 0, deadline) : this.matchAt(text, 0);
    return m === undefined ? undefined : text.slice(m[0], m[1]);
  }

  findAll(text: string, limit: number, deadline?: DeadlineCheck): string[] {
    if (limit === 0) return [];
    const slow = this.slow(text);
    if (slow) return findAllWith(text, limit, (pos) => slow.matchAt(text, pos, deadline));
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
