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
import { HEALTH_PATHS, registerHealthRoutes } from "./health.ts";
import {
  answerProblems,
  createHttpsApp,
  elapsedMs,
  type HttpsApp,
  type RecordInvalid,
  requireJson,
  type ServerTls,
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

export type { HttpsApp };

export interface ServerDeps {
  /** Called once per request; hot reload swaps what it returns, and a request keeps the one it got. */
  readonly admitter: () => ReviewAdmitter;
  readonly tls: ServerTls;
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

/** Every known path and its methods, for telling 405 from 404. HEAD comes with GET. */
const ALLOWED_METHODS: ReadonlyMap<string, string> = new Map<string, string>([
  ...REVIEW_ROUTES.map((r) => [r.path, "POST"] as const),
  ...HEALTH_PATHS.map((p) => [p, "GET, HEAD"] as const),
]);

/** Whether the server is draining: read by every request's hook, set once by drain(). */
interface DrainState {
  draining: boolean;
}

/** Registers the routes and hooks; nothing listens until start(). */
export async function buildServer(deps: ServerDeps): Promise<WebhookServer> {
  const drainMs = deps.drainMs ?? 10_000;
  const { metrics } = deps;
  const log = serverLog(deps.logger);
  const initial = checkKeyPair(deps.tls.cert, deps.tls.key);
  if (!initial.ok) throw new Error(`buildServer: serving certificate and key: ${initial.error}`);
  metrics.setCertificateExpiry(initial.value.notAfter);

  const app = createHttpsApp(deps.tls);
  const state: DrainState = { draining: false };
  registerRoutes(app, deps, log, state);
  await app.ready();

  const certificates = certificateReloads(app, deps.tls, metrics, log);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      certificates.closeWatchers();
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

  return {
    app,
    get draining() {
      return state.draining;
    },
    start: (options) => listen(app, "https", options),
    reloadTls: certificates.reload,
    watchTlsFiles: certificates.watch,
    drain: () => drainer.drain(),
    close,
    installSignalHandlers: (options = {}) =>
      installSignalHandlers(() => drainer.drain(), { ...options, log: (m) => log.info(m) }),
  };
}

/** The hooks every request passes, the review routes, the answers to what is not a review, and health. */
function registerRoutes(app: HttpsApp, deps: ServerDeps, log: ServerLog, state: DrainState): void {
  const { metrics } = deps;
  // Clients that reuse a connection would keep sending to a pod on its way out; closing the
  // connection after each answer sends their next request through the Service again.
  // (Callback hooks, here and in requireJson: an async hook costs every request a promise and a
  // microtask turn.)
  // The same hook starts each request's clock (a decorated field keeps requests one shape).
  app.decorateRequest("celgateStart", 0);
  app.addHook("onRequest", (request, reply, done) => {
    request.celgateStart = performance.now();
    if (state.draining) reply.header("connection", "close");
    done();
  });

  const recordInvalid: RecordInvalid = (request) => {
    const path = request.routeOptions.url;
    if (path !== undefined && REVIEW_PATHS.has(path))
      metrics.recordReview(path, "unknown", "invalid", elapsedMs(request) / 1000);
  };
  answerProblems(app, ALLOWED_METHODS, recordInvalid, log);

  const context: ReviewContext = {
    admitter: deps.admitter,
    metrics,
    log,
    logReview: reviewLogWriter(deps.logger),
    debugging: isDebugging(deps.logger),
    defaultTimeoutMs: deps.defaultTimeoutMs ?? 10_000,
    batcher: createReviewBatcher(),
    recordInvalid,
  };
  const jsonOnly = requireJson(recordInvalid);
  for (const route of REVIEW_ROUTES) {
    app.post(route.path, { onRequest: jsonOnly }, reviewHandler(route, context));
  }
  registerHealthRoutes(app, () => state.draining, deps.readiness);
}

/** Serving-certificate reloads: a new pair serves new handshakes; a bad pair keeps the old one. */
function certificateReloads(app: HttpsApp, tls: ServerTls, metrics: WebhookMetrics, log: ServerLog) {
  const contextBase: SecureContextBase = {
    minVersion: "TLSv1.2",
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
