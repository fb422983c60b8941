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
 * What celgate adds: answers (not errors) are also kept across reviews for a short time (`ttlMs`),
 * so a burst of requests by one user costs one SAR per distinct check; and one review may send at
 * most `budget` SARs, each bounded by the review's deadline, after which checks answer with an error.
 *
 * The engine is synchronous and a SAR is not: see reviews.ts for how the two meet.
 */
import type { AuthorizationAnswer, AuthorizationAttributes, AuthorizerBackend } from "../cel/index.ts";
import type { UserInfo } from "../request/types.ts";
import type { ApiClient } from "./client.ts";
import { NO_SAR_OBSERVER, type SarObserver } from "./observe.ts";

export const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

export interface SarOptions {
  /** How long an answer is reused across reviews; default 10 s. 0 turns the shared cache off. */
  readonly ttlMs?: number;
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
  readonly until: number;
}

export class SubjectAccessReviewer {
  private readonly cache = new Map<string, Cached>();
  /** SARs on their way, by key: concurrent reviews that ask the same check share one. */
  private readonly inFlight = new Map<string, Promise<AuthorizationAnswer>>();
  private readonly ttlMs: number;
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
    this.maxEntries = options.maxEntries ?? 10_000;
    this.budget = options.budget ?? 16;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.observer = options.observer ?? NO_SAR_OBSERVER;
    this.now = options.now ?? (() => performance.now());
  }

  /** The authorizer backend for one review by `user`. */
  session(user: UserInfo): SarSession {
    return new SarSession(this, user);
  }

  /** @internal A fresh cached answer, or undefined. */
  cached(key: string): AuthorizationAnswer | undefined {
    const c = this.cache.get(key);
    if (!c) return undefined;
    if (c.until <= this.now()) {
      this.cache.delete(key);
      return undefined;
    }
    return c.answer;
  }

  /** @internal */
  remember(key: string, answer: AuthorizationAnswer): void {
    if (this.ttlMs <= 0 || answer.error !== undefined) return;
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(key, { answer, until: this.now() + this.ttlMs });
  }

  /** @internal */
  get observe(): SarObserver {
    return this.observer;
  }

  /** @internal The answer to a SAR already sent for this key, if one is on its way. */
  pendingAnswer(key: string): Promise<AuthorizationAnswer> | undefined {
    return this.inFlight.get(key);
  }

  /** @internal Sends a SAR for `key` that concurrent reviews can share, and caches its answer. */
  send(key: string, spec: SarSpec, deadline: number): Promise<AuthorizationAnswer> {
    const sent = this.ask(spec, deadline).then((answer) => {
      this.inFlight.delete(key);
      this.remember(key, answer);
      return answer;
    });
    this.inFlight.set(key, sent);
    return sent;
  }

  /** Sends one SubjectAccessReview; never rejects: a failed call is an answer with an error. */
  async ask(spec: SarSpec, deadline: number): Promise<AuthorizationAnswer> {
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
          decision: "no-opinion",
          reason: "",
          error: `SubjectAccessReview failed: HTTP ${res.status}${typeof message === "string" ? `: ${message}` : ""}`,
        };
      }
      this.observer.call("ok", seconds);
      const status = (res.body as { status?: Record<string, unknown> } | undefined)?.status ?? {};
      const reason = typeof status.reason === "string" ? status.reason : "";
      const evaluationError = typeof status.evaluationError === "string" ? status.evaluationError : "";
      // The webhook authorizer's reading of a SAR status (plugin/pkg/authorizer/webhook/webhook.go).
      const decision = status.denied === true ? "deny" : status.allowed === true ? "allow" : "no-opinion";
      return evaluationError === "" ? { decision, reason } : { decision, reason, error: evaluationError };
    } catch (e) {
      this.observer.call("error", (this.now() - started) / 1000);
      return {
        decision: "no-opinion",
        reason: "",
        error: `SubjectAccessReview failed: ${(e as Error).message}`,
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
      this.reviewer.observe.check(true);
      this.answers.set(key, cached);
      return cached;
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
        this.reviewer.observe.check(true);
        asks.push(shared.then((answer) => void this.answers.set(key, answer)));
        continue;
      }
      this.reviewer.observe.check(false);
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
