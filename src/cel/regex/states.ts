/**
 * The bounded cache of a lazy DFA's states (dfa.ts): each state's threads and flags, its row of
 * transitions, and a hash index to find a state by its threads. Everything is counted against a
 * budget in 32-bit words; the DFA empties the cache when a new state would not fit.
 */

/** A transition not computed yet. */
export const UNKNOWN = -1;
/** State 0 has no threads: nothing can match any more. */
export const DEAD = 0;

/** Words a state costs beyond its transitions and threads (objects, index entry). */
const STATE_OVERHEAD = 24;
/** Rows of transitions allocated at first. */
const INITIAL_ROWS = 16;

function sameThreads(a: Int32Array, b: Int32Array, len: number): boolean {
  if (a.length !== len) return false;
  for (let k = 0; k < len; k++) if (a[k] !== b[k]) return false;
  return true;
}

export class StateCache {
  /** Transitions: (next state << 1) | (1 if a match ends before the character), or UNKNOWN. */
  trans: Int32Array = new Int32Array(0);
  threads: Int32Array[] = [];
  flags: number[] = [];
  /** Words used so far. */
  used = 0;
  private readonly index = new Map<number, number[]>();

  constructor(
    private readonly stride: number,
    private readonly budget: number,
  ) {
    this.clear();
  }

  get size(): number {
    return this.threads.length;
  }

  /** Forgets every state but the dead one; `release` also gives back the transition table. */
  clear(release = false): void {
    this.threads = [new Int32Array(0)];
    this.flags = [0];
    this.index.clear();
    this.used = this.stride + STATE_OVERHEAD;
    if (release || this.trans.length < INITIAL_ROWS * this.stride)
      this.trans = new Int32Array(INITIAL_ROWS * this.stride);
    this.trans.fill(UNKNOWN, 0, this.stride);
  }

  /** FNV-1a over the flags and threads. */
  static hash(list: Int32Array, len: number, flags: number): number {
    let h = Math.imul(0x811c9dc5 ^ flags, 0x01000193);
    for (let k = 0; k < len; k++) h = Math.imul(h ^ (list[k] as number), 0x01000193);
    return h;
  }

  /** The state with these threads and flags, or -1. */
  find(list: Int32Array, len: number, flags: number, hash: number): number {
    const ids = this.index.get(hash);
    if (ids === undefined) return -1;
    for (const id of ids)
      if (this.flags[id] === flags && sameThreads(this.threads[id] as Int32Array, list, len)) return id;
    return -1;
  }

  /** Whether a state of `len` threads fits in the budget. */
  fits(len: number): boolean {
    return this.used + this.stride + len + STATE_OVERHEAD <= this.budget;
  }

  add(list: Int32Array, len: number, flags: number, hash: number): number {
    const id = this.threads.length;
    this.threads.push(list.slice(0, len));
    this.flags.push(flags);
    const ids = this.index.get(hash);
    if (ids === undefined) this.index.set(hash, [id]);
    else ids.push(id);
    this.used += this.stride + len + STATE_OVERHEAD;
    const row = id * this.stride;
    if (row + this.stride > this.trans.length) {
      const grown = new Int32Array(Math.max(2 * this.trans.length, row + this.stride));
      grown.set(this.trans);
      this.trans = grown;
    }
    this.trans.fill(UNKNOWN, row, row + this.stride);
    return id;
  }
}
