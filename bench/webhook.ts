/**
 * The webhook under HTTP load: autocannon against (a) a bare fastify HTTPS handler that answers an
 * allowed AdmissionReview for the same body — the floor set by TLS, HTTP and JSON; (b) the same
 * handler running the 20 rules of bench/rules.ts as hand-written JavaScript — the ceiling for any
 * engine; and the real `startWebhook`, on /validate and /mutate, serving (c) the project's Pod
 * Security policies (19 validations over 36 variables) and (d) the 20 rules as one
 * ValidatingAdmissionPolicy, each with the common Namespace and one mutation. The review is a
 * realistic ~4.5 KB Pod. Targets and connection counts are interleaved round by round so drift
 * (thermal, other load) spreads over all of them; medians are reported.
 *
 * A reference too: (f) the bare handler answering once its event-loop turn's I/O is done, as
 * celgate's server reviews (src/adapters/server/batch.ts): how much of celgate's throughput comes
 * from that deferral alone, which speeds the TLS and HTTP work of any server, engine or none.
 *
 * Target 5 is measured here too, in the served process: (e) the pod-security set once more, built
 * with the same `buildServer` and the same compiled programs, with metrics and the request log off
 * (and a slow lane, as `serve` has, so both give each review its time slice).
 * (c) against (e) on /validate is what metrics and logging add to a served request's CPU, taken from
 * pairs of short runs of the two back to back (in alternating order) after the main rounds: the 5 s
 * runs of the rounds, a target apart, moved by more than the few microseconds they measure (2.5 to
 * 6.4% of a request in single benchmark runs). bench/overhead.ts measures the same difference on the
 * route alone, in-process, without TLS or HTTP.
 *
 * The servers run in a child process (this file with --serve-child) so the load generator and the
 * server do not share one event loop. Every run must have zero errors, timeouts, non-2xx answers
 * and body mismatches (each reply is compared with the one checked before timing); otherwise the
 * benchmark fails. The server logs each review at info level as `serve` does; its stdout is /dev/null
 * and its ready line comes on fd 3.
 *
 *   node dist-bench/bench/webhook.js [--duration 5] [--rounds 3] [--connections 10,50] [--warmup 1]
 *       [--own-policies] [--log-level info|off]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request as httpsRequest } from "node:https";
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import Fastify from "fastify";
import { type RunningWebhook, startWebhook } from "../src/adapters/server/app.ts";
import { isLogLevel, LOG_LEVELS, type LogLevel } from "../src/adapters/server/review-log.ts";
import { generateSelfSignedCertificate } from "../src/adapters/server/tls.ts";
import { serveAdmitter } from "../src/adapters/server/admitter.ts";
import { buildServer } from "../src/adapters/server/server.ts";
import { SlowLane } from "../src/adapters/server/slow-lane.ts";
import { loadSnapshot } from "../src/sources/store.ts";
import {
  configureAsServed,
  fmtInt,
  fmtMs,
  fmtUs,
  isMain,
  median,
  medianRatio,
  nodeArgsFor,
  type PartReport,
  ROOT,
  rootPath,
  type SummaryRow,
} from "./common.ts";
import type { Pod } from "./corpus.ts";
import { NOOP_METRICS } from "./overhead.ts";
import { rulesPolicyYaml } from "./request.ts";
import { podReview } from "./review.ts";
import { RULES } from "./rules.ts";

export { podReview } from "./review.ts";

const READY_FD = 3;
const FIXTURES = rootPath("test", "fixtures", "webhook", "bench-policies");
const PROJECT_POD_SECURITY = ["pod-security-baseline.yaml", "pod-security-restricted.yaml"].map((f) =>
  rootPath("policies", f),
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

/** A run: awaitable for its result, and an emitter of each response as it comes. */
interface AutocannonRun extends PromiseLike<AutocannonResult> {
  on(
    event: "response",
    listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void,
  ): unknown;
}

type Autocannon = (options: Record<string, unknown>) => AutocannonRun;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

// ---------------------------------------------------------------------------------------------
// The servers (child process)

/** One celgate server in the child, serving one policy set. */
interface ServedSet {
  /** Short name in target names: "pod-security" or "20 rules". */
  readonly label: string;
  readonly port: number;
  readonly metrics: number;
  readonly policies: readonly string[];
  readonly loaded: number;
}

interface ChildReady {
  readonly bare: number;
  /** The bare handler with its answers deferred to the end of the event-loop turn, as celgate's. */
  readonly bareDeferred: number;
  /** fastify running the 20 rules as hand-written JavaScript: the floor for any engine. */
  readonly jsRules: number;
  readonly sets: readonly ServedSet[];
  /** The pod-security set again, through the same server code, with metrics and logging off. */
  readonly quiet: number;
}

function policyPaths(own: boolean): string[] {
  const common = `${FIXTURES}/common`;
  if (!own && PROJECT_POD_SECURITY.every((f) => existsSync(f))) return [...PROJECT_POD_SECURITY, common];
  return [`${FIXTURES}/pod-security`, common];
}

async function serveChild(own: boolean, logLevel: LogLevel | false): Promise<void> {
  const pair = generateSelfSignedCertificate({ hosts: ["localhost", "127.0.0.1"], days: 1 });
  // As celgate's server is set up where it matters for the comparison: TLS, HTTP/1.1, keep-alive, body limit.
  const tlsFastify = () =>
    Fastify({
      https: { cert: pair.cert, key: pair.key, ALPNProtocols: ["http/1.1"] },
      logger: false,
      keepAliveTimeout: 100_000,
      bodyLimit: 7 * 1024 * 1024,
    });
  const bare = tlsFastify();
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

  // The same answer, given once the turn's I/O is done, as celgate's batcher gives its reviews.
  const bareDeferred = tlsFastify();
  let waiting: (() => void)[] = [];
  const answerWaiting = () => {
    const now = waiting;
    waiting = [];
    for (const answer of now) answer();
  };
  bareDeferred.post("/validate", async (request) => {
    const body = request.body as { apiVersion?: string; request?: { uid?: string } };
    await new Promise<void>((resolve) => {
      if (waiting.length === 0) setImmediate(answerWaiting);
      waiting.push(resolve);
    });
    return {
      apiVersion: body.apiVersion,
      kind: "AdmissionReview",
      response: { uid: body.request?.uid, allowed: true },
    };
  });
  await bareDeferred.listen({ host: "127.0.0.1", port: 0 });

  // The same server plus the 20 rules written by hand: what the checks cost without any engine.
  const jsRules = tlsFastify();
  jsRules.post("/validate", async (request) => {
    const body = request.body as { apiVersion?: string; request?: { uid?: string; object?: unknown } };
    const pod = body.request?.object as Pod;
    return {
      apiVersion: body.apiVersion,
      kind: "AdmissionReview",
      response: { uid: body.request?.uid, allowed: RULES.every((r) => r.js(pod)) },
    };
  });
  await jsRules.listen({ host: "127.0.0.1", port: 0 });

  // The issue's own set: the 20 rules as one ValidatingAdmissionPolicy, plus the common Namespace
  // and mutation. Written to a temp directory the child removes when it goes.
  const rulesDir = mkdtempSync(join(tmpdir(), "celgate-bench-webhook-"));
  writeFileSync(join(rulesDir, "bench-rules.yaml"), rulesPolicyYaml());
  const logs: string[] = [];
  const webhooks: RunningWebhook[] = [];
  const sets: ServedSet[] = [];
  for (const [label, policies] of [
    ["pod-security", policyPaths(own)],
    ["20 rules", [rulesDir, `${FIXTURES}/common`]],
  ] as const) {
    const started = await startWebhook(
      { policies: [...policies], host: "127.0.0.1", port: 0, metricsPort: 0, logLevel, drainMs: 0 },
      (line) => logs.push(line),
    );
    if (!started.ok) throw new Error(`startWebhook (${label}): ${started.message}`);
    const { webhook } = started;
    webhooks.push(webhook);
    sets.push({
      label,
      port: Number(new URL(webhook.url).port),
      metrics: Number(new URL(webhook.metricsUrl).port),
      policies,
      loaded: webhook.store.current().set.policies.length,
    });
  }
  // Target 5 where it counts, in the served process: the pod-security set once more, through
  // buildServer with the same compiled programs (the compile cache hands them over), metrics and the
  // request log off, and a slow lane as serve has one (so each review gets its slice, as there).
  // Its CPU per request against the set's own, run by run, is their share.
  const quietPaths = policyPaths(own);
  const quietSnapshot = await loadSnapshot(quietPaths);
  if (!quietSnapshot.ok) throw new Error("the pod-security set does not load");
  const quietLane = new SlowLane({ compile: {} });
  quietLane.load(1, { paths: quietPaths, fingerprint: quietSnapshot.snapshot.fingerprint });
  quietLane.start();
  const quietAdmitter = serveAdmitter(quietSnapshot.snapshot.set, 1);
  for (let i = 0; i < 600 && !quietLane.accepts(1); i++) await new Promise((r) => setTimeout(r, 50));
  const quiet = await buildServer({
    admitter: () => quietAdmitter,
    tls: pair,
    logger: false,
    metrics: NOOP_METRICS,
    readiness: () => true,
    drainMs: 0,
    slowLane: quietLane,
  });
  const quietAddress = await quiet.start({ host: "127.0.0.1", port: 0 });
  if (!quietAddress.ok) throw new Error(quietAddress.error);
  const ready: ChildReady = {
    bare: barePort,
    bareDeferred: (bareDeferred.server.address() as { port: number }).port,
    jsRules: (jsRules.server.address() as { port: number }).port,
    sets,
    quiet: Number(new URL(quietAddress.value.url).port),
  };
  // stdout carries the request logs (to /dev/null); the parent reads the ready line on fd 3.
  writeSync(READY_FD, `${JSON.stringify(ready)}\n`);
  // Each line "cpu" on stdin is answered on fd 3 with the CPU this process has used so far.
  let pending = "";
  process.stdin.setEncoding("utf8").on("data", (d: string) => {
    pending += d;
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const command = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (command === "cpu") {
        const used = process.cpuUsage();
        writeSync(READY_FD, `${JSON.stringify({ cpuUs: used.user + used.system })}\n`);
      }
    }
  });
  // The parent closes our stdin when it is done (or dies): then we go too.
  process.stdin.resume();
  await new Promise<void>((resolve) => process.stdin.on("close", resolve).on("end", resolve));
  for (const w of webhooks) await w.stop();
  await quiet.close();
  await quietLane.close();
  await bare.close();
  await bareDeferred.close();
  await jsRules.close();
  rmSync(rulesDir, { recursive: true, force: true });
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
async function expectedBodies(ready: ChildReady, body: string): Promise<Targets> {
  const targets: Target[] = [];
  const check = async (name: string, port: number, path: string, patch: boolean): Promise<void> => {
    const res = await post(port, path, body);
    if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status}: ${res.body}`);
    const response = (JSON.parse(res.body) as { response?: { allowed?: boolean; patch?: string } }).response;
    if (response?.allowed !== true) throw new Error(`${name}: the benchmark Pod is not allowed: ${res.body}`);
    if (patch && response.patch === undefined) throw new Error(`${name}: no patch: ${res.body}`);
    targets.push({ name, port, path, expect: res.body });
  };
  await check(BARE, ready.bare, "/validate", false);
  await check(BARE_DEFERRED, ready.bareDeferred, "/validate", false);
  await check(JS_RULES, ready.jsRules, "/validate", false);
  for (const set of ready.sets) {
    await check(`${set.label} /validate`, set.port, "/validate", false);
    await check(`${set.label} /mutate`, set.port, "/mutate", true);
    await everyPolicyPassed(set);
  }
  await check(QUIET, ready.quiet, "/validate", false);
  const quiet = targets.pop() as Target;
  const at = targets.findIndex((t) => t.name === LOUD);
  if (targets[at]?.expect !== quiet.expect)
    throw new Error(`${QUIET}: answers differently from ${LOUD}: ${quiet.expect}`);
  // Right after the server it is compared with, so the two runs of a pair are minutes closer.
  targets.splice(at + 1, 0, quiet);
  return targets;
}

type Targets = readonly Target[];

/** Every validating policy must have run and passed, not been skipped by a selector or failed. */
async function everyPolicyPassed(set: ServedSet): Promise<void> {
  const metrics = await getMetrics(set.metrics);
  const outcomes = new Map<string, Set<string>>();
  for (const m of metrics.matchAll(/^celgate_policy_evaluations_total\{([^}]*)\} (\S+)$/gm)) {
    const policy = /policy="([^"]*)"/.exec(m[1] ?? "")?.[1] ?? "";
    const outcome = /outcome="([^"]*)"/.exec(m[1] ?? "")?.[1] ?? "";
    if (Number(m[2]) > 0) outcomes.set(policy, (outcomes.get(policy) ?? new Set()).add(outcome));
  }
  const notPassed = [...outcomes].filter(([, o]) => o.size !== 1 || !o.has("pass"));
  if (outcomes.size < set.loaded || notPassed.length > 0) {
    throw new Error(
      `${set.label}: expected all ${set.loaded} policies to pass, got ${JSON.stringify([...outcomes].map(([p, o]) => [p, [...o]]))}`,
    );
  }
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
  /** The server process's CPU (user + system, all threads) per answered request, in µs. */
  readonly cpuUs: number;
}

/** The nearest-rank percentile of ascending values. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}

async function fire(
  server: ServerChild,
  target: Target,
  body: string,
  connections: number,
  seconds: number,
): Promise<Sample> {
  const cpuBefore = await server.cpuUs();
  // autocannon's own percentiles are whole milliseconds (its histogram records integers), which
  // at 10 connections makes every p99 ratio 1, 1.5 or 2; each response's time is kept instead.
  const latencies: number[] = [];
  const run = autocannon({
    url: `https://127.0.0.1:${target.port}${target.path}`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    connections,
    duration: seconds,
    expectBody: target.expect,
    timeout: 10,
  });
  run.on("response", (_client, _status, _bytes, ms) => {
    latencies.push(ms);
  });
  const r = await run;
  const problems = { errors: r.errors, timeouts: r.timeouts, non2xx: r.non2xx, mismatches: r.mismatches };
  if (Object.values(problems).some((n) => n !== 0) || r.requests.total === 0) {
    throw new Error(
      `${target.name} with ${connections} connections: ${JSON.stringify(problems)}, ${r.requests.total} requests`,
    );
  }
  // autocannon has stopped sending, but answers to its last requests may still be in flight.
  const cpuAfter = await server.cpuUs();
  latencies.sort((a, b) => a - b);
  return {
    rps: r.requests.average,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuUs: (cpuAfter - cpuBefore) / r.requests.total,
  };
}

/** Target 5's pairs of runs, and each run's length. */
const SERVED_PAIRS = 10;
const SERVED_SECONDS = 2;

/**
 * Target 5's runs: `serve`'s server and the quiet one back to back, first one then the other first,
 * as (CPU per request with metrics and logging, without) pairs.
 */
async function servedPairs(
  server: ServerChild,
  targets: Targets,
  body: string,
  connections: number,
): Promise<(readonly [number, number])[]> {
  const loud = targets.find((t) => t.name === LOUD);
  const quiet = targets.find((t) => t.name === QUIET);
  if (loud === undefined || quiet === undefined) throw new Error(`no ${LOUD} or ${QUIET} target`);
  const pairs: (readonly [number, number])[] = [];
  for (let i = 0; i < SERVED_PAIRS; i++) {
    const order = i % 2 === 0 ? [loud, quiet] : [quiet, loud];
    const runs = new Map<Target, Sample>();
    for (const t of order) runs.set(t, await fire(server, t, body, connections, SERVED_SECONDS));
    pairs.push([(runs.get(loud) as Sample).cpuUs, (runs.get(quiet) as Sample).cpuUs]);
  }
  return pairs;
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
  /**
   * The server's pino level; default info, as `serve` runs, so each review writes its log line (the
   * child's stdout is /dev/null). false turns request logging off.
   */
  readonly logLevel?: LogLevel | false;
  readonly log?: (line: string) => void;
}

export interface WebhookBenchRow {
  readonly target: string;
  readonly connections: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Server CPU per request, µs: steadier than req/s, which the load generator shares the cores for. */
  readonly cpuUs: number;
}

/** The server process: its ports, and its CPU so far, read over its stdin and fd 3. */
interface ServerChild {
  readonly child: ChildProcess;
  readonly ready: ChildReady;
  cpuUs(): Promise<number>;
}

function startChild(own: boolean, logLevel: LogLevel | false): Promise<ServerChild> {
  // Built (dist-bench) the child runs plain node, so the server is the code `npm start` runs.
  const args = [
    ...nodeArgsFor(import.meta.url),
    "--serve-child",
    `--log-level=${logLevel === false ? "off" : logLevel}`,
    ...(own ? ["--own-policies"] : []),
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["pipe", "ignore", "pipe", "pipe"] });
  const readyPipe = child.stdio[READY_FD] as NodeJS.ReadableStream;
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  // Lines from fd 3 after the ready line answer "cpu" requests, in order.
  const waiting: ((line: string) => void)[] = [];
  const cpuUs = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the server process did not report its CPU")), 10_000);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { cpuUs: number }).cpuUs);
      });
      child.stdin?.write("cpu\n");
    });
  return new Promise((resolve, reject) => {
    let out = "";
    let started = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the server process did not start:\n${stderr}`));
    }, 60_000);
    readyPipe.setEncoding("utf8");
    readyPipe.on("data", (d: string) => {
      out += d;
      for (let nl = out.indexOf("\n"); nl !== -1; nl = out.indexOf("\n")) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (!started) {
          started = true;
          clearTimeout(timer);
          resolve({ child, ready: JSON.parse(line) as ChildReady, cpuUs });
        } else waiting.shift()?.(line);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the server process exited (${code}):\n${stderr}`));
    });
  });
}

export interface WebhookRatio {
  readonly target: string;
  readonly connections: number;
  /** Medians over rounds of celgate / bare within the round. */
  readonly rps: number;
  readonly p99: number;
  readonly cpuUs: number;
}

/** Target 5 in the served process: what metrics and logging add to a request's CPU. */
export interface ServedOverhead {
  /** Median over pairs of (CPU with both − CPU with neither) / CPU with both, each pair back to back. */
  readonly share: number;
  readonly pairs: number;
  /** Median server CPU per request, µs, with both (as `serve`) and with neither. */
  readonly withUs: number;
  readonly withoutUs: number;
}

export interface WebhookBenchReport {
  /** Why the run failed (startup, a wrong answer, any error or timeout under load); absent when fine. */
  readonly failure?: string;
  readonly rows: readonly WebhookBenchRow[];
  readonly ratios: readonly WebhookRatio[];
  /** celgate's targets against the bare handler with answers deferred (its req/s ratio only). */
  readonly againstDeferred?: readonly WebhookRatio[];
  readonly served?: ServedOverhead;
}

/** Runs the benchmark and prints its table; a failed request or a wrong answer is a `failure`. */
export async function runWebhookBench(options: WebhookBenchOptions = {}): Promise<WebhookBenchReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const duration = options.duration ?? 5;
  const rounds = options.rounds ?? 3;
  const connections = options.connections ?? [10, 50];
  const warmup = options.warmup ?? 1;
  const logLevel = options.logLevel ?? "info";
  const body = JSON.stringify(podReview());

  let started: ServerChild;
  try {
    started = await startChild(options.ownPolicies ?? false, logLevel);
  } catch (e) {
    const failure = e instanceof Error ? e.message : String(e);
    log(`webhook benchmark FAILED: ${failure}`);
    return { failure, rows: [], ratios: [] };
  }
  const { child, ready } = started;
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  try {
    for (const set of ready.sets)
      log(
        `${set.label}: ${set.policies.map((p) => p.replace(`${ROOT}`, "").replace(tmpdir(), "$TMPDIR")).join(", ")} (${set.loaded} loaded)`,
      );
    log(`server log level ${logLevel === false ? "off" : logLevel}, to /dev/null`);
    log(
      `review body: ${Buffer.byteLength(body)} bytes; ${duration} s per run, ${rounds} rounds, connections ${connections.join(", ")}`,
    );
    const targets = await expectedBodies(ready, body);
    if (warmup > 0) for (const t of targets) await fire(started, t, body, connections[0] ?? 10, warmup);

    const samples = new Map<string, Sample[]>();
    const key = (t: string, c: number) => `${t}\u0000${c}`;
    for (let round = 1; round <= rounds; round++) {
      for (const c of connections) {
        // Rotate the order each round so no target always runs first after a pause.
        const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target);
        for (const t of order) {
          const s = await fire(started, t, body, c, duration);
          samples.set(key(t.name, c), [...(samples.get(key(t.name, c)) ?? []), s]);
        }
      }
      log(`round ${round}/${rounds} done`);
    }

    const rows: WebhookBenchRow[] = [];
    const ratios: WebhookRatio[] = [];
    const againstDeferred: WebhookRatio[] = [];
    for (const c of connections) {
      const bare = samples.get(key(BARE, c)) ?? [];
      const deferred = samples.get(key(BARE_DEFERRED, c)) ?? [];
      for (const t of targets) {
        const s = samples.get(key(t.name, c)) ?? [];
        rows.push({
          target: t.name,
          connections: c,
          rps: median(s.map((x) => x.rps)),
          p50: median(s.map((x) => x.p50)),
          p99: median(s.map((x) => x.p99)),
          cpuUs: median(s.map((x) => x.cpuUs)),
        });
        if (t.name !== BARE) ratios.push(ratioOf(t.name, c, s, bare));
        if (![BARE, BARE_DEFERRED, JS_RULES].includes(t.name))
          againstDeferred.push(ratioOf(t.name, c, s, deferred));
      }
    }
    printTable(rows, ratios, log);
    // With the request log off (--log-level off) the pair would measure metrics alone: no figure.
    if (logLevel === false) return { rows, ratios, againstDeferred };
    const pairs = await servedPairs(started, targets, body, connections[0] ?? 10);
    const served: ServedOverhead = {
      share: median(pairs.map(([l, q]) => (l - q) / l)),
      pairs: pairs.length,
      withUs: median(pairs.map(([l]) => l)),
      withoutUs: median(pairs.map(([, q]) => q)),
    };
    log(
      `metrics + logging in the served process: ${(served.share * 100).toFixed(1)}% of a request's CPU` +
        ` (${LOUD} against ${QUIET}, median of ${served.pairs} pairs of ${SERVED_SECONDS} s runs back to back)`,
    );
    return { rows, ratios, againstDeferred, served };
  } catch (e) {
    const failure = e instanceof Error ? e.message : String(e);
    log(`webhook benchmark FAILED: ${failure}`);
    return { failure, rows: [], ratios: [] };
  } finally {
    child.stdin?.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

/** Medians over rounds of the per-round ratios of `s` to `base`. */
function ratioOf(
  target: string,
  connections: number,
  s: readonly Sample[],
  base: readonly Sample[],
): WebhookRatio {
  return {
    target,
    connections,
    rps: medianRatio(
      s.map((x) => x.rps),
      base.map((x) => x.rps),
    ),
    p99: medianRatio(
      s.map((x) => x.p99),
      base.map((x) => x.p99),
    ),
    cpuUs: medianRatio(
      s.map((x) => x.cpuUs),
      base.map((x) => x.cpuUs),
    ),
  };
}

const BARE = "bare fastify";
const BARE_DEFERRED = "bare, answers deferred";
const JS_RULES = "fastify + JS rules";
/** As `serve` runs: metrics and the info request log on. */
const LOUD = "pod-security /validate";
const QUIET = "pod-security, no metrics/log";

function printTable(
  rows: readonly WebhookBenchRow[],
  ratios: readonly WebhookRatio[],
  log: (line: string) => void,
): void {
  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (n: number, digits = 0) => n.toFixed(digits).padStart(9);
  log("");
  log(
    `${pad("target", 30)}${pad("conns", 6)}${"req/s".padStart(9)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"CPU µs".padStart(9)}`,
  );
  for (const r of rows)
    log(
      `${pad(r.target, 30)}${pad(String(r.connections), 6)}${num(r.rps)}${num(r.p50, 2)}${num(r.p99, 2)}${num(r.cpuUs)}`,
    );
  log("(CPU µs: the server process's CPU, all threads, per answered request)");
  log("");
  log(
    "ratios, celgate / bare, medians of per-round ratios (req/s: lower is slower; p99 and CPU: higher is slower)",
  );
  for (const r of ratios)
    log(
      `${pad(r.target, 30)}${pad(String(r.connections), 6)}${num(r.rps, 2)}${"".padStart(9)}${num(r.p99, 2)}${num(r.cpuUs, 2)}`,
    );
}

export function webhookSummary(r: WebhookBenchReport): SummaryRow[] {
  const out: SummaryRow[] = [];
  for (const ratio of r.ratios) {
    const row = r.rows.find((x) => x.target === ratio.target && x.connections === ratio.connections);
    const bare = r.rows.find((x) => x.target === BARE && x.connections === ratio.connections);
    if (!row || !bare) continue;
    const what = `${ratio.target}, ${ratio.connections} conns`;
    // Neither is an engine: the hand-written rules are the ceiling any engine could reach, and the
    // deferred bare handler shows what deferring answers alone does for TLS and HTTP.
    const floor = ratio.target === JS_RULES || ratio.target === BARE_DEFERRED;
    out.push({
      target: "4",
      figure: `throughput ${what}`,
      value: `${fmtInt(row.rps)} req/s`,
      baseline: `${fmtInt(bare.rps)} req/s bare`,
      ratio: ratio.rps,
      goal: floor || ratio.target === QUIET ? "reference" : "≥ 0.85×",
      met: floor || ratio.target === QUIET ? undefined : ratio.rps >= 0.85,
    });
    // Reference: where the throughput goes, with the load generator's share of the cores left out.
    // At 0.85× throughput a server answering alone would use at most 1/0.85 ≈ 1.18× bare's CPU.
    if (ratio.connections === r.rows[0]?.connections)
      out.push({
        target: "4",
        figure: `server CPU per request ${what}`,
        value: `${row.cpuUs.toFixed(0)} µs`,
        baseline: `${bare.cpuUs.toFixed(0)} µs bare`,
        ratio: ratio.cpuUs,
        goal: "reference",
        met: undefined,
      });
    if (floor || ratio.target === QUIET) continue;
    const deferred = r.rows.find((x) => x.target === BARE_DEFERRED && x.connections === ratio.connections);
    const againstDeferred = r.againstDeferred?.find(
      (x) => x.target === ratio.target && x.connections === ratio.connections,
    );
    if (deferred && againstDeferred)
      out.push({
        target: "4",
        figure: `throughput ${what}, against bare with answers deferred`,
        value: `${fmtInt(row.rps)} req/s`,
        baseline: `${fmtInt(deferred.rps)} req/s deferred`,
        ratio: againstDeferred.rps,
        goal: "reference",
        met: undefined,
      });
    out.push({
      target: "4",
      figure: `p99 latency ${what}`,
      value: fmtMs(row.p99),
      baseline: `${fmtMs(bare.p99)} bare`,
      ratio: ratio.p99,
      goal: "≤ 1.25×",
      met: ratio.p99 <= 1.25,
    });
  }
  if (r.served)
    out.push({
      target: "5",
      figure: "metrics + logging share of a served request's CPU",
      value: `${(r.served.share * 100).toFixed(1)}% (${fmtUs(r.served.share * r.served.withUs * 1000)})`,
      baseline: `${r.served.withUs.toFixed(0)} µs request (${r.served.withoutUs.toFixed(0)} µs without)`,
      ratio: r.served.share,
      goal: "≤ 0.05×",
      met: r.served.share <= 0.05,
    });
  return out;
}

export function webhookOptionsFromArgs(argv: readonly string[]): WebhookBenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      duration: { type: "string", default: "5" },
      rounds: { type: "string", default: "3" },
      connections: { type: "string", default: "10,50" },
      warmup: { type: "string", default: "1" },
      "own-policies": { type: "boolean", default: false },
      "log-level": { type: "string", default: "info" },
    },
    strict: false,
  });
  const num = (v: unknown, name: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new Error(`--${name} must be a positive number, got ${String(v)}`);
    return n;
  };
  const level = logLevelOption(String(values["log-level"]));
  return {
    duration: num(values.duration, "duration"),
    rounds: Math.max(1, Math.floor(num(values.rounds, "rounds"))),
    connections: String(values.connections)
      .split(",")
      .map((c) => Math.floor(num(c, "connections"))),
    warmup: Number(values.warmup) >= 0 ? Number(values.warmup) : 1,
    ownPolicies: values["own-policies"] === true,
    logLevel: level,
  };
}

/** `off`, or one of serve's levels. */
function logLevelOption(text: string): LogLevel | false {
  if (text === "off") return false;
  if (!isLogLevel(text))
    throw new Error(`--log-level must be off or one of ${LOG_LEVELS.join(", ")}, got ${text}`);
  return text;
}

export async function webhookPart(argv: readonly string[]): Promise<PartReport> {
  const r = await runWebhookBench(webhookOptionsFromArgs(argv));
  return {
    part: "webhook",
    rows: webhookSummary(r),
    gateFailures: r.failure === undefined ? [] : [`webhook: ${r.failure}`],
  };
}

/** Runs the benchmark; resolves to the exit code (1 on any failed request or wrong answer). */
export async function main(argv: readonly string[]): Promise<number> {
  const r = await webhookPart(argv);
  return r.gateFailures.length > 0 ? 1 : 0;
}

if (isMain(import.meta.url)) {
  configureAsServed();
  if (process.argv.includes("--serve-child")) {
    const level = logLevelOption(
      process.argv.find((a) => a.startsWith("--log-level="))?.slice("--log-level=".length) ?? "info",
    );
    serveChild(process.argv.includes("--own-policies"), level).catch((e: unknown) => {
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
