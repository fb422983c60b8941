/**
 * Issue 7, target 8: cold start, from spawning `celgate serve` with the project's policies/ library to
 * the first 200 from GET /readyz over HTTPS. The CLI is the one `npm start` runs (dist/, built by
 * `tsc -p tsconfig.build.json`; rebuilt here first when any file under src/ is newer than it). The
 * baseline is `node -e 0`, spawn to exit, in the same rounds, so the ratio says how much of the start
 * is ours rather than Node's.
 * Gate: the server comes up, answers /readyz with 200, and stops on SIGTERM.
 *
 *   node dist-bench/bench/startup.js [--rounds 7]
 */
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import {
  fmtMs,
  fmtX,
  GateError,
  intOption,
  isMain,
  median,
  medianRatio,
  type PartReport,
  ROOT,
  rootPath,
  runPartAlone,
  type SummaryRow,
  table,
} from "./common.ts";

const CLI = rootPath("dist", "adapters", "cli", "bin.js");
const START_TIMEOUT_MS = 30_000;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (e.name.endsWith(".ts")) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when it is missing or older than src/; says which in the returned note. */
export function ensureFreshDist(): string {
  let built = 0;
  try {
    built = statSync(CLI).mtimeMs;
  } catch {
    built = 0;
  }
  if (built >= newestMtime(rootPath("src"))) return "dist/ is up to date with src/";
  try {
    execFileSync(
      process.execPath,
      [rootPath("node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
      { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"], timeout: 180_000 },
    );
  } catch {
    // tsc still emits when src/ has type errors; the gate is whether the emitted server comes up.
    return "dist/ was older than src/: rebuilt with tsc -p tsconfig.build.json, which reported errors";
  }
  return "dist/ was older than src/: rebuilt with tsc -p tsconfig.build.json";
}

function nodeBaseline(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), START_TIMEOUT_MS);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(performance.now() - t0);
      else reject(new GateError(`node -e 0 exited with ${code}`));
    });
  });
}

function readyz(port: number): Promise<number> {
  return new Promise((resolve) => {
    const r = httpsRequest(
      { host: "127.0.0.1", port, path: "/readyz", rejectUnauthorized: false, agent: false, timeout: 2_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    r.on("timeout", () => r.destroy());
    r.on("error", () => resolve(0));
    r.end();
  });
}

/** Spawn to first 200 from /readyz, ms; then SIGTERM and wait for the exit. */
function coldStart(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [
        CLI,
        "serve",
        "--policies",
        "policies",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--metrics-port",
        "0",
        "--drain-seconds",
        "0",
      ],
      { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    let elapsed: number | undefined;
    let failure: Error | undefined;
    const deadline = setTimeout(() => {
      failure = new GateError(`celgate serve did not become ready in ${START_TIMEOUT_MS} ms:\n${stderr}`);
      child.kill("SIGKILL");
    }, START_TIMEOUT_MS);
    let polling = false;
    const poll = async (port: number) => {
      while (elapsed === undefined && failure === undefined && child.exitCode === null) {
        if ((await readyz(port)) === 200) {
          elapsed = performance.now() - t0;
          child.kill("SIGTERM");
          return;
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    };
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      // "celgate serving N policies (M bindings) on https://127.0.0.1:PORT; metrics on ..."
      const m = /serving .* on https:\/\/[^:\s]+:(\d+)/.exec(stderr);
      if (m && !polling) {
        polling = true;
        void poll(Number(m[1]));
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(deadline);
      if (failure) reject(failure);
      else if (elapsed === undefined)
        reject(new GateError(`celgate serve exited (${code ?? signal}) before it was ready:\n${stderr}`));
      else if (code !== 0)
        reject(new GateError(`celgate serve did not stop cleanly on SIGTERM (${code ?? signal})`));
      else resolve(elapsed);
    });
  });
}

export interface StartupBenchReport {
  readonly rounds: number;
  readonly note: string;
  readonly serveMs: number;
  readonly nodeMs: number;
  readonly ratio: number;
  readonly spread: readonly [number, number];
}

export async function runStartupBench(rounds = 7): Promise<StartupBenchReport> {
  const note = ensureFreshDist();
  const serve: number[] = [];
  const node: number[] = [];
  // One unrecorded round: the first spawn pays for the disk cache.
  for (let round = 0; round <= rounds; round++) {
    const order = round % 2 === 0 ? ["node", "serve"] : ["serve", "node"];
    for (const which of order) {
      const ms = which === "node" ? await nodeBaseline() : await coldStart();
      if (round > 0) (which === "node" ? node : serve).push(ms);
    }
  }
  return {
    rounds,
    note,
    serveMs: median(serve),
    nodeMs: median(node),
    ratio: medianRatio(serve, node),
    spread: [Math.min(...serve), Math.max(...serve)],
  };
}

export function formatStartupReport(r: StartupBenchReport): string {
  return [
    `Cold start: celgate serve --policies policies, spawn to first 200 from GET /readyz (HTTPS);` +
      ` medians of ${r.rounds} rounds after 1 warm-up (${r.note})`,
    "",
    table(
      ["process", "median", "rounds min..max", "x node -e 0"],
      [
        ["node -e 0 (spawn to exit)", fmtMs(r.nodeMs), "", "1.00"],
        [
          "celgate serve (spawn to ready)",
          fmtMs(r.serveMs),
          `${fmtMs(r.spread[0])}..${fmtMs(r.spread[1])}`,
          fmtX(r.ratio),
        ],
      ],
    ),
  ].join("\n");
}

export function startupSummary(r: StartupBenchReport): SummaryRow[] {
  return [
    {
      target: "8",
      figure: "cold start, serve policies/ to /readyz 200",
      value: fmtMs(r.serveMs),
      baseline: `${fmtMs(r.nodeMs)} node -e 0`,
      ratio: r.ratio,
      goal: "< 1 s",
      met: r.serveMs < 1000,
    },
  ];
}

export async function startupPart(argv: readonly string[]): Promise<PartReport> {
  try {
    const r = await runStartupBench(intOption(argv, "rounds", 7));
    console.log(formatStartupReport(r));
    return { part: "startup", rows: startupSummary(r), gateFailures: [] };
  } catch (e) {
    if (!(e instanceof GateError)) throw e;
    console.error(`startup benchmark: correctness gate failed:\n${e.message}`);
    return { part: "startup", rows: [], gateFailures: [`startup: ${e.message}`] };
  }
}

if (isMain(import.meta.url)) await runPartAlone(startupPart);
