/**
 * The HTTPS admission webhook: fastify routes that turn AdmissionReview bodies into calls on the
 * engine and its decisions back into AdmissionReview replies. The factory registers everything but
 * does not listen, so tests can use `inject()` and only `serve` opens a port.
 *
 * The API server treats anything but a 200 with a well-formed AdmissionReview as a failed call and
 * applies the webhook's failurePolicy; the split paths (`/validate/fail`, `/validate/ignore`, …)
 * exist so that celgate answers by the policy itself instead, with a real verdict and message.
 */
import type { Server as HttpsServer } from "node:https";
import { performance } from "node:perf_hooks";
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from "fastify";
import type { Registry } from "prom-client";
import type { Result } from "../../result.ts";
import { decodeAdmissionReview, encodeAdmissionReview } from "../admission/codec.ts";
import type { AdmissionDecision, ReviewOptions } from "../../engine/types.ts";
import { createReviewBatcher, type ReviewAdmitter } from "./batch.ts";
import { deadlineFor, requestTimeoutMs } from "./deadline.ts";
import {
  type CertificateInfo,
  checkKeyPair,
  createDrain,
  installSignalHandlers,
  type ListenAddress,
  type ListenOptions,
  listen,
  type SignalOptions,
  type SecureContextBase,
  swapSecureContext,
  type TlsReloadEvent,
  type TlsWatcher,
  type TlsWatchOptions,
  watchTlsFiles,
} from "./lifecycle.ts";
import { type ServerLogging, reviewLogWriter } from "./review-log.ts";
import { serverLog } from "./server-log.ts";
import { outcomeOf, type ReviewOutcome, type WebhookMetrics } from "./metrics.ts";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * performance.now() when the request arrived (our onRequest hook): what a review's duration and
     * deadline count from. fastify's reply.elapsedTime is 0 without a logger (it starts its clock
     * only where it adds the response listeners a logger needs).
     */
    celgateStart: number;
  }
}

/** Milliseconds since the request arrived. */
function elapsedMs(request: FastifyRequest): number {
  return performance.now() - request.celgateStart;
}

/** A review holds object and oldObject, each up to the API server's 3 MiB request limit, plus envelope. */
export const BODY_LIMIT = 7 * 1024 * 1024 + 256 * 1024;
/** Longer than the API server's idle connection timeout (90 s), so it is always the one to close. */
export const KEEP_ALIVE_TIMEOUT_MS = 100_000;
/** Headers must arrive within this; protects against clients that trickle bytes. */
export const HEADERS_TIMEOUT_MS = 15_000;
export const CONNECTIONS_CHECK_MS = 2_000;
/** A whole request (headers and body) within the longest admission timeout plus upload time. */
export const REQUEST_TIMEOUT_MS = 40_000;
/** An open socket with no traffic at all is closed after this (covers a stalled TLS peer too). */
export const CONNECTION_TIMEOUT_MS = 120_000;

/** pino's levels at or below debug, when the explain trace is worth its cost. */
function isDebugging(logging: ServerLogging | false): boolean {
  return logging !== false && (logging.level === "debug" || logging.level === "trace");
}

export const INTERNAL_ERROR_MESSAGE = "celgate internal error";

type LoggerOptions = Exclude<NonNullable<FastifyServerOptions<HttpsServer>["logger"]>, boolean>;

export interface ServerDeps {
  /** Called once per request; hot reload swaps what it returns, and a request keeps the one it got. */
  readonly admitter: () => ReviewAdmitter;
  /** PEM strings. With `ca`, clients must present a certificate signed by it. */
  readonly tls: { readonly cert: string; readonly key: string; readonly ca?: string };
  /** pino's options for the server's log; the review line is written to the same stream. */
  readonly logger: ServerLogging | false;
  readonly metrics: WebhookMetrics;
  /** Whether policies are compiled and the server may take traffic. */
  readonly readiness: () => boolean;
  /** How long to keep answering after readiness turns off on shutdown; default 10 s. */
  readonly drainMs?: number;
  /** Used when a request carries no usable `?timeout=`; default 10 s (the API server's default). */
  readonly defaultTimeoutMs?: number;
}

export type HttpsApp = FastifyInstance<HttpsServer>;

export interface WebhookServer {
  readonly app: HttpsApp;
  /** True from the start of drain(): readiness reports 503 and responses ask clients to reconnect. */
  readonly draining: boolean;
  start(options: ListenOptions): Promise<ListenAddress>;
  /** Serves a new certificate on new handshakes; keeps the old one and returns why on a bad pair. */
  reloadTls(cert: string, key: string): Result<CertificateInfo, string>;
  watchTlsFiles(
    certFile: string,
    keyFile: string,
    onReload?: (event: TlsReloadEvent) => void,
    options?: Omit<TlsWatchOptions, "current">,
  ): TlsWatcher;
  /** Readiness off now, answers for drainMs, then close(); resolves when every request has its answer. */
  drain(): Promise<void>;
  /** Stops listening and waits for requests in flight. */
  close(): Promise<void>;
  /** SIGTERM/SIGINT → drain → exit. Returns the uninstaller. */
  installSignalHandlers(options?: Omit<SignalOptions, "log">): () => void;
}

interface ReviewRoute {
  readonly path: string;
  readonly phase: ReviewOptions["phase"];
  readonly failurePolicy?: "Fail" | "Ignore";
}

const REVIEW_ROUTES: readonly ReviewRoute[] = [
  { path: "/validate", phase: "validate" },
  { path: "/validate/fail", phase: "validate", failurePolicy: "Fail" },
  { path: "/validate/ignore", phase: "validate", failurePolicy: "Ignore" },
  { path: "/mutate", phase: "mutate" },
  { path: "/mutate/fail", phase: "mutate", failurePolicy: "Fail" },
  { path: "/mutate/ignore", phase: "mutate", failurePolicy: "Ignore" },
];
const REVIEW_PATHS = new Set(REVIEW_ROUTES.map((r) => r.path));

/** Every known path and its methods, for telling 405 from 404. HEAD comes with GET. */
const ALLOWED_METHODS = new Map<string, string>([
  ...REVIEW_ROUTES.map((r) => [r.path, "POST"] as const),
  ["/healthz", "GET, HEAD"],
  ["/readyz", "GET, HEAD"],
]);

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request",
  404: "Not Found",
  405: "Method Not Allowed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The short JSON body of every non-review answer, shaped like fastify's own errors. */
function problem(
  statusCode: number,
  message: string,
): { statusCode: number; error: string; message: string } {
  return { statusCode, error: STATUS_TEXT[statusCode] ?? "Error", message };
}

/** The media type without parameters, lower-cased; "" when absent. */
function mediaType(header: string | undefined): string {
  // What the API server sends, answered without building the three strings below.
  if (header === "application/json") return header;
  return (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * What to answer when the engine throws or returns something unusable: the path's failurePolicy,
 * as the API server would apply it had the call failed. Never allowed on a Fail path.
 */
function failureDecision(failurePolicy: "Fail" | "Ignore"): AdmissionDecision {
  const base = { auditAnnotations: {}, results: [], cost: 0 };
  if (failurePolicy === "Ignore") {
    return {
      ...base,
      allowed: true,
      warnings: [`${INTERNAL_ERROR_MESSAGE}; allowed because failurePolicy is Ignore`],
    };
  }
  return {
    ...base,
    allowed: false,
    status: { code: 500, reason: "InternalError", message: INTERNAL_ERROR_MESSAGE },
    warnings: [],
  };
}

function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** Registers the routes and hooks; nothing listens until start(). */
export async function buildServer(deps: ServerDeps): Promise<WebhookServer> {
  const drainMs = deps.drainMs ?? 10_000;
  const defaultTimeoutMs = deps.defaultTimeoutMs ?? 10_000;
  const { metrics } = deps;
  // Names and kinds only: object contents can hold secrets and do not belong in info logs.
  const logReview = reviewLogWriter(deps.logger);
  const log = serverLog(deps.logger);
  // The level is fixed for the server's life; pino's level getter cost a little on every review.
  const debugging = isDebugging(deps.logger);
  const batcher = createReviewBatcher();
  const contextBase: SecureContextBase = {
    minVersion: "TLSv1.2",
    ...(deps.tls.ca !== undefined ? { ca: deps.tls.ca } : {}),
  };
  const initial = checkKeyPair(deps.tls.cert, deps.tls.key);
  if (!initial.ok) throw new Error(`buildServer: serving certificate and key: ${initial.error}`);
  metrics.setCertificateExpiry(initial.value.notAfter);

  const mutualTls = deps.tls.ca !== undefined;
  const app = Fastify({
    https: {
      cert: deps.tls.cert,
      key: deps.tls.key,
      minVersion: "TLSv1.2",
      // The API server speaks HTTP/1.1 to webhooks; offering only it keeps ALPN from choosing h2.
      ALPNProtocols: ["http/1.1"],
      ...(mutualTls ? { ca: deps.tls.ca } : {}),
      requestCert: mutualTls,
      rejectUnauthorized: mutualTls,
      headersTimeout: HEADERS_TIMEOUT_MS,
      // Node checks the header and request timeouts on this interval (default 30 s, too coarse).
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    },
    // Our own logger writes what the server logs (server-log.ts): given one, fastify would cost
    // every request its response listeners, and log two lines per request we do not want.
    logger: false,
    bodyLimit: BODY_LIMIT,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    // During drain every request still gets a real answer; fastify's default would send 503s
    // that the API server counts as failed calls.
    return503OnClosing: false,
    // fastify's default answers 400 to a body with a `__proto__` key, or a `constructor` holding
    // `prototype`, and scans every body's text for them. Both are valid in Kubernetes objects (a
    // ConfigMap may have a `__proto__` data key), and a 400 fails the call: under failurePolicy
    // Fail the API server would refuse a valid write. JSON.parse makes such keys own members,
    // which cannot reach any prototype; the engine reads them as members and writes them with
    // setMember (cel/values.ts). The two scans are also a noticeable share of a review's CPU.
    onProtoPoisoning: "ignore",
    onConstructorPoisoning: "ignore",
  });

  let draining = false;
  let closing: Promise<void> | undefined;
  let served = { cert: deps.tls.cert, key: deps.tls.key };
  const watchers = new Set<TlsWatcher>();

  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const w of watchers) w.close();
      watchers.clear();
      await app.close();
    })();
    return closing;
  };

  // Clients that reuse a connection would keep sending to a pod on its way out; closing the
  // connection after each answer sends their next request through the Service again.
  // (Callback hooks, here and in requireJson: an async hook costs every request a promise and a
  // microtask turn.)
  // The same hook starts each request's clock (a decorated field keeps requests one shape).
  app.decorateRequest("celgateStart", 0);
  app.addHook("onRequest", (request, reply, done) => {
    request.celgateStart = performance.now();
    if (draining) reply.header("connection", "close");
    done();
  });

  const recordInvalid = (request: FastifyRequest): void => {
    const path = request.routeOptions.url;
    if (path !== undefined && REVIEW_PATHS.has(path))
      metrics.recordReview(path, "unknown", "invalid", elapsedMs(request) / 1000);
  };

  app.setErrorHandler((error: FastifyError, request, reply) => {
    let status: number;
    let message: string;
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      status = 413;
      message = `request body is larger than ${BODY_LIMIT} bytes`;
    } else if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      status = 415;
      message = `content-type must be application/json, got ${mediaType(request.headers["content-type"]) || "none"}`;
    } else if (error.code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
      status = 400;
      message = "request body is empty; expected an AdmissionReview";
    } else if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY" || error instanceof SyntaxError) {
      status = 400;
      message = "request body is not valid JSON";
    } else if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      status = error.statusCode;
      message = error.message;
    } else {
      log.error({ err: error }, "request failed");
      status = 500;
      message = INTERNAL_ERROR_MESSAGE;
    }
    if (status < 500) recordInvalid(request);
    return reply.code(status).send(problem(status, message));
  });

  app.setNotFoundHandler((request, reply) => {
    const allowed = ALLOWED_METHODS.get(pathOf(request.url));
    if (allowed !== undefined) {
      return reply
        .code(405)
        .header("allow", allowed)
        .send(problem(405, `method ${request.method} not allowed; use ${allowed}`));
    }
    return reply.code(404).send(problem(404, "no such endpoint"));
  });

  // A review must be JSON; checked before the body is read so a wrong type costs nothing.
  const requireJson = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const type = mediaType(request.headers["content-type"]);
    if (type === "application/json") {
      done();
      return;
    }
    recordInvalid(request);
    // Answered here: the request goes no further, so done() is not called.
    reply
      .code(415)
      .send(problem(415, `content-type must be application/json, got ${type === "" ? "none" : type}`));
  };

  const review = (route: ReviewRoute) => async (request: FastifyRequest, reply: FastifyReply) => {
    const decoded = decodeAdmissionReview(request.body);
    if (!decoded.ok) {
      recordInvalid(request);
      return reply.code(400).send(problem(400, decoded.error.reason));
    }
    const { apiVersion, request: admission } = decoded.value;
    const timeout = (request.query as Record<string, unknown> | undefined)?.timeout;
    // Key by key, as the engine and codec build their per-review objects (no conditional spreads).
    const options: { -readonly [K in keyof ReviewOptions]: ReviewOptions[K] } = {
      phase: route.phase,
      deadline: deadlineFor(request.celgateStart, requestTimeoutMs(timeout, defaultTimeoutMs)),
    };
    if (route.failurePolicy !== undefined) options.failurePolicy = route.failurePolicy;
    // Only the debug log reads a trace; without it the engine records none.
    if (debugging) options.explain = true;
    else options.trace = false;
    const mutating = route.phase === "mutate";
    const encodeOptions = { mutating, operation: admission.operation };

    let outcome: ReviewOutcome;
    let decision: AdmissionDecision | undefined;
    let body: ReturnType<typeof encodeAdmissionReview>;
    try {
      decision = await batcher.review(deps.admitter(), admission, options);
      body = encodeAdmissionReview(apiVersion, admission.uid, decision, encodeOptions);
      outcome = outcomeOf(decision, mutating);
    } catch (e) {
      log.error({ err: e, uid: admission.uid, path: route.path }, "admission review failed");
      decision = undefined;
      outcome = "error";
      if (route.failurePolicy === undefined) {
        // No policy of our own to apply: a failed call lets the API server apply the webhook's.
        metrics.recordReview(route.path, admission.operation, outcome, elapsedMs(request) / 1000);
        return reply.code(500).send(problem(500, INTERNAL_ERROR_MESSAGE));
      }
      body = encodeAdmissionReview(
        apiVersion,
        admission.uid,
        failureDecision(route.failurePolicy),
        encodeOptions,
      );
    }
    const seconds = elapsedMs(request) / 1000;
    metrics.recordReview(route.path, admission.operation, outcome, seconds, decision);
    logReview?.({
      uid: admission.uid,
      path: route.path,
      kind: admission.kind.kind,
      namespace: admission.namespace,
      name: admission.name,
      operation: admission.operation,
      allowed: body.response.allowed,
      outcome,
      durationMs: Math.round(seconds * 1e6) / 1e3,
    });
    if (decision && debugging) {
      // The explain trace holds expression values, which may come from the object: debug level only.
      log.debug(
        {
          uid: admission.uid,
          results: decision.results.map((r) => ({
            policy: r.policy,
            binding: r.binding,
            param: r.param,
            outcome: r.outcome,
            reason: r.reason,
            trace: r.trace,
          })),
        },
        "admission review trace",
      );
    }
    return reply.code(200).send(body);
  };

  for (const route of REVIEW_ROUTES) {
    app.post(route.path, { onRequest: requireJson }, review(route));
  }
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    if (draining) return reply.code(503).send(problem(503, "draining"));
    let ready = false;
    try {
      ready = deps.readiness();
    } catch {
      ready = false;
    }
    if (!ready) return reply.code(503).send(problem(503, "policies not loaded"));
    return { status: "ready" };
  });

  await app.ready();

  const reloadTls = (cert: string, key: string): Result<CertificateInfo, string> => {
    const swapped = swapSecureContext(app.server, contextBase, cert, key);
    if (swapped.ok) {
      served = { cert, key };
      metrics.setCertificateExpiry(swapped.value.notAfter);
      log.info(
        { serialNumber: swapped.value.serialNumber, notAfter: swapped.value.notAfter.toISOString() },
        "serving certificate reloaded",
      );
    } else {
      log.error({ error: swapped.error }, "serving certificate not reloaded; keeping the current one");
    }
    return swapped;
  };

  const drainer = createDrain({
    drainMs,
    beginDraining: () => {
      draining = true;
      log.info({ drainMs }, "draining: readiness is off, still answering");
    },
    close,
  });

  return {
    app,
    get draining() {
      return draining;
    },
    start: (options) => listen(app, "https", options),
    reloadTls,
    watchTlsFiles(certFile, keyFile, onReload = () => {}, options = {}) {
      const watcher = watchTlsFiles(certFile, keyFile, reloadTls, onReload, { ...options, current: served });
      const handle: TlsWatcher = {
        check: watcher.check,
        close() {
          watcher.close();
          watchers.delete(handle);
        },
      };
      watchers.add(handle);
      return handle;
    },
    drain: () => drainer.drain(),
    close,
    installSignalHandlers: (options = {}) =>
      installSignalHandlers(() => drainer.drain(), { ...options, log: (m) => log.info(m) }),
  };
}

// ---------------------------------------------------------------------------------------------
// Metrics endpoint

export interface MetricsServer {
  readonly app: FastifyInstance;
  start(options: ListenOptions): Promise<ListenAddress>;
  close(): Promise<void>;
}

/**
 * Plain HTTP `GET /metrics` on its own port, so scraping needs neither the webhook's certificate
 * nor a client certificate, and the webhook port serves only the API server.
 */
export async function buildMetricsServer(
  registry: Registry,
  options: { readonly logger?: LoggerOptions | false } = {},
): Promise<MetricsServer> {
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.get("/metrics", async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header("content-type", registry.contentType).send(text);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(problem(404, "no such endpoint")));
  await app.ready();
  return {
    app,
    start: (listenOptions) => listen(app, "http", listenOptions),
    close: () => app.close(),
  };
}
