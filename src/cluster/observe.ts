/**
 * What the cluster code reports, and to whom: a JSON logger (the server's pino log) and the
 * connection's metrics. Both are interfaces so that the cluster code needs neither pino nor
 * prom-client, and `celgate audit` can pass a quiet logger.
 */

/** A pino-shaped logger: fields first, then the message. */
export interface ClusterLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const QUIET_LOG: ClusterLog = { info: () => {}, warn: () => {}, error: () => {} };

/** Why a watch was opened again ("silent": no event or bookmark for too long, see reflector.ts). */
export type WatchRestartReason = "closed" | "expired" | "error" | "silent";

export interface CacheObserver {
  /** The cache for `resource` has (or has no longer) a first complete list. */
  synced(resource: string, synced: boolean): void;
  /** A full list, with why: the first one, an expired resourceVersion (410), or a failed watch. */
  relisted(resource: string, reason: "initial" | "expired" | "error"): void;
  watchRestarted(resource: string, reason: WatchRestartReason): void;
  objects(resource: string, count: number): void;
  /** The cache stopped (its paramKind is no longer used): drop its series. */
  removed(resource: string): void;
}

export interface SarObserver {
  /**
   * How a review's authorizer check was answered: from the cache (`hit`), by a SubjectAccessReview
   * (`miss`), from an answer past its TTL while SARs fail (`stale`), or with the last failure, no
   * SAR sent while its backoff runs (`backoff`).
   */
  check(how: "hit" | "miss" | "stale" | "backoff"): void;
  /** One SubjectAccessReview call and how it ended. */
  call(outcome: "ok" | "error" | "budget", seconds: number): void;
}

export const NO_CACHE_OBSERVER: CacheObserver = {
  synced: () => {},
  relisted: () => {},
  watchRestarted: () => {},
  objects: () => {},
  removed: () => {},
};

export const NO_SAR_OBSERVER: SarObserver = { check: () => {}, call: () => {} };
