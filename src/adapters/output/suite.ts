/**
 * Reports of `celgate test`: text for people (a line per case, and for a failure what differed and
 * how the policies decided, then the failed cases again in short), JSON for tools, and JUnit XML
 * for CI dashboards. The text report ends with `N passed, M failed` (and errors and skipped cases
 * when there are any) alone on a line, the form CI systems read.
 */
import { stringify as yamlStringify } from "yaml";
import { describeCheck } from "../../cel/index.ts";
import { type Palette, PLAIN } from "./colour.ts";
import { formatDiagnostics, plural } from "./diagnostics.ts";
import type { CaseResult, Mismatch, SuiteResult } from "../../suite/run.ts";
import { lineDiff } from "./diff.ts";
import { formatResultsTable, type ResourceEvaluation, resultEntries } from "./results.ts";
import { stringifyJson } from "../../request/json-deep.ts";

export interface SuiteSummary {
  readonly passed: number;
  readonly failed: number;
  /** Suite files with errors, whose cases were not run. */
  readonly broken: number;
  /** Cases `--run` did not select. */
  readonly skipped: number;
}

export function summarize(suites: readonly SuiteResult[]): SuiteSummary {
  const cases = suites.flatMap((s) => s.cases);
  const passed = cases.filter((c) => c.passed).length;
  return {
    passed,
    failed: cases.length - passed,
    broken: suites.filter((s) => s.broken).length,
    skipped: suites.reduce((n, s) => n + s.skipped, 0),
  };
}

/**
 * The closing line CI reads: `12 passed, 1 failed`, then `, 2 errors` (suite files with errors)
 * and `, 3 skipped` (cases --run left out) when there are any.
 */
export function summaryLine(s: SuiteSummary, palette: Palette = PLAIN): string {
  const parts = [
    s.passed > 0 ? palette.pass(`${s.passed} passed`) : `${s.passed} passed`,
    s.failed > 0 ? palette.fail(`${s.failed} failed`) : `${s.failed} failed`,
    ...(s.broken > 0 ? [palette.error(plural(s.broken, "error", "errors"))] : []),
    ...(s.skipped > 0 ? [palette.dim(`${s.skipped} skipped`)] : []),
  ];
  return parts.join(", ");
}

const YAML_OPTIONS = { aliasDuplicateObjects: false, lineWidth: 0 } as const;

function compact(v: unknown): string {
  if (v === null || v === undefined) return "(none)";
  return v === undefined ? String(v) : stringifyJson(v);
}

function yamlLines(v: unknown): string {
  return yamlStringify(v ?? null, YAML_OPTIONS);
}

function evaluation(c: CaseResult): ResourceEvaluation {
  return {
    resource: c.resource,
    original: c.original,
    results: c.results,
    allowed: c.actual.allowed,
    ...(c.actual.status ? { denial: c.actual.status.message, status: c.actual.status } : {}),
    warnings: c.actual.warnings,
    auditAnnotations: c.actual.auditAnnotations,
    ...(c.actual.patch.length > 0 ? { patch: c.actual.patch, mutated: c.actual.patched } : {}),
    defaulted: c.defaulted,
  };
}

/** What differed for one expectation, as lines (unindented). */
export function mismatchLines(m: Mismatch, casePath: string): string[] {
  const from = m.path.startsWith(`${casePath}.`) ? "" : ` (expected by ${m.path})`;
  const head = `expect.${m.key}${from}`;
  const note = m.note ? [`  ${m.note}`] : [];
  switch (m.key) {
    case "allowed":
    case "code":
    case "reason":
    case "unchanged":
      return [`${head}: expected ${compact(m.expected)}, got ${compact(m.actual)}`, ...note];
    case "patched":
    case "patch": {
      const diff = lineDiff(yamlLines(m.expected), yamlLines(m.actual));
      if (diff && diff.length > 0)
        return [`${head}: differs (- expected, + actual)`, ...diff.map((l) => `  ${l}`), ...note];
      return [`${head}:`, `  expected: ${compact(m.expected)}`, `  actual:   ${compact(m.actual)}`, ...note];
    }
    default:
      return [`${head}:`, `  expected: ${compact(m.expected)}`, `  actual:   ${compact(m.actual)}`, ...note];
  }
}

/** How the policies decided: eval's table with traces, and the authorizer checks made. */
export function decisionLines(c: CaseResult): string[] {
  const table = formatResultsTable([evaluation(c)], { explain: true })
    .trimEnd()
    .split("\n");
  // The table's closing count ("1 resource: ...") says nothing the case line does not.
  table.pop();
  while (table.at(-1) === "") table.pop();
  const out = ["decision:", ...table.map((l) => `  ${l}`.trimEnd())];
  if (c.authorizerChecks.length > 0) {
    out.push("authorizer checks:");
    for (const ch of c.authorizerChecks) {
      const by = ch.rule === undefined ? "no rule matched" : `rule ${ch.rule}`;
      const reason = ch.rule !== undefined && ch.answer.reason ? `: ${ch.answer.reason}` : "";
      out.push(`  ${describeCheck(ch.attributes)} → ${ch.answer.decision} (${by}${reason})`);
    }
  }
  return out;
}

/** Everything a person needs about a failed case, unindented. */
export function failureLines(c: CaseResult): string[] {
  return [
    `at ${where(c)} (${c.path})`,
    ...c.mismatches.flatMap((m) => mismatchLines(m, c.path)),
    ...decisionLines(c),
  ];
}

export interface TextOptions {
  /** ✓/✗ marks, or PASS/FAIL for terminals and logs without them. */
  readonly ascii?: boolean;
  /** Colours for the marks and the summary (default none). */
  readonly palette?: Palette;
  /** Text put just before the summary line, which stays last (`--coverage`'s report). */
  readonly beforeSummary?: string;
}

function where(c: CaseResult): string {
  return `${c.location.file}:${c.location.line}:${c.location.column}`;
}

/** The people's report; diagnostics are written separately (to stderr) by the command. */
export function formatSuiteText(suites: readonly SuiteResult[], options: TextOptions = {}): string {
  const p = options.palette ?? PLAIN;
  const pass = p.pass(options.ascii ? "PASS" : "✓");
  const fail = p.fail(options.ascii ? "FAIL" : "✗");
  const out: string[] = [];
  // A suite --run took no case from says nothing; it is counted as skipped.
  const shown = suites.filter((s) => s.broken || s.cases.length > 0 || s.skipped === 0);
  for (const [i, s] of shown.entries()) {
    if (i > 0) out.push("");
    out.push(`${s.name} ${p.dim(`(${s.file})`)}`);
    if (s.broken)
      out.push(`  ${p.error(options.ascii ? "ERROR" : "!")} the suite has errors; no case was run`);
    for (const c of s.cases) {
      out.push(`  ${c.passed ? pass : fail} ${c.name}`);
      if (!c.passed) for (const l of failureLines(c)) out.push(l === "" ? "" : `      ${l}`);
    }
  }
  const sum = summarize(suites);
  out.push("");
  const failed = shown.flatMap((s) => s.cases.filter((c) => !c.passed).map((c) => ({ s, c })));
  if (failed.length > 0) {
    out.push(`${plural(failed.length, "case", "cases")} failed:`);
    for (const { s, c } of failed) out.push(`  ${fail} ${s.name} / ${c.name}  ${p.dim(where(c))}`);
  }
  if (sum.broken > 0)
    out.push(
      `${sum.broken} suite ${sum.broken === 1 ? "file has" : "files have"} errors (see above); no case was run`,
    );
  if (options.beforeSummary !== undefined) out.push(options.beforeSummary.trimEnd(), "");
  out.push(summaryLine(sum, p));
  return `${out.join("\n")}\n`;
}

/** The machine form: every suite, every case, what was expected and what happened. */
export function formatSuiteJson(suites: readonly SuiteResult[], coverage?: unknown): string {
  const sum = summarize(suites);
  return `${stringifyJson(
    {
      suites: suites.map((s) => ({
        file: s.file,
        name: s.name,
        broken: s.broken,
        diagnostics: s.diagnostics,
        cases: s.cases.map((c) => ({
          name: c.name,
          path: c.path,
          location: c.location,
          passed: c.passed,
          durationMs: Math.round(c.durationMs * 1000) / 1000,
          mismatches: c.mismatches,
          actual: c.actual,
          ...(c.passed
            ? {}
            : {
                results: resultEntries(evaluation(c), { explain: true }),
                authorizerChecks: c.authorizerChecks,
              }),
        })),
      })),
      summary: sum,
      ...(coverage !== undefined ? { coverage } : {}),
    },
    2,
  )}\n`;
}

/** Characters XML 1.0 cannot hold at all, even escaped. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters being removed.
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Text content: only what would end it or start markup is escaped, so the diff stays readable. */
export function xmlText(text: string): string {
  return text.replace(XML_INVALID, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function xmlAttribute(text: string): string {
  return xmlText(text).replace(/"/g, "&quot;").replace(/\n/g, "&#10;");
}

function attrs(a: Readonly<Record<string, string | number>>): string {
  return Object.entries(a)
    .map(([k, v]) => ` ${k}="${xmlAttribute(String(v))}"`)
    .join("");
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/**
 * The failure's message attribute: every expectation that did not hold, in full (expected and
 * actual, diffs and notes), as CI dashboards show the message and hide the body. The body repeats
 * it with where the case is and how the policies decided.
 */
function failureMessage(c: CaseResult): string {
  if (c.mismatches.length === 0) return "failed";
  return c.mismatches.flatMap((m) => mismatchLines(m, c.path)).join("\n");
}

/**
 * JUnit XML as Jenkins, GitLab and GitHub reporters read it: a testsuite per suite file, a testcase
 * per case, a failure holding the diff and the decision. A broken suite is one testcase with an error.
 */
export function formatJunit(suites: readonly SuiteResult[]): string {
  const sum = summarize(suites);
  const totalTime = suites.flatMap((s) => s.cases).reduce((t, c) => t + c.durationMs, 0);
  const out = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attrs({
      name: "celgate test",
      tests: sum.passed + sum.failed + sum.broken,
      failures: sum.failed,
      errors: sum.broken,
      time: seconds(totalTime),
    })}>`,
  ];
  for (const s of suites) {
    const failed = s.cases.filter((c) => !c.passed).length;
    const time = s.cases.reduce((t, c) => t + c.durationMs, 0);
    out.push(
      `  <testsuite${attrs({
        name: s.name,
        file: s.file,
        tests: s.broken ? 1 : s.cases.length,
        failures: failed,
        errors: s.broken ? 1 : 0,
        skipped: 0,
        time: seconds(time),
      })}>`,
    );
    if (s.broken) {
      out.push(`    <testcase${attrs({ name: "(suite file)", classname: s.name, file: s.file })}>`);
      out.push(
        `      <error${attrs({ message: "the suite has errors; no case was run", type: "TE_SUITE" })}>${xmlText(formatDiagnostics(s.diagnostics))}</error>`,
      );
      out.push("    </testcase>");
    }
    for (const c of s.cases) {
      const head = `    <testcase${attrs({
        name: c.name,
        classname: s.name,
        file: c.location.file,
        line: c.location.line,
        time: seconds(c.durationMs),
      })}`;
      if (c.passed) {
        out.push(`${head}/>`);
        continue;
      }
      out.push(`${head}>`);
      out.push(
        `      <failure${attrs({ message: failureMessage(c), type: "expectation" })}>${xmlText(`${failureLines(c).join("\n")}\n`)}</failure>`,
      );
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return `${out.join("\n")}\n`;
}
