/** Rendering of diagnostics and of the `celgate check` report. */
import { type Diagnostic, formatDiagnostic } from "../../errors.ts";
import type { SourceLocation } from "../../errors.ts";
import { wrapText } from "./wrap.ts";

/** `1 policy`, `2 policies`. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * How many diagnostics are shown per file. A binary or large non-YAML file yields a problem per
 * token the parser trips on; past this many the rest of that file's say nothing new.
 */
export const MAX_DIAGNOSTICS_PER_FILE = 20;

/** The diagnostics of one file left out of what is shown. */
export interface OmittedDiagnostics {
  readonly file: string;
  readonly count: number;
}

/**
 * The diagnostics to show people, in their order: at most `limit` per file (those without a file
 * are all shown), and per file how many were left out. Every printer of diagnostics (the CLI's,
 * serve's log) goes through here, so output stays bounded whatever a file holds.
 */
export function boundDiagnostics(
  diagnostics: readonly Diagnostic[],
  limit = MAX_DIAGNOSTICS_PER_FILE,
): { readonly shown: readonly Diagnostic[]; readonly omitted: readonly OmittedDiagnostics[] } {
  const perFile = new Map<string, number>();
  const shown: Diagnostic[] = [];
  for (const d of diagnostics) {
    const file = d.location?.file;
    if (file === undefined) {
      shown.push(d);
      continue;
    }
    const n = (perFile.get(file) ?? 0) + 1;
    perFile.set(file, n);
    if (n <= limit) shown.push(d);
  }
  const omitted = [...perFile].flatMap(([file, n]) => (n > limit ? [{ file, count: n - limit }] : []));
  return { shown, omitted };
}

/** `… and 1,027 more in FILE`. */
export function omittedLine(o: OmittedDiagnostics): string {
  return `… and ${o.count.toLocaleString("en-US")} more in ${o.file}`;
}

/** Each diagnostic as formatDiagnostic renders it (bounded per file), then the count of the rest. */
export function formatDiagnosticLines(diagnostics: readonly Diagnostic[]): string[] {
  const { shown, omitted } = boundDiagnostics(diagnostics);
  return [...shown.map((d) => formatDiagnostic(d)), ...omitted.map(omittedLine)];
}

/** formatDiagnosticLines as text, a line (or block) each. */
export function formatDiagnostics(diagnostics: readonly Diagnostic[]): string {
  return formatDiagnosticLines(diagnostics)
    .map((l) => `${l}\n`)
    .join("");
}

export function errorCount(diagnostics: readonly Diagnostic[]): number {
  return diagnostics.filter((d) => d.severity === "error").length;
}

/** A policy that will never be enforced, because nothing binds it. */
export interface UnboundPolicy {
  readonly kind: string;
  readonly name: string;
  readonly location?: SourceLocation;
  /** Why it is not enforced, when not for want of a binding (default UNBOUND_NOTE). */
  readonly note?: string;
}

export const UNBOUND_NOTE = "loaded and checked, not enforced: no binding";

export interface CheckReport {
  readonly files: readonly string[];
  readonly policies: number;
  readonly bindings: number;
  readonly diagnostics: readonly Diagnostic[];
  readonly unbound: readonly UnboundPolicy[];
}

function where(loc: SourceLocation | undefined): string {
  return loc ? `${loc.file}:${loc.line}:${loc.column}: ` : "";
}

/** The people's form: each problem, each unbound policy, then `N policies, M bindings, K problems`. */
export function formatCheckText(r: CheckReport): string {
  const lines = [formatDiagnostics(r.diagnostics)];
  for (const u of r.unbound)
    lines.push(`${where(u.location)}note: ${u.kind} '${u.name}': ${u.note ?? UNBOUND_NOTE}\n`);
  const errors = errorCount(r.diagnostics);
  const warnings = r.diagnostics.length - errors;
  const detail =
    r.diagnostics.length === 0
      ? ""
      : ` (${plural(errors, "error", "errors")}, ${plural(warnings, "warning", "warnings")})`;
  lines.push(
    `${plural(r.policies, "policy", "policies")}, ${plural(r.bindings, "binding", "bindings")}, ${plural(r.diagnostics.length, "problem", "problems")}${detail}\n`,
  );
  return lines.join("");
}

/** The machine form of the check report. */
export function formatCheckJson(r: CheckReport): string {
  return `${JSON.stringify(
    {
      files: r.files,
      policies: r.policies,
      bindings: r.bindings,
      errors: errorCount(r.diagnostics),
      diagnostics: r.diagnostics,
      unbound: r.unbound.map((u) => ({ ...u, note: u.note ?? UNBOUND_NOTE })),
    },
    null,
    2,
  )}\n`;
}

/**
 * The note a dry run gives when the policies it loaded include some nothing binds, which it does
 * not evaluate (as the API server does not); `flag` is how the command asks for them anyway. On a
 * terminal, fitted to its `width`.
 */
export function unboundNote(names: readonly string[], flag: string, width?: number): string {
  if (names.length === 0) return "";
  const one = names.length === 1;
  const text = `note: ${plural(names.length, "policy", "policies")} no binding names ${one ? "is" : "are"} not evaluated (as in the API server): ${names.join(", ")}; ${flag} evaluates ${one ? "it" : "them"} as if bound with validationActions [Deny]`;
  return `${(width === undefined ? [text] : wrapText(text, width)).join("\n")}\n`;
}
