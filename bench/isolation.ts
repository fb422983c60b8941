/**
 * Isolation between reviews (issue 28 item 5): what one connection sending costly-but-legal reviews
 * back to back takes from everyone else. celgate serves the Pod Security set plus one costly policy
 * (test/fixtures/webhook/costly: ten validations near the per-expression cost limit, about 9 of the
 * 10 million units of a policy's budget, hundreds of milliseconds a review). autocannon sends the
 * ordinary Pod review on 10 connections, first alone (quiet), then while one more connection sends
 * the costly Widget review back to back (loaded). The figures are the others' throughput and p99,
 * loaded against quiet, in the same round. The goal: at least half the throughput, and a p99 under
 * ten times the quiet one.
 *
 * Each round serves twice, in separate child processes: with the slow lane (as `serve` runs) and
 * without it (every review on the main thread, as before the lane), so one run shows both; and
 * both again connected to a cluster (issue 36 item 2): the test API server in this process
 * (bench/cluster.ts) with a policy whose params, namespaceSelector and namespaceObject every
 * review reads from the server's caches, which the lane reads through the main thread.
 *
 *   node dist-bench/bench/isolation.js [--duration 5] [--rounds 3] [--connections 10] [--modes files,connected]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { startWebhook } from "../src/adapters/server/app.ts";
import {
  fmtInt,
  fmtMs,
  isMain,
  median,
  nodeArgsFor,
  type PartReport,
  rootPath,
  type SummaryRow,
  table,
} from "./common.ts";
import { type BenchCluster, startBenchCluster } from "./cluster.ts";
import { podReview } from "./review.ts";

const READY_FD = 3;
export const COSTLY_POLICIES = rootPath("test", "fixtures", "webhook", "costly");
const POD_SECURITY = [
  rootPath("policies", "pod-security-baseline.yaml"),
  rootPath("policies", "pod-security-restricted.yaml"),
  rootPath("test", "fixtures", "webhook", "bench-policies", "common"),
];
/** Keys of the costly Widget's map: about 90 % of the per-expression cost limit in each validation. */
export const COSTLY_KEYS = 950;

/** A Widget review that the costly policy allows after running all ten validations to the end. */
export function costlyReview(uid = "costly"): Record<string, unknown> {
  const pairs: Record<string, string> = {};
  for (let i = 0; i < COSTLY_KEYS; i++) pairs[`key-${String(i).padStart(4, "0")}`] = `value-${i}`;
  const widget = { group: "example.com", version: "v1", kind: "Widget" };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: widget,
      resource: { group: "example.com", version: "v1", resource: "widgets" },
      name: "w",
      namespace: "default",
      operation: "CREATE",
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      object: {
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "w", namespace: "default" },
        spec: { pairs },
      },
      oldObject: null,
      dryRun: false,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// autocannon has no type declarations; the part of its API used here (as in webhook.ts).

interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number };
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly mismatches: number;
}
interface AutocannonRun extends PromiseLike<AutocannonResult> {
  on(event: "response", listener: (c: unknown, s: number, b: number, ms: number) => void): unknown;
}
const autocannon = createRequire(import.meta.url)("autocannon") as (
  options: Record<string, unknown>,
) => AutocannonRun;

// ---------------------------------------------------------------------------------------------
// The server (child process)

/** The server of one round; connected to the cluster of `kubeconfig` with `connected` served too. */
async function serveChild(
  slowLane: boolean,
  cluster?: { readonly kubeconfig: string; readonly policies: string },
): Promise<void> {
  const started = await startWebhook(
    {
      policies: [...POD_SECURITY, COSTLY_POLICIES, ...(cluster ? [cluster.policies] : [])],
      host: "127.0.0.1",
      port: 0,
      metricsPort: 0,
      logLevel: "info",
      drainMs: 0,
      ...(slowLane ? {} : { slowLane: false }),
      ...(cluster ? { cluster: { kubeconfig: cluster.kubeconfig } } : {}),
    },
    () => {},
  );
  if (!started.ok) throw new Error(started.message);
  if (cluster && !(await started.webhook.cluster?.whenReady(30_000)))
    throw new Error("the cluster's caches did not sync");
  // The lane's worker builds its set after the ports open; measure once it has.
  for (let i = 0; i < 600 && slowLane && !started.webhook.slowLaneReady(); i++)
    await new Promise((r) => setTimeout(r, 50));
  writeSync(READY_FD, `${JSON.stringify({ port: Number(new URL(started.webhook.url).port) })}\n`);
  process.stdin.resume();
  await new Promise<void>((resolve) => process.stdin.on("close", resolve).on("end", resolve));
  await started.webhook.stop();
}

interface Child {
  readonly port: number;
  stop(): Promise<void>;
}

async function startChild(slowLane: boolean, cluster: BenchCluster | undefined): Promise<Child> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeArgsFor(import.meta.url),
      "--serve-child",
      ...(slowLane ? [] : ["--no-slow-lane"]),
      ...(cluster ? ["--kubeconfig", cluster.kubeconfig, "--connected-policies", cluster.policies] : []),
    ],
    { stdio: ["pipe", "ignore", "inherit", "pipe"] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let text = "";
    const fd3 = child.stdio[READY_FD] as NodeJS.ReadableStream;
    fd3.setEncoding("utf8");
    fd3.on("data", (d: string) => {
      text += d;
      const nl = text.indexOf("\n");
      if (nl !== -1) resolve((JSON.parse(text.slice(0, nl)) as { port: number }).port);
    });
    child.on("exit", (code) => reject(new Error(`isolation server exited early (${code})`)));
  });
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.stdin?.end();
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The load (parent)

function post(agent: Agent, port: number, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/validate?timeout=30s",
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: 60_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    r.on("timeout", () => r.destroy(new Error("costly review timed out")));
    r.on("error", reject);
    r.end(body);
  });
}

interface CostlyTally {
  answered: number;
  allowed: number;
}

/** One connection sending the costly review back to back until `stop` says so. */
async function costlyLoop(port: number, stop: { done: boolean }, tally: CostlyTally): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  const body = JSON.stringify(costlyReview());
  try {
    while (!stop.done) {
      const res = await post(agent, port, body);
      tally.answered++;
      if (res.status === 200 && /"allowed":true/.test(res.body)) tally.allowed++;
    }
  } finally {
    agent.destroy();
  }
}

export interface IsolationSample {
  readonly rps: number;
  readonly p99: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}

async function others(
  port: number,
  connections: number,
  seconds: number,
  expect: string,
): Promise<IsolationSample> {
  const latencies: number[] = [];
  const run = autocannon({
    url: `https://127.0.0.1:${port}/validate`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(podReview()),
    connections,
    duration: seconds,
    expectBody: expect,
    timeout: 10,
  });
  run.on("response", (_c, _s, _b, ms) => {
    latencies.push(ms);
  });
  const r = await run;
  const problems = r.errors + r.timeouts + r.non2xx + r.mismatches;
  if (problems > 0 || r.requests.total === 0)
    throw new Error(`ordinary reviews failed: ${JSON.stringify({ ...r.requests, problems })}`);
  latencies.sort((a, b) => a - b);
  return { rps: r.requests.average, p99: percentile(latencies, 0.99) };
}

export interface IsolationRound {
  readonly lane: boolean;
  readonly connected: boolean;
  readonly quiet: IsolationSample;
  readonly loaded: IsolationSample;
  readonly costly: CostlyTally;
}

async function round(
  lane: boolean,
  cluster: BenchCluster | undefined,
  connections: number,
  seconds: number,
): Promise<IsolationRound> {
  const child = await startChild(lane, cluster);
  try {
    const expectAgent = new Agent({ keepAlive: false, rejectUnauthorized: false });
    const expect = (await post(expectAgent, child.port, JSON.stringify(podReview()))).body;
    const costlyCheck = await post(expectAgent, child.port, JSON.stringify(costlyReview()));
    if (!/"allowed":true/.test(costlyCheck.body))
      throw new Error(`the costly review is not allowed: ${costlyCheck.body.slice(0, 300)}`);
    // Warm up the ordinary path, then quiet and loaded back to back.
    await others(child.port, connections, 1, expect);
    const quiet = await others(child.port, connections, seconds, expect);
    const stop = { done: false };
    const tally: CostlyTally = { answered: 0, allowed: 0 };
    const loop = costlyLoop(child.port, stop, tally);
    // Awaited below; until then its failure is held, not an unhandled rejection that ends the bench.
    const costly = loop.then(
      () => undefined,
      (e: unknown) => e,
    );
    let loaded: IsolationSample;
    try {
      loaded = await others(child.port, connections, seconds, expect);
    } finally {
      stop.done = true;
    }
    const failed = await costly;
    if (failed !== undefined) throw failed;
    return { lane, connected: cluster !== undefined, quiet, loaded, costly: tally };
  } finally {
    await child.stop();
  }
}

export interface IsolationReport {
  readonly seconds: number;
  readonly connections: number;
  readonly rounds: readonly IsolationRound[];
}

export type IsolationMode = "files" | "connected";

export async function runIsolationBench(options: {
  readonly seconds: number;
  readonly rounds: number;
  readonly connections: number;
  readonly modes: readonly IsolationMode[];
}): Promise<IsolationReport> {
  const rounds: IsolationRound[] = [];
  const cluster = options.modes.includes("connected") ? await startBenchCluster() : undefined;
  try {
    for (let i = 0; i < options.rounds; i++)
      for (const mode of options.modes)
        for (const lane of [true, false])
          rounds.push(
            await round(
              lane,
              mode === "connected" ? cluster : undefined,
              options.connections,
              options.seconds,
            ),
          );
  } finally {
    await cluster?.stop();
  }
  return { seconds: options.seconds, connections: options.connections, rounds };
}

function medians(r: IsolationReport, lane: boolean, connected: boolean) {
  const rs = r.rounds.filter((x) => x.lane === lane && x.connected === connected);
  return {
    throughput: median(rs.map((x) => x.loaded.rps / x.quiet.rps)),
    p99: median(rs.map((x) => x.loaded.p99 / x.quiet.p99)),
    quietRps: median(rs.map((x) => x.quiet.rps)),
    loadedRps: median(rs.map((x) => x.loaded.rps)),
    quietP99: median(rs.map((x) => x.quiet.p99)),
    loadedP99: median(rs.map((x) => x.loaded.p99)),
    costly: median(rs.map((x) => x.costly.answered)),
  };
}

export function formatIsolationReport(r: IsolationReport): string {
  // Each round serves files-only and connected (as asked), each with and without the lane.
  const rowsPerRound = new Set(r.rounds.map((x) => x.connected)).size * 2;
  const rows = r.rounds.map((x, i) => [
    String(Math.floor(i / rowsPerRound) + 1),
    `${x.connected ? "connected, " : ""}${x.lane ? "slow lane" : "main thread only"}`,
    fmtInt(x.quiet.rps),
    fmtInt(x.loaded.rps),
    `${(x.loaded.rps / x.quiet.rps).toFixed(2)}×`,
    fmtMs(x.quiet.p99),
    fmtMs(x.loaded.p99),
    `${(x.loaded.p99 / x.quiet.p99).toFixed(1)}×`,
    `${x.costly.answered} (${x.costly.allowed} allowed)`,
  ]);
  return [
    `== Isolation: ${r.connections} connections of ordinary reviews, alone and beside one connection of costly ones; ${r.seconds} s runs; connected: serve reads a cluster (the test API server) ==`,
    table(
      [
        "round",
        "server",
        "quiet req/s",
        "loaded req/s",
        "kept",
        "quiet p99",
        "loaded p99",
        "p99 ×",
        "costly answered",
      ],
      rows,
      2,
    ),
  ].join("\n");
}

export function isolationSummary(r: IsolationReport): SummaryRow[] {
  const out: SummaryRow[] = [];
  for (const connected of [false, true]) {
    if (!r.rounds.some((x) => x.connected === connected)) continue;
    out.push(...summaryRows(r, connected));
  }
  return out;
}

function summaryRows(r: IsolationReport, connected: boolean): SummaryRow[] {
  const out: SummaryRow[] = [];
  const target = connected ? "36.2" : "28.5";
  for (const lane of [true, false]) {
    const m = medians(r, lane, connected);
    const what = `${connected ? ", connected" : ""}${lane ? "" : " (every review on the main thread, reference)"}`;
    out.push({
      target,
      figure: `others' throughput beside a costly connection${what}`,
      value: `${fmtInt(m.loadedRps)} req/s`,
      baseline: `${fmtInt(m.quietRps)} req/s quiet`,
      ratio: m.throughput,
      goal: lane ? "≥ 0.5×" : "reference",
      met: lane ? m.throughput >= 0.5 : undefined,
    });
    out.push({
      target,
      figure: `others' p99 beside a costly connection${what}`,
      value: fmtMs(m.loadedP99),
      baseline: `${fmtMs(m.quietP99)} quiet`,
      ratio: m.p99,
      goal: lane ? "< 10×" : "reference",
      met: lane ? m.p99 < 10 : undefined,
    });
  }
  return out;
}

export function isolationOptionsFromArgs(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      duration: { type: "string", default: "5" },
      rounds: { type: "string", default: "3" },
      connections: { type: "string", default: "10" },
      modes: { type: "string", default: "files,connected" },
    },
    strict: false,
  });
  const n = (v: unknown, name: string): number => {
    const x = Number(v);
    if (!Number.isFinite(x) || x <= 0) throw new Error(`--${name} must be a positive number`);
    return x;
  };
  const modes = String(values.modes)
    .split(",")
    .map((m) => m.trim());
  for (const m of modes)
    if (m !== "files" && m !== "connected") throw new Error(`--modes: '${m}' is not files or connected`);
  return {
    seconds: n(values.duration, "duration"),
    rounds: Math.floor(n(values.rounds, "rounds")),
    connections: Math.floor(n(values.connections, "connections")),
    modes: modes as IsolationMode[],
  };
}

export async function isolationPart(argv: readonly string[]): Promise<PartReport> {
  try {
    const r = await runIsolationBench(isolationOptionsFromArgs(argv));
    console.log(formatIsolationReport(r));
    return { part: "isolation", rows: isolationSummary(r), gateFailures: [] };
  } catch (e) {
    return { part: "isolation", rows: [], gateFailures: [`isolation: ${(e as Error).message}`] };
  }
}

if (isMain(import.meta.url)) {
  if (process.argv.includes("--serve-child")) {
    // The server of one round (see startChild).
    const flag = (name: string) => {
      const i = process.argv.indexOf(name);
      return i === -1 ? undefined : process.argv[i + 1];
    };
    const kubeconfig = flag("--kubeconfig");
    const policies = flag("--connected-policies");
    const cluster = kubeconfig && policies ? { kubeconfig, policies } : undefined;
    serveChild(!process.argv.includes("--no-slow-lane"), cluster).catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  } else {
    isolationPart(process.argv.slice(2)).then(
      (r) => {
        for (const row of r.rows)
          console.log(`${row.figure}: ${row.value} vs ${row.baseline} = ${row.ratio?.toFixed(2)}×`);
        process.exitCode = r.gateFailures.length > 0 ? 1 : 0;
        if (r.gateFailures.length > 0) console.error(r.gateFailures.join("\n"));
      },
      (e: unknown) => {
        console.error(e);
        process.exitCode = 2;
      },
    );
  }
}
