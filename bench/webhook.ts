/**
 * The webhook under HTTP load: autocannon against (a) a bare fastify HTTPS handler that answers an
 * allowed AdmissionReview for the same body — the floor set by TLS, HTTP and JSON — and (b) the
 * real `startWebhook` with about 20 Pod Security validations and one mutation, on /validate and
 * /mutate, with a realistic ~4.5 KB Pod review. Targets and connection counts are interleaved
 * round by round so drift (thermal, other load) spreads over all of them; medians are reported.
 *
 * The servers run in a child process (this file with --serve-child) so the load generator and the
 * server do not share one event loop. Every run must have zero errors, timeouts, non-2xx answers
 * and body mismatches (each reply is compared with the one checked before timing); otherwise the
 * benchmark fails.
 *
 *   npx tsx bench/webhook.ts [--duration 5] [--rounds 3] [--connections 10,50] [--warmup 1] [--own-policies]
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";
import Fastify from "fastify";
import { startWebhook } from "../src/adapters/server/app.ts";
import { generateSelfSignedCertificate } from "../src/adapters/server/tls.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const FIXTURES = fileURLToPath(new URL("../test/fixtures/webhook/bench-policies", import.meta.url));
const PROJECT_POD_SECURITY = ["pod-security-baseline.yaml", "pod-security-restricted.yaml"].map((f) =>
  fileURLToPath(new URL(`../policies/${f}`, import.meta.url)),
);

// ---------------------------------------------------------------------------------------------
// autocannon has no type declarations; this is the part of its API used here.

interface Histogram {
  readonly average: number;
  readonly p50: number;
  readonly p99: number;
}

interface AutocannonResult {
  readonly requests: Histogram & { readonly total: number };
  readonly latency: Histogram;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly mismatches: number;
  readonly duration: number;
}

type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

// ---------------------------------------------------------------------------------------------
// The review

/** A Deployment-made Pod as the API server sends it after defaulting: 3 containers, probes, volumes. */
export function podReview(): Record<string, unknown> {
  const securityContext = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
  };
  const container = (name: string, image: string, port: number) => ({
    name,
    image,
    imagePullPolicy: "IfNotPresent",
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    env: [
      { name: "APP_ENV", value: "production" },
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
    ],
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
    livenessProbe: {
      httpGet: { path: "/healthz", port, scheme: "HTTP" },
      periodSeconds: 10,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: "/readyz", port, scheme: "HTTP" },
      periodSeconds: 5,
      failureThreshold: 3,
    },
    volumeMounts: [
      { name: "config", mountPath: "/etc/app", readOnly: true },
      { name: "tmp", mountPath: "/tmp" },
      {
        name: "kube-api-access-7x2kq",
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
        readOnly: true,
      },
    ],
    securityContext,
  });
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "checkout-7d9f8b6c5d-x2x4q",
      generateName: "checkout-7d9f8b6c5d-",
      namespace: "team-a",
      labels: {
        app: "checkout",
        "app.kubernetes.io/name": "checkout",
        "app.kubernetes.io/version": "2.14.1",
        "pod-template-hash": "7d9f8b6c5d",
        team: "payments",
      },
      annotations: { "kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "checkout-7d9f8b6c5d",
          uid: "5b1c0f1e-8a3b-4c1d-9e2f-0a1b2c3d4e5f",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      serviceAccountName: "checkout",
      automountServiceAccountToken: true,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 10001,
        fsGroup: 10001,
        seccompProfile: { type: "RuntimeDefault" },
      },
      initContainers: [
        {
          name: "migrate",
          image: "registry.example.com/payments/checkout-migrate:2.14.1",
          imagePullPolicy: "IfNotPresent",
          args: ["migrate", "--wait"],
          resources: { limits: { cpu: "200m", memory: "128Mi" } },
          securityContext,
        },
      ],
      containers: [
        container("checkout", "registry.example.com/payments/checkout:2.14.1", 8080),
        container("envoy", "registry.example.com/mesh/envoy:1.30.2", 15001),
      ],
      volumes: [
        { name: "config", configMap: { name: "checkout-config", defaultMode: 420 } },
        { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
        {
          name: "kube-api-access-7x2kq",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              {
                downwardAPI: {
                  items: [
                    { path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
                  ],
                },
              },
            ],
          },
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
      priority: 0,
      tolerations: [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
    },
  };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "0f5c2d4e-bench-4a8b-9c1d-2e3f4a5b6c7d",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      requestKind: { group: "", version: "v1", kind: "Pod" },
      requestResource: { group: "", version: "v1", resource: "pods" },
      name: pod.metadata.name,
      namespace: "team-a",
      operation: "CREATE",
      userInfo: {
        username: "system:serviceaccount:kube-system:replicaset-controller",
        uid: "a1b2c3d4-0000-4000-8000-000000000001",
        groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
      },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The servers (child process)

interface ChildReady {
  readonly bare: number;
  readonly celgate: number;
  readonly metrics: number;
  readonly policies: readonly string[];
  readonly loaded: number;
}

function policyPaths(own: boolean): string[] {
  const common = `${FIXTURES}/common`;
  if (!own && PROJECT_POD_SECURITY.every((f) => existsSync(f))) return [...PROJECT_POD_SECURITY, common];
  return [`${FIXTURES}/pod-security`, common];
}

async function serveChild(own: boolean): Promise<void> {
  const pair = generateSelfSignedCertificate({ hosts: ["localhost", "127.0.0.1"], days: 1 });
  const bare = Fastify({
    https: { cert: pair.cert, key: pair.key, ALPNProtocols: ["http/1.1"] },
    logger: false,
    keepAliveTimeout: 100_000,
    bodyLimit: 7 * 1024 * 1024,
  });
  bare.post("/validate", async (request) => {
    const body = request.body as { apiVersion?: string; request?: { uid?: string } };
    return {
      apiVersion: body.apiVersion,
      kind: "AdmissionReview",
      response: { uid: body.request?.uid, allowed: true },
    };
  });
  await bare.listen({ host: "127.0.0.1", port: 0 });
  const barePort = (bare.server.address() as { port: number }).port;

  const policies = policyPaths(own);
  const logs: string[] = [];
  const started = await startWebhook(
    { policies, host: "127.0.0.1", port: 0, metricsPort: 0, logLevel: false, drainMs: 0 },
    (line) => logs.push(line),
  );
  if (!started.ok) throw new Error(`startWebhook: ${started.message}`);
  const { webhook } = started;
  const ready: ChildReady = {
    bare: barePort,
    celgate: Number(new URL(webhook.url).port),
    metrics: Number(new URL(webhook.metricsUrl).port),
    policies,
    loaded: webhook.store.current().set.policies.length,
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  // The parent closes our stdin when it is done (or dies): then we go too.
  process.stdin.resume();
  await new Promise<void>((resolve) => process.stdin.on("close", resolve).on("end", resolve));
  await webhook.stop();
  await bare.close();
}

// ---------------------------------------------------------------------------------------------
// The load (parent process)

function post(port: number, path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        rejectUnauthorized: false,
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    r.on("timeout", () => r.destroy(new Error(`POST ${path} timed out`)));
    r.on("error", reject);
    r.end(body);
  });
}

function getMetrics(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: "127.0.0.1", port, path: "/metrics", timeout: 10_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => {
        text += d;
      });
      res.on("end", () => resolve(text));
    });
    r.on("timeout", () => r.destroy(new Error("GET /metrics timed out")));
    r.on("error", reject);
    r.end();
  });
}

/** Checks the answers before timing them: a benchmark of the wrong answer measures nothing. */
async function expectedBodies(ready: ChildReady, body: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, port, path] of [
    ["bare", ready.bare, "/validate"],
    ["validate", ready.celgate, "/validate"],
    ["mutate", ready.celgate, "/mutate"],
  ] as const) {
    const res = await post(port, path, body);
    if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status}: ${res.body}`);
    const response = (JSON.parse(res.body) as { response?: { allowed?: boolean; patch?: string } }).response;
    if (response?.allowed !== true) throw new Error(`${name}: the benchmark Pod is not allowed: ${res.body}`);
    if (name === "mutate" && response.patch === undefined) throw new Error(`mutate: no patch: ${res.body}`);
    out[name] = res.body;
  }
  // Every validating policy must have run and passed, not been skipped by a selector or failed.
  const metrics = await getMetrics(ready.metrics);
  const outcomes = new Map<string, Set<string>>();
  for (const m of metrics.matchAll(/^celgate_policy_evaluations_total\{([^}]*)\} (\S+)$/gm)) {
    const policy = /policy="([^"]*)"/.exec(m[1] ?? "")?.[1] ?? "";
    const outcome = /outcome="([^"]*)"/.exec(m[1] ?? "")?.[1] ?? "";
    if (Number(m[2]) > 0) outcomes.set(policy, (outcomes.get(policy) ?? new Set()).add(outcome));
  }
  const notPassed = [...outcomes].filter(([, o]) => o.size !== 1 || !o.has("pass"));
  if (outcomes.size < ready.loaded || notPassed.length > 0) {
    throw new Error(
      `expected all ${ready.loaded} policies to pass, got ${JSON.stringify([...outcomes].map(([p, o]) => [p, [...o]]))}`,
    );
  }
  return out;
}

interface Target {
  readonly name: string;
  readonly port: number;
  readonly path: string;
  readonly expect: string;
}

interface Sample {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
}

async function fire(target: Target, body: string, connections: number, seconds: number): Promise<Sample> {
  const r = await autocannon({
    url: `https://127.0.0.1:${target.port}${target.path}`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    connections,
    duration: seconds,
    expectBody: target.expect,
    timeout: 10,
  });
  const problems = { errors: r.errors, timeouts: r.timeouts, non2xx: r.non2xx, mismatches: r.mismatches };
  if (Object.values(problems).some((n) => n !== 0) || r.requests.total === 0) {
    throw new Error(
      `${target.name} with ${connections} connections: ${JSON.stringify(problems)}, ${r.requests.total} requests`,
    );
  }
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

export interface WebhookBenchOptions {
  /** Seconds per measured run. */
  readonly duration?: number;
  readonly rounds?: number;
  readonly connections?: readonly number[];
  /** Seconds of unmeasured load per target before the first round. */
  readonly warmup?: number;
  /** Use test/fixtures/webhook/bench-policies/pod-security even when policies/pod-security-*.yaml exist. */
  readonly ownPolicies?: boolean;
  readonly log?: (line: string) => void;
}

export interface WebhookBenchRow {
  readonly target: string;
  readonly connections: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
}

function startChild(own: boolean): Promise<{ child: ChildProcessWithoutNullStreams; ready: ChildReady }> {
  const args = ["--import", "tsx", SELF, "--serve-child", ...(own ? ["--own-policies"] : [])];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the server process did not start:\n${stderr}`));
    }, 60_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line !== undefined) {
        clearTimeout(timer);
        resolve({ child, ready: JSON.parse(line) as ChildReady });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the server process exited (${code}):\n${stderr}`));
    });
  });
}

/** Runs the benchmark, prints the table; resolves to the exit code (1 on any failed request). */
export async function runWebhookBench(options: WebhookBenchOptions = {}): Promise<number> {
  const log = options.log ?? ((line: string) => console.log(line));
  const duration = options.duration ?? 5;
  const rounds = options.rounds ?? 3;
  const connections = options.connections ?? [10, 50];
  const warmup = options.warmup ?? 1;
  const body = JSON.stringify(podReview());

  const { child, ready } = await startChild(options.ownPolicies ?? false);
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  try {
    log(
      `policies: ${ready.policies.map((p) => p.replace(`${ROOT}`, "")).join(", ")} (${ready.loaded} loaded)`,
    );
    log(
      `review body: ${Buffer.byteLength(body)} bytes; ${duration} s per run, ${rounds} rounds, connections ${connections.join(", ")}`,
    );
    const expect = await expectedBodies(ready, body);
    const targets: Target[] = [
      { name: "bare fastify", port: ready.bare, path: "/validate", expect: expect.bare ?? "" },
      { name: "celgate /validate", port: ready.celgate, path: "/validate", expect: expect.validate ?? "" },
      { name: "celgate /mutate", port: ready.celgate, path: "/mutate", expect: expect.mutate ?? "" },
    ];
    if (warmup > 0) for (const t of targets) await fire(t, body, connections[0] ?? 10, warmup);

    const samples = new Map<string, Sample[]>();
    const key = (t: Target, c: number) => `${t.name}\u0000${c}`;
    for (let round = 1; round <= rounds; round++) {
      for (const c of connections) {
        // Rotate the order each round so no target always runs first after a pause.
        const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target);
        for (const t of order) {
          const s = await fire(t, body, c, duration);
          samples.set(key(t, c), [...(samples.get(key(t, c)) ?? []), s]);
        }
      }
      log(`round ${round}/${rounds} done`);
    }

    const rows: WebhookBenchRow[] = [];
    for (const c of connections)
      for (const t of targets) {
        const s = samples.get(key(t, c)) ?? [];
        rows.push({
          target: t.name,
          connections: c,
          rps: median(s.map((x) => x.rps)),
          p50: median(s.map((x) => x.p50)),
          p99: median(s.map((x) => x.p99)),
        });
      }
    printTable(rows, log);
    return 0;
  } catch (e) {
    log(`webhook benchmark FAILED: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    child.stdin.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

function printTable(rows: readonly WebhookBenchRow[], log: (line: string) => void): void {
  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (n: number, digits = 0) => n.toFixed(digits).padStart(9);
  log("");
  log(
    `${pad("target", 20)}${pad("conns", 6)}${"req/s".padStart(9)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}`,
  );
  for (const r of rows)
    log(`${pad(r.target, 20)}${pad(String(r.connections), 6)}${num(r.rps)}${num(r.p50, 1)}${num(r.p99, 1)}`);
  log("");
  log("ratios, celgate / bare (req/s: lower is slower; latency: higher is slower)");
  for (const r of rows) {
    if (r.target === "bare fastify") continue;
    const bare = rows.find((b) => b.target === "bare fastify" && b.connections === r.connections);
    if (!bare) continue;
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "n/a").padStart(9);
    log(
      `${pad(r.target, 20)}${pad(String(r.connections), 6)}${ratio(r.rps, bare.rps)}${ratio(r.p50, bare.p50)}${ratio(r.p99, bare.p99)}`,
    );
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      duration: { type: "string", default: "5" },
      rounds: { type: "string", default: "3" },
      connections: { type: "string", default: "10,50" },
      warmup: { type: "string", default: "1" },
      "own-policies": { type: "boolean", default: false },
    },
    strict: false,
  });
  const num = (v: unknown, name: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new Error(`--${name} must be a positive number, got ${String(v)}`);
    return n;
  };
  return runWebhookBench({
    duration: num(values.duration, "duration"),
    rounds: Math.max(1, Math.floor(num(values.rounds, "rounds"))),
    connections: String(values.connections)
      .split(",")
      .map((c) => Math.floor(num(c, "connections"))),
    warmup: Number(values.warmup) >= 0 ? Number(values.warmup) : 1,
    ownPolicies: values["own-policies"] === true,
  });
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  if (process.argv.includes("--serve-child")) {
    serveChild(process.argv.includes("--own-policies")).catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  } else {
    main(process.argv.slice(2)).then(
      (code) => {
        process.exitCode = code;
      },
      (e: unknown) => {
        console.error(e instanceof Error ? e.message : e);
        process.exitCode = 2;
      },
    );
  }
}
