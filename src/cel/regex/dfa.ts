/**
 * A lazy DFA over a program, as RE2 runs one (re2/dfa.cc): a state is a list of targets (threads.ts),
 * built the first time a search reaches it, and its transitions, one per character class, are
 * filled in as they are taken. A search then costs a table lookup per character.
 *
 * The cache of states is bounded (states.ts): when full it is emptied and refilled from the current
 * state on. A pattern whose states keep filling it (exponentially many, as `(a|b)*a(a|b){20}` has)
 * would refill it for ever, so, as RE2 does, a search that empties the cache again before it has
 * read ten characters per state stops using it and goes on from the same position and targets with
 * the thread lists alone: an NFA simulation, in time proportional to text × program. Unlike RE2, it
 * tries the cache again after a stint of simulation (each stint twice as long as the one before), so
 * a pattern whose states only multiply for a while (a long counted repetition warming up) gets the
 * DFA's speed back. Memory is fixed by the program and the budget, never by the text.
 *
 * Searches read the deadline every so many characters, so a long search stops with the evaluation's
 * timeout error.
 */
import type { DeadlineCheck } from "../library/types.ts";
import type { Alphabet } from "./alphabet.ts";
import type { Program } from "./program.ts";
import { DEAD, StateCache, UNKNOWN } from "./states.ts";
import { EARLIEST, FIRST, flagsAfter, flagsBefore, LONGEST, type Mode, Stepper } from "./threads.ts";

/** The transition gave up the cache: go on without it. */
const GAVE_UP = -2;
/** Characters between two readings of the clock. */
const DEADLINE_EVERY = 1 << 14;
/** What building a state weighs against DEADLINE_EVERY: it steps every thread of the state. */
const NEW_STATE_WEIGHT = 64;
/** The cache's budget in 32-bit words: transitions, threads and bookkeeping of every state. */
const CACHE_BUDGET = 1 << 19;
/** A cache larger than this after a search is emptied, so idle patterns hold little memory. */
const KEPT_AFTER_SEARCH = 1 << 14;
/** RE2's rule: a cache refilled in fewer than this many characters per state is thrashing. */
const CHARACTERS_PER_STATE = 10;
/** The shortest stint of simulation before the cache is tried again. */
const MIN_STINT = 256;

export interface DfaOptions {
  /** The cache budget in 32-bit words (CACHE_BUDGET); tests make it small to exercise resets. */
  readonly budget?: number;
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

export class LazyDfa {
  private readonly stepper: Stepper;
  private readonly stride: number;
  private readonly eot: number;
  private readonly budget: number;
  private readonly cache: StateCache;
  /** The start state per flags of the position before the search (AT_TEXT_START etc.). */
  private readonly starts = new Int32Array(8);
  /** Where this search last emptied the cache, or -1. */
  private resetAt = -1;
  /** Characters the next simulation runs before trying the cache again; 0 before the first. */
  private stint = 0;
  // Where a search stands between its phases: position, last match end, and the DFA state or
  // (simulating) the threads in bufA[0, len) with their flags.
  private at = 0;
  private last = -1;
  private state = DEAD;
  private len = 0;
  private threadFlags = 0;
  private readonly bufA: Int32Array;
  private readonly bufB: Int32Array;

  constructor(
    prog: Program,
    private readonly alphabet: Alphabet,
    private readonly start: number,
    private readonly mode: Mode,
    options: DfaOptions = {},
  ) {
    this.stepper = new Stepper(prog, alphabet, mode);
    this.stride = alphabet.size + 1;
    this.eot = alphabet.size;
    // Room for a few states of the whole program at least, so an emptied cache always takes one.
    this.budget = Math.max(options.budget ?? CACHE_BUDGET, 4 * (this.stride + prog.length) + 256);
    this.cache = new StateCache(this.stride, this.budget);
    this.starts.fill(UNKNOWN);
    this.bufA = new Int32Array(prog.length);
    this.bufB = new Int32Array(prog.length);
  }

  /** States in the cache, the dead one included (for tests). */
  get size(): number {
    return this.cache.size;
  }

  private emptyCache(release: boolean): void {
    this.cache.clear(release);
    this.starts.fill(UNKNOWN);
  }

  /**
   * The state for threads `list[0, len)` after a character that left `flags`, built if new.
   * Returns GAVE_UP when the cache would have to be emptied twice too quickly (see above).
   */
  private intern(list: Int32Array, len: number, flags: number, at: number): number {
    if (len === 0) return DEAD;
    // Only leftmost-first needs the order of the threads; sorted lists make fewer states.
    if (this.mode !== FIRST) list.subarray(0, len).sort();
    const f = this.stepper.needsFlags(list, len) ? flags : 0;
    const hash = StateCache.hash(list, len, f);
    const known = this.cache.find(list, len, f, hash);
    if (known >= 0) return known;
    if (!this.cache.fits(len)) {
      if (this.resetAt >= 0 && Math.abs(at - this.resetAt) < CHARACTERS_PER_STATE * this.cache.size)
        return GAVE_UP;
      this.emptyCache(false);
      this.resetAt = at;
    }
    return this.cache.add(list, len, f, hash);
  }

  private startState(flags: number): number {
    let s = this.starts[flags] as number;
    if (s === UNKNOWN) {
      this.bufA[0] = this.start;
      s = this.intern(this.bufA, 1, flags, 0);
      this.starts[flags] = s;
    }
    return s;
  }

  /** Computes and caches the transition of state `s` on class `cls`, read at position `at`. */
  private transition(s: number, cls: number, at: number): number {
    const from = this.cache.threads[s] as Int32Array;
    const r = this.stepper.step(from, from.length, this.cache.flags[s] as number, cls, this.bufB);
    const cleared = this.resetAt;
    const next = cls === this.eot ? DEAD : this.intern(this.bufB, r >> 1, flagsAfter(this.alphabet, cls), at);
    if (next === GAVE_UP) return GAVE_UP;
    const t = (next << 1) | (r & 1);
    // A cache emptied to make room has lost state s: the caller goes on from `next` alone.
    if (this.resetAt === cleared) this.cache.trans[s * this.stride + cls] = t;
    return t;
  }

  /** The class of the code point at `i` and its width in UTF-16 units, as (class << 2) | width. */
  private classAt(text: string, i: number): number {
    let c = text.charCodeAt(i);
    if (c < 0x80) return ((this.alphabet.ascii[c] as number) << 2) | 1;
    let w = 1;
    if (isHigh(c) && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (isLow(d)) {
        c = (c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000;
        w = 2;
      }
    }
    return (this.alphabet.classOf(c) << 2) | w;
  }

  /** The class of the code point that ends at `i` (reading backwards, not before `limit`). */
  private classBefore(text: string, i: number, limit: number): number {
    let c = text.charCodeAt(i - 1);
    if (c < 0x80) return ((this.alphabet.ascii[c] as number) << 2) | 1;
    let w = 1;
    if (isLow(c) && i - 2 >= limit) {
      const h = text.charCodeAt(i - 2);
      if (isHigh(h)) {
        c = (h - 0xd800) * 0x400 + (c - 0xdc00) + 0x10000;
        w = 2;
      }
    }
    return (this.alphabet.classOf(c) << 2) | w;
  }

  /**
   * Reads `text` forwards from `pos`. EARLIEST: where the first match found ends; FIRST: where the
   * leftmost-first match ends; -1 when nothing matches.
   */
  forward(text: string, pos: number, deadline?: DeadlineCheck): number {
    this.begin(pos);
    try {
      this.state = this.startState(flagsBefore(pos > 0 ? text.charCodeAt(pos - 1) : -1));
      while (!this.runForward(text, deadline)) {
        this.leaveCache();
        if (this.simulate(text, text.length, deadline)) break;
        this.resume();
      }
      return this.last;
    } finally {
      this.settle();
    }
  }

  /**
   * Reads `text` backwards from `end`, not past `limit` (LONGEST mode over a reverse program): the
   * smallest start of a match ending at `end`, or -1.
   */
  backward(text: string, end: number, limit: number, deadline?: DeadlineCheck): number {
    this.begin(end);
    try {
      this.state = this.startState(flagsBefore(end < text.length ? text.charCodeAt(end) : -1));
      while (!this.runBackward(text, limit, deadline)) {
        this.leaveCache();
        if (this.simulate(text, limit, deadline)) break;
        this.resume();
      }
      return this.last;
    } finally {
      this.settle();
    }
  }

  private begin(pos: number): void {
    this.resetAt = -1;
    this.stint = 0;
    this.at = pos;
    this.last = -1;
  }

  /** After a search, ended or stopped by its deadline: a cache grown large is dropped, so idle patterns hold little memory. */
  private settle(): void {
    if (this.cache.used > KEPT_AFTER_SEARCH) this.emptyCache(true);
  }

  /** The cache gave up in state `this.state`: its threads go on without it. */
  private leaveCache(): void {
    const threads = this.cache.threads[this.state] as Int32Array;
    this.bufA.set(threads);
    this.len = threads.length;
    this.threadFlags = this.cache.flags[this.state] as number;
    this.stint =
      this.stint === 0 ? Math.max(MIN_STINT, Math.ceil(this.budget / (this.len + 1))) : 2 * this.stint;
  }

  /** Back to the DFA after a stint of simulation, from a fresh cache and the threads in bufA. */
  private resume(): void {
    this.emptyCache(false);
    this.resetAt = this.at;
    this.state = this.intern(this.bufA, this.len, this.threadFlags, this.at);
  }

  /** The DFA loop forwards; false when the cache gave up (at `this.at`, in `this.state`). */
  private runForward(text: string, deadline: DeadlineCheck | undefined): boolean {
    const ascii = this.alphabet.ascii;
    const stride = this.stride;
    const earliest = this.mode === EARLIEST;
    const n = text.length;
    let trans = this.cache.trans;
    let s = this.state;
    let last = this.last;
    let countdown = DEADLINE_EVERY;
    let i = this.at;
    while (i < n && s !== DEAD) {
      const c = text.charCodeAt(i);
      let cls: number;
      let w = 1;
      if (c < 0x80) cls = ascii[c] as number;
      else {
        const cw = this.classAt(text, i);
        cls = cw >> 2;
        w = cw & 3;
      }
      let t = trans[s * stride + cls] as number;
      if (t < 0) {
        t = this.transition(s, cls, i);
        if (t === GAVE_UP) return this.pause(i, s, last);
        trans = this.cache.trans;
        countdown -= NEW_STATE_WEIGHT;
      }
      if (t & 1) {
        if (earliest) return this.end(i);
        last = i;
      }
      s = t >> 1;
      i += w;
      if (--countdown <= 0) {
        countdown = DEADLINE_EVERY;
        deadline?.checkDeadline();
      }
    }
    if (s !== DEAD) {
      let t = trans[s * stride + this.eot] as number;
      if (t < 0) t = this.transition(s, this.eot, n);
      if (t & 1) last = n;
    }
    return this.end(last);
  }

  /** The DFA loop backwards, to `limit`; false when the cache gave up. */
  private runBackward(text: string, limit: number, deadline: DeadlineCheck | undefined): boolean {
    const stride = this.stride;
    let trans = this.cache.trans;
    let s = this.state;
    let last = this.last;
    let countdown = DEADLINE_EVERY;
    let i = this.at;
    while (i > limit && s !== DEAD) {
      const cw = this.classBefore(text, i, limit);
      const cls = cw >> 2;
      let t = trans[s * stride + cls] as number;
      if (t < 0) {
        t = this.transition(s, cls, i);
        if (t === GAVE_UP) return this.pause(i, s, last);
        trans = this.cache.trans;
        countdown -= NEW_STATE_WEIGHT;
      }
      if (t & 1) last = i;
      s = t >> 1;
      i -= cw & 3;
      if (--countdown <= 0) {
        countdown = DEADLINE_EVERY;
        deadline?.checkDeadline();
      }
    }
    if (s !== DEAD) {
      // A match may start at the limit, decided by the character before it, which is not read.
      const cls = limit > 0 ? this.classBefore(text, limit, 0) >> 2 : this.eot;
      const threads = this.cache.threads[s] as Int32Array;
      const flags = this.cache.flags[s] as number;
      if (this.stepper.step(threads, threads.length, flags, cls, this.bufB) & 1) last = limit;
    }
    return this.end(last);
  }

  private end(last: number): true {
    this.last = last;
    return true;
  }

  private pause(at: number, s: number, last: number): false {
    this.at = at;
    this.state = s;
    this.last = last;
    return false;
  }

  /**
   * The NFA simulation, from `this.at` and the threads in bufA, for one stint: reads forwards to
   * `bound` = the text's length, or (LONGEST, over the reverse program) backwards to `bound` = the
   * limit. True when the search is over (result in `this.last`), false when the stint ran out
   * (position, threads and flags saved for `resume`).
   */
  private simulate(text: string, bound: number, deadline: DeadlineCheck | undefined): boolean {
    const stepper = this.stepper;
    const backwards = this.mode === LONGEST;
    const earliest = this.mode === EARLIEST;
    let cur = this.bufA;
    let other = this.bufB;
    let len = this.len;
    let flags = this.threadFlags;
    let i = this.at;
    let work = 0;
    for (let steps = 0; ; steps++) {
      const atBound = backwards ? i <= bound : i >= bound;
      if (!atBound && steps >= this.stint) {
        if (cur !== this.bufA) this.bufA.set(cur.subarray(0, len));
        this.at = i;
        this.len = len;
        this.threadFlags = flags;
        return false;
      }
      let cls: number;
      let w = 0;
      if (atBound) cls = backwards && bound > 0 ? this.classBefore(text, bound, 0) >> 2 : this.eot;
      else {
        const cw = backwards ? this.classBefore(text, i, bound) : this.classAt(text, i);
        cls = cw >> 2;
        w = cw & 3;
      }
      const r = stepper.step(cur, len, flags, cls, other);
      if (r & 1) {
        if (earliest) return this.end(i);
        this.last = i;
      }
      len = r >> 1;
      if (atBound || len === 0) return true;
      const swap = cur;
      cur = other;
      other = swap;
      flags = flagsAfter(this.alphabet, cls);
      i += backwards ? -w : w;
      work += len + 1;
      if (work >= DEADLINE_EVERY) {
        work = 0;
        deadline?.checkDeadline();
      }
    }
  }
}
