/**
 * `npm run bench`: issue 7's benchmark, every part in turn, each printing its own detailed table, then
 * ONE summary table: each figure, its baseline measured in the same run, the ratio, the target, and
 * whether it is met. Exits non-zero only when a correctness gate failed (a wrong answer, a failed
 * request, a set that does not load), never on timings.
 *
 *   npm run bench                      # everything (about 6 minutes)
 *   npm run bench -- cel|regex|webhook|request|overhead|scale|startup|isolation|memory|params [part options]
 *
 * `npm run bench` builds src/ and bench/ with tsc into dist-bench/ and runs the built code: tsx wraps
 * every named closure in a helper that costs time the shipped build does not pay.
 *
 * Run whole, each part runs in a process of its own, as a webhook server runs only its own work: in
 * one process, a part's figures carried what the parts before it left behind (their heap, the
 * shared cache of megamorphic property loads), and the request part's review took 0.3-0.6 µs more
 * after the cel and regex parts than alone.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { celPart } from "./cel.ts";
import {
  BUILT,
  configureAsServed,
  fmtX,
  nodeArgsFor,
  type PartReport,
  type SummaryRow,
  table,
} from "./common.ts";
import { overheadPart } from "./overhead.ts";
import { regexPart } from "./regex.ts";
import { requestPart } from "./request.ts";
import { scalePart } from "./scale.ts";
import { startupPart } from "./startup.ts";
import { isolationPart } from "./isolation.ts";
import { memoryPart } from "./memory.ts";
import { paramsPart } from "./params.ts";
import { webhookPart } from "./webhook.ts";

type Part = (argv: readonly string[]) => PartReport | Promise<PartReport>;

/** In the order they run; the summary table lists rows by target number. */
const PARTS: readonly (readonly [string, string, Part])[] = [
  ["cel", "CEL evaluation (target 1)", celPart],
  ["regex", "Regular expressions (target 2)", regexPart],
  ["request", "In-process request cost (targets 3, 6)", requestPart],
  ["overhead", "Metrics and logging share (target 5)", overheadPart],
  ["scale", "1,000 policies (target 7)", scalePart],
  ["startup", "Cold start (target 8)", startupPart],
  ["webhook", "Webhook over TLS, autocannon on loopback (target 4)", webhookPart],
  ["isolation", "One costly connection beside ordinary ones (issue 28 item 5)", isolationPart],
  ["memory", "Memory a policy set keeps (issue 37 item 5)", memoryPart],
  ["params", "Param lookups by cache size (issue 36 item 5)", paramsPart],
];

export function formatSummary(rows: readonly SummaryRow[]): string {
  const sorted = [...rows].sort((a, b) => Number.parseInt(a.target, 10) - Number.parseInt(b.target, 10));
  return table(
    ["target", "figure", "measured", "baseline (same run)", "ratio", "goal", "met?"],
    sorted.map((r) => [
      r.target,
      r.figure,
      r.value,
      r.baseline,
      r.ratio === undefined ? "-" : `${fmtX(r.ratio)}×`,
      r.goal,
      r.met === undefined ? (r.goal === "reference" ? "-" : "pending") : r.met ? "yes" : "NO",
    ]),
    2,
  );
}

/** Where a part run as a child of the whole run writes its report (JSON), read back by the parent. */
const REPORT_ENV = "CELGATE_BENCH_REPORT";

/** Runs one part in a child process with stdout and stderr shared, and returns the report it wrote. */
async function runChild(name: string, reportFile: string): Promise<PartReport> {
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgsFor(import.meta.url), name], {
      stdio: "inherit",
      env: { ...process.env, [REPORT_ENV]: reportFile },
    });
    child.on("error", reject);
    child.on("exit", (status) => resolve(status));
  });
  try {
    return JSON.parse(readFileSync(reportFile, "utf8")) as PartReport;
  } catch {
    // A child that died before writing its report is a crash, counted as a failed gate.
    return { part: name, rows: [], gateFailures: [`${name}: exited with ${code} and no report`] };
  }
}

/** One part in this process; a crash is not a timing: it counts as a failed gate. */
async function runHere(name: string, part: Part, argv: readonly string[]): Promise<PartReport> {
  try {
    return await part(argv);
  } catch (e) {
    const message = e instanceof Error ? (e.stack ?? e.message) : String(e);
    console.error(`${name}: crashed: ${message}`);
    return { part: name, rows: [], gateFailures: [`${name}: crashed: ${message.split("\n")[0]}`] };
  }
}

async function main(argv: readonly string[]): Promise<number> {
  configureAsServed();
  const only = PARTS.find(([name]) => name === argv[0]);
  if (argv[0] !== undefined && !argv[0].startsWith("-") && !only) {
    console.error(`unknown part '${argv[0]}'; one of ${PARTS.map(([n]) => n).join(", ")}`);
    return 2;
  }
  const rest = only ? argv.slice(1) : argv;
  if (!BUILT)
    console.log("(running under tsx: timings are pessimistic; `npm run bench` runs the built copy)\n");
  const reportTo = process.env[REPORT_ENV];
  if (only && reportTo !== undefined) {
    // A child of the whole run: the part's own tables go to the shared stdout, its rows to the parent.
    const report = await runHere(only[0], only[2], rest);
    writeFileSync(reportTo, JSON.stringify(report));
    return 0;
  }
  const started = performance.now();
  const reports: PartReport[] = [];
  const dir = only ? undefined : mkdtempSync(join(tmpdir(), "celgate-bench-"));
  try {
    for (const [name, title, part] of only ? [only] : PARTS) {
      console.log(`== ${title} ==`);
      const t0 = performance.now();
      // Part options apply only when one part is run: the parts do not share option names.
      reports.push(dir ? await runChild(name, join(dir, `${name}.json`)) : await runHere(name, part, rest));
      console.log(`(${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
    }
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  const rows = reports.flatMap((r) => r.rows);
  const failures = reports.flatMap((r) => r.gateFailures);
  console.log(`== Summary (issue 7), ${((performance.now() - started) / 1000).toFixed(0)} s ==`);
  console.log("Ratios are medians of per-round ratios (baseline measured in the same rounds).");
  console.log("");
  if (rows.length > 0) console.log(formatSummary(rows));
  if (failures.length > 0) {
    console.log(`\nCORRECTNESS GATES FAILED (${failures.length}):`);
    for (const f of failures) console.log(`- ${f.split("\n")[0]}`);
    return 1;
  }
  console.log("\nAll correctness gates passed. Timings never fail the run.");
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
