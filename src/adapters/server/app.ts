/**
 * `celgate serve` put together: the policy store (load, compile, watch), the admitter it yields,
 * TLS material (given or generated), the webhook server, the metrics server, and the signals.
 * The CLI command only parses flags and prints; everything that runs lives here.
 */
import { readFile } from "node:fs/promises";
import { Registry } from "prom-client";
import type { CelExtras } from "../../cel/index.ts";
import { contextFromSet, createAdmitter } from "../../engine/admitter.ts";
import type { Admitter } from "../../engine/types.ts";
import { type Diagnostic, formatDiagnostic } from "../../errors.ts";
import type { CompiledPolicySet } from "../../compile/policy.ts";
import { type ClusterLink, type ClusterLinkOptions, openClusterLink } from "../../cluster/link.ts";
import type { ClusterLog } from "../../cluster/observe.ts";
import type { LabelSelector } from "../../policy/types.ts";
import type { PolicySnapshot } from "../../sources/store.ts";
import { PolicyStore } from "../../sources/store.ts";
import { BatchedLogSink } from "./log-sink.ts";
import { createWebhookMetrics, type WebhookMetrics } from "./metrics.ts";
import type { LogLevel } from "./review-log.ts";
import type { ReviewAdmitter } from "./batch.ts";
import { buildMetricsServer, buildServer, type WebhookServer } from "./server.ts";
import { serverLog } from "./server-log.ts";
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
  readonly celExtras?: CelExtras;
  /** pino level, or false for no request logs (tests). */
  readonly logLevel: LogLevel | false;
  readonly pollMs?: number;
  /**
   * The cluster connection: with `kubeconfig`, or in a pod unless `disabled`. Absent, or with
   * neither, serve sees only its files.
   */
  readonly cluster?: ClusterServeOptions;
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
  /** The self-signed certificate, when one was generated (for clients that must trust it). */
  readonly generatedCert: string | undefined;
  /** Drains the webhook (readiness off, answers for the drain window), then releases everything. */
  stop(): Promise<void>;
  /** Stops watching files and closes the metrics listener; for after the webhook has drained. */
  release(): Promise<void>;
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
 * serve has no connection to the cluster, so it sees Namespaces only through the policy files. A
 * namespace it does not know is taken to have the one label the API server sets on every
 * Namespace (`kubernetes.io/metadata.name`), which is what selectors such as "not kube-system" use.
 */
function admitterFor(set: CompiledPolicySet): Admitter {
  return createAdmitter(set, contextFromSet(set, { assumeNamespaces: true }));
}

/** Selector keys celgate can know for any namespace without a cluster connection. */
const KNOWN_NAMESPACE_LABELS = new Set(["kubernetes.io/metadata.name"]);

function selectorKeys(sel: LabelSelector | undefined): string[] {
  if (!sel) return [];
  return [...Object.keys(sel.matchLabels), ...sel.matchExpressions.map((e) => e.key)];
}

/** Lines to log about a snapshot: its problems and the policies loaded without a binding. */
export function describeSnapshot(s: PolicySnapshot, connected = false): string[] {
  const lines = s.diagnostics.map((d: Diagnostic) => formatDiagnostic(d));
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

export async function startWebhook(options: ServeOptions, log: (line: string) => void): Promise<StartResult> {
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
  const registry = new Registry();
  const metrics = createWebhookMetrics(registry);
  metrics.setCertificateExpiry(certificateExpiry(tls.cert));
  const logging =
    options.logLevel === false ? undefined : { level: options.logLevel, stream: new BatchedLogSink() };
  // Set once the first policy set is loaded; the cluster link may ask for a new admitter before.
  let filesSet: CompiledPolicySet | undefined;
  let link: ClusterLink | undefined;
  if (options.cluster && !options.cluster.disabled) {
    const { disabled: _off, log: clusterLog, ...linkOptions } = options.cluster;
    const linked = await openClusterLink({
      ...linkOptions,
      log: clusterLog ?? serverLog(logging ?? false),
      registry,
      ...(options.celExtras ? { compile: { extras: options.celExtras } } : {}),
      onPoliciesChanged: () => {
        if (filesSet) admitter = serveAdmitter(filesSet);
      },
    });
    link = linked.ok ? linked.value : undefined;
    const refused = !linked.ok
      ? linked.error
      : !link && options.cluster.policiesFromCluster
        ? "--policies-from-cluster needs a cluster: give --kubeconfig, or run in a pod"
        : undefined;
    if (refused !== undefined) {
      logging?.stream.close();
      return { ok: false, message: refused };
    }
    if (link) log(`connected to the cluster at ${link.server}; ready once its caches have synced`);
  }
  const serveAdmitter = (set: CompiledPolicySet): ReviewAdmitter => {
    filesSet = set;
    return link ? link.admitter(set) : admitterFor(set);
  };
  const opened = await PolicyStore.open(options.policies, {
    ...(options.celExtras ? { compile: { extras: options.celExtras } } : {}),
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    onReload: (outcome) => {
      metrics.recordReload(outcome.ok);
      if (outcome.ok) {
        admitter = serveAdmitter(outcome.snapshot.set);
        reportSnapshot(metrics, outcome.snapshot);
        log(
          `policies reloaded: ${outcome.snapshot.set.policies.length} policies, ${outcome.snapshot.set.bindings.length} bindings`,
        );
        for (const line of describeSnapshot(outcome.snapshot, link !== undefined)) log(line);
      } else {
        log("policy reload rejected; the last good policies keep serving:");
        for (const d of outcome.diagnostics) log(formatDiagnostic(d));
      }
    },
  });
  if (!("store" in opened)) {
    link?.stop();
    logging?.stream.close();
    return {
      ok: false,
      message: ["policies could not be loaded:", ...opened.diagnostics.map((d) => formatDiagnostic(d))].join(
        "\n",
      ),
    };
  }
  const store = opened.store;
  const first = store.current();
  let admitter: ReviewAdmitter = serveAdmitter(first.set);
  metrics.recordReload(true, first.loadedAt);
  reportSnapshot(metrics, first);
  for (const line of describeSnapshot(first, link !== undefined)) log(line);
  const server = await buildServer({
    admitter: () => admitter,
    tls,
    logger: logging ?? false,
    metrics,
    readiness: () => link?.ready() ?? true,
    ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}),
  });
  const address = await server.start({ host: options.host, port: options.port });
  const metricsServer = await buildMetricsServer(registry);
  const metricsAddress = await metricsServer.start({ host: options.host, port: options.metricsPort });
  store.watch();
  const certWatcher =
    options.tlsCert && options.tlsKey
      ? server.watchTlsFiles(options.tlsCert, options.tlsKey, (event) => {
          if (event.ok) {
            metrics.setCertificateExpiry(event.certificate.notAfter);
            log("TLS certificate reloaded");
          } else log(`TLS certificate reload rejected, keeping the current one: ${event.error}`);
        })
      : undefined;
  log(
    `celgate serving ${first.set.policies.length} policies (${first.set.bindings.length} bindings) on ${address.url}; metrics on ${metricsAddress.url}/metrics`,
  );
  const release = async () => {
    link?.stop();
    store.close();
    certWatcher?.close();
    await metricsServer.close();
    logging?.stream.close();
  };
  const stop = async () => {
    await server.drain();
    await release();
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
      generatedCert,
      stop,
      release,
    },
  };
}
