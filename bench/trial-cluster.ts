/**
 * The fault trial's phases for a cluster-connected `serve` (issue 37 items 2, 3 and 7), run by
 * trial.ts: `celgate serve --kubeconfig` as a process of its own, against the test API server
 * (test/helpers/kube-apiserver.ts) in this process holding 10,000 Namespaces and 10,000 ConfigMaps,
 * with policies that read a Namespace's labels, a ConfigMap param and an `authorizer` check. At 50
 * connections, each phase after the first is one fault:
 *
 * - quiet: nothing wrong, the baseline the others are read against;
 * - 410 storm: every watch is answered with 410 Gone; the caches must list again with client-go's
 *   backoff, not in a loop;
 * - hung API server: for the middle two thirds of the phase it answers nothing and closes nothing
 *   (SIGSTOP); the caches must notice the silence (`--cluster-stale-seconds`, scaled down here with
 *   the test server's bookmark interval) and decide from what they hold;
 * - SAR outage: the API server is gone for the whole phase; users' authorizer checks must answer
 *   from their last answers, and the SubjectAccessReviews sent must follow the backoff (last: the
 *   caches' own backoff after it would hide the next phase's fault).
 *
 * Every review must get the decision it got on the quiet server. trial.ts hands in its load
 * generator and helpers (TrialKit), so that neither file imports the other.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeApiServer } from "../test/helpers/kube-apiserver.ts";

interface Shot {
  readonly body: string;
  readonly expect: string | undefined;
}

interface Tally {
  requests: number;
  errors: number;
  wrong: number;
  readonly latencies: number[];
  readonly samples: string[];
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly close: boolean;
}

interface PhaseResult {
  readonly name: string;
  readonly tally: Tally;
  readonly rss: { now: number; peak: number };
  readonly note: string;
}

/** What trial.ts lends these phases. */
export interface TrialKit {
  serveCommand(): string[];
  rss(pid: number | undefined): { now: number; peak: number };
  load(
    port: number,
    connections: number,
    until: number,
    next: (c: number) => Shot,
    tally: Tally,
  ): Promise<void>;
  newTally(): Tally;
  post(agent: Agent, port: number, body: string): Promise<Answer>;
  decision(a: Answer): string;
}

/** Objects of each kind besides the few the policies read. */
const BULK = 10_000;
/** Scaled down from the API server's minute and celgate's 75 s, so that a phase sees them happen. */
const BOOKMARK_EVERY_MS = 1000;
const STALE_SECONDS = 3;
const CONNECTIONS = 50;
const USERS = 20;

const DEPLOYMENTS = `
  matchConstraints:
    resourceRules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["deployments"]`;

const POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: prod-replicas }
spec:
  failurePolicy: Fail${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= 2"
      message: "production runs at most 2 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: prod-replicas }
spec:
  policyName: prod-replicas
  validationActions: [Deny]
  matchResources: { namespaceSelector: { matchLabels: { env: prod } } }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replica-limit }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= int(params.data.max)"
      message: "over the namespace's replica limit"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replica-limit }
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef: { name: limits, parameterNotFoundAction: Deny }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: may-delete-pods }
spec:
  failurePolicy: Fail${DEPLOYMENTS}
  variables:
    - name: deletePods
      expression: "authorizer.group('').resource('pods').namespace(request.namespace).check('delete')"
  validations:
    - expression: "variables.deletePods.allowed()"
      message: "not allowed to delete pods"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: may-delete-pods }
spec: { policyName: may-delete-pods, validationActions: [Deny] }
`;

/** The cluster: two namespaces the reviews go to, each with its `limits`, among BULK of each kind. */
function populate(api: KubeApiServer): void {
  const ns = (name: string, env: string) => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name, env } },
  });
  const limits = (namespace: string, max: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "limits", namespace },
    data: { max },
  });
  api.putMany([
    ns("team-prod", "prod"),
    ns("team-dev", "dev"),
    limits("team-prod", "3"),
    limits("team-dev", "4"),
    ...Array.from({ length: BULK }, (_, i) => ns(`bulk-${i}`, "dev")),
    ...Array.from({ length: BULK }, (_, i) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `settings-${i}`, namespace: `bulk-${i % 100}` },
      data: { key: "x".repeat(200) },
    })),
  ]);
  api.authorize = (a) =>
    a.groups.includes("dev")
      ? { allowed: true, reason: "RBAC: dev" }
      : { allowed: false, reason: "no RBAC rule" };
}

function review(namespace: string, replicas: number, user: string): string {
  const object = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } } },
    },
  };
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "trial",
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      resource: { group: "apps", version: "v1", resource: "deployments" },
      namespace,
      name: "web",
      operation: "CREATE",
      userInfo:
        user === "mallory"
          ? { username: "mallory", groups: ["system:authenticated"] }
          : { username: user, groups: ["system:authenticated", "dev"] },
      object,
    },
  });
}

/** The four kinds of review (allowed; denied by two policies; allowed by a param; denied by a SAR). */
const KINDS = [
  (user: string) => review("team-prod", 1, user),
  (user: string) => review("team-prod", 5, user),
  (user: string) => review("team-dev", 3, user),
  () => review("team-dev", 3, "mallory"),
] as const;

interface Connected {
  readonly child: ChildProcess;
  readonly port: number;
  readonly metricsPort: number;
  readonly logLines: string[];
  readonly exited: Promise<number | null>;
}

async function startConnected(kit: TrialKit, dir: string, api: KubeApiServer): Promise<Connected> {
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, api.kubeconfig());
  mkdirSync(join(dir, "policies"));
  writeFileSync(join(dir, "policies", "cluster.yaml"), POLICIES);
  const child = spawn(
    process.execPath,
    [
      "--max-old-space-size=320",
      ...kit.serveCommand(),
      "serve",
      ...["--policies", join(dir, "policies"), "--kubeconfig", kubeconfig, "--host", "127.0.0.1"],
      ...["--port", "0", "--metrics-port", "0", "--log-level", "warn", "--drain-seconds", "0"],
      ...["--cluster-stale-seconds", String(STALE_SECONDS)],
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const logLines: string[] = [];
  child.stdout
    ?.setEncoding("utf8")
    .on("data", (d: string) => logLines.push(...d.split("\n").filter(Boolean)));
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const ports = await new Promise<[number, number]>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /on https:\/\/127\.0\.0\.1:(\d+); metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
      if (m) {
        clearInterval(timer);
        resolve([Number(m[1]), Number(m[2])]);
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`serve exited (${code}):\n${stderr}`));
    });
  });
  const server = { child, port: ports[0], metricsPort: ports[1], logLines, exited };
  const until = performance.now() + 60_000;
  while ((await fetchText(server.metricsPort, "/readyz")).status !== 200) {
    if (performance.now() > until) throw new Error(`serve not ready within 60 s:\n${stderr}`);
    await sleep(100);
  }
  return server;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function fetchText(port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = httpGet({ host: "127.0.0.1", port, path, timeout: 5000 }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => {
        text += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve({ status: 0, text: "" }));
  });
}

/** The sum of a metric's samples whose labels include all of `labels`. */
function sample(metrics: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of metrics.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** What the server's metrics and probes showed while a phase ran, sampled every 250 ms. */
async function observe(server: Connected, until: number) {
  const seen = { maxAge: 0, polls: 0, unready: 0 };
  while (performance.now() < until) {
    const [metrics, ready] = await Promise.all([
      fetchText(server.metricsPort, "/metrics"),
      fetchText(server.metricsPort, "/readyz"),
    ]);
    seen.polls++;
    if (ready.status !== 200) seen.unready++;
    for (const line of metrics.text.split("\n"))
      if (line.startsWith("celgate_cluster_cache_age_seconds{"))
        seen.maxAge = Math.max(seen.maxAge, Number(line.slice(line.lastIndexOf(" ") + 1)));
    await sleep(250);
  }
  return seen;
}

/** The shots of a phase: the four kinds in turn, each connection as one of USERS users. */
async function expectations(kit: TrialKit, port: number): Promise<(c: number, n: number) => Shot> {
  const agent = new Agent({ keepAlive: false, rejectUnauthorized: false });
  const expected: string[] = [];
  for (const kind of KINDS) expected.push(kit.decision(await kit.post(agent, port, kind("user-0"))));
  // Every user's check answered once, as a running cluster would have.
  for (let u = 0; u < USERS; u++) for (const kind of KINDS) await kit.post(agent, port, kind(`user-${u}`));
  agent.destroy();
  return (c, n) => {
    const k = n % KINDS.length;
    return { body: (KINDS[k] as (user: string) => string)(`user-${c % USERS}`), expect: expected[k] };
  };
}

async function phase(
  kit: TrialKit,
  server: Connected,
  name: string,
  seconds: number,
  next: (c: number, n: number) => Shot,
  fault: (until: number) => Promise<void>,
  note: (seen: Awaited<ReturnType<typeof observe>>, before: string, after: string) => string,
): Promise<PhaseResult> {
  const tally = kit.newTally();
  const until = performance.now() + seconds * 1000;
  const before = (await fetchText(server.metricsPort, "/metrics")).text;
  const counters = new Array<number>(CONNECTIONS).fill(0);
  const [, seen] = await Promise.all([
    kit.load(
      server.port,
      CONNECTIONS,
      until,
      (c) => {
        const n = (counters[c] ?? 0) + 1;
        counters[c] = n;
        return next(c, n);
      },
      tally,
    ),
    observe(server, until),
    fault(until),
  ]);
  const after = (await fetchText(server.metricsPort, "/metrics")).text;
  return { name, tally, rss: kit.rss(server.child.pid), note: note(seen, before, after) };
}

/** Waits (at most a minute) until every cache is current again. */
async function settle(server: Connected): Promise<void> {
  const until = performance.now() + 60_000;
  while (performance.now() < until) {
    const ages = (await fetchText(server.metricsPort, "/metrics")).text
      .split("\n")
      .filter((l) => l.startsWith("celgate_cluster_cache_age_seconds{"));
    if (ages.length > 0 && ages.every((l) => l.endsWith(" 0"))) return;
    await sleep(250);
  }
  throw new Error("the cluster caches did not become current within 60 s");
}

/** Counts of what a phase's metrics rose by. */
function rise(before: string, after: string, name: string, labels: Record<string, string> = {}): number {
  return sample(after, name, labels) - sample(before, name, labels);
}

/** Runs the cluster phases, handing each result to `done` as it completes. */
export async function clusterPhases(
  seconds: number,
  done: (r: PhaseResult) => void,
  kit: TrialKit,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "celgate-trial-cluster-"));
  const api = new KubeApiServer({ bookmarkEveryMs: BOOKMARK_EVERY_MS });
  await api.start();
  let server: Connected | undefined;
  try {
    populate(api);
    server = await startConnected(kit, dir, api);
    const live = server;
    const next = await expectations(kit, live.port);
    const lists = (resource: string) =>
      api.requests.filter((q) => q.startsWith(`GET /api/v1/${resource}?limit=`) && !q.includes("continue="))
        .length;
    done(
      await phase(
        kit,
        live,
        "cluster: quiet (baseline), 50 conns",
        seconds,
        next,
        async () => {},
        (seen) =>
          `cache age at most ${seen.maxAge.toFixed(1)} s; /readyz not 200 in ${seen.unready} of ${seen.polls} polls`,
      ),
    );
    const listsBefore = { namespaces: lists("namespaces"), configmaps: lists("configmaps") };
    done(
      await phase(
        kit,
        live,
        "cluster: 410 storm, 50 conns",
        seconds,
        next,
        async (until) => {
          // The open watches end with 410 (a compaction), and every watch after them too.
          api.compact();
          api.expireWatches = true;
          await sleep(until - performance.now());
          api.expireWatches = false;
        },
        (_seen, before, after) =>
          `every watch answered 410: ${lists("namespaces") - listsBefore.namespaces} lists of namespaces, ` +
          `${lists("configmaps") - listsBefore.configmaps} of configmaps (${BULK} objects each); ` +
          `relists_total{reason="expired"} +${rise(before, after, "celgate_cluster_relists_total", { reason: "expired" })}`,
      ),
    );
    // The storm leaves the caches waiting out their backoff: the next phase starts from current ones.
    await settle(live);
    let hungSeconds = 0;
    done(
      await phase(
        kit,
        live,
        "cluster: hung API server, 50 conns",
        seconds,
        next,
        async (until) => {
          const span = until - performance.now();
          await sleep(span / 6);
          const hungAt = performance.now();
          api.hang();
          await sleep((span * 4) / 6);
          api.wake();
          hungSeconds = (performance.now() - hungAt) / 1000;
        },
        (seen, before, after) =>
          `hung ${hungSeconds.toFixed(1)} s (--cluster-stale-seconds ${STALE_SECONDS}): cache age up to ${seen.maxAge.toFixed(1)} s, ` +
          `${rise(before, after, "celgate_cluster_watch_restarts_total", { reason: "silent" })} silent watches given up, ` +
          `${live.logLines.filter((l) => l.includes("no event or bookmark")).length} "no event or bookmark" log lines, ` +
          `/readyz not 200 in ${seen.unready} of ${seen.polls} polls (--cluster-stale-readiness serve)`,
      ),
    );
    done(
      await phase(
        kit,
        live,
        "cluster: SAR outage (API server gone), 50 conns",
        seconds,
        next,
        async (until) => {
          await api.goAway();
          await sleep(until - performance.now());
          await api.comeBack();
        },
        (_seen, before, after) =>
          `SubjectAccessReviews sent ${rise(before, after, "celgate_subjectaccessreviews_total")} ` +
          `(${rise(before, after, "celgate_subjectaccessreviews_total", { outcome: "error" })} failed); checks answered ` +
          (["hit", "stale", "backoff", "miss"] as const)
            .map((c) => `${c} ${rise(before, after, "celgate_authorizer_checks_total", { cache: c })}`)
            .join(", "),
      ),
    );
  } finally {
    if (server && server.child.exitCode === null) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
