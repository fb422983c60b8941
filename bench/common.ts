/**
 * What every benchmark part shares: where the project is (the parts run from bench/ under tsx and from
 * dist-bench/bench/ when built), medians, tables, and the shape of the rows that `npm run bench`
 * gathers into its one summary table.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CodegenMode, setCodegenMode } from "../src/cel/configure.ts";
import { configureRuntime, runtimeOptionsFromEnv } from "../src/cel/index.ts";

/**
 * The project root: the nearest directory above this file holding package.json. Paths are never
 * computed relative to import.meta.url directly, because the built copy sits one level deeper.
 */
export const ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error("bench: cannot find the project root (no package.json above bench/)");
})();

export const rootPath = (...parts: string[]): string => join(ROOT, ...parts);

/** True when running the tsc-built copy (dist-bench), false under tsx. */
export const BUILT = import.meta.url.endsWith(".js");

/** How a child process runs a bench module: plain node when built, through tsx otherwise. */
export function nodeArgsFor(moduleUrl: string): string[] {
  const file = fileURLToPath(moduleUrl);
  return file.endsWith(".ts") ? ["--import", "tsx", file] : [file];
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** The median over rounds of `a[round] / b[round]`: a ratio taken within a round cancels most drift. */
export function medianRatio(a: readonly number[], b: readonly number[]): number {
  return median(a.map((x, i) => x / (b[i] as number)));
}

export function nowNs(): bigint {
  return process.hrtime.bigint();
}

export const fmtInt = (n: number): string => Math.round(n).toLocaleString("en-US");
export const fmtX = (x: number): string =>
  !Number.isFinite(x) ? "n/a" : x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3);
export const fmtUs = (ns: number): string => `${(ns / 1000).toFixed(1)} µs`;
export const fmtMs = (ms: number): string => `${ms.toFixed(ms >= 100 ? 0 : 1)} ms`;

/** A markdown table, left-aligned up to column `rightFrom`, right-aligned from there. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightFrom = 1,
): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((s, c) => (c >= rightFrom ? s.padStart(widths[c] as number) : s.padEnd(widths[c] as number))).join(" | ")} |`;
  const sep = `|${widths.map((w, c) => (c >= rightFrom ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(header), sep, ...rows.map(line)].join("\n");
}

/** One line of the summary table. */
export interface SummaryRow {
  /** Issue 7's target number and a short name of the figure. */
  readonly target: string;
  readonly figure: string;
  /** The measured figure, formatted with its unit. */
  readonly value: string;
  /** The baseline measured in the same run, formatted, with what it is; "" when the goal is absolute. */
  readonly baseline: string;
  /** value / baseline, when both are numbers of the same kind. */
  readonly ratio: number | undefined;
  /** The goal in words, e.g. "≤ 3×" or "< 2 s". */
  readonly goal: string;
  /**
   * undefined: not decided here (pending, or a reference row whose goal is "reference", such as the
   * hand-written-JS floors). Timing never fails the run.
   */
  readonly met: boolean | undefined;
}

/** What each part hands back to run.ts. `gateFailures` non-empty makes `npm run bench` exit non-zero. */
export interface PartReport {
  readonly part: string;
  readonly rows: readonly SummaryRow[];
  readonly gateFailures: readonly string[];
}

/** A correctness gate that failed: the part stops before timing and reports it. */
export class GateError extends Error {}

export function intOption(argv: readonly string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} needs a positive integer`);
  return v;
}

/**
 * Sets the evaluator up as `celgate serve` runs it (cel/configure.ts): the codegen mode from
 * CELGATE_CEL_CODEGEN and V8's raised bytecode limit. Every bench entry point calls it first.
 */
export function configureAsServed(): void {
  configureRuntime(runtimeOptionsFromEnv(process.env));
}

/**
 * Runs `fn` with the evaluator in codegen mode `mode` (CELGATE_CEL_CODEGEN's values), then restores
 * the mode. The closures-only rows (issue 34 item 2) run their own programs, compiled from sources
 * that differ from the baseline's (the compile cache is keyed by source), only inside
 * `inCodegenMode("never", …)`: a program consults the mode until it has generated its code, and
 * one that never runs outside "never" stays on its closures.
 */
export function inCodegenMode<T>(mode: CodegenMode, fn: () => T): T {
  const before = setCodegenMode(mode);
  try {
    return fn();
  } finally {
    setCodegenMode(before);
  }
}

/** A source the compile cache keys apart from `source` and that means the same: trailing newline. */
export function closuresSource(source: string): string {
  return `${source}\n`;
}

export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  return fileURLToPath(moduleUrl) === entry || fileURLToPath(moduleUrl) === `${entry}.js`;
}

/**
 * Runs one part: its detailed table on stdout and its summary rows, or, when a correctness gate
 * fails, no timings at all and the failure (the only thing that makes `npm run bench` fail).
 */
export async function runPart<R>(
  part: string,
  run: () => Promise<R>,
  format: (r: R) => string,
  summary: (r: R) => SummaryRow[],
): Promise<PartReport> {
  try {
    const r = await run();
    console.log(format(r));
    return { part, rows: summary(r), gateFailures: [] };
  } catch (e) {
    if (!(e instanceof GateError)) throw e;
    console.error(`${part} benchmark: correctness gate failed, no timing reported:\n${e.message}`);
    return { part, rows: [], gateFailures: [`${part}: ${e.message}`] };
  }
}

/** A part run on its own (`node dist-bench/bench/<part>.js`): its options from argv, exit 1 on a failed gate. */
export async function runPartAlone(part: (argv: readonly string[]) => Promise<PartReport>): Promise<void> {
  configureAsServed();
  const report = await part(process.argv.slice(2));
  process.exitCode = report.gateFailures.length > 0 ? 1 : 0;
}

/** A ValidatingAdmissionPolicy with one resource rule and its Deny binding, as YAML text. */
export function validatingPolicyYaml(
  name: string,
  rule: { group: string; version: string; resource: string; operations: readonly string[] },
  validations: readonly { expression: string; message?: string }[],
): string {
  // JSON strings are valid YAML double-quoted scalars, so no CEL text needs YAML escaping by hand.
  const items = validations
    .map(
      (v) =>
        `    - expression: ${JSON.stringify(v.expression)}` +
        (v.message === undefined ? "" : `\n      message: ${JSON.stringify(v.message)}`),
    )
    .join("\n");
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [${JSON.stringify(rule.group)}]
        apiVersions: [${JSON.stringify(rule.version)}]
        operations: [${rule.operations.map((o) => JSON.stringify(o)).join(", ")}]
        resources: [${JSON.stringify(rule.resource)}]
  validations:
${items}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${name}
  validationActions: [Deny]
`;
}
