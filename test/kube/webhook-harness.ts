/**
 * celgate as the API server's webhook, in the test bed of test/helpers/kube-control-plane.ts: the
 * real CLI's `serve` as a child process on 127.0.0.1 with real TLS, and the one thing a cluster has
 * that the test bed lacks, simulated: there is no kube-proxy, so the webhooks' Service is an
 * ExternalName Service whose externalName is 127.0.0.1. The API server resolves a webhook's service
 * reference through its ClusterIP service resolver, which for an ExternalName Service dials
 * externalName at the port the webhook names (k8s.io/apiserver/pkg/util/proxy/proxy.go
 * ResolveCluster) and verifies the certificate for SERVICE.NAMESPACE.svc
 * (k8s.io/apiserver/pkg/util/webhook/client.go); so the webhook configurations stay exactly what
 * `celgate manifests` (or `serve --register-webhooks`) writes, with the port celgate listens on as
 * the Service port.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ControlPlane, KubeResponse } from "../helpers/kube-control-plane.ts";
import { type KubeManifest, Resources } from "../helpers/kube-objects.ts";
import { scrape, waitFor } from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ServeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The admission port and the metrics port, once serve says it serves. */
  ports(): Promise<{ admission: number; metrics: number }>;
  /** What serve wrote on stderr and stdout so far. */
  output(): string;
  /** SIGTERM, then SIGKILL after a bounded wait; resolves once it has exited. */
  stop(): Promise<void>;
}

/** `celgate serve ARGS` through the CLI's entry point, as a user runs it, with `env` added to the environment. */
export function spawnServe(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): ServeProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "src/adapters/cli/bin.ts", "serve", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let text = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    text += d;
  });
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    text += d;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => text,
    async ports() {
      const m = await waitFor(
        "serve's serving line",
        () => {
          if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}):\n${text}`);
          return (
            /on https:\/\/127\.0\.0\.1:(\d+); metrics on http:\/\/127\.0\.0\.1:(\d+)\//.exec(text) ??
            undefined
          );
        },
        90_000,
        100,
      );
      return { admission: Number(m[1]), metrics: Number(m[2]) };
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // A stopped (SIGSTOP) process must be continued to act on SIGTERM.
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The admission reviews serve has answered, summed over paths, operations and outcomes. */
export async function reviewsAnswered(metricsPort: number): Promise<number> {
  const text = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
  let sum = 0;
  for (const line of text.split("\n"))
    if (line.startsWith("celgate_admission_requests_total{")) sum += Number(line.split(" ").pop());
  return sum;
}

/** Creates `manifest`, or replaces what is there (with its resourceVersion); throws on any other answer. */
export async function apply(
  plane: ControlPlane,
  resources: Resources,
  manifest: KubeManifest,
): Promise<KubeResponse> {
  const where = await resources.of(manifest);
  if (where === undefined)
    throw new Error(`${String(manifest.kind)} is not served in ${String(manifest.apiVersion)}`);
  const created = await plane.request("POST", where.collection, manifest);
  if (created.status === 201 || created.status === 200) return created;
  if (created.status !== 409)
    throw new Error(`create ${String(manifest.kind)}: ${created.status} ${JSON.stringify(created.body)}`);
  const path = `${where.collection}/${encodeURIComponent(String(manifest.metadata?.name))}`;
  const current = await plane.request("GET", path);
  const version = (current.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  const replaced = await plane.request("PUT", path, {
    ...manifest,
    metadata: { ...manifest.metadata, resourceVersion: version },
  });
  if (replaced.status !== 200)
    throw new Error(`replace ${String(manifest.kind)}: ${replaced.status} ${JSON.stringify(replaced.body)}`);
  return replaced;
}

/** The Service the webhooks call, as the test bed can route it: ExternalName 127.0.0.1. */
export function loopbackService(namespace: string, name: string): KubeManifest {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace },
    spec: { type: "ExternalName", externalName: "127.0.0.1" },
  };
}

export function namespaceManifest(name: string, labels: Record<string, string> = {}): KubeManifest {
  const metadata: { name: string; labels: Record<string, string> } = { name, labels };
  return { apiVersion: "v1", kind: "Namespace", metadata };
}

export { Resources };
