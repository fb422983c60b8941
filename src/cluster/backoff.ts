/**
 * Exponential backoff with jitter, as k8s.io/apimachinery's wait.Backoff steps it
 * (pkg/util/wait/backoff.go `delay`): each wait is the current duration plus a random part of up
 * to `jitter` times it; the duration is then multiplied by `factor` until it would pass `maxMs`,
 * and stays there. `DelayWithReset`'s reset is kept too: once `resetMs` has passed since the last
 * reset, the next wait starts again from `initialMs`.
 */

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly factor: number;
  /** The random part of each wait, as a fraction of the duration (client-go: `Jitter`). */
  readonly jitter: number;
  /** Start again from `initialMs` when this long has passed since the last reset; 0: never by time. */
  readonly resetMs: number;
}

/**
 * client-go's reflector (tools/cache/reflector.go: defaultBackoffInit, defaultBackoffMax,
 * defaultBackoffFactor, defaultBackoffJitter, defaultBackoffReset), which the reflector's loop
 * waits between one ListAndWatch and the next and before a watch that failed is opened again.
 * Capped waits fall in [30 s, 60 s).
 */
export const REFLECTOR_BACKOFF: BackoffPolicy = {
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 1,
  resetMs: 120_000,
};

export class Backoff {
  private durationMs: number;
  private lastReset: number;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly now: () => number = () => performance.now(),
    private readonly random: () => number = Math.random,
  ) {
    this.durationMs = policy.initialMs;
    this.lastReset = now();
  }

  /** The next wait, in milliseconds; the one after it is longer, up to the cap. */
  next(): number {
    const now = this.now();
    if (this.policy.resetMs > 0 && now - this.lastReset > this.policy.resetMs) this.reset();
    const d = this.durationMs;
    this.durationMs = Math.min(this.policy.maxMs, d * this.policy.factor);
    return d + this.random() * this.policy.jitter * d;
  }

  /** Starts again from the initial wait. */
  reset(): void {
    this.durationMs = this.policy.initialMs;
    this.lastReset = this.now();
  }
}
