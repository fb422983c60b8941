/**
 * The people's rendering of dry-run results (`celgate eval`, the REPL, a failed test case): an
 * aligned table with a row per (resource, policy, binding, param), the extra violations, mutation
 * diffs and explain traces under their row, then a line per resource saying what the API server
 * would answer and a closing count. On a terminal it is fitted to the width; elsewhere lines are as
 * long as they are. The data behind it, and the JSON and YAML forms, are in entries.ts.
 */
import { stringify as yamlStringify } from "yaml";
import { plural } from "./diagnostics.ts";
import { lineDiff } from "./diff.ts";
import { type ResourceEvaluation, type ResourceRef, type ResultEntry, resultEntries } from "./entries.ts";
import { compact, defaultedLine, traceLines } from "./trace.ts";
import { textWidth, wrapHanging, wrapText } from "./wrap.ts";

export type { DefaultedField, ResourceEvaluation, ResourceRef, ResultEntry } from "./entries.ts";
export { formatResultsJson, formatResultsYaml, resourceEvaluation, resultEntries } from "./entries.ts";

export const UNBOUND_BINDING_NOTE = "no binding: evaluated as if bound with validationActions [Deny]";

/** A message column narrower than this goes under its row instead. */
const MIN_MESSAGE_WIDTH = 40;

export interface TableOptions {
  /** Show each result's trace and the fields the API server's defaults set. */
  readonly explain?: boolean;
  /**
   * Leave out the rows of skipped policies (those that do not apply), saying how many were left
   * out and that `skippedHint` shows them. Default: every row.
   */
  readonly hideSkipped?: boolean;
  readonly skippedHint?: string;
  /** Fit the lines to this many columns (a terminal's width). Absent: lines as long as they are. */
  readonly width?: number;
}

/** `Deployment default/web`, `Namespace prod`. */
export function resourceLabel(r: ResourceRef): string {
  const name = r.name === "" ? "(no name)" : r.name;
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${name}`;
}

/**
 * Violations not already on the row: after the first of a failure; for an error, the denials
 * failurePolicy Fail adds (but not the one that is the error's own message, which the row shows
 * with what was looked up or went wrong after it).
 */
function extraViolations(e: ResultEntry): ResultEntry["violations"] {
  if (e.outcome === "fail") return e.violations.slice(1);
  if (e.outcome === "error") {
    const error = e.error ?? "";
    return e.violations.filter((v) => v.message !== error && !error.startsWith(`${v.message}: `));
  }
  return e.violations;
}

function rowMessage(e: ResultEntry): string {
  switch (e.outcome) {
    case "fail": {
      const v = e.violations[0];
      return v ? `[${v.action}] ${v.message}` : "";
    }
    case "error": {
      // failurePolicy Fail turns the error into denials; Ignore lets the request through.
      const actions = [...new Set(e.violations.map((v) => v.action))];
      const verdict = actions.length > 0 ? `[${actions.join(", ")}] ` : "[ignored] ";
      return `${verdict}${e.error ?? ""}`;
    }
    case "skip":
      return e.reason ?? "";
    case "pass":
      if (e.patch === undefined) return "";
      return e.patch.length === 0
        ? "no change"
        : `mutated: ${plural(e.patch.length, "operation", "operations")}`;
  }
}

function mutationLines(e: ResultEntry, before: unknown): string[] {
  if (!e.patch || e.patch.length === 0) return [];
  if (e.patched !== undefined) {
    const opts = { aliasDuplicateObjects: false, lineWidth: 0 } as const;
    const diff = lineDiff(yamlStringify(before ?? null, opts), yamlStringify(e.patched, opts));
    if (diff) return diff;
  }
  return e.patch.map((op) => `${op.op} ${op.path}${"value" in op ? ` ${compact(op.value)}` : ""}`);
}

function pad(s: string, width: number): string {
  return s + " ".repeat(Math.max(0, width - textWidth(s)));
}

interface Row {
  readonly resource: string;
  readonly policy: string;
  /** The binding's name, or `(none)*` for an unbound policy. */
  readonly binding: string;
  readonly param: string | undefined;
  readonly outcome: string;
  readonly message: string;
  readonly extra: readonly string[];
}

/** The rows of every evaluation, and how many skipped rows were left out. */
function tableRows(
  evs: readonly ResourceEvaluation[],
  options: TableOptions,
): { rows: Row[]; hidden: number; anyUnbound: boolean } {
  const rows: Row[] = [];
  let hidden = 0;
  let anyUnbound = false;
  for (const ev of evs) {
    let before: unknown = ev.original;
    for (const e of resultEntries(ev, { explain: options.explain ?? false })) {
      const extra = [
        ...extraViolations(e).map((v) => `[${v.action}] ${v.message}`),
        ...mutationLines(e, before),
        ...(e.trace ? traceLines(e.trace, e.defaulted) : []),
      ];
      if (e.patched !== undefined) before = e.patched;
      if (options.hideSkipped && e.outcome === "skip") {
        hidden++;
        continue;
      }
      if (e.binding === null) anyUnbound = true;
      rows.push({
        resource: resourceLabel(e.resource),
        policy: e.reinvocation ? `${e.policy} (reinvoked)` : e.policy,
        binding: e.binding ?? "(none)*",
        param: e.param,
        outcome: e.outcome,
        message: rowMessage(e),
        extra,
      });
    }
  }
  return { rows, hidden, anyUnbound };
}

/** Lays out aligned columns, the last one free text, each row followed by its extra lines. */
interface Grid {
  readonly header: readonly string[];
  readonly cells: (r: Row) => readonly string[];
  /** Lines under a row before its extra lines (what the columns left out). */
  readonly notes?: (r: Row) => readonly string[];
  /** Spaces before every line but the group headings. */
  readonly indent: string;
}

function columnWidths(grid: Grid, rows: readonly Row[]): number[] {
  const last = grid.header.length - 1;
  return grid.header.map((h, i) =>
    Math.max(textWidth(h), ...rows.map((r) => (i === last ? 0 : textWidth(grid.cells(r)[i] ?? "")))),
  );
}

/** How far the last column starts from the left edge. */
function messageColumn(grid: Grid, widths: readonly number[]): number {
  return textWidth(grid.indent) + widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
}

/**
 * The grid's lines. With a width, the last column is wrapped under itself, or goes under its row
 * when the other columns leave it too little room; other lines wrap with a hanging indent.
 */
function gridLines(grid: Grid, rows: readonly Row[], widths: readonly number[], width?: number): string[] {
  const last = grid.header.length - 1;
  const at = messageColumn(grid, widths);
  const room = width === undefined ? Number.POSITIVE_INFINITY : width - at;
  const fixed = (cells: readonly string[]) =>
    grid.indent +
    cells
      .slice(0, last)
      .map((c, i) => pad(c, widths[i] ?? 0))
      .join("  ");
  const under = `${grid.indent}    `;
  const extra = (x: string) =>
    width === undefined ? [`${under}${x}`] : wrapHanging(x, width, under, `${under}  `);
  const out = [`${fixed(grid.header)}  ${grid.header[last] ?? ""}`.trimEnd()];
  for (const r of rows) {
    const cells = grid.cells(r);
    const message = cells[last] ?? "";
    if (room >= MIN_MESSAGE_WIDTH) {
      const pieces = room === Number.POSITIVE_INFINITY ? [message] : wrapText(message, room);
      out.push(`${fixed(cells)}  ${pieces[0] ?? ""}`.trimEnd());
      for (const p of pieces.slice(1)) out.push(`${" ".repeat(at)}${p}`);
    } else {
      out.push(fixed(cells).trimEnd());
      if (message !== "") out.push(...extra(message));
    }
    for (const x of [...(grid.notes?.(r) ?? []), ...r.extra]) out.push(...extra(x));
  }
  return out;
}

/** One row per result with every column: the form for pipes, and for terminals wide enough. */
function wideGrid(withParams: boolean): Grid {
  return {
    header: ["RESOURCE", "POLICY", "BINDING", ...(withParams ? ["PARAM"] : []), "OUTCOME", "MESSAGE"],
    cells: (r) => [
      r.resource,
      r.policy,
      r.binding,
      ...(withParams ? [r.param ?? "-"] : []),
      r.outcome,
      r.message,
    ],
    indent: "",
  };
}

/**
 * For a terminal too narrow for the wide table: the rows grouped under their resource, the binding
 * under its row when it is not named like its policy (as bindings usually are), the param too.
 */
const NARROW_GRID: Grid = {
  header: ["POLICY", "OUTCOME", "MESSAGE"],
  cells: (r) => [r.policy, r.outcome, r.message],
  notes: (r) => [
    ...(r.binding === r.policy.replace(/ \(reinvoked\)$/, "") ? [] : [`binding: ${r.binding}`]),
    ...(r.param === undefined ? [] : [`param: ${r.param}`]),
  ],
  indent: "  ",
};

/** The table's lines: wide when it fits (or nothing is fitted), else grouped by resource. */
function layout(rows: readonly Row[], withParams: boolean, width: number | undefined): string[] {
  const wide = wideGrid(withParams);
  const wideWidths = columnWidths(wide, rows);
  if (width === undefined || width - messageColumn(wide, wideWidths) >= MIN_MESSAGE_WIDTH)
    return gridLines(wide, rows, wideWidths, width);
  const widths = columnWidths(NARROW_GRID, rows);
  const out: string[] = [];
  const groups = new Map<string, Row[]>();
  for (const r of rows) groups.set(r.resource, [...(groups.get(r.resource) ?? []), r]);
  for (const [resource, group] of groups) {
    if (out.length > 0) out.push("");
    out.push(`${resource}:`);
    out.push(...gridLines(NARROW_GRID, group, widths, width));
  }
  return out;
}

/**
 * What the API server would answer about one resource, on one line: `Pod default/web: allowed (1
 * warning, patched: 2 operations)`, `Pod default/web: denied: <status message> (1 warning)`. The
 * counts come last so that `<resource>: denied: <message>` reads (and greps) as the API server's
 * answer does.
 */
export function verdictLine(ev: ResourceEvaluation): string {
  const parts: string[] = [];
  if (ev.warnings.length > 0) parts.push(plural(ev.warnings.length, "warning", "warnings"));
  if (ev.allowed && ev.patch && ev.patch.length > 0)
    parts.push(`patched: ${plural(ev.patch.length, "operation", "operations")}`);
  const errors = ev.results.filter((r) => r.outcome === "error").length;
  if (errors > 0) parts.push(plural(errors, "evaluation error", "evaluation errors"));
  const counts = parts.length > 0 ? ` (${parts.join(", ")})` : "";
  const verdict = ev.allowed ? "allowed" : `denied: ${ev.denial ?? "denied"}`;
  return `${resourceLabel(ev.resource)}: ${verdict}${counts}`;
}

/** The lines after the table: each resource's defaults (explain), warnings and verdict, then the count. */
function closingLines(evs: readonly ResourceEvaluation[], explain: boolean): string[] {
  const out: string[] = [];
  for (const ev of evs) {
    if (explain && ev.defaulted?.length) {
      out.push(`${resourceLabel(ev.resource)}: the API server's defaults set:`);
      for (const f of ev.defaulted) out.push(`    ${defaultedLine(f)}`);
    }
    for (const w of ev.warnings) out.push(`Warning: ${resourceLabel(ev.resource)}: ${w}`);
    out.push(verdictLine(ev));
  }
  const denied = evs.filter((e) => !e.allowed).length;
  const errors = evs.flatMap((e) => e.results).filter((r) => r.outcome === "error").length;
  out.push(
    `${plural(evs.length, "resource", "resources")}: ${evs.length - denied} allowed, ${denied} denied${errors ? `, ${plural(errors, "evaluation error", "evaluation errors")}` : ""}`,
  );
  return out;
}

/**
 * The table for people: one aligned row per result, the extra violations, mutation diffs and (with
 * explain) traces indented under their row, then each resource's verdict and a summary line.
 */
export function formatResultsTable(evs: readonly ResourceEvaluation[], options: TableOptions = {}): string {
  // The PARAM column only when some policy has params, to keep the common table narrow.
  const withParams = evs.some((ev) => ev.results.some((r) => r.param !== undefined));
  const { rows, hidden, anyUnbound } = tableRows(evs, options);
  const out: string[] = [];
  if (rows.length > 0) out.push(...layout(rows, withParams, options.width));
  else if (hidden > 0) out.push("no policy applies");
  else out.push("no policies to evaluate");
  const notes: string[] = [];
  if (anyUnbound) notes.push(`* ${UNBOUND_BINDING_NOTE}`);
  if (hidden > 0)
    notes.push(
      `(${plural(hidden, "skipped result", "skipped results")} not shown: the ${hidden === 1 ? "policy does" : "policies do"} not apply${options.skippedHint ? `; ${options.skippedHint}` : ""})`,
    );
  const width = options.width;
  for (const l of [...notes, "", ...closingLines(evs, options.explain ?? false)]) {
    const indent = /^ */.exec(l)?.[0] ?? "";
    out.push(
      ...(width === undefined ? [l] : wrapHanging(l.slice(indent.length), width, indent, `${indent}    `)),
    );
  }
  return `${out.join("\n")}\n`;
}
