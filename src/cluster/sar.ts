/**
 * `authorizer` checks answered by the cluster: each check becomes a SubjectAccessReview
 * (authorization.k8s.io/v1) for the user the check is about, as the API server's admission plugin
 * asks its own authorizer (apiserver/pkg/cel/library/authz.go: a resource check is a resource request
 * with APIVersion "*"; a path check is a non-resource request).
 *
 * Semantics kept from upstream:
 * - Within one review a check asked twice gets the same answer, keyed by the full attributes with
 *   the user's name, uid, sorted groups and sorted extra (admission/plugin/policy/validating/
 *   caching_authorizer.go).
 * - An authorizer error is not an expression error: the check's decision is no-opinion, with the
 *   error on it, so `allowed()` is false and `errored()` true (authz.go decisionVal; the webhook
 *   authorizer answers `decisionOnError`, no-opinion, when its call fails). A SAR's
 *   `status.evaluationError` is such an error too.
 *
 * Answers are kept across reviews as the API server's webhook authorizer keeps them
 * (plugin/pkg/authorizer/webhook/webhook.go: every status it gets, evaluationError included, for
 * an authorized or an unauthorized TTL; a failed call is never cached): for `ttlMs` (10 s, the
 * delegated authorizer's default, apiserver/pkg/server/options/authorization.go), so a burst of
 * requests by one user costs one SAR per distinct check. One review may send at most `budget` SARs,
 * each bounded by the review's deadline, after which checks answer with an error.
 *
 * Where the API server retries a failed call within the request (its webhook retry backoff), a
 * review here cannot wait: a failed SAR (no answer, or an HTTP error) is remembered instead, and no
 * SAR is sent for anyone until the same backoff has passed (`SAR_FAILURE_BACKOFF`, growing with each
 * failure in a row, capped; a success starts it over), and then one, whose outcome the others wait
 * for. Meanwhile, and when a SAR fails, a check answers from its last
 * answer if that is recent enough: an allow up to `staleAllowedMs` old (5 minutes, kube-apiserver's
 * --authorization-webhook-cache-authorized-ttl: what the API server itself trusts an allow for),
 * anything else up to `staleOtherMs` (30 s, its -unauthorized-ttl); else with the failure, an error
 * the expression decides about. An answering API server is always asked once `ttlMs` has passed.
 *
 * The engine is synchronous and a SAR is not: see reviews.ts for how the two meet.
 */
import type { AuthorizationAnswer, AuthorizationAttributes, AuthorizerBackend } from "../cel/index.ts";
import type { UserInfo } from "../request/types.ts";
import { Backoff, type BackoffPolicy } from "./backoff.ts";
import type { ApiClient } from "./client.ts";
import { NO_SAR_OBSERVER, type SarObserver } from "./observe.ts";

export const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

/** The API server's webhook retry backoff (DefaultRetryBackoffWithInitialDelay(500ms)), capped. */
export const SAR_FAILURE_BACKOFF: BackoffPolicy = {
  initialMs: 500,
  maxMs: 10_000,
  factor: 1.5,
  jitter: 0.2,
  resetMs: 0,
};

export interface SarOptions {
  /** How long an answer is reused across reviews; default 10 s. 0 turns the shared cache off. */
  readonly ttlMs?: number;
  /** How old an allow may be served while SARs fail; default 5 minutes. */
  readonly staleAllowedMs?: number;
  /** How old any other answer may be served while SARs fail; default 30 s. */
  readonly staleOtherMs?: number;
  /** Most answers kept; the oldest go first. Default 10,000. */
  readonly maxEntries?: number;
  /** Most SARs one review may send; default 16. */
  readonly budget?: number;
  /** Longest wait for one SAR (the review's deadline may cut it shorter); default 5 s. */
  readonly timeoutMs?: number;
  readonly observer?: SarObserver;
  readonly now?: () => number;
}

/** The spec of a SubjectAccessReview (without user fields' absence written out). */
interface SarSpec {
  readonly user: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  readonly extra?: Readonly<Record<string, readonly string[]>>;
  readonly resourceAttributes?: ResourceAttributes;
  readonly nonResourceAttributes?: Readonly<Record<string, string>>;
}

/**
 * A SAR's resourceAttributes. Selectors go as written (`rawSelector`): the API server parses them
 * into requirements for its authorizers as authz.go does for its own checks (fields.ParseSelector,
 * labels.ParseToRequirements), a selector that does not parse included.
 */
interface ResourceAttributes {
  readonly verb: string;
  readonly version: "*";
  readonly group?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly fieldSelector?: { readonly rawSelector: string };
  readonly labelSelector?: { readonly rawSelector: string };
}

/** Why a check is being asked about: the answer the first, provisional evaluation sees. */
const PENDING: AuthorizationAnswer = { decision: "no-opinion", reason: "", error: "authorization pending" };

function sortedExtra(extra: UserInfo["extra"]): Record<string, string[]> | undefined {
  if (!extra) return undefined;
  const keys = Object.keys(extra).sort();
  if (keys.length === 0) return undefined;
  const out: Record<string, string[]> = {};
  for (const k of keys) out[k] = [...(extra[k] ?? [])].sort();
  return out;
}

function specOf(a: AuthorizationAttributes, user: UserInfo | undefined): SarSpec {
  // Only the request's own user has a uid and extra; `authorizer.serviceAccount(ns, name)` builds
  // a user with a name and groups only (authz.go serviceAccount).
  const own = user !== undefined && a.user === user.username && a.groups === user.groups;
  const extra = own ? sortedExtra(user.extra) : undefined;
  const base = {
    user: a.user,
    groups: [...a.groups].sort(),
    ...(own && user.uid ? { uid: user.uid } : {}),
    ...(extra ? { extra } : {}),
  };
  if (a.path !== undefined) return { ...base, nonResourceAttributes: { path: a.path, verb: a.verb } };
  const resourceAttributes: ResourceAttributes = {
    verb: a.verb,
    version: "*",
    ...(a.group ? { group: a.group } : {}),
    ...(a.resource ? { resource: a.resource } : {}),
    ...(a.subresource ? { subresource: a.subresource } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    ...(a.name ? { name: a.name } : {}),
    ...(a.fieldSelector ? { fieldSelector: { rawSelector: a.fieldSelector } } : {}),
    ...(a.labelSelector ? { labelSelector: { rawSelector: a.labelSelector } } : {}),
  };
  return { ...base, resourceAttributes };
}

interface Cached {
  readonly answer: AuthorizationAnswer;
  /** When it was answered. */
  readonly at: number;
}

export class SubjectAccessReviewer {
  private readonly cache = new Map<string, Cached>();
  /** SARs on their way, by key: concurrent reviews that ask the same check share one. */
  private readonly inFlight = new Map<string, Promise<AuthorizationAnswer>>();
  private readonly ttlMs: number;
  private readonly staleAllowedMs: number;
  private readonly staleOtherMs: number;
  private readonly failures: Backoff;
  /** No SAR is sent before this (a SAR failed); 0 when the last one succeeded. */
  private retryAt = 0;
  private lastFailure = "";
  /** After a failure, the one SAR that tries again is on its way: the others wait for its outcome. */
  private probing = false;
  private readonly maxEntries: number;
  readonly budget: number;
  private readonly timeoutMs: number;
  private readonly observer: SarObserver;
  private readonly now: () => number;

  constructor(
    private readonly client: ApiClient,
    options: SarOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.staleAllowedMs = options.staleAllowedMs ?? 300_000;
    this.staleOtherMs = options.staleOtherMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.budget = options.budget ?? 16;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.observer = options.observer ?? NO_SAR_OBSERVER;
    this.now = options.now ?? (() => performance.now());
    this.failures = new Backoff(SAR_FAILURE_BACKOFF, this.now);
  }

  /** The authorizer backend for one review by `user`. */
  session(user: UserInfo): SarSession {
    return new SarSession(this, user);
  }

  /** @internal A fresh cached answer, or undefined. */
  cached(key: string): AuthorizationAnswer | undefined {
    const c = this.cache.get(key);
    if (!c) return undefined;
    const age = this.now() - c.at;
    if (age < this.ttlMs) return c.answer;
    if (age >= this.ttlMs + this.staleLimit(c.answer)) this.cache.delete(key);
    return undefined;
  }

  /** @internal The last answer, if it may stand in for one the API server cannot give now. */
  stale(key: string): AuthorizationAnswer | undefined {
    const c = this.cache.get(key);
    if (!c || this.now() - c.at > this.staleLimit(c.answer)) return undefined;
    return c.answer;
  }

  private staleLimit(answer: AuthorizationAnswer): number {
    return answer.decision === "allow" ? this.staleAllowedMs : this.staleOtherMs;
  }

  /**
   * @internal While SARs fail, until their backoff has passed and then while the one SAR that tries
   * again is on its way: the answer a check gets without a SAR (its stale answer, or the failure);
   * undefined when a SAR may be sent.
   */
  unsent(key: string): { readonly answer: AuthorizationAnswer; readonly stale: boolean } | undefined {
    const now = this.now();
    if (now >= this.retryAt && !this.probing) return undefined;
    const stale = this.stale(key);
    if (stale) return { answer: stale, stale: true };
    const when =
      now < this.retryAt ? `not asked again for ${Math.ceil(this.retryAt - now)} ms` : "asked again now";
    return {
      answer: { decision: "no-opinion", reason: "", error: `${this.lastFailure} (${when})` },
      stale: false,
    };
  }

  /** @internal */
  remember(key: string, answer: AuthorizationAnswer): void {
    if (this.ttlMs <= 0) return;
    this.cache.delete(key);
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(key, { answer, at: this.now() });
  }

  /** @internal */
  get observe(): SarObserver {
    return this.observer;
  }

  /** @internal The answer to a SAR already sent for this key, if one is on its way. */
  pendingAnswer(key: string): Promise<AuthorizationAnswer> | undefined {
    return this.inFlight.get(key);
  }

  /**
   * @internal Sends a SAR for `key` that concurrent reviews can share, and caches its answer. When
   * it fails, the backoff grows and the check answers from its stale answer, else with the failure.
   */
  send(key: string, spec: SarSpec, deadline: number): Promise<AuthorizationAnswer> {
    const probe = this.retryAt > 0;
    if (probe) this.probing = true;
    const sent = this.ask(spec, deadline).then(({ answer, failed }) => {
      this.inFlight.delete(key);
      if (probe) this.probing = false;
      if (!failed) {
        this.retryAt = 0;
        this.failures.reset();
        this.remember(key, answer);
        return answer;
      }
      this.lastFailure = answer.error ?? "SubjectAccessReview failed";
      this.retryAt = this.now() + this.failures.next();
      return this.stale(key) ?? answer;
    });
    this.inFlight.set(key, sent);
    return sent;
  }

  /**
   * Sends one SubjectAccessReview; never rejects: a failed call (`failed`) is an answer with an
   * error, as is a status with an evaluationError (not failed: the API server answered).
   */
  async ask(
    spec: SarSpec,
    deadline: number,
  ): Promise<{ readonly answer: AuthorizationAnswer; readonly failed: boolean }> {
    const started = this.now();
    const timeout = Math.max(1, Math.ceil(Math.min(this.timeoutMs, deadline - started)));
    try {
      const res = await this.client.request(
        "POST",
        SAR_PATH,
        { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec },
        timeout,
      );
      const seconds = (this.now() - started) / 1000;
      if (res.status !== 200 && res.status !== 201) {
        this.observer.call("error", seconds);
        const message = (res.body as { message?: unknown } | undefined)?.message;
        return {
          failed: true,
          answer: {
            decision: "no-opinion",
            reason: "",
            error: `SubjectAccessReview failed: HTTP ${res.status}${typeof message === "string" ? `: ${message}` : ""}`,
          },
        };
      }
      this.observer.call("ok", seconds);
      const status = (res.body as { status?: Record<string, unknown> } | undefined)?.status ?? {};
      const reason = typeof status.reason === "string" ? status.reason : "";
      const evaluationError = typeof status.evaluationError === "string" ? status.evaluationError : "";
      // The webhook authorizer's reading of a SAR status (plugin/pkg/authorizer/webhook/webhook.go).
      const decision = status.denied === true ? "deny" : status.allowed === true ? "allow" : "no-opinion";
      const answer: AuthorizationAnswer =
        evaluationError === "" ? { decision, reason } : { decision, reason, error: evaluationError };
      return { answer, failed: false };
    } catch (e) {
      this.observer.call("error", (this.now() - started) / 1000);
      return {
        failed: true,
        answer: {
          decision: "no-opinion",
          reason: "",
          error: `SubjectAccessReview failed: ${(e as Error).message}`,
        },
      };
    }
  }
}

/**
 * One review's authorizer. Checks it has no answer for yet are recorded and answered provisionally
 * (no-opinion, "authorization pending"); `resolve()` then asks the cluster, and the review is
 * evaluated again with the answers.
 */
export class SarSession implements AuthorizerBackend {
  private readonly answers = new Map<string, AuthorizationAnswer>();
  private readonly missing = new Map<string, SarSpec>();
  /** SARs this review has sent (or refused for want of budget). */
  private sent = 0;

  constructor(
    private readonly reviewer: SubjectAccessReviewer,
    private readonly user: UserInfo,
  ) {}

  authorize(attributes: AuthorizationAttributes): AuthorizationAnswer {
    const spec = specOf(attributes, this.user);
    const key = JSON.stringify(spec);
    const known = this.answers.get(key);
    if (known) return known;
    const cached = this.reviewer.cached(key);
    if (cached) {
      this.reviewer.observe.check("hit");
      this.answers.set(key, cached);
      return cached;
    }
    const unsent = this.reviewer.unsent(key);
    if (unsent) {
      this.reviewer.observe.check(unsent.stale ? "stale" : "backoff");
      this.answers.set(key, unsent.answer);
      return unsent.answer;
    }
    this.missing.set(key, spec);
    return PENDING;
  }

  /** Whether some check has no answer yet. */
  get pending(): boolean {
    return this.missing.size > 0;
  }

  /** Asks the cluster about every pending check (within the budget), concurrently. */
  async resolve(deadline: number): Promise<void> {
    const asks: Promise<void>[] = [];
    for (const [key, spec] of this.missing) {
      const shared = this.reviewer.pendingAnswer(key);
      if (shared) {
        // Another review asked the same a moment ago: its answer will do, for no SAR of ours.
        this.reviewer.observe.check("hit");
        asks.push(shared.then((answer) => void this.answers.set(key, answer)));
        continue;
      }
      this.reviewer.observe.check("miss");
      if (this.sent >= this.reviewer.budget) {
        this.reviewer.observe.call("budget", 0);
        this.answers.set(key, {
          decision: "no-opinion",
          reason: "",
          error: `authorizer check not made: this review already sent ${this.reviewer.budget} SubjectAccessReviews`,
        });
        continue;
      }
      this.sent++;
      asks.push(this.reviewer.send(key, spec, deadline).then((answer) => void this.answers.set(key, answer)));
    }
    this.missing.clear();
    await Promise.all(asks);
  }
}
