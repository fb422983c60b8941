/**
 * CEL evaluation benchmark: 20 Pod-Security-style rules over a deterministic corpus of Pods, timed for
 * hand-written JavaScript, our engine and @bufbuild/cel. Before any timing, the three must agree on every
 * (rule, Pod) pair; if they do not, the run fails (exit code 1 when run directly).
 *
 * Layout: each round times every evaluator once in Pod-major order (a Pod, then its 20 rules: what an
 * admission request does) and once in rule-major order (one rule over a sample of Pods, for the per-rule
 * breakdown).
 * Rounds are interleaved and the evaluator order rotates between rounds, so drift (thermal, the other
 * tenant of the 2 shared cores, GC) lands on all of them alike. Medians over rounds are reported.
 * The closures-only tier (CELGATE_CEL_CODEGEN=never, issue 34 item 2) is one more evaluator in the
 * same rounds: its own programs, compiled from sources the compile cache keys apart, always run in
 * "never" mode, and a gate checks they never switched to generated code.
 * There is deliberately no forced `gc()` between jobs: tried, it left the rules timed right after it
 * several times slower (V8 drops compiled code and feedback on forced collections), a worse bias than
 * the garbage one job leaves to the next.
 *
 * Under tsx every named closure created at run time goes through esbuild's `__name` helper (tsx sets
 * keepNames), which costs some 450 ns per closure; code built by tsc does not pay it. Numbers from
 * `npx tsx` therefore overstate what `npm start` (dist/) would show wherever the engine creates closures
 * while evaluating; `npm run bench` runs the tsc-built copy in dist-bench/.
 *
 *   npm run bench -- cel [--pods 1000] [--rounds 7] [--seed 42]
 */
import { celEnv, parse, plan } from "@bufbuild/cel";
import { type CelValue, compile, type Program, run, toCel } from "../src/cel/index.ts";
import {
  closuresSource,
  configureAsServed,
  GateError,
  inCodegenMode,
  isMain,
  type PartReport,
  type SummaryRow,
} from "./common.ts";
import { generatePods, meanJsonSize, type Pod } from "./corpus.ts";
import {
  ADMISSION_ENV,
  type BufProgram,
  bufInput,
  compileRules,
  evalBuf,
  evalOurs,
  newState,
  planBufbuild,
} from "./engines.ts";
import { RULES, type Rule } from "./rules.ts";

export interface CelBenchOptions {
  readonly pods: number;
  readonly seed: number;
  readonly rounds: number;
  readonly warmupRounds: number;
}

export const DEFAULT_CEL_BENCH: CelBenchOptions = { pods: 1000, seed: 42, rounds: 7, warmupRounds: 1 };

export interface RuleTiming {
  readonly name: string;
  /** Median ns per evaluation. */
  readonly js: number;
  readonly ours: number;
  /** Ours on closures only (CELGATE_CEL_CODEGEN=never). */
  readonly never: number;
  readonly buf: number;
  /** Share of Pods the rule allows. */
  readonly allowed: number;
}

export interface CelBenchReport {
  readonly options: CelBenchOptions;
  readonly meanPodBytes: number;
  readonly rules: number;
  /** Rules whose bufbuild form had to be rewritten without optional syntax. */
  readonly rewritten: readonly string[];
  /** Median ns per (rule, Pod) evaluation, Pod-major. */
  readonly js: number;
  /** Ours over the plain JSON Pod, read lazily as the engine does (no conversion pass). */
  readonly oursJson: number;
  /** Ours over the Pod converted by `toCel` beforehand, outside the timing (the public API's form). */
  readonly oursConverted: number;
  /** Ours over the plain JSON Pod on closures only (CELGATE_CEL_CODEGEN=never). */
  readonly oursNever: number;
  readonly buf: number;
  /** Fastest and slowest round of each Pod-major measurement, ns per evaluation: the noise. */
  readonly spread: Readonly<Record<"js" | "json" | "conv" | "never" | "buf", readonly [number, number]>>;
  /**
   * Medians of the per-round ratios: within a round the evaluators run back to back, so a ratio taken
   * inside one round cancels most of the drift of a shared machine.
   */
  readonly ratios: {
    readonly jsonOverJs: number;
    readonly convOverJs: number;
    readonly neverOverJs: number;
    /** Closures over generated code: what the generated-code tier saves. */
    readonly neverOverJson: number;
    readonly jsonOverBuf: number;
    readonly bufOverJs: number;
  };
  readonly perRule: readonly RuleTiming[];
  /** Cold compile, ms per rule: ours (parse + check + closures), bufbuild (parse + plan). */
  readonly compileMs: { readonly ours: number; readonly buf: number };
  readonly elapsedMs: number;
}

export class DisagreementError extends GateError {}

/** Every (rule, Pod) pair through all three evaluators; a list of the disagreements (empty: all agree). */
export function findDisagreements(
  pods: readonly Pod[],
  rules: readonly Rule[],
  programs: readonly Program[],
  bufs: readonly BufProgram[],
  /** The closures-only programs, run in "never" mode. */
  closures: readonly Program[],
): string[] {
  const out: string[] = [];
  for (const pod of pods) {
    const converted = toCel(pod);
    const state = newState();
    rules.forEach((rule, i) => {
      const js = rule.js(pod);
      const ours = evalOurs(programs[i] as Program, pod as unknown as CelValue, state);
      const oursConverted = evalOurs(programs[i] as Program, converted, state);
      const never = inCodegenMode("never", () =>
        evalOurs(closures[i] as Program, pod as unknown as CelValue, state),
      );
      const buf = evalBuf(bufs[i] as BufProgram, pod);
      if (ours !== js || oursConverted !== js || never !== js || buf !== js)
        out.push(
          `${rule.name} on ${pod.metadata.name}: js=${js} ours=${String(ours)} ours over toCel=${String(oursConverted)} closures=${String(never)} bufbuild=${String(buf)}`,
        );
    });
  }
  return out;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

function minMax(xs: readonly number[]): [number, number] {
  return [Math.min(...xs), Math.max(...xs)];
}

/** The median over rounds of `a[round] / b[round]`. */
function medianRatio(a: readonly number[], b: readonly number[]): number {
  return median(a.map((x, i) => x / (b[i] as number)));
}

function now(): bigint {
  return process.hrtime.bigint();
}

/** Everything a timed loop needs, prepared outside the timing. */
interface Fixture {
  readonly pods: readonly Pod[];
  readonly celPods: readonly CelValue[];
  readonly rules: readonly Rule[];
  readonly programs: readonly Program[];
  /** The same rules compiled apart, for the closures-only tier. */
  readonly closures: readonly Program[];
  readonly bufs: readonly BufProgram[];
}

// Each loop returns how many evaluations allowed, so the work cannot be optimised away; the caller
// checks the count against the expected one.

function podMajorJs(f: Fixture): number {
  let n = 0;
  for (const pod of f.pods) for (const r of f.rules) if (r.js(pod)) n++;
  return n;
}

function podMajorOurs(f: Fixture, converted: boolean, programs = f.programs): number {
  let n = 0;
  for (let p = 0; p < f.pods.length; p++) {
    const object = (converted ? f.celPods[p] : f.pods[p]) as CelValue;
    // JSON Pods, parsed or toCel'd: the promise the engine's activations make (Activation.json).
    const act = { values: { object }, json: true };
    const state = newState();
    for (const prog of programs) {
      const r = run(prog, act, state);
      if (r.ok && r.value === true) n++;
    }
  }
  return n;
}

function podMajorBuf(f: Fixture): number {
  let n = 0;
  for (const pod of f.pods) {
    const ctx = { object: bufInput(pod) };
    for (const b of f.bufs) if (b(ctx) === true) n++;
  }
  return n;
}

/**
 * Rule-major loops run over the first PER_RULE_PODS Pods in chunks of CHUNK, each chunk REPS times in a
 * row. A chunk stays in cache, as a Pod does while an admission request runs its rules; a plain pass
 * over 1000 cold Pods timed mostly cache misses and pulled every ratio towards 1.
 */
const PER_RULE_PODS = 250;
const CHUNK = 25;
const REPS = 4;

function chunked(n: number, allowedAt: (p: number) => boolean): number {
  let k = 0;
  for (let c = 0; c < n; c += CHUNK) {
    const end = Math.min(n, c + CHUNK);
    for (let rep = 0; rep < REPS; rep++) for (let p = c; p < end; p++) if (allowedAt(p)) k++;
  }
  return k;
}

function ruleMajorJs(f: Fixture, i: number, n: number): number {
  const fn = (f.rules[i] as Rule).js;
  const pods = f.pods;
  return chunked(n, (p) => fn(pods[p] as Pod));
}

function ruleMajorOurs(f: Fixture, i: number, n: number, programs = f.programs): number {
  const prog = programs[i] as Program;
  const pods = f.pods;
  // One state for the whole loop: creating one per evaluation would time a clock read, not the rule.
  const state = newState();
  state.costLimit = Number.MAX_SAFE_INTEGER;
  return chunked(n, (p) => {
    const r = run(prog, { values: { object: pods[p] as unknown as CelValue }, json: true }, state);
    return r.ok && r.value === true;
  });
}

function ruleMajorBuf(f: Fixture, i: number, n: number): number {
  const b = f.bufs[i] as BufProgram;
  const pods = f.pods;
  return chunked(n, (p) => b({ object: bufInput(pods[p] as Pod) }) === true);
}

/**
 * The closures-only row must time closures: its programs are not the baseline's (the compile cache
 * keys them apart) and none of them switched to generated code.
 */
export function assertClosuresOnly(
  rules: readonly Rule[],
  programs: readonly Program[],
  closures: readonly Program[],
  when: string,
): void {
  const wrong = rules.filter((_, i) => closures[i] === programs[i] || (closures[i] as Program).generated());
  if (wrong.length > 0)
    throw new GateError(
      `closures-only programs ${when} are shared or generated: ${wrong.map((r) => r.name).join(", ")}`,
    );
}

/** Times `fn` once, in ns, and checks its count (a wrong count means an evaluator went astray). */
function timed(label: string, expected: number, fn: () => number): number {
  const t0 = now();
  const n = fn();
  const dt = Number(now() - t0);
  if (n !== expected) throw new DisagreementError(`${label}: ${n} allowed, expected ${expected}`);
  return dt;
}

function coldCompile(rules: readonly Rule[]): { ours: number; buf: number } {
  // compile() caches by source; trailing spaces make each source new without changing its meaning.
  const reps = 3;
  let ours = 0;
  let buf = 0;
  const env = celEnv();
  for (let k = 1; k <= reps; k++) {
    const pad = " ".repeat(k);
    let t0 = now();
    for (const r of rules)
      if (!compile(r.cel + pad, ADMISSION_ENV).ok) throw new Error(`${r.name} does not compile`);
    ours += Number(now() - t0);
    t0 = now();
    for (const r of rules) plan(env, parse(r.bufbuild + pad));
    buf += Number(now() - t0);
  }
  const per = reps * rules.length * 1e6;
  return { ours: ours / per, buf: buf / per };
}

export function runCelBench(options: Partial<CelBenchOptions> = {}): CelBenchReport {
  const opts: CelBenchOptions = { ...DEFAULT_CEL_BENCH, ...options };
  const started = performance.now();
  const pods = generatePods(opts.pods, opts.seed);
  const rules = RULES;
  const compileMs = coldCompile(rules);
  const programs = compileRules(rules);
  const closures = compileRules(rules.map((r) => ({ ...r, cel: closuresSource(r.cel) })));
  const bufs = planBufbuild(rules);

  const disagreements = findDisagreements(pods, rules, programs, bufs, closures);
  if (disagreements.length > 0) {
    const shown = disagreements.slice(0, 20).join("\n  ");
    throw new DisagreementError(
      `${disagreements.length} (rule, Pod) pairs disagree; first ones:\n  ${shown}`,
    );
  }

  // The rules ran often enough above to switch to generated code; timing their closures instead
  // (as this part once did, unnoticed, when its activations lacked the JSON promise) is a gate.
  const onClosures = rules.filter((_, i) => !(programs[i] as Program).generated({ json: true }));
  if (onClosures.length > 0)
    throw new GateError(`rules not running as generated code: ${onClosures.map((r) => r.name).join(", ")}`);
  assertClosuresOnly(rules, programs, closures, "before timing");

  const f: Fixture = { pods, celPods: pods.map((p) => toCel(p)), rules, programs, closures, bufs };
  const allowedPerRule = rules.map((r) => pods.filter((p) => r.js(p)).length);
  const sample = Math.min(PER_RULE_PODS, pods.length);
  const allowedInSample = rules.map((r) => pods.slice(0, sample).filter((p) => r.js(p)).length * REPS);
  const allowedTotal = allowedPerRule.reduce((a, b) => a + b, 0);
  const evals = pods.length * rules.length;

  const podMajor: Record<"js" | "json" | "conv" | "never" | "buf", number[]> = {
    js: [],
    json: [],
    conv: [],
    never: [],
    buf: [],
  };
  type Slot = { js: number[]; ours: number[]; never: number[]; buf: number[] };
  const perRule = rules.map((): Slot => ({ js: [], ours: [], never: [], buf: [] }));

  for (let round = 0; round < opts.warmupRounds + opts.rounds; round++) {
    const record = round >= opts.warmupRounds;
    const jobs: [keyof typeof podMajor, () => number][] = [
      ["js", () => timed("js", allowedTotal, () => podMajorJs(f))],
      ["json", () => timed("ours", allowedTotal, () => podMajorOurs(f, false))],
      ["conv", () => timed("ours over toCel", allowedTotal, () => podMajorOurs(f, true))],
      [
        "never",
        () =>
          inCodegenMode("never", () =>
            timed("ours on closures", allowedTotal, () => podMajorOurs(f, false, f.closures)),
          ),
      ],
      ["buf", () => timed("bufbuild", allowedTotal, () => podMajorBuf(f))],
    ];
    for (let j = 0; j < jobs.length; j++) {
      const [key, job] = jobs[(j + round) % jobs.length] as [keyof typeof podMajor, () => number];
      const ns = job();
      if (record) podMajor[key].push(ns / evals);
    }
    for (let i = 0; i < rules.length; i++) {
      const expected = allowedInSample[i] as number;
      const slot = perRule[i] as Slot;
      const ruleJobs: [keyof Slot, () => number][] = [
        ["js", () => timed("js", expected, () => ruleMajorJs(f, i, sample))],
        ["ours", () => timed("ours", expected, () => ruleMajorOurs(f, i, sample))],
        [
          "never",
          () =>
            inCodegenMode("never", () =>
              timed("ours on closures", expected, () => ruleMajorOurs(f, i, sample, f.closures)),
            ),
        ],
        ["buf", () => timed("bufbuild", expected, () => ruleMajorBuf(f, i, sample))],
      ];
      for (let j = 0; j < ruleJobs.length; j++) {
        const [key, job] = ruleJobs[(j + round + i) % ruleJobs.length] as [keyof Slot, () => number];
        const ns = job();
        if (record) slot[key].push(ns / (sample * REPS));
      }
    }
  }

  assertClosuresOnly(rules, programs, closures, "after timing");

  return {
    options: opts,
    meanPodBytes: meanJsonSize(pods),
    rules: rules.length,
    rewritten: rules.filter((r) => r.bufbuild !== r.cel).map((r) => r.name),
    js: median(podMajor.js),
    oursJson: median(podMajor.json),
    oursConverted: median(podMajor.conv),
    oursNever: median(podMajor.never),
    buf: median(podMajor.buf),
    spread: {
      js: minMax(podMajor.js),
      json: minMax(podMajor.json),
      conv: minMax(podMajor.conv),
      never: minMax(podMajor.never),
      buf: minMax(podMajor.buf),
    },
    ratios: {
      jsonOverJs: medianRatio(podMajor.json, podMajor.js),
      convOverJs: medianRatio(podMajor.conv, podMajor.js),
      neverOverJs: medianRatio(podMajor.never, podMajor.js),
      neverOverJson: medianRatio(podMajor.never, podMajor.json),
      jsonOverBuf: medianRatio(podMajor.json, podMajor.buf),
      bufOverJs: medianRatio(podMajor.buf, podMajor.js),
    },
    perRule: rules.map((r, i) => {
      const slot = perRule[i] as Slot;
      return {
        name: r.name,
        js: median(slot.js),
        ours: median(slot.ours),
        never: median(slot.never),
        buf: median(slot.buf),
        allowed: (allowedPerRule[i] as number) / pods.length,
      };
    }),
    compileMs,
    elapsedMs: performance.now() - started,
  };
}

const fmtNs = (ns: number): string => Math.round(ns).toLocaleString("en-US");
const fmtSpread = ([lo, hi]: readonly [number, number]): string => `${fmtNs(lo)}..${fmtNs(hi)}`;
const fmtX = (x: number): string => (x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2));

function table(header: readonly string[], rows: readonly (readonly string[])[], rightFrom = 1): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((s, c) => (c >= rightFrom ? s.padStart(widths[c] as number) : s.padEnd(widths[c] as number))).join(" | ")} |`;
  const sep = `|${widths.map((w, c) => (c >= rightFrom ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(header), sep, ...rows.map(line)].join("\n");
}

/** The rule with the highest ratio to its JavaScript form, in the tier given. */
function worstRule(r: CelBenchReport, tier: "ours" | "never" = "ours"): RuleTiming {
  return r.perRule.reduce((a, b) => (b[tier] / b.js > a[tier] / a.js ? b : a));
}

export function formatCelReport(r: CelBenchReport): string {
  const o = r.options;
  const out: string[] = [];
  out.push(
    `CEL evaluation: ${r.rules} rules x ${o.pods} Pods (seed ${o.seed}, mean ${Math.round(r.meanPodBytes)} B of JSON),` +
      ` medians of ${o.rounds} rounds after ${o.warmupRounds} warm-up; ns per (rule, Pod) evaluation`,
  );
  out.push("");
  out.push(
    table(
      ["evaluator", "ns/eval (median)", "rounds min..max", "x JS"],
      [
        ["hand-written JavaScript", fmtNs(r.js), fmtSpread(r.spread.js), "1.0"],
        [
          "celgate over the plain JSON Pod (as the engine runs)",
          fmtNs(r.oursJson),
          fmtSpread(r.spread.json),
          fmtX(r.ratios.jsonOverJs),
        ],
        [
          "celgate over a Pod toCel converted beforehand",
          fmtNs(r.oursConverted),
          fmtSpread(r.spread.conv),
          fmtX(r.ratios.convOverJs),
        ],
        [
          "celgate on closures only (CELGATE_CEL_CODEGEN=never), JSON Pod",
          fmtNs(r.oursNever),
          fmtSpread(r.spread.never),
          fmtX(r.ratios.neverOverJs),
        ],
        [
          "@bufbuild/cel 0.6.1, plain JSON input",
          fmtNs(r.buf),
          fmtSpread(r.spread.buf),
          fmtX(r.ratios.bufOverJs),
        ],
      ],
    ),
  );
  out.push("");
  out.push(
    `ratios (medians of per-round ratios): ours/JS = ${fmtX(r.ratios.jsonOverJs)} over JSON,` +
      ` ${fmtX(r.ratios.convOverJs)} over converted Pods, ${fmtX(r.ratios.neverOverJs)} on closures only;` +
      ` closures/generated = ${fmtX(r.ratios.neverOverJson)}; ours/bufbuild = ${fmtX(r.ratios.jsonOverBuf)}`,
  );
  out.push(
    `cold compile per rule: celgate ${r.compileMs.ours.toFixed(3)} ms (parse + check), bufbuild ${r.compileMs.buf.toFixed(3)} ms (parse + plan)`,
  );
  out.push("");
  const worst = worstRule(r);
  const worstNever = worstRule(r, "never");
  out.push(
    `Per rule (rule-major, first ${Math.min(PER_RULE_PODS, o.pods)} Pods in cache-warm chunks of ${CHUNK} x ${REPS}; ns per evaluation):`,
  );
  out.push(
    table(
      ["rule", "allowed", "JS", "ours", "closures", "bufbuild", "ours/JS", "closures/JS", "ours/bufbuild"],
      r.perRule.map((p) => [
        p === worst ? `${p.name} (worst)` : p === worstNever ? `${p.name} (worst on closures)` : p.name,
        `${Math.round(p.allowed * 100)}%`,
        fmtNs(p.js),
        fmtNs(p.ours),
        fmtNs(p.never),
        fmtNs(p.buf),
        fmtX(p.ours / p.js),
        fmtX(p.never / p.js),
        fmtX(p.ours / p.buf),
      ]),
    ),
  );
  out.push("");
  out.push(
    `bufbuild forms rewritten without optional syntax (.? / orValue / hasValue): ${r.rewritten.length} of ${r.rules}` +
      ` (${r.rewritten.join(", ")})`,
  );
  out.push(`elapsed ${(r.elapsedMs / 1000).toFixed(1)} s`);
  return out.join("\n");
}

function intArg(argv: readonly string[], name: string): number | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} needs a positive integer`);
  return v;
}

export function celOptionsFromArgs(argv: readonly string[]): Partial<CelBenchOptions> {
  const out: { -readonly [K in keyof CelBenchOptions]?: number } = {};
  const pods = intArg(argv, "pods");
  const rounds = intArg(argv, "rounds");
  const seed = intArg(argv, "seed");
  if (pods !== undefined) out.pods = pods;
  if (rounds !== undefined) out.rounds = rounds;
  if (seed !== undefined) out.seed = seed;
  return out;
}

export function celSummary(r: CelBenchReport): SummaryRow[] {
  const ns = (x: number) => `${fmtNs(x)} ns/eval`;
  const baseline = `${ns(r.js)} hand-written JS`;
  return [
    {
      target: "1",
      figure: "CEL evaluation, 20 rules over the JSON Pod",
      value: ns(r.oursJson),
      baseline,
      ratio: r.ratios.jsonOverJs,
      goal: "≤ 3×",
      met: r.ratios.jsonOverJs <= 3,
    },
    {
      target: "1",
      figure: "worst single rule (rule-major)",
      value: worstRule(r).name,
      baseline: "same rule in JS",
      ratio: worstRule(r).ours / worstRule(r).js,
      goal: "≤ 5×",
      met: worstRule(r).ours / worstRule(r).js <= 5,
    },
    {
      target: "1",
      figure: "closures only (CODEGEN=never), 20 rules",
      value: ns(r.oursNever),
      baseline,
      ratio: r.ratios.neverOverJs,
      goal: "≤ 3×",
      met: r.ratios.neverOverJs <= 3,
    },
    {
      target: "1",
      figure: "closures only, worst single rule",
      value: worstRule(r, "never").name,
      baseline: "same rule in JS",
      ratio: worstRule(r, "never").never / worstRule(r, "never").js,
      goal: "≤ 5×",
      met: worstRule(r, "never").never / worstRule(r, "never").js <= 5,
    },
  ];
}

export function celPart(argv: readonly string[]): PartReport {
  try {
    const r = runCelBench(celOptionsFromArgs(argv));
    console.log(formatCelReport(r));
    return { part: "cel", rows: celSummary(r), gateFailures: [] };
  } catch (e) {
    if (e instanceof GateError) {
      const what = e instanceof DisagreementError ? "evaluators disagree" : "a gate failed";
      console.error(`${what}, no timing reported:\n${e.message}`);
      return { part: "cel", rows: [], gateFailures: [`cel: ${e.message}`] };
    }
    throw e;
  }
}

/** Runs the benchmark and prints the report; returns the process exit code. */
export function main(argv: readonly string[]): number {
  return celPart(argv).gateFailures.length > 0 ? 1 : 0;
}

if (isMain(import.meta.url)) {
  configureAsServed();
  process.exitCode = main(process.argv.slice(2));
}
