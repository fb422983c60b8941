/**
 * The fault trial (`npm run trial`; issue 28's "Must hold"): `celgate serve`, built, as a process of
 * its own, under what a cluster can do to it, printing for each phase the requests, the errors
 * (no answer, or a 5xx), the wrong decisions (an answer that differs from the one the same review
 * got on a quiet server), the p50 and p99 of the answers, and the server's resident memory (at the
 * end of the phase and its peak so far).
 *
 * Phases: load at 50, 200 and 500 connections; policy reloads under load (files rewritten, truncated
 * and rewritten as editors do, added and removed, none of which changes a decision); fuzzed bodies
 * among ordinary ones (anything but a 5xx or a dropped connection is an answer); deeply nested
 * reviews among ordinary ones (lists 40 and 10,000 levels deep, decided as on the quiet server, and
 * one level past the API server's decoder, a 400); costly-but-legal
 * reviews on two connections beside ordinary ones; and SIGTERM under load (a server with a 2 s
 * drain; every client moves on when told `Connection: close`, and none may see an error); a heavy
 * policy set written beside the policies (trial-memory.ts); the server phases of
 * bench/trial-server.ts (an alias bomb on reload, a large set reloaded, slowloris). Connected to a
 * cluster (trial-connected.ts): load, and costly reviews on two connections beside it.
 *
 *   npm run trial                  # about three minutes: 15 s a phase
 *   npm run trial -- --long        # 2 minutes a phase
 *   npm run trial -- --seconds 30  # any length
 *
 * Then a cluster-connected serve (trial-cluster.ts): quiet, a 410 storm, a hung API server and a
 * SubjectAccessReview outage.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isMain, rootPath, table } from "./common.ts";
import { clusterPhases } from "./trial-cluster.ts";
import { costlyReview } from "./isolation.ts";
import { heavyPolicyPhase } from "./trial-memory.ts";
import { badPodReview, podReview } from "./review.ts";
import { DEEP_DEPTHS, deepPodReview } from "./trial-deep.ts";
import { connectedTrial } from "./trial-connected.ts";
import { serverPhases } from "./trial-server.ts";

/** The server, from the same build as this file (dist-bench), or the sources under tsx. */
export function serveCommand(): string[] {
  const built = rootPath("dist-bench", "src", "adapters", "cli", "bin.js");
  if (import.meta.url.endsWith(".js") && existsSync(built)) return [built];
  return ["--import", "tsx", rootPath("src", "adapters", "cli", "bin.ts")];
}

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  readonly dir: string;
  exited: Promise<number | null>;
}

/** A policy directory of its own (the trial rewrites its files): the bundled policies and the costly one. */
function policyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "celgate-trial-"));
  for (const f of readdirSync(rootPath("policies")))
    if (f.endsWith(".yaml") && !f.endsWith(".test.yaml")) copyFileSync(rootPath("policies", f), join(dir, f));
  copyFileSync(rootPath("test", "fixtures", "webhook", "costly", "costly.yaml"), join(dir, "costly.yaml"));
  return dir;
}

async function startServer(drainSeconds: number, extraArgs: readonly string[] = []): Promise<Server> {
  const dir = policyDir();
  const child = spawn(
    process.execPath,
    [
      // As deploy/deployment.yaml runs it.
      "--max-old-space-size=320",
      ...serveCommand(),
      "serve",
      "--policies",
      dir,
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--metrics-port",
      "0",
      "--log-level",
      "warn",
      "--drain-seconds",
      String(drainSeconds),
      ...extraArgs,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /on https:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
      if (m) {
        clearInterval(timer);
        resolve(Number(m[1]));
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`serve exited (${code}):\n${stderr}`));
    });
  });
  // Let the slow lane's worker build its set before the load starts.
  await new Promise((r) => setTimeout(r, 3000));
  return { child, port, dir, exited };
}

/** The server's resident memory now and at its peak, in MB (Linux /proc). */
function rss(pid: number | undefined): { now: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
    return { now: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
  } catch {
    return { now: Number.NaN, peak: Number.NaN };
  }
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly close: boolean;
}

function post(agent: Agent, port: number, body: string, contentType = "application/json"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const r = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/validate?timeout=10s",
        method: "POST",
        agent,
        headers: { "content-type": contentType, "content-length": Buffer.byteLength(body) },
        timeout: 30_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          text += d;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: text, close: res.headers.connection === "close" }),
        );
        res.on("error", reject);
      },
    );
    r.on("timeout", () => r.destroy(new Error("no answer within 30 s")));
    r.on("error", reject);
    r.end(body);
  });
}

/** The decision in an answer: allowed or not, and the message, which a wrong decision changes. */
function decision(a: Answer): string {
  if (a.status !== 200) return `HTTP ${a.status}`;
  const r = (JSON.parse(a.body) as { response: { allowed: boolean; status?: { message?: string } } })
    .response;
  return `${r.allowed} ${r.status?.message ?? ""}`;
}

/** A request of a phase: its body, and the decision it must get (undefined: any answer but a 5xx). */
interface Shot {
  readonly body: string;
  readonly expect: string | undefined;
  readonly contentType?: string;
}

interface Tally {
  requests: number;
  errors: number;
  wrong: number;
  readonly latencies: number[];
  readonly samples: string[];
}

/** `connections` loops sending `next()` back to back until `until`; a loop ends early when told to reconnect, if `stopOnClose`. */
async function load(
  port: number,
  connections: number,
  until: number,
  next: (connection: number) => Shot,
  tally: Tally,
  stopOnClose = false,
): Promise<void> {
  const loop = async (c: number): Promise<void> => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    try {
      while (performance.now() < until) {
        const shot = next(c);
        const started = performance.now();
        tally.requests++;
        let answer: Answer;
        try {
          answer = await post(agent, port, shot.body, shot.contentType);
        } catch (e) {
          tally.errors++;
          if (tally.samples.length < 5) tally.samples.push(`no answer: ${(e as Error).message}`);
          if (stopOnClose) return;
          continue;
        }
        tally.latencies.push(performance.now() - started);
        if (answer.status >= 500) {
          tally.errors++;
          if (tally.samples.length < 5)
            tally.samples.push(`HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
        } else if (shot.expect !== undefined && decision(answer) !== shot.expect) {
          tally.wrong++;
          if (tally.samples.length < 5) tally.samples.push(`wrong: ${decision(answer).slice(0, 200)}`);
        }
        if (stopOnClose && answer.close) return;
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, c) => loop(c)));
}

/** Corruptions of a valid review: each must get an answer (400, 415, 413 or a decision), never a 5xx. */
function fuzz(valid: string, n: number): Shot {
  const at = (n * 7919) % valid.length;
  const cases: (() => Shot)[] = [
    () => ({ body: valid.slice(0, at), expect: undefined }),
    () => ({
      body: `${valid.slice(0, at)}${String.fromCharCode(n % 256)}${valid.slice(at + 1)}`,
      expect: undefined,
    }),
    () => ({ body: valid.replace('"operation":"CREATE"', `"operation":${n}`), expect: undefined }),
    () => ({ body: valid.replace(/"uid":"[^"]*"/, '"uid":null'), expect: undefined }),
    () => ({ body: `${"[".repeat(2000)}${"]".repeat(2000)}`, expect: undefined }),
    () => ({ body: JSON.stringify({ kind: "AdmissionReview", request: [] }), expect: undefined }),
    () => ({ body: valid, expect: undefined, contentType: "text/plain" }),
    () => ({
      body: valid.replace(/"name":"[^"]*"/, `"name":"${"\u0000\ud800é".repeat(50)}"`),
      expect: undefined,
    }),
  ];
  return (cases[n % cases.length] as () => Shot)();
}

interface PhaseResult {
  readonly name: string;
  readonly tally: Tally;
  readonly rss: { now: number; peak: number };
  readonly note: string;
}

function newTally(): Tally {
  return { requests: 0, errors: 0, wrong: 0, latencies: [], samples: [] };
}

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(p * s.length) - 1)] ?? Number.NaN;
}

/** A policy for a kind no request of the trial has: adding and removing it changes no decision. */
const EXTRA = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: trial-extra.example.com }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{ apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["gadgets"] }]
  validations: [{ expression: "object.spec.size < 10" }]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: trial-extra.example.com }
spec: { policyName: trial-extra.example.com, validationActions: [Deny] }
`;

/** Rewrites the policy files every 300 ms until `until`, in ways that change no decision; returns the rewrites. */
async function reloads(dir: string, until: number): Promise<number> {
  const costly = join(dir, "costly.yaml");
  const text = readFileSync(costly, "utf8");
  let i = 0;
  while (performance.now() < until) {
    const step = i % 4;
    if (step === 0) writeFileSync(costly, `${text}\n# rewrite ${i}\n`);
    else if (step === 1) {
      // An editor's save: the file empty for a moment, then whole again.
      writeFileSync(costly, "");
      await new Promise((r) => setTimeout(r, 50));
      writeFileSync(costly, text);
    } else if (step === 2) writeFileSync(join(dir, "extra.yaml"), EXTRA);
    else rmSync(join(dir, "extra.yaml"), { force: true });
    i++;
    await new Promise((r) => setTimeout(r, 300));
  }
  return i;
}

async function phase(
  name: string,
  server: Server,
  seconds: number,
  connections: number,
  next: (connection: number, n: number) => Shot,
  extra?: (until: number) => Promise<string>,
): Promise<PhaseResult> {
  const tally = newTally();
  const until = performance.now() + seconds * 1000;
  const counters = new Array<number>(connections).fill(0);
  const [, note] = await Promise.all([
    load(
      server.port,
      connections,
      until,
      (c) => {
        const n = (counters[c] ?? 0) + 1;
        counters[c] = n;
        return next(c, n);
      },
      tally,
    ),
    extra?.(until) ?? Promise.resolve(""),
  ]);
  return { name, tally, rss: rss(server.child.pid), note };
}

/** SIGTERM under load, on a server of its own with a 2 s drain. */
async function sigtermPhase(seconds: number, ordinary: (n: number) => Shot): Promise<PhaseResult> {
  const server = await startServer(2);
  try {
    const tally = newTally();
    let n = 0;
    const signalAt = performance.now() + (seconds * 1000) / 3;
    const signal = new Promise<number>((resolve) =>
      setTimeout(() => {
        server.child.kill("SIGTERM");
        resolve(performance.now());
      }, signalAt - performance.now()),
    );
    // Clients stop on an answer that says Connection: close (they would go to another pod), or
    // when the phase is over.
    await load(server.port, 50, performance.now() + seconds * 1000, () => ordinary(n++), tally, true);
    const memory = rss(server.child.pid);
    const signalled = await signal;
    const code = await server.exited;
    const exitMs = performance.now() - signalled;
    return {
      name: "SIGTERM under load (50 conns, 2 s drain)",
      tally,
      rss: memory,
      note: `exit code ${code}, exited within ${(exitMs / 1000).toFixed(1)} s of SIGTERM (drain 2 s)`,
    };
  } finally {
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
    rmSync(server.dir, { recursive: true, force: true });
  }
}

/** The reviews of the trial, and the decision each got on the quiet server: the one it must always get. */
async function shots(port: number, log: (line: string) => void) {
  const agent = new Agent({ keepAlive: false, rejectUnauthorized: false });
  const good = JSON.stringify(podReview());
  const bad = JSON.stringify(badPodReview());
  const costlyBody = JSON.stringify(costlyReview());
  const expectGood = decision(await post(agent, port, good));
  const expectBad = decision(await post(agent, port, bad));
  const expectCostly = decision(await post(agent, port, costlyBody));
  if (expectGood === expectBad) throw new Error(`the two Pods are decided alike: ${expectGood}`);
  log(
    `decisions on the quiet server: ordinary Pod "${expectGood.slice(0, 60)}", bad Pod "${expectBad.slice(0, 60)}…", costly Widget "${expectCostly}"`,
  );
  const deep: Shot[] = [];
  for (const depth of DEEP_DEPTHS) {
    const body = deepPodReview(depth);
    deep.push({ body, expect: decision(await post(agent, port, body)) });
  }
  const tooDeep = deep.at(-1)?.expect;
  if (tooDeep !== "HTTP 400") throw new Error(`a review nested past the decoder's limit got ${tooDeep}`);
  return {
    good,
    deep: (n: number): Shot => deep[n % deep.length] as Shot,
    ordinary: (n: number): Shot =>
      n % 2 === 0 ? { body: good, expect: expectGood } : { body: bad, expect: expectBad },
    costly: { body: costlyBody, expect: expectCostly } satisfies Shot,
  };
}

export async function runTrial(seconds: number, log: (line: string) => void): Promise<PhaseResult[]> {
  const server = await startServer(10);
  const results: PhaseResult[] = [];
  const done = (r: PhaseResult): void => {
    results.push(r);
    log(summaryLine(r));
  };
  let ordinary: (n: number) => Shot;
  try {
    const s = await shots(server.port, log);
    ordinary = s.ordinary;
    for (const connections of [50, 200, 500])
      done(await phase(`load, ${connections} conns`, server, seconds, connections, (_c, n) => s.ordinary(n)));
    done(
      await phase(
        "reloads under load, 200 conns",
        server,
        seconds,
        200,
        (_c, n) => s.ordinary(n),
        async (until) =>
          `${await reloads(server.dir, until)} rewrites (changed, truncated then rewritten, a file added, removed)`,
      ),
    );
    done(
      await phase("fuzzed bodies among ordinary ones, 50 conns", server, seconds, 50, (_c, n) =>
        n % 4 === 0 ? fuzz(s.good, n) : s.ordinary(n),
      ),
    );
    done(
      await phase("deeply nested reviews among ordinary ones, 50 conns", server, seconds, 50, (_c, n) =>
        n % 4 === 0 ? s.deep(n / 4) : s.ordinary(n),
      ),
    );
    done(
      await phase("costly reviews on 2 of 50 conns", server, seconds, 50, (c, n) =>
        c < 2 ? s.costly : s.ordinary(n),
      ),
    );
    done(await heavyPolicyPhase(serveCommand(), seconds, s.ordinary, phase));
    for (const r of await serverPhases({ server, seconds, phase, ordinary: s.ordinary, start: startServer }))
      done(r);
  } finally {
    server.child.kill("SIGTERM");
    await server.exited;
    rmSync(server.dir, { recursive: true, force: true });
  }
  await connectedTrial(seconds, log, { startServer, shots, phase }, done);
  done(await sigtermPhase(seconds, ordinary));
  await clusterPhases(seconds, done, { serveCommand, rss, load, newTally, post, decision });
  return results;
}

function summaryLine(r: PhaseResult): string {
  return `${r.name}: ${r.tally.requests} requests, ${r.tally.errors} errors, ${r.tally.wrong} wrong decisions`;
}

export function formatTrial(results: readonly PhaseResult[]): string {
  const rows = results.map((r) => [
    r.name,
    String(r.tally.requests),
    String(r.tally.errors),
    String(r.tally.wrong),
    `${percentile(r.tally.latencies, 0.5).toFixed(1)} ms`,
    `${percentile(r.tally.latencies, 0.99).toFixed(1)} ms`,
    `${r.rss.now.toFixed(0)} / ${r.rss.peak.toFixed(0)} MB`,
  ]);
  const notes = results.flatMap((r) => [
    ...(r.note ? [`- ${r.name}: ${r.note}`] : []),
    ...r.tally.samples.map((s) => `- ${r.name}: ${s}`),
  ]);
  return [
    table(["phase", "requests", "errors", "wrong decisions", "p50", "p99", "RSS end / peak"], rows, 1),
    ...notes,
  ].join("\n");
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: { long: { type: "boolean", default: false }, seconds: { type: "string" } },
    strict: true,
  });
  const seconds = values.seconds !== undefined ? Number(values.seconds) : values.long ? 120 : 15;
  console.log(
    `celgate fault trial: ${seconds} s a phase (the figures depend on the machine; say how busy it was)`,
  );
  runTrial(seconds, (line) => console.log(line)).then(
    (results) => {
      console.log(formatTrial(results));
      const failed = results.some((r) => r.tally.errors > 0 || r.tally.wrong > 0);
      process.exitCode = failed ? 1 : 0;
    },
    (e: unknown) => {
      console.error(e);
      process.exitCode = 2;
    },
  );
}
