/**
 * Issue 37 item 5: the memory a compiled policy set keeps. A deterministic generator writes one file of
 * `--validations` validations (`--per-policy` to a policy, each source text its own, so no cache keyed
 * on source makes it cheap), and a fresh child process (`--expose-gc`) loads it through `loadSnapshot`,
 * the loader behind `serve`, then loads it again as a reload does (the new set compiled while the old
 * one still serves, then the old one dropped). Reported, per size:
 * - the heap the set keeps after a full gc, in all and per validation (what `estimateSetBytes` is
 *   calibrated by: its estimate is printed beside it);
 * - the heap kept after a reload to a set of the same size whose every source differs (the old set
 *   must be collectable: a process-wide cache that holds it doubles the figure);
 * - the peak resident set of the child (VmHWM), loads included.
 * Gates: the set loads without error diagnostics, and the estimate is not below what the set keeps.
 *
 *   node dist-bench/bench/memory.js [--validations 5000] [--per-policy 50] [--rounds 3]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { estimateSetBytes } from "../src/compile/footprint.ts";
import { loadPolicyPaths } from "../src/sources/files.ts";
import { loadSnapshot } from "../src/sources/store.ts";
import {
  configureAsServed,
  GateError,
  intOption,
  isMain,
  median,
  nodeArgsFor,
  type PartReport,
  ROOT,
  runPart,
  runPartAlone,
  type SummaryRow,
  table,
  validatingPolicyYaml,
} from "./common.ts";

/** Validation shapes of policies as written (field reads, optionals, macros, string functions); `i` makes each distinct. */
const SHAPES: readonly ((i: number) => string)[] = [
  (i) => `object.spec.?replicas.orValue(1) <= ${100 + i}`,
  (i) => `object.metadata.name != 'reserved-name-${i}'`,
  (i) => `object.spec.template.spec.containers.all(c, !c.image.startsWith('blocked-${i}.invalid/'))`,
  (i) => `!('policy.example.com/block-${i}' in object.metadata.?annotations.orValue({}))`,
  (i) => `object.metadata.?labels['team-${i}'].orValue('ok') != 'forbidden-${i}'`,
  (i) =>
    `object.spec.template.spec.containers.exists(c, c.name == 'sidecar-${i}') || size(object.metadata.name) < ${60 + (i % 200)}`,
];

/** One YAML text of `validations` validations, `perPolicy` to a policy (each with its binding). */
export function heavyPolicyText(
  validations: number,
  perPolicy: number,
  prefix = "heavy",
  offset = 0,
): string {
  const docs: string[] = [];
  const rule = { group: "apps", version: "v1", resource: "deployments", operations: ["CREATE", "UPDATE"] };
  for (let p = 0; p * perPolicy < validations; p++) {
    const count = Math.min(perPolicy, validations - p * perPolicy);
    const items = Array.from({ length: count }, (_, k) => {
      const i = offset + p * perPolicy + k;
      return { expression: (SHAPES[i % SHAPES.length] as (i: number) => string)(i) };
    });
    docs.push(validatingPolicyYaml(`${prefix}-${p}.example.com`, rule, items));
  }
  return docs.join("---\n");
}

interface ChildResult {
  readonly validations: number;
  readonly fileBytes: number;
  readonly keptBytes: number;
  readonly keptAfterReloadBytes: number;
  readonly estimateBytes: number;
  readonly peakRssBytes: number;
  readonly errors: number;
}

function vm(key: "VmHWM" | "VmRSS"): number {
  const status = readFileSync("/proc/self/status", "utf8");
  return Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
}

/** The child: load, measure, load again as a reload does, measure; one JSON line on stdout. */
async function memoryChild(dir: string, reloadDir: string, validations: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("the memory child needs --expose-gc");
  // A WeakRef's target stays alive until the event loop's current turn ends (the caches of
  // cel/index.ts hold their entries weakly), so each figure is taken on a turn of its own.
  const heap = async (): Promise<number> => {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  // The estimate reads the parsed set, as the store does before it compiles.
  const parsed = await loadPolicyPaths([dir]);
  const estimateBytes = estimateSetBytes(parsed.set).bytes;
  const fileBytes = readFileSync(join(dir, "set.yaml")).length;
  const base = await heap();
  let serving = await loadSnapshot([dir]);
  const keptBytes = (await heap()) - base;
  const next = await loadSnapshot([reloadDir]);
  serving = next;
  const keptAfterReloadBytes = (await heap()) - base;
  const errors = serving.ok
    ? serving.snapshot.diagnostics.filter((d) => d.severity === "error").length
    : serving.diagnostics.length;
  const result: ChildResult = {
    validations,
    fileBytes,
    keptBytes,
    keptAfterReloadBytes,
    estimateBytes,
    peakRssBytes: vm("VmHWM"),
    errors,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runChild(
  dir: string,
  reloadDir: string,
  validations: number,
  timeoutMs = 300_000,
): Promise<ChildResult> {
  const args = [
    "--expose-gc",
    ...nodeArgsFor(import.meta.url),
    "--memory-child",
    dir,
    reloadDir,
    String(validations),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || line === "")
        reject(new Error(`memory child failed (${code ?? signal}):\n${err.slice(0, 2000)}`));
      else resolve(JSON.parse(line) as ChildResult);
    });
  });
}

export interface MemoryBenchOptions {
  readonly validations: number;
  readonly perPolicy: number;
  readonly rounds: number;
}

export const DEFAULT_MEMORY_BENCH: MemoryBenchOptions = { validations: 5000, perPolicy: 50, rounds: 3 };

export interface MemoryBenchReport {
  readonly options: MemoryBenchOptions;
  /** Medians over child runs, per size (a tenth of the set, and the whole). */
  readonly sizes: readonly ChildResult[];
}

function medianResult(xs: readonly ChildResult[]): ChildResult {
  const first = xs[0] as ChildResult;
  return {
    validations: first.validations,
    fileBytes: first.fileBytes,
    keptBytes: median(xs.map((x) => x.keptBytes)),
    keptAfterReloadBytes: median(xs.map((x) => x.keptAfterReloadBytes)),
    estimateBytes: first.estimateBytes,
    peakRssBytes: median(xs.map((x) => x.peakRssBytes)),
    errors: Math.max(...xs.map((x) => x.errors)),
  };
}

export async function runMemoryBench(options: Partial<MemoryBenchOptions> = {}): Promise<MemoryBenchReport> {
  const opts = { ...DEFAULT_MEMORY_BENCH, ...options };
  const sizes: ChildResult[] = [];
  for (const n of [Math.max(1, Math.round(opts.validations / 10)), opts.validations]) {
    const dir = mkdtempSync(join(tmpdir(), "celgate-bench-memory-"));
    const reloadDir = mkdtempSync(join(tmpdir(), "celgate-bench-memory-"));
    try {
      writeFileSync(join(dir, "set.yaml"), heavyPolicyText(n, opts.perPolicy));
      writeFileSync(join(reloadDir, "set.yaml"), heavyPolicyText(n, opts.perPolicy, "heavy", 1_000_000));
      const runs: ChildResult[] = [];
      for (let r = 0; r < opts.rounds; r++) runs.push(await runChild(dir, reloadDir, n));
      const m = medianResult(runs);
      if (m.errors > 0) throw new GateError(`${n} validations: ${m.errors} error diagnostics`);
      if (m.estimateBytes < m.keptBytes)
        throw new GateError(
          `${n} validations: the estimate (${mib(m.estimateBytes)}) is below what the set keeps (${mib(m.keptBytes)})`,
        );
      sizes.push(m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(reloadDir, { recursive: true, force: true });
    }
  }
  return { options: opts, sizes };
}

const mib = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;
const kib = (b: number): string => `${(b / 1024).toFixed(1)} KiB`;

export function formatMemoryReport(r: MemoryBenchReport): string {
  const o = r.options;
  return [
    `Memory of a policy set: one file, ${o.perPolicy} validations a policy, each in a fresh process` +
      ` (--expose-gc), medians of ${o.rounds}; heap figures after a full gc`,
    "",
    table(
      [
        "validations",
        "file",
        "heap kept",
        "per validation",
        "after a reload",
        "estimate",
        "estimate / kept",
        "peak RSS",
      ],
      r.sizes.map((s) => [
        String(s.validations),
        kib(s.fileBytes),
        mib(s.keptBytes),
        kib(s.keptBytes / s.validations),
        mib(s.keptAfterReloadBytes),
        mib(s.estimateBytes),
        `${(s.estimateBytes / s.keptBytes).toFixed(2)}×`,
        mib(s.peakRssBytes),
      ]),
    ),
  ].join("\n");
}

export function memorySummary(r: MemoryBenchReport): SummaryRow[] {
  const s = r.sizes[r.sizes.length - 1];
  const small = r.sizes[0];
  if (!s || !small) return [];
  const per = s.keptBytes / s.validations;
  const smallPer = small.keptBytes / small.validations;
  return [
    {
      target: "37.5",
      figure: `heap kept per validation (${s.validations})`,
      value: kib(per),
      baseline: `${kib(smallPer)} with ${small.validations}`,
      ratio: per / smallPer,
      goal: "reference",
      met: undefined,
    },
    {
      target: "37.5",
      figure: `peak RSS, load + reload of ${s.validations} validations`,
      value: mib(s.peakRssBytes),
      baseline: `${mib(small.peakRssBytes)} with ${small.validations}`,
      ratio: s.peakRssBytes / small.peakRssBytes,
      goal: "< 512 MiB",
      met: s.peakRssBytes < 512 * 2 ** 20,
    },
  ];
}

export async function memoryPart(argv: readonly string[]): Promise<PartReport> {
  return runPart(
    "memory",
    () =>
      runMemoryBench({
        validations: intOption(argv, "validations", DEFAULT_MEMORY_BENCH.validations),
        perPolicy: intOption(argv, "per-policy", DEFAULT_MEMORY_BENCH.perPolicy),
        rounds: intOption(argv, "rounds", DEFAULT_MEMORY_BENCH.rounds),
      }),
    formatMemoryReport,
    memorySummary,
  );
}

if (isMain(import.meta.url)) {
  configureAsServed();
  const at = process.argv.indexOf("--memory-child");
  if (at >= 0)
    await memoryChild(process.argv[at + 1] ?? "", process.argv[at + 2] ?? "", Number(process.argv[at + 3]));
  else await runPartAlone(memoryPart);
}
