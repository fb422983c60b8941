/**
 * `celgate serve` put together: the policy store (load, compile, watch), the admitter it yields,
 * TLS material (given or generated), the cluster connection when there is one, the webhook server,
 * the metrics server, and the signals. The CLI command only parses flags and prints; everything
 * that runs lives here.
 */
import { readFile } from "node:fs/promises";
import { Registry } from "prom-client";
import { ok, type Result } from "../../result.ts";
import type { CelExtras } from "../../cel/index.ts";
import { type ReviewAdmitter, serveAdmitter } from "./admitter.ts";
import type { Diagnostic } from "../../errors.ts";
import { formatDiagnosticLines } from "../output/diagnostics.ts";
import type { CompiledPolicySet, CompileOptions } from "../../compile/policy.ts";
import { type ClusterLink, type ClusterLinkOptions, openClusterLink } from "../../cluster/link.ts";
import type { ClusterLog } from "../../cluster/observe.ts";
import type { LabelSelector } from "../../policy/types.ts";
import type { ReadLimits } from "../../sources/files.ts";
import { setBudgetBytes } from "../../sources/memory-budget.ts";
import type { PolicySnapshot } from "../../sources/store.ts";
import { PolicyStore } from "../../sources/store.ts";
import { clusterAdmitterFor } from "./cluster-admitter.ts";
import { BatchedLogSink } from "./log-sink.ts";
import { createWebhookMetrics, type WebhookMetrics } from "./metrics.ts";
import { reportReload } from "./reload-report.ts";
import type { LogLevel, LogStream, ServerLogging } from "./review-log.ts";
import { type ServerLog, serverLog } from "./server-log.ts";
import { buildMetricsServer, type MetricsServer } from "./metrics-server.ts";
import { type RegisterWebhooksOptions, WebhookRegistration } from "./registration.ts";
import type { ServerTls } from "./http.ts";
import type { ListenAddress, TlsWatcher } from "./lifecycle.ts";
import { buildServer, type ServerDeps, type ServerLimits, type WebhookServer } from "./server.ts";
import { SlowLane } from "./slow-lane.ts";
import { Recorder, type RecorderOptions } from "./recorder.ts";
import { certificateExpiry, generateSelfSignedCertificate, loadTlsMaterial } from "./tls.ts";

export interface ServeOptions {
  readonly policies: readonly string[];
  readonly host: string;
  readonly port: number;
  /** Port of the plain-HTTP metrics listener; 0 picks a free one. */
  readonly metricsPort: number;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly clientCa?: string;
  readonly drainMs?: number;
  /** How long the close after the drain waits for requests in flight (server.ts). */
  readonly closeTimeoutMs?: number;
  /** Connection and memory limits (server.ts); the defaults fit the shipped Deployment. */
  readonly limits?: Partial<ServerLimits>;
  readonly celExtras?: CelExtras;
  /** The Kubernetes release to compile the policies for (`--kubernetes-version`). */
  readonly kubernetesVersion?: string;
  /** pino level, or false for no request logs (tests). */
  readonly logLevel: LogLevel | false;
  /** At debug level, log the trace's values unredacted (Secrets and credential-named fields included). */
  readonly logValues?: boolean;
  /**
   * false: no slow lane, every review runs on the main thread (the benchmarks' A/B); otherwise the
   * lane's worker priority and heap (slow-lane.ts defaults).
   */
  readonly slowLane?: false | { readonly nice?: number; readonly maxHeapMb?: number };
  /** How long a review may hold the main thread before it moves to the slow lane (server.ts SLICE_MS). */
  readonly sliceMs?: number;
  /** Where the JSON log (reviews, reloads) goes; stdout, in batches, by default. */
  readonly logStream?: LogStream;
  readonly pollMs?: number;
  /** How many bytes of policy files a load reads, per file and in all (files.ts DEFAULT_READ_LIMITS). */
  readonly readLimits?: ReadLimits;
  /** How long a reload that removes policies waits for the files to read the same again (store.ts). */
  readonly settleMs?: number;
  /**
   * The cluster connection: with `kubeconfig`, or in a pod unless `disabled`. Absent, or with
   * neither, serve sees only its files.
   */
  readonly cluster?: ClusterServeOptions;
  /**
   * Write the webhook configurations for the policies served to the cluster once ready, and keep
   * them current (registration.ts); needs the cluster and `tlsCert`.
   */
  readonly registerWebhooks?: RegisterWebhooksOptions & {
    readonly pollMs?: number;
    readonly retryMs?: number;
  };
  /** `--record DIR`: write a sample of the answered reviews, redacted, for `celgate replay` (recorder.ts). */
  readonly record?: Omit<RecorderOptions, "registry" | "log">;
}

export type ClusterServeOptions = Omit<
  ClusterLinkOptions,
  "log" | "registry" | "compile" | "onPoliciesChanged"
> & {
  readonly disabled?: boolean;
  /** Where cluster log lines go; default the server's JSON log. */
  readonly log?: ClusterLog;
};

export interface RunningWebhook {
  readonly url: string;
  readonly metricsUrl: string;
  readonly server: WebhookServer;
  readonly store: PolicyStore;
  readonly metrics: WebhookMetrics;
  /** The cluster connection, when serve has one. */
  readonly cluster: ClusterLink | undefined;
  /** The webhook configurations serve writes (`registerWebhooks`), when it does. */
  readonly registration: WebhookRegistration | undefined;
  /** The self-signed certificate, when one was generated (for clients that must trust it). */
  readonly generatedCert: string | undefined;
  /** Drains the webhook (readiness off, answers for the drain window), then releases everything. */
  stop(): Promise<void>;
  /** Stops watching files and closes the metrics listener; for after the webhook has drained. */
  release(): Promise<void>;
  /** Whether the slow lane has built the policy set that serves now (false without a lane). */
  slowLaneReady(): boolean;
}

export type StartResult =
  | { readonly ok: true; readonly webhook: RunningWebhook }
  | { readonly ok: false; readonly message: string };

function reportSnapshot(metrics: WebhookMetrics, s: PolicySnapshot): void {
  metrics.setCompileErrors(s.set.diagnostics.filter((d) => d.severity === "error").length);
  const count = (kind: "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy", enforced: boolean) =>
    (enforced ? s.set.policies.filter((p) => !s.set.unbound.includes(p)) : s.set.unbound).filter(
      (p) => p.kind === kind,
    ).length;
  metrics.setPoliciesLoaded(
    (["ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"] as const).flatMap((kind) => [
      { kind, enforced: true, count: count(kind, true) },
      { kind, enforced: false, count: count(kind, false) },
    ]),
  );
}

/**
 * The admitter of each policy set that serves, numbered, with the same set handed to the slow lane
 * under the same number: a review moves there only with the number of the set it started on.
 * Without a cluster connection it is admitter.ts's serveAdmitter; connected, cluster-admitter.ts's,
 * whose lane twin reads the cluster through this thread.
 */
function admitterSource(
  link: ClusterLink | undefined,
  lane: SlowLane | undefined,
  paths: readonly string[],
): (snapshot: PolicySnapshot) => { readonly admitter: ReviewAdmitter; readonly set: CompiledPolicySet } {
  let version = 0;
  return (snapshot) => {
    if (link) {
      const files = { set: snapshot.set, paths, fingerprint: snapshot.fingerprint };
      // Connected, what serves is the files' set combined with the cluster's policies.
      const admitter = clusterAdmitterFor(link, files, lane ? { lane, version: ++version } : undefined);
      return { admitter, set: admitter.set };
    }
    if (lane === undefined) return { admitter: serveAdmitter(snapshot.set), set: snapshot.set };
    version++;
    lane.load(version, { paths, fingerprint: snapshot.fingerprint });
    return { admitter: serveAdmitter(snapshot.set, version), set: snapshot.set };
  };
}

/** Selector keys celgate can know for any namespace without a cluster connection. */
const KNOWN_NAMESPACE_LABELS = new Set(["kubernetes.io/metadata.name"]);

function selectorKeys(sel: LabelSelector | undefined): string[] {
  if (!sel) return [];
  return [...Object.keys(sel.matchLabels), ...sel.matchExpressions.map((e) => e.key)];
}

/** Lines to log about a snapshot: its problems, then snapshotNotes. */
export function describeSnapshot(s: PolicySnapshot, connected = false): string[] {
  return [...formatDiagnosticLines(s.diagnostics), ...snapshotNotes(s, connected)];
}

/**
 * The policies loaded without a binding, and namespace selectors serve cannot follow (none when
 * `connected`: the cluster's Namespaces are known).
 */
export function snapshotNotes(s: PolicySnapshot, connected = false): string[] {
  const lines: string[] = [];
  for (const p of s.set.unbound)
    lines.push(`${p.kind} '${p.name}' is loaded and checked but not enforced: no binding refers to it`);
  const knownNamespaces = s.set.resources.some((r) => r.kind === "Namespace");
  const selectors = [
    ...s.set.policies.map(
      (p) => [`${p.kind} '${p.name}'`, p.policy.matchConstraints?.namespaceSelector] as const,
    ),
    ...s.set.bindings.map(
      (b) => [`${b.binding.kind} '${b.binding.name}'`, b.binding.matchResources?.namespaceSelector] as const,
    ),
  ];
  for (const [who, sel] of selectors) {
    const unknown = selectorKeys(sel).filter((k) => !KNOWN_NAMESPACE_LABELS.has(k));
    if (unknown.length > 0 && !knownNamespaces && !connected) {
      lines.push(
        `WARNING: ${who} selects namespaces by ${unknown.map((k) => `'${k}'`).join(", ")}; serve sees only the Namespaces in its policy files (none are loaded), so other namespaces match as if they had only kubernetes.io/metadata.name`,
      );
    }
  }
  return lines;
}

/** The serving certificate: the files given, or a self-signed one for localhost (development). */
async function tlsMaterial(
  options: ServeOptions,
  log: (line: string) => void,
): Promise<
  | { readonly ok: true; readonly tls: ServerTls; readonly generatedCert: string | undefined }
  | { readonly ok: false; readonly message: string }
> {
  let tls: { cert: string; key: string; ca?: string };
  let generatedCert: string | undefined;
  if (options.tlsCert || options.tlsKey) {
    if (!options.tlsCert || !options.tlsKey)
      return { ok: false, message: "--tls-cert and --tls-key go together" };
    const loaded = loadTlsMaterial(options.tlsCert, options.tlsKey);
    if (!loaded.ok) return { ok: false, message: loaded.error.message };
    tls = { cert: loaded.value.cert, key: loaded.value.key };
  } else {
    const g = generateSelfSignedCertificate({ hosts: ["localhost", "127.0.0.1", "::1"], days: 30 });
    tls = { cert: g.cert, key: g.key };
    generatedCert = g.cert;
    log(
      "WARNING: no --tls-cert/--tls-key given: serving a self-signed certificate for localhost. For development only.",
    );
  }
  if (options.clientCa) {
    try {
      tls.ca = await readFile(options.clientCa, "utf8");
    } catch (e) {
      return { ok: false, message: `--client-ca ${options.clientCa}: ${(e as Error).message}` };
    }
  }
  return { ok: true, tls, generatedCert };
}

/** Certificate and key files, watched and reloaded without a restart. */
function watchCertificate(
  server: WebhookServer,
  options: ServeOptions,
  metrics: WebhookMetrics,
  log: (line: string) => void,
  onReloaded: () => void,
): TlsWatcher | undefined {
  return options.tlsCert && options.tlsKey
    ? server.watchTlsFiles(options.tlsCert, options.tlsKey, (event) => {
        if (event.ok) {
          metrics.setCertificateExpiry(event.certificate.notAfter);
          log("TLS certificate reloaded");
          onReloaded();
        } else log(`TLS certificate reload rejected, keeping the current one: ${event.error}`);
      })
    : undefined;
}

/**
 * The cluster connection, when serve has one (`--kubeconfig`, or in a pod), or why it cannot be
 * had. Without a cluster to connect to the result is ok(undefined): serve runs from its files.
 */
async function openCluster(
  options: ServeOptions,
  registry: Registry,
  logging: ServerLogging | undefined,
  onPoliciesChanged: () => void,
): Promise<
  | { readonly ok: true; readonly link: ClusterLink | undefined }
  | { readonly ok: false; readonly message: string }
> {
  if (!options.cluster || options.cluster.disabled) return { ok: true, link: undefined };
  const { disabled: _off, log: clusterLog, ...linkOptions } = options.cluster;
  const linked = await openClusterLink({
    ...linkOptions,
    log: clusterLog ?? serverLog(logging ?? false),
    registry,
    ...compileOf(options),
    onPoliciesChanged,
  });
  if (!linked.ok) return { ok: false, message: linked.error };
  if (!linked.value && options.cluster.policiesFromCluster)
    return {
      ok: false,
      message: "--policies-from-cluster needs a cluster: give --kubeconfig, or run in a pod",
    };
  return { ok: true, link: linked.value };
}

/** The slow lane serve runs with, unless the options turn it off. */
function slowLaneFor(options: ServeOptions, onProblem: (message: string) => void): SlowLane | undefined {
  if (options.slowLane === false) return undefined;
  return new SlowLane({
    ...options.slowLane,
    // The same compile options as the main thread's, or the lane would build another set.
    compile: compileOf(options).compile ?? {},
    onProblem,
  });
}

/** The server's options that come straight from serve's. */
function serverTuning(options: ServeOptions, lane: SlowLane | undefined): Partial<ServerDeps> {
  return {
    ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}),
    ...(options.closeTimeoutMs !== undefined ? { closeTimeoutMs: options.closeTimeoutMs } : {}),
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    ...(options.logValues !== undefined ? { logValues: options.logValues } : {}),
    ...(lane !== undefined ? { slowLane: lane } : {}),
    ...(options.sliceMs !== undefined ? { sliceMs: options.sliceMs } : {}),
  };
}

/** Opens the admission port, then the metrics port; or says why one of them could not be opened. */
async function openPorts(
  server: WebhookServer,
  metricsServer: MetricsServer,
  options: ServeOptions,
): Promise<Result<{ readonly address: ListenAddress; readonly metricsAddress: ListenAddress }, string>> {
  const address = await server.start({ host: options.host, port: options.port });
  if (!address.ok) return address;
  const metricsAddress = await metricsServer.start({ host: options.host, port: options.metricsPort });
  if (!metricsAddress.ok) return metricsAddress;
  return ok({ address: address.value, metricsAddress: metricsAddress.value });
}

/** What --register-webhooks needs besides a cluster (checked once the link is open), or undefined. */
function registrationNeeds(options: ServeOptions): string | undefined {
  if (!options.registerWebhooks) return undefined;
  if (options.cluster?.disabled) return "--register-webhooks needs a cluster: it cannot go with --no-cluster";
  if (!options.tlsCert)
    return "--register-webhooks needs --tls-cert/--tls-key: the webhooks must trust the certificate served";
  return undefined;
}

/** Why serve cannot start: the policies' errors, one per line. */
function loadFailure(diagnostics: readonly Diagnostic[]): string {
  return ["policies could not be loaded:", ...formatDiagnosticLines(diagnostics)].join("\n");
}

/** Where the JSON log goes: the stream given, or stdout in batches; none when logging is off. */
function requestLogging(options: ServeOptions): {
  readonly sink: BatchedLogSink | undefined;
  readonly logging: { readonly level: LogLevel; readonly stream: LogStream } | undefined;
} {
  const sink =
    options.logLevel !== false && options.logStream === undefined ? new BatchedLogSink() : undefined;
  const stream = options.logStream ?? sink;
  const logging =
    options.logLevel === false || stream === undefined ? undefined : { level: options.logLevel, stream };
  return { sink, logging };
}

/**
 * The admitter serve answers with, as the policy files change: a cluster-connected one (whose
 * decisions may wait for the cluster), or the files-only one, each with its slow-lane twin.
 * `refresh` rebuilds it when the cluster's policies change; `current` is for after the first `load`.
 */
interface AdmitterSwitch {
  current(): ReviewAdmitter;
  /** The policy set served now: the files', plus the cluster's own with --policies-from-cluster. */
  set(): CompiledPolicySet;
  load(snapshot: PolicySnapshot): void;
  refresh(): void;
}

function admitterSwitch(
  link: ClusterLink | undefined,
  lane: SlowLane | undefined,
  paths: readonly string[],
): AdmitterSwitch {
  const admitterOf = admitterSource(link, lane, paths);
  let snapshot: PolicySnapshot | undefined;
  let admitter: ReviewAdmitter | undefined;
  let served: CompiledPolicySet | undefined;
  const load = (s: PolicySnapshot): void => {
    snapshot = s;
    ({ admitter, set: served } = admitterOf(s));
  };
  return {
    current() {
      if (admitter === undefined) throw new Error("no policy set loaded yet");
      return admitter;
    },
    set() {
      if (served === undefined) throw new Error("no policy set loaded yet");
      return served;
    },
    load,
    refresh() {
      if (snapshot) load(snapshot);
    },
  };
}

/** The compile options serve's options give, for the policy store, the cluster link and the slow lane alike. */
function compileOf(options: ServeOptions): { compile?: CompileOptions } {
  const compile: CompileOptions = {
    ...(options.celExtras ? { extras: options.celExtras } : {}),
    ...(options.kubernetesVersion !== undefined ? { kubernetesVersion: options.kubernetesVersion } : {}),
  };
  return Object.keys(compile).length > 0 ? { compile } : {};
}

/**
 * Starts serve in its order: TLS, the log, the cluster link, the policy store and its first set,
 * the server, both ports, and only then readiness, the slow lane's compile and the file watchers.
 * Kept as one function (past the usual length) so that order reads top to bottom; each step's
 * details live in the helpers above.
 */

export async function startWebhook(options: ServeOptions, log: (line: string) => void): Promise<StartResult> {
  const material = await tlsMaterial(options, log);
  if (!material.ok) return material;
  const { tls, generatedCert } = material;
  const registry = new Registry();
  const metrics = createWebhookMetrics(registry);
  metrics.setCertificateExpiry(certificateExpiry(tls.cert));
  // The log exists before the cluster link, which writes to it; a failed start closes its sink.
  const { sink, logging } = requestLogging(options);
  // Reloads are reported only after the store starts watching.
  let reloadLog: ServerLog = serverLog(false);
  const registrationProblem = registrationNeeds(options);
  if (registrationProblem !== undefined) {
    sink?.close();
    return { ok: false, message: registrationProblem };
  }
  let registration: WebhookRegistration | undefined;
  // The cluster link may report changed policies before the first set is loaded: refresh waits for it.
  const cluster = await openCluster(options, registry, logging, () => {
    admitters.refresh();
    void registration?.changed();
  });
  if (!cluster.ok) {
    sink?.close();
    return cluster;
  }
  const link = cluster.link;
  if (options.registerWebhooks && !link) {
    sink?.close();
    return { ok: false, message: "--register-webhooks needs a cluster: give --kubeconfig, or run in a pod" };
  }
  if (link) log(`connected to the cluster at ${link.server}; ready once its caches have synced`);
  let recorder: Recorder | undefined;
  if (options.record) {
    const opened = await Recorder.open({ ...options.record, registry, log: serverLog(logging ?? false) });
    if (!opened.ok) {
      link?.stop();
      sink?.close();
      return { ok: false, message: opened.error };
    }
    recorder = opened.value;
    log(
      `recording ${options.record.sampleRate * 100}% of the reviews answered to ${options.record.dir} (redacted; sensitive: see docs/serving.md)`,
    );
  }
  const lane = slowLaneFor(options, (message) => reloadLog.warn({ event: "slow-lane" }, message));
  const admitters = admitterSwitch(link, lane, options.policies);
  // A set must fit in this process's heap beside the one it replaces (sources/memory-budget.ts).
  const memoryBudgetBytes = setBudgetBytes();
  metrics.setMemoryBudget(memoryBudgetBytes);
  const opened = await PolicyStore.open(options.policies, {
    ...compileOf(options),
    memoryBudgetBytes,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    ...(options.readLimits ? { limits: options.readLimits } : {}),
    ...(options.settleMs !== undefined ? { settleMs: options.settleMs } : {}),
    // Reloads are reported as JSON lines in the log (reload-report.ts), not on stderr.
    onReload: (outcome) => {
      if (outcome.status === "applied") {
        admitters.load(outcome.snapshot);
        reportSnapshot(metrics, outcome.snapshot);
        void registration?.changed();
      }
      const notes = outcome.status === "applied" ? snapshotNotes(outcome.snapshot, link !== undefined) : [];
      reportReload(outcome, metrics, reloadLog, notes);
    },
  });
  if (!("store" in opened)) {
    link?.stop();
    await recorder?.close();
    sink?.close();
    await lane?.close();
    return { ok: false, message: loadFailure(opened.diagnostics) };
  }
  const store = opened.store;
  const first = store.current();
  admitters.load(first);
  metrics.recordReload("success", first.loadedAt);
  reportSnapshot(metrics, first);
  for (const line of describeSnapshot(first, link !== undefined)) log(line);
  reloadLog = serverLog(logging ?? false);
  // Not ready until both ports are open (a clash on either must be an error before anything reports
  // ready) and, when connected, the cluster's caches have synced.
  let listening = false;
  const server = await buildServer({
    ...serverTuning(options, lane),
    ...(recorder !== undefined ? { recorder } : {}),
    admitter: admitters.current,
    tls,
    logger: logging ?? false,
    metrics,
    readiness: () => listening && (link?.readiness() ?? true),
  });
  const metricsServer = await buildMetricsServer(registry, { health: server.health });
  const ports = await openPorts(server, metricsServer, options);
  if (!ports.ok) {
    server.abort();
    await Promise.all([server.close(), metricsServer.close(), lane?.close(), recorder?.close()]);
    store.close();
    sink?.close();
    return { ok: false, message: ports.error };
  }
  const { address, metricsAddress } = ports.value;
  listening = true;
  // Started once the ports are open, so its compile does not delay them.
  lane?.start();
  store.watch();
  const certWatcher = watchCertificate(server, options, metrics, log, () => void registration?.changed());
  if (link && options.registerWebhooks && options.tlsCert) {
    const { pollMs, retryMs, ...target } = options.registerWebhooks;
    registration = new WebhookRegistration({
      client: link.client,
      options: target,
      certFile: options.tlsCert,
      health: server.health,
      set: admitters.set,
      log: options.cluster?.log ?? serverLog(logging ?? false),
      registry,
      ...(pollMs !== undefined ? { pollMs } : {}),
      ...(retryMs !== undefined ? { retryMs } : {}),
    });
    registration.start();
  }
  log(
    `celgate serving ${first.set.policies.length} policies (${first.set.bindings.length} bindings) on ${address.url}; metrics on ${metricsAddress.url}/metrics (and the probes /healthz, /readyz)`,
  );
  const release = async () => {
    registration?.stop();
    link?.stop();
    store.close();
    certWatcher?.close();
    await Promise.all([metricsServer.close(), lane?.close(), recorder?.close()]);
    sink?.close();
  };
  return {
    ok: true,
    webhook: {
      url: address.url,
      metricsUrl: metricsAddress.url,
      server,
      store,
      metrics,
      cluster: link,
      registration,
      generatedCert,
      stop: async () => {
        await server.drain();
        await release();
      },
      release,
      slowLaneReady: () => {
        const version = admitters.current().laneVersion;
        return version !== undefined && lane?.accepts(version) === true;
      },
    },
  };
}
