/**
 * Issue 7, target 7: many loaded policies, few of which apply. A deterministic generator writes 1,000
 * ValidatingAdmissionPolicies with their bindings as YAML, one file each: 20 that match the benchmark
 * Pod (one rule of bench/rules.ts each) and 980 that do not (other groups, resources and operations,
 * CRD groups included), each with 1-3 validations whose source text no other policy shares, so no
 * compile cache keyed on source can make loading the set cheap.
 *
 * Measured:
 * - load + compile of the 1,000 (and, as the baseline, of the 20) through `loadSnapshot`, the loader
 *   behind `serve`, each in a fresh child process (`--expose-gc`) that also reports its RSS after the
 *   load and after a gc; rounds alternate the two sets;
 * - in-process throughput, reviews/s of the Pod CREATE against the 20-policy set and against the
 *   1,000-policy set (the same 20 match), interleaved rounds, ratio per round.
 * Gates: both sets load without errors, and exactly the 20 matching policies evaluate (and pass) for
 * the Pod in both.
 *
 *   node dist-bench/bench/scale.js [--rounds 9] [--iterations 400] [--load-rounds 5] [--policies 1000]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSnapshot } from "../src/sources/store.ts";
import {
  configureAsServed,
  fmtInt,
  fmtMs,
  fmtX,
  GateError,
  runPart,
  runPartAlone,
  validatingPolicyYaml,
  intOption,
  isMain,
  median,
  medianRatio,
  nodeArgsFor,
  nowNs,
  type PartReport,
  ROOT,
  type SummaryRow,
  table,
} from "./common.ts";
import { type LoadedSet, loadSet, reviewOnce } from "./request.ts";
import { podReview } from "./review.ts";
import { RULES } from "./rules.ts";

export interface GeneratedPolicy {
  readonly name: string;
  /** Whether it applies to the benchmark Pod CREATE. */
  readonly matchesPod: boolean;
  readonly validations: number;
  /** The policy and its binding, as one YAML document stream. */
  readonly yaml: string;
}

interface Target {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly operations: readonly string[];
  /** Validations for objects of this resource; `i` makes each source distinct. */
  readonly checks: readonly ((i: number) => string)[];
}

const METADATA_CHECKS: readonly ((i: number) => string)[] = [
  (i) => `object.metadata.name != 'reserved-name-${i}'`,
  (i) => `!('policy.example.com/block-${i}' in object.metadata.?annotations.orValue({}))`,
  (i) => `object.metadata.?labels['team-${i}'].orValue('ok') != 'forbidden-${i}'`,
  (i) => `size(object.metadata.name) <= ${253 + i}`,
];

const WORKLOAD_CHECKS: readonly ((i: number) => string)[] = [
  (i) => `object.spec.?replicas.orValue(1) <= ${100 + i}`,
  (i) => `object.spec.template.spec.containers.all(c, !c.image.startsWith('blocked-${i}.invalid/'))`,
  (i) => `object.spec.template.metadata.?labels.orValue({}).all(k, k != 'forbidden-key-${i}')`,
];

/**
 * What the 980 non-matching policies select: nothing here may match a Pod CREATE. Pods appear only
 * with other operations, so the operation test has to reject them.
 */
const OTHER_TARGETS: readonly Target[] = [
  {
    group: "apps",
    version: "v1",
    resource: "deployments",
    operations: ["CREATE", "UPDATE"],
    checks: WORKLOAD_CHECKS,
  },
  {
    group: "apps",
    version: "v1",
    resource: "statefulsets",
    operations: ["CREATE", "UPDATE"],
    checks: WORKLOAD_CHECKS,
  },
  { group: "apps", version: "v1", resource: "daemonsets", operations: ["CREATE"], checks: WORKLOAD_CHECKS },
  {
    group: "",
    version: "v1",
    resource: "services",
    operations: ["CREATE", "UPDATE"],
    checks: [
      (i) => `object.spec.?type.orValue('ClusterIP') != 'ExternalName-${i}'`,
      (i) => `object.spec.?ports.orValue([]).all(p, p.port != ${20000 + i})`,
      ...METADATA_CHECKS,
    ],
  },
  {
    group: "",
    version: "v1",
    resource: "configmaps",
    operations: ["CREATE", "UPDATE"],
    checks: [(i) => `!('forbidden-key-${i}' in object.?data.orValue({}))`, ...METADATA_CHECKS],
  },
  {
    group: "",
    version: "v1",
    resource: "secrets",
    operations: ["CREATE"],
    checks: [(i) => `object.?type.orValue('Opaque') != 'example.com/forbidden-${i}'`, ...METADATA_CHECKS],
  },
  {
    group: "",
    version: "v1",
    resource: "pods",
    operations: ["UPDATE"],
    checks: [(i) => `object.spec.containers.all(c, c.image != 'frozen-${i}:latest')`, ...METADATA_CHECKS],
  },
  {
    group: "",
    version: "v1",
    resource: "pods",
    operations: ["DELETE"],
    checks: [(i) => `!('protected-${i}' in oldObject.metadata.?labels.orValue({}))`],
  },
  {
    group: "networking.k8s.io",
    version: "v1",
    resource: "ingresses",
    operations: ["CREATE", "UPDATE"],
    checks: [
      (i) => `object.spec.?rules.orValue([]).all(r, !r.?host.orValue('').endsWith('.blocked-${i}.example'))`,
      ...METADATA_CHECKS,
    ],
  },
  {
    group: "batch",
    version: "v1",
    resource: "jobs",
    operations: ["CREATE"],
    checks: [(i) => `object.spec.?backoffLimit.orValue(6) <= ${10 + i}`, ...METADATA_CHECKS],
  },
  {
    group: "example.com",
    version: "v1",
    resource: "widgets",
    operations: ["CREATE", "UPDATE"],
    checks: [(i) => `object.?spec.?size.orValue(0) < ${1000 + i}`, ...METADATA_CHECKS],
  },
  {
    group: "stable.example.org",
    version: "v1",
    resource: "crontabs",
    operations: ["CREATE"],
    checks: [(i) => `object.?spec.?cronSpec.orValue('') != '* * * * ${i}'`, ...METADATA_CHECKS],
  },
];

/**
 * `total` policies, the first `matching` (at most 20) of which match the benchmark Pod CREATE. The
 * same arguments always give the same text.
 */
export function generateScalePolicies(total = 1000, matching = 20): GeneratedPolicy[] {
  if (matching > RULES.length) throw new Error(`at most ${RULES.length} matching policies`);
  const out: GeneratedPolicy[] = [];
  const pods = { group: "", version: "v1", resource: "pods", operations: ["CREATE", "UPDATE"] };
  for (let i = 0; i < matching && i < total; i++) {
    const rule = RULES[i] as (typeof RULES)[number];
    const name = `scale-match-${String(i).padStart(2, "0")}-${rule.name}`;
    out.push({
      name,
      matchesPod: true,
      validations: 1,
      yaml: validatingPolicyYaml(name, pods, [{ expression: rule.cel }]),
    });
  }
  for (let i = out.length; i < total; i++) {
    const target = OTHER_TARGETS[i % OTHER_TARGETS.length] as Target;
    const count = 1 + (i % 3);
    // Consecutive checks of the target, starting at a place that moves with i; each carries i.
    const expressions = Array.from({ length: Math.min(count, target.checks.length) }, (_, k) =>
      (
        target.checks[(Math.floor(i / OTHER_TARGETS.length) + k) % target.checks.length] as (
          i: number,
        ) => string
      )(i),
    );
    const group = target.group === "" ? "core" : target.group.split(".")[0];
    const name = `scale-other-${String(i).padStart(4, "0")}-${group}-${target.resource}`;
    out.push({
      name,
      matchesPod: false,
      validations: expressions.length,
      yaml: validatingPolicyYaml(
        name,
        target,
        expressions.map((expression) => ({ expression })),
      ),
    });
  }
  return out;
}

/** Writes one file per policy into a new temp directory; the caller removes it. */
export function writeScalePolicies(policies: readonly GeneratedPolicy[], label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `celgate-bench-scale-${label}-`));
  for (const p of policies) writeFileSync(join(dir, `${p.name}.yaml`), p.yaml);
  return dir;
}

/** Problems with how a loaded set treats the Pod: exactly the matching policies must run, and pass. */
export function scaleGateProblems(s: LoadedSet, expectedPolicies: number, matching: number): string[] {
  const out: string[] = [];
  if (s.set.policies.length !== expectedPolicies)
    out.push(`${s.label}: ${s.set.policies.length} policies loaded, expected ${expectedPolicies}`);
  if (s.set.bindings.length !== expectedPolicies)
    out.push(`${s.label}: ${s.set.bindings.length} bindings loaded, expected ${expectedPolicies}`);
  const d = reviewOnce(s.admitter, podReview(), "validate");
  if (typeof d === "string") return [...out, `${s.label}: ${d}`];
  if (!d.allowed) out.push(`${s.label}: the bench Pod is denied: ${d.status?.message ?? "?"}`);
  const evaluated = d.results.filter((r) => r.outcome !== "skip");
  const wrong = evaluated.filter((r) => r.outcome !== "pass" || !r.policy.startsWith("scale-match-"));
  if (evaluated.length !== matching || wrong.length > 0)
    out.push(
      `${s.label}: expected exactly ${matching} scale-match policies to pass, got ${evaluated.length} evaluated: ${JSON.stringify(evaluated.slice(0, 5).map((r) => [r.policy, r.outcome, r.reason ?? ""]))}`,
    );
  return out;
}

// ---------------------------------------------------------------------------------------------
// The load child: one load in a fresh process, so its RSS is the set's and nothing else's.

interface ChildResult {
  readonly loadMs: number;
  readonly rssMb: number;
  readonly rssAfterGcMb: number | undefined;
  readonly heapUsedMb: number;
  readonly policies: number;
  readonly errors: number;
}

async function loadChild(dir: string): Promise<void> {
  const t0 = nowNs();
  const outcome = await loadSnapshot([dir]);
  const loadMs = Number(nowNs() - t0) / 1e6;
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  const gc = (globalThis as { gc?: () => void }).gc;
  let rssAfterGcMb: number | undefined;
  if (gc) {
    // `outcome` is read below, so the set is still alive here: this RSS is the set's, less garbage.
    gc();
    rssAfterGcMb = process.memoryUsage().rss / 2 ** 20;
  }
  const errors = outcome.ok
    ? outcome.snapshot.diagnostics.filter((d) => d.severity === "error").length
    : outcome.diagnostics.length;
  const result: ChildResult = {
    loadMs,
    rssMb,
    rssAfterGcMb,
    heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
    policies: outcome.ok ? outcome.snapshot.set.policies.length : 0,
    errors,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runLoadChild(dir: string, timeoutMs = 60_000): Promise<ChildResult> {
  const args = ["--expose-gc", ...nodeArgsFor(import.meta.url), "--load-child", dir];
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
        reject(new Error(`load child for ${dir} failed (${code ?? signal}):\n${err.slice(0, 2000)}`));
      else resolve(JSON.parse(line) as ChildResult);
    });
  });
}

// ---------------------------------------------------------------------------------------------

export interface ScaleBenchOptions {
  readonly policies: number;
  /** Interleaved throughput rounds. */
  readonly rounds: number;
  readonly warmupRounds: number;
  /** Reviews per set per round (in-process throughput). */
  readonly iterations: number;
  /** Fresh load processes per set. */
  readonly loadRounds: number;
}

export const DEFAULT_SCALE_BENCH: ScaleBenchOptions = {
  policies: 1000,
  rounds: 9,
  warmupRounds: 2,
  iterations: 400,
  loadRounds: 5,
};
const MATCHING = 20;

export interface ScaleBenchReport {
  readonly options: ScaleBenchOptions;
  readonly validations: number;
  /** Medians over child runs. */
  readonly load: Readonly<Record<"small" | "large", ChildResult>>;
  /** Reviews per second, medians. */
  readonly rps: Readonly<Record<"small" | "large", number>>;
  /** Median per-round ratio large/small of reviews per second. */
  readonly rpsRatio: number;
}

function medianChild(xs: readonly ChildResult[]): ChildResult {
  const gcs = xs.map((x) => x.rssAfterGcMb).filter((x): x is number => x !== undefined);
  return {
    loadMs: median(xs.map((x) => x.loadMs)),
    rssMb: median(xs.map((x) => x.rssMb)),
    rssAfterGcMb: gcs.length > 0 ? median(gcs) : undefined,
    heapUsedMb: median(xs.map((x) => x.heapUsedMb)),
    policies: xs[0]?.policies ?? 0,
    errors: Math.max(...xs.map((x) => x.errors)),
  };
}

export async function runScaleBench(options: Partial<ScaleBenchOptions> = {}): Promise<ScaleBenchReport> {
  const opts = { ...DEFAULT_SCALE_BENCH, ...options };
  const large = generateScalePolicies(opts.policies, MATCHING);
  const small = large.filter((p) => p.matchesPod);
  const dirs = {
    small: writeScalePolicies(small, "20"),
    large: writeScalePolicies(large, String(opts.policies)),
  };
  try {
    const sets = {
      small: await loadSet(`${small.length} policies`, [dirs.small]),
      large: await loadSet(`${large.length} policies`, [dirs.large]),
    };
    const problems = [
      ...scaleGateProblems(sets.small, small.length, MATCHING),
      ...scaleGateProblems(sets.large, large.length, MATCHING),
    ];
    if (problems.length > 0) throw new GateError(problems.join("\n"));

    // Throughput, in-process.
    const body = JSON.stringify(podReview());
    const keys = ["small", "large"] as const;
    const rps: Record<"small" | "large", number[]> = { small: [], large: [] };
    for (let round = 0; round < opts.warmupRounds + opts.rounds; round++) {
      for (let j = 0; j < keys.length; j++) {
        const key = keys[(j + round) % keys.length] as "small" | "large";
        const bodies: unknown[] = [];
        for (let i = 0; i < opts.iterations; i++) bodies.push(JSON.parse(body));
        let allowed = 0;
        const t0 = nowNs();
        for (let i = 0; i < opts.iterations; i++) {
          const d = reviewOnce(sets[key].admitter, bodies[i], "validate");
          if (typeof d !== "string" && d.allowed) allowed++;
        }
        const s = Number(nowNs() - t0) / 1e9;
        if (allowed !== opts.iterations)
          throw new GateError(`${key}: ${opts.iterations - allowed} reviews not allowed`);
        if (round >= opts.warmupRounds) rps[key].push(opts.iterations / s);
      }
    }

    // Load and memory, in fresh processes, alternating.
    const children: Record<"small" | "large", ChildResult[]> = { small: [], large: [] };
    for (let round = 0; round < opts.loadRounds; round++) {
      for (let j = 0; j < keys.length; j++) {
        const key = keys[(j + round) % keys.length] as "small" | "large";
        const r = await runLoadChild(dirs[key]);
        if (r.errors > 0) throw new GateError(`load child ${key}: ${r.errors} error diagnostics`);
        children[key].push(r);
      }
    }
    return {
      options: opts,
      validations: large.reduce((n, p) => n + p.validations, 0),
      load: { small: medianChild(children.small), large: medianChild(children.large) },
      rps: { small: median(rps.small), large: median(rps.large) },
      rpsRatio: medianRatio(rps.large, rps.small),
    };
  } finally {
    rmSync(dirs.small, { recursive: true, force: true });
    rmSync(dirs.large, { recursive: true, force: true });
  }
}

const mb = (x: number | undefined): string => (x === undefined ? "n/a" : `${x.toFixed(0)} MB`);

export function formatScaleReport(r: ScaleBenchReport): string {
  const o = r.options;
  const row = (key: "small" | "large", label: string) => {
    const l = r.load[key];
    return [label, fmtMs(l.loadMs), mb(l.rssMb), mb(l.rssAfterGcMb), mb(l.heapUsedMb), fmtInt(r.rps[key])];
  };
  return [
    `Scale: ${o.policies} policies (${MATCHING} match the Pod; ${r.validations} validations in all), one file each;` +
      ` load in fresh processes (${o.loadRounds} each, alternating); throughput ${o.iterations} reviews per set per round,` +
      ` medians of ${o.rounds} interleaved rounds after ${o.warmupRounds} warm-up`,
    "",
    table(
      ["set", "load + compile", "RSS after load", "RSS after gc", "heap used", "reviews/s"],
      [
        row("small", `${MATCHING} matching policies`),
        row("large", `${o.policies} policies, ${MATCHING} matching`),
      ],
    ),
    "",
    `throughput ${o.policies} / ${MATCHING} (median of per-round ratios): ${fmtX(r.rpsRatio)}`,
  ].join("\n");
}

export function scaleSummary(r: ScaleBenchReport): SummaryRow[] {
  const n = r.options.policies;
  const l = r.load.large;
  const rss = l.rssAfterGcMb ?? l.rssMb;
  return [
    {
      target: "7",
      figure: `throughput, ${n} loaded / ${MATCHING} match`,
      value: `${fmtInt(r.rps.large)} reviews/s`,
      baseline: `${fmtInt(r.rps.small)} reviews/s, ${MATCHING} loaded`,
      ratio: r.rpsRatio,
      goal: "≥ 0.8×",
      met: r.rpsRatio >= 0.8,
    },
    {
      target: "7",
      figure: `load + compile ${n} policies (child)`,
      value: fmtMs(l.loadMs),
      baseline: `${fmtMs(r.load.small.loadMs)} for ${MATCHING}`,
      ratio: l.loadMs / r.load.small.loadMs,
      goal: "< 2 s",
      met: l.loadMs < 2000,
    },
    {
      target: "7",
      figure: `RSS with ${n} policies${l.rssAfterGcMb === undefined ? "" : " (after gc)"}`,
      value: mb(rss),
      baseline: `${mb(r.load.small.rssAfterGcMb ?? r.load.small.rssMb)} with ${MATCHING}`,
      ratio: rss / (r.load.small.rssAfterGcMb ?? r.load.small.rssMb),
      goal: "< 300 MB",
      met: rss < 300,
    },
  ];
}

export async function scalePart(argv: readonly string[]): Promise<PartReport> {
  return runPart(
    "scale",
    () =>
      runScaleBench({
        policies: intOption(argv, "policies", DEFAULT_SCALE_BENCH.policies),
        rounds: intOption(argv, "rounds", DEFAULT_SCALE_BENCH.rounds),
        iterations: intOption(argv, "iterations", DEFAULT_SCALE_BENCH.iterations),
        loadRounds: intOption(argv, "load-rounds", DEFAULT_SCALE_BENCH.loadRounds),
      }),
    formatScaleReport,
    scaleSummary,
  );
}

if (isMain(import.meta.url)) {
  configureAsServed();
  const at = process.argv.indexOf("--load-child");
  if (at >= 0) {
    await loadChild(process.argv[at + 1] ?? "");
  } else await runPartAlone(scalePart);
}
