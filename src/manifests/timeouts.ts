/**
 * How long an API server may wait on a set of webhooks for one request, at worst, against how long
 * it lets a request take.
 *
 * The API server calls the mutating webhooks a request matches one after another, and runs the
 * whole mutating chain a second time when a webhook with reinvocationPolicy IfNeeded asked for it
 * and a later one changed the object (k8s.io/apiserver/pkg/admission/reinvocation.go: one more
 * pass, never more). It calls the validating webhooks in parallel (webhook/validating/dispatcher.go),
 * so they cost the longest timeout among them, not the sum. Each call may take its timeoutSeconds
 * before its failurePolicy applies. A request that matches several webhooks waits for all of them,
 * within the request's own deadline (kube-apiserver `--request-timeout`, 60 s by default): past it
 * the request fails whatever the webhooks' failurePolicy says.
 */
import { intersectRules, type WebhookRule } from "./rules.ts";

/** kube-apiserver's default `--request-timeout` (k8s.io/apiserver/pkg/server/config.go). */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 60;

export interface TimedWebhook {
  readonly name: string;
  readonly phase: "validate" | "mutate";
  readonly timeoutSeconds: number;
  /** Mutating: reinvocationPolicy IfNeeded, so it may be called twice. */
  readonly reinvoked: boolean;
  readonly rules: readonly WebhookRule[];
}

export interface WorstChain {
  /** The longest a request can wait on these webhooks. */
  readonly seconds: number;
  /** The webhooks of that request, in calling order (mutating first, "twice" when reinvoked). */
  readonly webhooks: readonly string[];
}

/** The requests both rule lists match, as rules; empty when they share none. */
function meet(a: readonly WebhookRule[], b: readonly WebhookRule[]): WebhookRule[] {
  const out: WebhookRule[] = [];
  for (const x of a)
    for (const y of b) {
      const r = intersectRules(x, y);
      if (r) out.push(r);
    }
  return out;
}

const EVERYTHING: readonly WebhookRule[] = [
  { operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"], scope: "*" },
];

function cost(h: TimedWebhook): number {
  return h.timeoutSeconds * (h.phase === "mutate" && h.reinvoked ? 2 : 1);
}

/**
 * The worst request for these webhooks: over every set of mutating webhooks some request matches
 * together, their summed cost plus the longest validating webhook that request also matches.
 * Rules decide what can match together; selectors and matchConditions are not considered, so the
 * answer may be worse than any real request, never better.
 */
export function worstCaseWait(webhooks: readonly TimedWebhook[]): WorstChain {
  const mutating = webhooks.filter((h) => h.phase === "mutate").sort((a, b) => cost(b) - cost(a));
  const validating = webhooks.filter((h) => h.phase === "validate");
  let best: WorstChain = { seconds: 0, webhooks: [] };
  const longestValidating = (requests: readonly WebhookRule[]): TimedWebhook | undefined => {
    let found: TimedWebhook | undefined;
    for (const v of validating)
      if ((found === undefined || v.timeoutSeconds > found.timeoutSeconds) && meet(requests, v.rules).length)
        found = v;
    return found;
  };
  const maxValidating = Math.max(0, ...validating.map((v) => v.timeoutSeconds));
  // Branch and bound over the mutating webhooks, most costly first: a set is explored only while
  // some request matches all of it, and only while it could still beat the best found.
  const visit = (i: number, chosen: TimedWebhook[], sum: number, requests: readonly WebhookRule[]) => {
    const rest = mutating.slice(i).reduce((s, h) => s + cost(h), 0);
    if (sum + rest + maxValidating <= best.seconds) return;
    if (i === mutating.length) {
      const v = longestValidating(requests);
      const seconds = sum + (v?.timeoutSeconds ?? 0);
      if (seconds > best.seconds)
        best = {
          seconds,
          webhooks: [
            ...chosen.map((h) => (h.reinvoked ? `${h.name} (twice, reinvoked)` : h.name)),
            ...(v ? [v.name] : []),
          ],
        };
      return;
    }
    const h = mutating[i] as TimedWebhook;
    const together = meet(requests, h.rules);
    if (together.length > 0) visit(i + 1, [...chosen, h], sum + cost(h), together);
    visit(i + 1, chosen, sum, requests);
  };
  visit(0, [], 0, EVERYTHING);
  return best;
}
