/**
 * Reports of `celgate test --coverage` (suite/coverage.ts gathers them): text for people, the
 * uncovered places first as check's diagnostics show a place (file:line:col, field path, the line
 * with a caret), then a line per policy and the total; JSON for tools; lcov for editors and CI,
 * which show it beside the policy's YAML.
 */
import type { CoverageEntry, CoverageReport, PolicyCoverage, Tally } from "../../suite/coverage.ts";
import { percentOf } from "../../suite/coverage.ts";

/** A percentage as the reports print it: one decimal, never rounded up to 100. */
export function formatPercent(p: number): string {
  const tenths = Math.floor(p * 10 + 1e-9) / 10;
  return `${tenths.toFixed(1)}%`;
}

function tally(t: Tally): string {
  return `${t.covered}/${t.total}`;
}

/** The gaps, then a line per policy and the total line. */
export function formatCoverageText(report: CoverageReport): string {
  const out: string[] = [];
  const gaps = report.policies.flatMap((p) =>
    p.expressions.flatMap((e) => shown(e.entries).map((x) => ({ path: e.path, x }))),
  );
  if (gaps.length > 0) {
    out.push("Not covered:");
    for (const { path, x } of gaps) out.push(gapLine(path, x));
    out.push("");
  }
  out.push("Coverage (nodes evaluated, branch outcomes taken):");
  const rows = report.policies.map((p) => [
    `${p.file}`,
    p.name,
    `nodes ${tally(p.nodes)}`,
    `branches ${tally(p.branches)}`,
    formatPercent(percentOf(p.nodes, p.branches)),
  ]);
  rows.push([
    "total",
    "",
    `nodes ${tally(report.nodes)}`,
    `branches ${tally(report.branches)}`,
    formatPercent(report.percent),
  ]);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  for (const r of rows)
    out.push(`  ${r.map((c, i) => (i < 4 ? c.padEnd(widths[i] as number) : c)).join("  ")}`.trimEnd());
  return `${out.join("\n")}\n`;
}

/** The gaps an expression's report lists, in the order they stand in the file. */
function shown(entries: readonly CoverageEntry[]): CoverageEntry[] {
  return entries
    .filter((x) => x.shown)
    .sort((a, b) => a.location.line - b.location.line || a.location.column - b.location.column);
}

function gapLine(path: string, x: CoverageEntry): string {
  const where = `${x.location.file}:${x.location.line}:${x.location.column}`;
  return x.caret === "" ? `${where}: ${path}: ${x.label}` : `${where}: ${path}: ${x.label}\n${x.caret}`;
}

/** The report as data: tallies per policy and expression, and the gaps the text lists. */
export function coverageJson(report: CoverageReport): unknown {
  return {
    percent: round(report.percent),
    nodes: report.nodes,
    branches: report.branches,
    policies: report.policies.map((p: PolicyCoverage) => ({
      file: p.file,
      name: p.name,
      kind: p.kind,
      percent: round(percentOf(p.nodes, p.branches)),
      nodes: p.nodes,
      branches: p.branches,
      expressions: p.expressions.map((e) => ({
        path: e.path,
        role: e.role,
        location: e.location,
        nodes: e.nodes,
        branches: e.branches,
        uncovered: shown(e.entries).map((x) => ({
          kind: x.kind,
          location: x.location,
          ...(x.branch !== undefined ? { branch: x.branch, outcome: x.outcome } : {}),
          message: x.label,
        })),
      })),
    })),
  };
}

function round(p: number): number {
  return Math.floor(p * 10 + 1e-9) / 10;
}

/**
 * lcov tracefile (geninfo's format): per policy file, a line's count is the fewest runs of any node
 * on it (0 when one of them never ran), and each branch point's two outcomes are a BRDA pair.
 */
export function formatLcov(report: CoverageReport): string {
  const byFile = new Map<string, CoverageEntry[]>();
  for (const p of report.policies) {
    const list = byFile.get(p.file) ?? [];
    for (const e of p.expressions) list.push(...e.entries);
    byFile.set(p.file, list);
  }
  const out: string[] = ["TN:"];
  for (const [file, entries] of byFile) {
    out.push(`SF:${file}`);
    const lines = new Map<number, number>();
    for (const x of entries)
      if (x.kind === "node") {
        const l = x.location.line;
        lines.set(l, Math.min(lines.get(l) ?? Number.POSITIVE_INFINITY, x.hits));
      }
    let block = -1;
    let brh = 0;
    const branches = entries.filter((x) => x.kind === "branch");
    // Outcomes come in pairs (suite/coverage.ts keeps cel's order), the first outcome opening each.
    branches.forEach((x, i) => {
      if (i % 2 === 0) block++;
      out.push(`BRDA:${x.location.line},${block},${i % 2},${x.hits}`);
      if (x.hits > 0) brh++;
    });
    out.push(`BRF:${branches.length}`, `BRH:${brh}`);
    const sorted = [...lines].sort((a, b) => a[0] - b[0]);
    for (const [line, hits] of sorted) out.push(`DA:${line},${hits}`);
    out.push(`LF:${sorted.length}`, `LH:${sorted.filter(([, h]) => h > 0).length}`, "end_of_record");
  }
  return `${out.join("\n")}\n`;
}
