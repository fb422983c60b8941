/**
 * Issue 7, target 5: the share of a request's CPU that metrics and logging take. Four webhook servers
 * are built in-process with the real `buildServer` over the same admitter (the webhook benchmark's
 * policy set): with neither, with metrics only (createWebhookMetrics on a fresh prom-client Registry),
 * with info logging only (pino through fastify, into the batched sink `serve` writes stdout through,
 * here opened on /dev/null), and with both, as `serve` runs. Each is driven with fastify's `inject()`
 * — the whole route (content-type check, JSON body parsing, decode, review, encode, reply
 * serialisation) without sockets or TLS — alternating POST /validate and /mutate, one request at a
 * time, so wall time per request is one thread's CPU. The four take turns every 10 requests. Share = (both − neither) / both, per round, median over rounds.
 *
 * Without TLS and HTTP parsing in the denominator the share comes out higher than over a real socket,
 * so a figure within the goal here is within it in production too.
 *
 *   node dist-bench/bench/overhead.js [--rounds 21] [--requests 1000]
 */
import { Registry } from "prom-client";
import { BatchedLogSink } from "../src/adapters/server/log-sink.ts";
import { createWebhookMetrics, type WebhookMetrics } from "../src/adapters/server/metrics.ts";
import { buildServer, type WebhookServer } from "../src/adapters/server/server.ts";
import { generateSelfSignedCertificate } from "../src/adapters/server/tls.ts";
import {
  fmtUs,
  GateError,
  runPart,
  runPartAlone,
  intOption,
  isMain,
  median,
  nowNs,
  type PartReport,
  type SummaryRow,
  table,
} from "./common.ts";
import { loadSet, podSecurityPaths } from "./request.ts";
import { podReview } from "./review.ts";

export interface OverheadBenchOptions {
  readonly rounds: number;
  readonly warmupRounds: number;
  /** Requests per server per round. */
  readonly requests: number;
}

/**
 * 21 rounds: the share is a difference of a few percent between servers each ±3% from round to round;
 * with 9, two runs on a quiet machine came out 3.6% and 6.2%.
 */
export const DEFAULT_OVERHEAD_BENCH: OverheadBenchOptions = { rounds: 21, warmupRounds: 2, requests: 1000 };

/** Metrics that record nothing: a server built with these and `logger: false` has neither. */
export const NOOP_METRICS: WebhookMetrics = {
  registry: new Registry(),
  recordReview: () => undefined,
  recordPolicyResults: () => undefined,
  recordReload: () => undefined,
  recordSetTooLarge: () => undefined,
  setMemoryBudget: () => undefined,
  setCompileErrors: () => undefined,
  setPoliciesLoaded: () => undefined,
  setCertificateExpiry: () => undefined,
  recordHandshakeFailure: () => undefined,
  recordShed: () => undefined,
  observeConnections: () => undefined,
  recordOffload: () => undefined,
};

/** Requests in a row on one server before the next takes its turn (even: /validate and /mutate alike). */
const BATCH = 10;

type Variant = "neither" | "metrics" | "logging" | "both";
const VARIANTS: readonly Variant[] = ["neither", "metrics", "logging", "both"];

interface Built {
  readonly variant: Variant;
  readonly server: WebhookServer;
  readonly sink: BatchedLogSink | undefined;
  readonly metrics: WebhookMetrics;
}

export interface OverheadBenchReport {
  readonly options: OverheadBenchOptions;
  /** Median ns per request, by variant. */
  readonly ns: Readonly<Record<Variant, number>>;
  /** Medians over rounds of (variant − neither) / both. */
  readonly share: Readonly<Record<Exclude<Variant, "neither">, number>>;
}

async function inject(b: Built, path: string, body: string): Promise<{ status: number; body: string }> {
  const res = await b.server.app.inject({
    method: "POST",
    url: path,
    headers: { "content-type": "application/json" },
    payload: body,
  });
  return { status: res.statusCode, body: res.body };
}

export async function runOverheadBench(
  options: Partial<OverheadBenchOptions> = {},
): Promise<OverheadBenchReport> {
  const opts = { ...DEFAULT_OVERHEAD_BENCH, ...options };
  const loaded = await loadSet("pod-security + common", podSecurityPaths());
  const tls = generateSelfSignedCertificate({ hosts: ["127.0.0.1"], days: 1 });
  const built: Built[] = [];
  try {
    for (const variant of VARIANTS) {
      const withMetrics = variant === "metrics" || variant === "both";
      const sink =
        variant === "logging" || variant === "both" ? new BatchedLogSink({ dest: "/dev/null" }) : undefined;
      const metrics = withMetrics ? createWebhookMetrics(new Registry()) : NOOP_METRICS;
      const server = await buildServer({
        admitter: () => loaded.admitter,
        tls,
        logger: sink ? { level: "info", stream: sink } : false,
        metrics,
        readiness: () => true,
        drainMs: 0,
      });
      built.push({ variant, server, sink, metrics });
    }

    const body = JSON.stringify(podReview());
    const paths = ["/validate", "/mutate"];
    // Gate: every server answers both paths alike, allowed, and the logging ones do log.
    for (const path of paths) {
      const answers = await Promise.all(built.map((b) => inject(b, path, body)));
      for (const [i, a] of answers.entries()) {
        const allowed = (JSON.parse(a.body) as { response?: { allowed?: boolean } }).response?.allowed;
        if (a.status !== 200 || allowed !== true)
          throw new GateError(`${built[i]?.variant} ${path}: HTTP ${a.status}: ${a.body.slice(0, 300)}`);
        if (a.body !== answers[0]?.body)
          throw new GateError(`${built[i]?.variant} ${path}: a different answer`);
      }
    }
    for (const b of built) {
      if (b.sink !== undefined && b.sink.lines < paths.length)
        throw new GateError(`${b.variant}: logging is on but nothing was logged`);
      if (b.metrics !== NOOP_METRICS) {
        const text = await b.metrics.registry.metrics();
        if (!/^celgate_admission_requests_total\{[^}]*\} [1-9]/m.test(text))
          throw new GateError(`${b.variant}: metrics are on but no review was counted`);
      }
    }

    // The servers take turns every BATCH requests, in a rotating order, so drift and the garbage one
    // leaves for the next land on all four alike; whole-round turns left ±20% between them.
    const samples: Record<Variant, number[]> = { neither: [], metrics: [], logging: [], both: [] };
    const turns = Math.max(1, Math.round(opts.requests / BATCH));
    for (let round = 0; round < opts.warmupRounds + opts.rounds; round++) {
      const spent: Record<Variant, number> = { neither: 0, metrics: 0, logging: 0, both: 0 };
      let failed = 0;
      for (let turn = 0; turn < turns; turn++) {
        for (let j = 0; j < built.length; j++) {
          const b = built[(j + turn + round) % built.length] as Built;
          const t0 = nowNs();
          for (let i = 0; i < BATCH; i++) {
            const res = await inject(b, paths[i & 1] as string, body);
            if (res.status !== 200) failed++;
          }
          spent[b.variant] += Number(nowNs() - t0);
        }
      }
      if (failed > 0) throw new GateError(`${failed} requests failed`);
      if (round >= opts.warmupRounds) for (const v of VARIANTS) samples[v].push(spent[v] / (turns * BATCH));
    }
    const shareOf = (v: Variant) =>
      median(samples[v].map((x, i) => (x - (samples.neither[i] as number)) / (samples.both[i] as number)));
    return {
      options: opts,
      ns: {
        neither: median(samples.neither),
        metrics: median(samples.metrics),
        logging: median(samples.logging),
        both: median(samples.both),
      },
      share: { metrics: shareOf("metrics"), logging: shareOf("logging"), both: shareOf("both") },
    };
  } finally {
    for (const b of built) {
      await b.server.close();
      b.sink?.close();
    }
  }
}

export function formatOverheadReport(r: OverheadBenchReport): string {
  const o = r.options;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `Metrics and logging overhead: buildServer + inject(), /validate and /mutate alternating, pod-security set;` +
      ` ${o.requests} requests per server per round, medians of ${o.rounds} rounds after ${o.warmupRounds} warm-up`,
    "",
    table(
      ["server", "per request (median)", "share of 'both' (median)"],
      [
        ["no metrics, no logging", fmtUs(r.ns.neither), "-"],
        ["metrics only", fmtUs(r.ns.metrics), pct(r.share.metrics)],
        ["info logging only (to /dev/null)", fmtUs(r.ns.logging), pct(r.share.logging)],
        ["metrics + logging (as serve)", fmtUs(r.ns.both), pct(r.share.both)],
      ],
    ),
  ].join("\n");
}

/**
 * A reference row: target 5 is a share of a served request's CPU, which bench/webhook.ts measures
 * over TLS. Here the denominator is the route alone, without TLS and HTTP.
 */
export function overheadSummary(r: OverheadBenchReport): SummaryRow[] {
  return [
    {
      target: "5",
      figure: "metrics + logging share of the route in-process (inject)",
      value: `${(r.share.both * 100).toFixed(1)}% (${fmtUs(r.share.both * r.ns.both)})`,
      baseline: `${fmtUs(r.ns.both)} route alone`,
      ratio: r.share.both,
      goal: "reference",
      met: undefined,
    },
  ];
}

export async function overheadPart(argv: readonly string[]): Promise<PartReport> {
  return runPart(
    "overhead",
    () =>
      runOverheadBench({
        rounds: intOption(argv, "rounds", DEFAULT_OVERHEAD_BENCH.rounds),
        requests: intOption(argv, "requests", DEFAULT_OVERHEAD_BENCH.requests),
      }),
    formatOverheadReport,
    overheadSummary,
  );
}

if (isMain(import.meta.url)) await runPartAlone(overheadPart);
