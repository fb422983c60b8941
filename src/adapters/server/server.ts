/**
 * The HTTPS admission webhook: fastify routes that turn AdmissionReview bodies into calls on the
 * engine and its decisions back into AdmissionReview replies. The factory registers everything but
 * does not listen, so tests can use `inject()` and only `serve` opens a port.
 *
 * The API server treats anything but a 200 with a well-formed AdmissionReview as a failed call and
 * applies the webhook's failurePolicy; the split paths (`/validate/fail`, `/validate/ignore`, …)
 * exist so that celgate answers by the policy itself instead, with a real verdict and message.
 */
import { performance } from "node:perf_hooks";
import type { Result } from "../../result.ts";
import { createReviewBatcher } from "./batch.ts";
import { BytesInFlight, registerJsonBody, reserveBody } from "./body.ts";
import { Connections } from "./connections.ts";
import { logHandshakeFailures } from "./handshake-log.ts";
import { HEALTH_PATHS, type HealthState, registerHealthRoutes } from "./health.ts";
import {
  answerProblems,
  createHttpsApp,
  elapsedMs,
  type HttpsApp,
  type RecordInvalid,
  requireJson,
  type ServerTls,
  TLS_CIPHERS,
  TLS_SECURE_OPTIONS,
} from "./http.ts";
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
import type { WebhookMetrics } from "./metrics.ts";
import { reviewLogWriter, type ServerLogging } from "./review-log.ts";
import { isDebugging, REVIEW_PATHS, REVIEW_ROUTES, type ReviewContext, reviewHandler } from "./routes.ts";
import { type ServerLog, serverLog } from "./server-log.ts";
import type { ReviewAdmitter } from "./admitter.ts";
import type { SlowLane } from "./slow-lane.ts";
import type { Recorder } from "./recorder.ts";

export type { HttpsApp };

/** What the server holds at most at once; past it, work is refused rather than memory exhausted. */
export interface ServerLimits {
  /** Open connections (TLS handshakes included); at the cap the longest-idle one makes room. */
  readonly maxConnections: number;
  /** Bytes of request bodies above SMALL_BODY_BYTES held at once; past it a request gets 429. */
  readonly maxBytesInFlight: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxConnections: 1000,
  maxBytesInFlight: 64 * 1024 * 1024,
};

/** The longest a close waits for requests in flight before it ends their connections. */
export const CLOSE_TIMEOUT_MS = 10_000;

export interface ServerDeps {
  /** Called once per request; hot reload swaps what it returns, and a request keeps the one it got. */
  readonly admitter: () => ReviewAdmitter;
  readonly tls: ServerTls;
  /** pino's options for the server's log; the review line is written to the same stream. */
  readonly logger: ServerLogging | false;
  readonly metrics: WebhookMetrics;
  /** Whether policies are compiled and the server may take traffic: true, or false or why not. */
  readonly readiness: () => boolean | string;
  /** How long to keep answering after readiness turns off on shutdown; default 10 s. */
  readonly drainMs?: number;
  /** How long a close waits for requests in flight before it ends their connections; default 10 s. */
  readonly closeTimeoutMs?: number;
  /** How long a connection without a request in flight must be quiet before a close ends it; default 1 s. */
  readonly quietMs?: number;
  /** Used when a request carries no usable `?timeout=`; default 10 s (the API server's default). */
  readonly defaultTimeoutMs?: number;
  readonly limits?: Partial<ServerLimits>;
  /** Log the debug trace's values unredacted (redact.ts); default false. */
  readonly logValues?: boolean;
  /**
   * Where reviews go that would hold the main thread too long (slow-lane.ts); absent, every review
   * runs here. Used only for admitters that carry a `laneVersion`.
   */
  readonly slowLane?: SlowLane;
  /** How long a review may run on the main thread before it moves to the slow lane; default SLICE_MS. */
  readonly sliceMs?: number;
  /** `serve --record`: where a sample of the answered reviews is written (recorder.ts). */
  readonly recorder?: Recorder;
}

/**
 * How long one review may hold the main thread when a slow lane can take it over. Ordinary reviews
 * take microseconds; this is long enough that only reviews that are slow by nature move, and short
 * enough that the requests queued behind one wait no longer than a few ordinary turns.
 */
export const SLICE_MS = 5;

/** Bodies above this are not parsed on the main thread when a slow lane can take them. */
export const OFF_THREAD_BODY_BYTES = 512 * 1024;

export interface WebhookServer {
  readonly app: HttpsApp;
  /** True from the start of drain(): readiness reports 503 and responses ask clients to reconnect. */
  readonly draining: boolean;
  /** What `/readyz` reads, for the metrics port's probes too. */
  readonly health: HealthState;
  /** Connections open now, TLS handshakes included. */
  readonly openConnections: number;
  start(options: ListenOptions): Promise<Result<ListenAddress, string>>;
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
  /**
   * Ends every connection (connections.ts: each once its answer is out or it has been quiet a moment,
   * the rest after the close timeout), then stops listening. Every answer from now on says
   * `Connection: close`.
   */
  close(): Promise<void>;
  /** Gives up on the drain and on every connection now; a close in progress ends at once. */
  abort(): void;
  /** Whether abort() was called. */
  readonly aborted: boolean;
  /** SIGTERM/SIGINT → drain → exit; a second signal aborts. Returns the uninstaller. */
  installSignalHandlers(options?: Omit<SignalOptions, "log" | "abort">): () => void;
}

/** Every known path and its methods, for telling 405 from 404. HEAD comes with GET. */
const ALLOWED_METHODS: ReadonlyMap<string, string> = new Map<string, string>([
  ...REVIEW_ROUTES.map((r) => [r.path, "POST"] as const),
  ...HEALTH_PATHS.map((p) => [p, "GET, HEAD"] as const),
]);

/** Whether the server is draining: read by every request's hook, set once by drain() or close(). */
interface DrainState {
  draining: boolean;
}

/** Registers the routes and hooks; nothing listens until start(). */
export async function buildServer(deps: ServerDeps): Promise<WebhookServer> {
  const drainMs = deps.drainMs ?? 10_000;
  const closeTimeoutMs = deps.closeTimeoutMs ?? CLOSE_TIMEOUT_MS;
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const { metrics } = deps;
  const log = serverLog(deps.logger);
  const initial = checkKeyPair(deps.tls.cert, deps.tls.key);
  if (!initial.ok) throw new Error(`buildServer: serving certificate and key: ${initial.error}`);
  metrics.setCertificateExpiry(initial.value.notAfter);

  const app = createHttpsApp(deps.tls);
  const connections = new Connections(app.server, {
    maxConnections: limits.maxConnections,
    ...(deps.quietMs !== undefined ? { quietMs: deps.quietMs } : {}),
    onShed: (reason) => metrics.recordShed(reason),
  });
  metrics.observeConnections(() => connections.size);
  logHandshakeFailures(app.server, log, {
    count: (reason) => metrics.recordHandshakeFailure(reason),
    requireClientCertificate: deps.tls.ca !== undefined,
  });
  const state: DrainState = { draining: false };
  const health: HealthState = { draining: () => state.draining, readiness: deps.readiness };
  const budget = new BytesInFlight(limits.maxBytesInFlight);
  registerRoutes(app, deps, log, state, connections, health, budget);
  await app.ready();

  const certificates = certificateReloads(app, deps.tls, metrics, log);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      state.draining = true;
      certificates.closeWatchers();
      const { forced } = await connections.closeAll(closeTimeoutMs);
      if (forced > 0)
        log.warn({ forced, closeTimeoutMs }, "closed connections whose requests had not finished in time");
      await app.close();
    })();
    return closing;
  };
  const drainer = createDrain({
    drainMs,
    beginDraining: () => {
      state.draining = true;
      log.info({ drainMs }, "draining: readiness is off, still answering");
    },
    close,
  });
  let aborted = false;
  const abort = (): void => {
    aborted = true;
    state.draining = true;
    connections.abort();
    drainer.cut();
  };

  return {
    app,
    get draining() {
      return state.draining;
    },
    health,
    get openConnections() {
      return connections.size;
    },
    start: (options) => listen(app, "https", options, "admission"),
    reloadTls: certificates.reload,
    watchTlsFiles: certificates.watch,
    drain: () => drainer.drain(),
    close,
    abort,
    get aborted() {
      return aborted;
    },
    installSignalHandlers: (options = {}) =>
      installSignalHandlers(() => drainer.drain(), { ...options, abort, log: (m) => log.info(m) }),
  };
}

/** The hooks every request passes, the review routes, the answers to what is not a review, and health. */
function registerRoutes(
  app: HttpsApp,
  deps: ServerDeps,
  log: ServerLog,
  state: DrainState,
  connections: Connections,
  health: HealthState,
  budget: BytesInFlight,
): void {
  const { metrics } = deps;
  // Clients that reuse a connection would keep sending to a pod on its way out; closing the
  // connection after each answer sends their next request through the Service again. Set here for
  // answers given at once, and again by the review handler as it answers, for a request that
  // arrived before the drain began.
  // (Callback hooks, here and in requireJson: an async hook costs every request a promise and a
  // microtask turn.)
  // The same hook starts each request's clock (a decorated field keeps requests one shape) and
  // marks its connection busy until the answer is out.
  app.decorateRequest("celgateStart", 0);
  app.addHook("onRequest", (request, reply, done) => {
    const start = performance.now();
    request.celgateStart = start;
    connections.requestStarted(request.raw.socket, request.raw, reply.raw, start);
    if (state.draining) reply.header("connection", "close");
    done();
  });

  const recordInvalid: RecordInvalid = (request) => {
    const path = request.routeOptions.url;
    if (path !== undefined && REVIEW_PATHS.has(path))
      metrics.recordReview(path, "unknown", "invalid", elapsedMs(request) / 1000);
  };
  answerProblems(app, ALLOWED_METHODS, recordInvalid, log, () => state.draining);

  const context: ReviewContext = {
    admitter: deps.admitter,
    metrics,
    log,
    logReview: reviewLogWriter(deps.logger),
    debugging: isDebugging(deps.logger),
    defaultTimeoutMs: deps.defaultTimeoutMs ?? 10_000,
    batcher: createReviewBatcher(),
    recordInvalid,
    draining: () => state.draining,
    logValues: deps.logValues ?? false,
    lane: deps.slowLane,
    sliceMs: deps.sliceMs ?? SLICE_MS,
    recorder: deps.recorder,
  };
  registerJsonBody(app, deps.slowLane === undefined ? Number.POSITIVE_INFINITY : OFF_THREAD_BODY_BYTES);
  const jsonOnly = requireJson(recordInvalid, (request, reply) =>
    reserveBody(budget, request, reply, () => metrics.recordShed("bytes_in_flight")),
  );
  for (const route of REVIEW_ROUTES) {
    app.post(route.path, { onRequest: jsonOnly }, reviewHandler(route, context));
  }
  registerHealthRoutes(app, health);
}

/** Serving-certificate reloads: a new pair serves new handshakes; a bad pair keeps the old one. */
function certificateReloads(app: HttpsApp, tls: ServerTls, metrics: WebhookMetrics, log: ServerLog) {
  const contextBase: SecureContextBase = {
    minVersion: "TLSv1.2",
    ciphers: TLS_CIPHERS,
    secureOptions: TLS_SECURE_OPTIONS,
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
  };
  let served = { cert: tls.cert, key: tls.key };
  const watchers = new Set<TlsWatcher>();

  const reload = (cert: string, key: string): Result<CertificateInfo, string> => {
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

  const watch: WebhookServer["watchTlsFiles"] = (certFile, keyFile, onReload = () => {}, options = {}) => {
    const watcher = watchTlsFiles(certFile, keyFile, reload, onReload, { ...options, current: served });
    const handle: TlsWatcher = {
      check: watcher.check,
      close() {
        watcher.close();
        watchers.delete(handle);
      },
    };
    watchers.add(handle);
    return handle;
  };

  return {
    reload,
    watch,
    closeWatchers(): void {
      for (const w of watchers) w.close();
      watchers.clear();
    },
  };
}
