/**
 * Regular expressions with RE2 semantics (what CEL's `matches` and Kubernetes' `find`/`findAll` use
 * in Go), in time linear in the text and memory independent of it.
 *
 * Every pattern is parsed and compiled by `@bufbuild/re2`, a port of RE2/J (syntax.ts), so syntax
 * errors carry Go's messages. Then one of two engines runs it:
 *
 * - `v8-linear` (v8.ts): patterns that translate exactly into JavaScript (translate.ts) run on V8's
 *   own engine for texts of at most V8_MAX_INPUT units, and on the automata beyond.
 * - `re2js` (automaton.ts): everything else (Unicode classes, case folding beyond ASCII, mixed
 *   single-line and multi-line anchors, loops over sub-patterns that can match empty) runs on
 *   celgate's lazy DFAs over RE2/J's compiled program, as RE2 runs its own.
 *
 * Either way a long match reads the evaluation's deadline as it goes (CelRegex's DeadlineCheck).
 */
import type { CelRegex, DeadlineCheck } from "../library/types.ts";
import { CelError } from "../runtime/values.ts";
import { Automaton } from "./automaton.ts";
import type { DfaOptions } from "./dfa.ts";
import { findAllWith } from "./find-all.ts";
import { parseRe2, type Re2Prog } from "./syntax.ts";
import { buildLinear, V8Regex } from "./v8.ts";

export { validateRegex } from "./syntax.ts";
export { V8_MAX_INPUT } from "./v8.ts";

export type RegexEngine = "v8-linear" | "re2js";

interface CompiledRegex extends CelRegex {
  readonly engine: RegexEngine;
}

/** RE2/J's program on celgate's automata. */
class Re2Regex implements CompiledRegex {
  readonly engine = "re2js";
  private readonly automaton: Automaton;

  constructor(prog: Re2Prog, options?: DfaOptions) {
    this.automaton = new Automaton(prog, options);
  }

  test(text: string, deadline?: DeadlineCheck): boolean {
    return this.automaton.test(text, deadline);
  }

  testWithoutSurrogates(text: string, deadline?: DeadlineCheck): boolean {
    return this.automaton.test(text, deadline);
  }

  find(text: string, deadline?: DeadlineCheck): string | undefined {
    const m = this.automaton.matchAt(text, 0, deadline);
    return m === undefined ? undefined : text.slice(m[0], m[1]);
  }

  findAll(text: string, limit: number, deadline?: DeadlineCheck): string[] {
    if (limit === 0) return [];
    return findAllWith(text, limit, (pos) => this.automaton.matchAt(text, pos, deadline));
  }
}

function build(pattern: string): CompiledRegex {
  const prog = parseRe2(pattern).re2().prog;
  const js = buildLinear(pattern);
  return js === undefined ? new Re2Regex(prog) : new V8Regex(js.re, js.multiline, prog);
}

const CACHE_LIMIT = 1000;

interface CacheEntry {
  readonly regex?: CompiledRegex;
  readonly error?: string;
}

// A Map iterates in insertion order, so re-inserting on a hit makes the first key the least recently used.
const cache = new Map<string, CacheEntry>();

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

/** Compiles a pattern with RE2 syntax and semantics (cached); throws a CelError with Go's message if invalid. */
export function compileRegex(pattern: string): CelRegex {
  return lookup(pattern);
}

/** Which engine runs a (valid) pattern: V8 (on short texts), or the automata. */
export function regexEngine(pattern: string): RegexEngine {
  return lookup(pattern).engine;
}

/**
 * Compiles a pattern for one engine only, bypassing the cache; lets tests compare the engines. For
 * `re2js`, `options` sets the automata's cache budget (tests make it small to exercise resets).
 */
export function compileRegexWith(pattern: string, engine: RegexEngine, options?: DfaOptions): CelRegex {
  const prog = parseRe2(pattern).re2().prog;
  if (engine === "re2js") return new Re2Regex(prog, options);
  const js = buildLinear(pattern);
  if (js === undefined)
    throw new Error(`pattern ${JSON.stringify(pattern)} is not translated to V8's linear engine`);
  return new V8Regex(js.re, js.multiline, prog);
}
