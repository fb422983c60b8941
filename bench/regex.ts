/**
 * Issue 7, target 2: regular expressions. CEL's `matches` (and Kubernetes' `find`/`findAll`) go
 * through src/cel/regex/, which gives RE2's semantics in time linear in the input and memory
 * independent of it: V8's own engine for translated patterns on short texts, lazy DFAs beyond.
 *
 * (a) Ordinary patterns, the kind admission policies use (names, image references, versions,
 *     registries, quantities), each tested against one deterministic corpus of strings: the compiled
 *     regex's `test` (what `matches` calls, cache lookup excluded) against a native `RegExp` built
 *     from the same pattern. Goal: within 3x, each pattern.
 * (b) Hostile input: patterns that backtrack exponentially (or, `(.*a){20}x` of the fault trial, to
 *     the 20th power) on a run of one character that never completes a match, timed at two input
 *     lengths ten times apart; both are past the texts V8 is given, so the automata answer. Linear
 *     time means about 10x. The baseline is the same native RegExp in a child process without the
 *     V8 flag regex/v8.ts sets (that flag is process-wide, so it would rescue natives in this process
 *     too), timed at two lengths only a few characters apart.
 *
 * Gates, before timing: on every (pattern, string) pair of (a) the compiled regex and the native
 * RegExp agree (the corpus is ASCII, where RE2's and JavaScript's classes mean the same), every
 * pattern both matches and rejects some string, and (b)'s answers are right.
 *
 *   node dist-bench/bench/regex.js [--rounds 7] [--iterations 200]
 */
import { spawnSync } from "node:child_process";
import { compileRegex } from "../src/cel/regex/index.ts";
import type { CelRegex } from "../src/cel/library/types.ts";
import {
  fmtX,
  GateError,
  intOption,
  isMain,
  median,
  medianRatio,
  nowNs,
  type PartReport,
  runPart,
  runPartAlone,
  type SummaryRow,
  table,
} from "./common.ts";
import { Rng } from "./corpus.ts";

export interface OrdinaryPattern {
  readonly name: string;
  readonly pattern: string;
}

export const ORDINARY: readonly OrdinaryPattern[] = [
  { name: "DNS-1123 label", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" },
  {
    name: "DNS-1123 subdomain",
    pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
  },
  { name: "image tag", pattern: ":[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$" },
  { name: "image digest", pattern: "@sha256:[a-f0-9]{64}$" },
  { name: "allowed registries", pattern: "^(registry\\.example\\.com|ghcr\\.io/acme)/" },
  {
    name: "semantic version",
    pattern: "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$",
  },
  { name: "label value", pattern: "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$" },
  { name: "CPU quantity", pattern: "^[0-9]+(\\.[0-9]+)?m?$" },
  { name: "team e-mail", pattern: "^[a-z0-9._%+-]+@(eng|ops)\\.example\\.com$" },
  { name: "literal anywhere", pattern: "latest" },
];

const WORDS = ["web", "api", "cache", "db", "frontend", "worker", "Batch", "sidecar", "envoy", "nginx"];

/** The strings every ordinary pattern is tested against: ASCII, a mix of the kinds policies check. */
export function ordinaryCorpus(n = 400, seed = 7): string[] {
  const r = new Rng(seed);
  const name = (): string => `${r.pick(WORDS)}${r.chance(0.5) ? `-${r.int(0, 99)}` : ""}`;
  const kinds: readonly (() => string)[] = [
    name,
    () => `${name()}.${r.pick(["svc", "default", "example"])}.${r.pick(["local", "com"])}`,
    () =>
      `${r.pick(["registry.example.com", "ghcr.io/acme", "docker.io/library", "quay.io/x"])}/${name()}:${r.pick(["1.27", "latest", `v${r.int(0, 3)}.${r.int(0, 20)}.${r.int(0, 9)}`])}`,
    () =>
      `${r.pick(["registry.example.com", "ghcr.io/acme"])}/${name()}@sha256:${r.hex(r.chance(0.9) ? 64 : 40)}`,
    () =>
      `${r.chance(0.5) ? "v" : ""}${r.int(0, 2)}.${r.int(0, 30)}.${r.int(0, 9)}${r.chance(0.3) ? `-rc.${r.int(1, 3)}` : ""}`,
    () => `${r.int(0, 4)}${r.chance(0.3) ? `.${r.int(0, 9)}` : ""}${r.pick(["", "m", "Mi", "Gi"])}`,
    () => `${r.pick(["ana", "bo", "chen.li", "d_k"])}@${r.pick(["eng", "ops", "sales"])}.example.com`,
    () => (r.chance(0.5) ? `${name()}_${r.int(0, 9)}.x` : `-${name()}-`),
    () => `${name()} ${name()}`,
  ];
  return Array.from({ length: n }, () => r.pick(kinds)());
}

export interface HostileCase {
  readonly pattern: string;
  /** The input of length n: a run that the pattern's nested loops can split in exponentially many ways. */
  readonly input: (n: number) => string;
  readonly expected: boolean;
  /** Input lengths for the native baseline, a few characters apart: its time grows exponentially. */
  readonly nativeLengths: readonly [number, number];
}

export const HOSTILE: readonly HostileCase[] = [
  { pattern: "(a+)+$", input: (n) => `${"a".repeat(n)}!`, expected: false, nativeLengths: [18, 22] },
  { pattern: "(a|aa)+$", input: (n) => `${"a".repeat(n)}!`, expected: false, nativeLengths: [26, 30] },
  { pattern: "^(\\w+\\s?)*$", input: (n) => `${"a".repeat(n)}!`, expected: false, nativeLengths: [18, 22] },
  { pattern: "(x+x+)+y", input: (n) => "x".repeat(n), expected: false, nativeLengths: [18, 22] },
  { pattern: "(.*a){20}x", input: (n) => "a".repeat(n), expected: false, nativeLengths: [20, 23] },
];

/** Problems with (a)'s corpus and (b)'s answers; empty when all is right. */
export function regexGateProblems(
  patterns: readonly OrdinaryPattern[],
  corpus: readonly string[],
  hostile: readonly HostileCase[] = HOSTILE,
): string[] {
  const out: string[] = [];
  for (const p of patterns) {
    const ours = compileRegex(p.pattern);
    const native = new RegExp(p.pattern);
    let matched = 0;
    for (const s of corpus) {
      const a = ours.test(s);
      if (a !== native.test(s))
        out.push(
          `${p.name}: ${JSON.stringify(s)} is ${a ? "" : "not "}matched, a native RegExp says otherwise`,
        );
      if (a) matched++;
    }
    if (matched === 0 || matched === corpus.length)
      out.push(`${p.name}: the corpus ${matched === 0 ? "never" : "always"} matches; it must do both`);
  }
  for (const h of hostile) {
    const got = compileRegex(h.pattern).test(h.input(1000));
    if (got !== h.expected)
      out.push(`${h.pattern}: answered ${got} on hostile input, expected ${h.expected}`);
  }
  return out;
}

export interface RegexBenchOptions {
  readonly rounds: number;
  readonly warmupRounds: number;
  /** Passes over the corpus per pattern per round. */
  readonly iterations: number;
  readonly hostileLengths: readonly [number, number];
}

export const DEFAULT_REGEX_BENCH: RegexBenchOptions = {
  rounds: 7,
  warmupRounds: 2,
  iterations: 200,
  hostileLengths: [10_000, 100_000],
};

export interface OrdinaryResult {
  readonly name: string;
  readonly pattern: string;
  /** Median ns per test(), ours and native. */
  readonly oursNs: number;
  readonly nativeNs: number;
  /** Median over rounds of ours / native. */
  readonly ratio: number;
}

export interface HostileResult {
  readonly pattern: string;
  /** Median ms at the two lengths. */
  readonly shortMs: number;
  readonly longMs: number;
  /** Native RegExp without the linear fallback, in a child; absent when it did not finish. */
  readonly native?: NativeTimes;
}

export interface RegexBenchReport {
  readonly options: RegexBenchOptions;
  readonly corpusSize: number;
  readonly ordinary: readonly OrdinaryResult[];
  readonly hostile: readonly HostileResult[];
}

/** ns per test() over `iterations` passes; the matches counted must be `iterations * matches`. */
function passes(
  test: (s: string) => boolean,
  corpus: readonly string[],
  iterations: number,
  matches: number,
): number {
  let hits = 0;
  const t0 = nowNs();
  for (let k = 0; k < iterations; k++)
    for (let i = 0; i < corpus.length; i++) if (test(corpus[i] as string)) hits++;
  const dt = Number(nowNs() - t0);
  if (hits !== iterations * matches)
    throw new GateError(`${hits} matches in ${iterations} passes, expected ${iterations * matches}`);
  return dt / (iterations * corpus.length);
}

function timeOnce(re: CelRegex, input: string): number {
  const t0 = nowNs();
  re.test(input);
  return Number(nowNs() - t0) / 1e6;
}

export interface NativeTimes {
  readonly lengths: readonly [number, number];
  readonly shortMs: number;
  readonly longMs: number;
}

const NATIVE_CHILD_TIMEOUT_MS = 60_000;

/**
 * The native baseline for (b), in a child process that never loads regex/ (so V8 backtracks as
 * it does by default). Each RegExp runs once on a short input first: V8 interprets a new RegExp's
 * bytecode before compiling it, which would swamp the first timing. Undefined when the child does
 * not finish in time.
 */
function nativeHostile(cases: readonly HostileCase[]): NativeTimes[] | undefined {
  const inputs = cases.map((h) => ({
    pattern: h.pattern,
    warm: h.input(4),
    short: h.input(h.nativeLengths[0]),
    long: h.input(h.nativeLengths[1]),
  }));
  const script = `
const out = ${JSON.stringify(inputs)}.map((c) => {
  const re = new RegExp(c.pattern);
  re.test(c.warm);
  const time = (s) => { const t0 = process.hrtime.bigint(); re.test(s); return Number(process.hrtime.bigint() - t0) / 1e6; };
  return [time(c.short), time(c.long)];
});
process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ["-e", script], {
    timeout: NATIVE_CHILD_TIMEOUT_MS,
    encoding: "utf8",
  });
  if (r.status !== 0) return undefined;
  const times = JSON.parse(r.stdout) as [number, number][];
  return cases.map((h, i) => {
    const [shortMs, longMs] = times[i] as [number, number];
    return { lengths: h.nativeLengths, shortMs, longMs };
  });
}

export function runRegexBench(options: Partial<RegexBenchOptions> = {}): RegexBenchReport {
  const opts = { ...DEFAULT_REGEX_BENCH, ...options };
  const corpus = ordinaryCorpus();
  const problems = regexGateProblems(ORDINARY, corpus);
  if (problems.length > 0) throw new GateError(problems.join("\n"));

  const compiled = ORDINARY.map((p) => {
    const native = new RegExp(p.pattern);
    return { p, ours: compileRegex(p.pattern), native, matches: corpus.filter((s) => native.test(s)).length };
  });
  const ours = compiled.map(() => [] as number[]);
  const native = compiled.map(() => [] as number[]);
  for (let round = 0; round < opts.warmupRounds + opts.rounds; round++) {
    compiled.forEach((c, i) => {
      // Alternate which goes first, so neither always runs on the other's warm caches.
      const pair = [
        () => passes((s) => c.ours.test(s), corpus, opts.iterations, c.matches),
        () => passes((s) => c.native.test(s), corpus, opts.iterations, c.matches),
      ];
      const [a, b] = round % 2 === 0 ? [pair[0], pair[1]] : [pair[1], pair[0]];
      const first = (a as () => number)();
      const second = (b as () => number)();
      if (round < opts.warmupRounds) return;
      (ours[i] as number[]).push(round % 2 === 0 ? first : second);
      (native[i] as number[]).push(round % 2 === 0 ? second : first);
    });
  }
  const ordinary = compiled.map((c, i) => ({
    name: c.p.name,
    pattern: c.p.pattern,
    oursNs: median(ours[i] as number[]),
    nativeNs: median(native[i] as number[]),
    ratio: medianRatio(ours[i] as number[], native[i] as number[]),
  }));

  const nativeTimes = nativeHostile(HOSTILE);
  const hostile = HOSTILE.map((h, i) => {
    const re = compileRegex(h.pattern);
    const [shortN, longN] = opts.hostileLengths;
    const short = h.input(shortN);
    const long = h.input(longN);
    const shorts: number[] = [];
    const longs: number[] = [];
    for (let k = 0; k < 3; k++) {
      shorts.push(timeOnce(re, short));
      longs.push(timeOnce(re, long));
    }
    const n = nativeTimes?.[i];
    return {
      pattern: h.pattern,
      shortMs: median(shorts),
      longMs: median(longs),
      ...(n !== undefined && { native: n }),
    };
  });
  return { options: opts, corpusSize: corpus.length, ordinary, hostile };
}

export function formatRegexReport(r: RegexBenchReport): string {
  const o = r.options;
  const [shortN, longN] = o.hostileLengths;
  return [
    `Regular expressions: ${r.ordinary.length} ordinary patterns over ${r.corpusSize} strings, ${o.iterations} passes per round,` +
      ` medians of ${o.rounds} rounds after ${o.warmupRounds} warm-up`,
    "",
    table(
      ["pattern", "celgate test()", "native RegExp", "x native"],
      r.ordinary.map((p) => [
        p.name,
        `${p.oursNs.toFixed(0)} ns`,
        `${p.nativeNs.toFixed(0)} ns`,
        fmtX(p.ratio),
      ]),
    ),
    "",
    `Hostile input (celgate: medians of 3 at ${shortN.toLocaleString("en-US")} and ${longN.toLocaleString("en-US")} characters;` +
      " a native RegExp without the linear fallback, in a child process, at a few characters):",
    "",
    table(
      ["pattern", `celgate ${shortN}`, `celgate ${longN}`, "growth", "native (chars: time)", "growth"],
      r.hostile.map((h) => [
        h.pattern.replaceAll("|", "\\|"),
        `${h.shortMs.toFixed(2)} ms`,
        `${h.longMs.toFixed(2)} ms`,
        `${fmtX(h.longMs / h.shortMs)}×`,
        h.native
          ? `${h.native.lengths[0]}: ${h.native.shortMs.toFixed(2)} ms, ${h.native.lengths[1]}: ${h.native.longMs.toFixed(2)} ms`
          : "did not finish",
        h.native ? `${fmtX(h.native.longMs / h.native.shortMs)}×` : "-",
      ]),
    ),
  ].join("\n");
}

export function regexSummary(r: RegexBenchReport): SummaryRow[] {
  const ratios = r.ordinary.map((p) => p.ratio);
  const medianPattern = median(ratios);
  const worst = r.ordinary.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  const growth = (h: HostileResult): number => h.longMs / h.shortMs;
  const steepest = r.hostile.reduce((a, b) => (growth(b) > growth(a) ? b : a));
  const [shortN, longN] = r.options.hostileLengths;
  return [
    {
      target: "2",
      figure: `regex test(), ordinary patterns (median of ${r.ordinary.length})`,
      value: `${median(r.ordinary.map((p) => p.oursNs)).toFixed(0)} ns`,
      baseline: `${median(r.ordinary.map((p) => p.nativeNs)).toFixed(0)} ns native RegExp`,
      ratio: medianPattern,
      goal: "≤ 3×",
      met: medianPattern <= 3,
    },
    {
      target: "2",
      figure: "regex, worst ordinary pattern",
      value: worst.name,
      baseline: "same pattern, native RegExp",
      ratio: worst.ratio,
      goal: "≤ 3×",
      met: worst.ratio <= 3,
    },
    {
      target: "2",
      figure: `regex, hostile input ${longN / shortN}× longer (steepest)`,
      value: `${steepest.longMs.toFixed(1)} ms`,
      baseline: `${steepest.shortMs.toFixed(1)} ms at ${shortN.toLocaleString("en-US")} chars`,
      ratio: growth(steepest),
      goal: "linear (≈ 10×)",
      met: growth(steepest) <= 2 * (longN / shortN),
    },
  ];
}

export async function regexPart(argv: readonly string[]): Promise<PartReport> {
  return runPart(
    "regex",
    async () =>
      runRegexBench({
        rounds: intOption(argv, "rounds", DEFAULT_REGEX_BENCH.rounds),
        iterations: intOption(argv, "iterations", DEFAULT_REGEX_BENCH.iterations),
      }),
    formatRegexReport,
    regexSummary,
  );
}

if (isMain(import.meta.url)) await runPartAlone(regexPart);
