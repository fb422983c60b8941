/**
 * The API server tells a webhook how long it will wait with a `?timeout=` query parameter written
 * as a Go duration (`time.Duration.String()`: `10s`, `1m30s`, `2.5s`, `750ms`). Past that it stops
 * listening and applies the webhook's failurePolicy, so the engine gets a deadline a little before
 * it: an answer the API server never reads is worth nothing.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign, as Go prints it
  μs: 1e-3, // U+03BC Greek mu, which Go also accepts
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const COMPONENT = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Milliseconds in a Go duration string, or undefined when it is not one. Go's sign and its bare
 * `0` are accepted; callers decide what a non-positive duration means.
 */
export function parseGoDuration(text: string): number | undefined {
  let rest = text.trim();
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest.startsWith("-")) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") return undefined;
  let total = 0;
  while (rest !== "") {
    const m = COMPONENT.exec(rest);
    if (m === null) return undefined;
    const [whole, amount = "", unit = ""] = m;
    const factor = UNIT_MS[unit];
    if (factor === undefined) return undefined;
    total += Number(amount) * factor;
    rest = rest.slice(whole.length);
  }
  return Number.isFinite(total) ? sign * total : undefined;
}

/** The API server caps webhook timeouts at 30 s; longer values come from something else. */
export const MAX_TIMEOUT_MS = 30_000;

/**
 * The timeout for one request: the `timeout` query value when it is a positive Go duration (at most
 * MAX_TIMEOUT_MS), else the default.
 */
export function requestTimeoutMs(query: unknown, defaultMs: number): number {
  if (typeof query !== "string") return defaultMs;
  const ms = parseGoDuration(query);
  if (ms === undefined || ms <= 0) return defaultMs;
  return Math.min(ms, MAX_TIMEOUT_MS);
}

/**
 * When the engine must have finished: the timeout less a margin for encoding, the network and
 * clock granularity — a tenth of the timeout, between 20 ms and 1 s.
 */
export function deadlineFor(receivedAt: number, timeoutMs: number): number {
  const margin = Math.min(1000, Math.max(20, timeoutMs / 10));
  return receivedAt + Math.max(0, timeoutMs - margin);
}
