/** Rendering of diagnostics and of the `celgate check` report. */
import { type Diagnostic, formatDiagnostic } from "../../errors.ts";
import type { SourceLocation } from "../../errors.ts";
import { wrapText } from "./wrap.ts";

/** `1 policy`, `2 policies`. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Each diagnostic as formatDiagnostic renders it, one block after another. */
export function formatDiagnostics(diagnostics: readonly Diagnostic[]): string {
  return diagnostics.map((d) => `${formatDiagnostic(d)}\n`).join("");
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
