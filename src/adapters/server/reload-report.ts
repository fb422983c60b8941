/**
 * What `serve` says about a policy reload: one JSON line in the server's log (pino's format, on the
 * stream the request log uses, so a log collector takes it whole) and the reload metrics. A reload
 * that does not parse is an error line carrying each problem as `celgate check` prints it
 * (`file:line:col: error: path: message [CODE]`) and as fields; a reload held back because it would
 * remove objects is a warning naming them; an applied reload says what it added, removed and changed.
 * A reload applied while some files failed (they keep their last good content) is an error line
 * naming them with their problems, as is a reload that failed as a whole.
 */
import { type Diagnostic, formatDiagnostic } from "../../errors.ts";
import type { InventoryEntry } from "../../sources/inventory.ts";
import type { ReportedOutcome } from "../../sources/store.ts";
import { boundDiagnostics, type OmittedDiagnostics } from "../output/diagnostics.ts";
import type { WebhookMetrics } from "./metrics.ts";
import type { ServerLog } from "./server-log.ts";

/** Every reload line carries this, so one filter finds them among the review lines. */
export const RELOAD_EVENT = "policy-reload";

/** A diagnostic as log fields: check's text, and its parts for whoever queries the log. */
export interface DiagnosticFields {
  readonly text: string;
  readonly code: string;
  readonly severity: string;
  readonly message: string;
  readonly path?: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
}

export function diagnosticFields(d: Diagnostic): DiagnosticFields {
  return {
    text: formatDiagnostic(d),
    code: d.code,
    severity: d.severity,
    message: d.message,
    ...(d.path ? { path: d.path } : {}),
    ...(d.location ? { file: d.location.file, line: d.location.line, column: d.location.column } : {}),
  };
}

/**
 * The diagnostics of a reload line, bounded per file as every printer bounds them, and per file
 * how many were left out (`omittedDiagnostics`, only when some were).
 */
function diagnosticsFields(diagnostics: readonly Diagnostic[]): {
  readonly diagnostics: DiagnosticFields[];
  readonly omittedDiagnostics?: readonly OmittedDiagnostics[];
} {
  const { shown, omitted } = boundDiagnostics(diagnostics);
  return {
    diagnostics: shown.map(diagnosticFields),
    ...(omitted.length > 0 ? { omittedDiagnostics: omitted } : {}),
  };
}

const keys = (entries: readonly InventoryEntry[]): string[] => entries.map((e) => e.key);

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Records one reload outcome in the metrics and writes its log line. `notes` are the applied set's
 * other remarks (policies without a binding, namespace selectors serve cannot follow).
 */
export function reportReload(
  outcome: ReportedOutcome,
  metrics: WebhookMetrics,
  log: ServerLog,
  notes: readonly string[] = [],
): void {
  switch (outcome.status) {
    case "applied": {
      const { set, failedFiles } = outcome.snapshot;
      const partial = failedFiles.length > 0;
      metrics.recordReload(partial ? "partial" : "success", outcome.snapshot.loadedAt);
      const { added, removed, changed } = outcome.changes;
      const summary = `${plural(set.policies.length, "policy", "policies")}, ${plural(set.bindings.length, "binding", "bindings")}; ${added.length} added, ${removed.length} removed, ${changed.length} changed`;
      const fields = {
        event: RELOAD_EVENT,
        result: partial ? "partial" : "success",
        policies: set.policies.length,
        bindings: set.bindings.length,
        added: keys(added),
        removed: keys(removed),
        changed: keys(changed),
        ...(partial ? { failedFiles } : {}),
        ...diagnosticsFields(outcome.snapshot.diagnostics),
        notes,
      };
      if (partial)
        log.error(
          fields,
          `policies reloaded without ${failedFiles.join(", ")}, which keep their last good content (${plural(outcome.snapshot.diagnostics.filter((d) => d.severity === "error").length, "error", "errors")}): ${summary}`,
        );
      else log.info(fields, `policies reloaded: ${summary}`);
      return;
    }
    case "failed": {
      metrics.recordReload("failure");
      log.error(
        { event: RELOAD_EVENT, result: "failure", error: outcome.error },
        `policy reload failed: ${outcome.error}; the last good policies keep serving`,
      );
      return;
    }
    case "rejected": {
      metrics.recordReload("failure");
      if (outcome.diagnostics.some((d) => d.code === "PE_SET_MEMORY")) metrics.recordSetTooLarge();
      const errors = outcome.diagnostics.filter((d) => d.severity === "error").length;
      log.error(
        {
          event: RELOAD_EVENT,
          result: "failure",
          files: outcome.files,
          ...diagnosticsFields(outcome.diagnostics),
        },
        `policy reload rejected (${plural(errors, "error", "errors")}); the last good policies keep serving`,
      );
      return;
    }
    case "held": {
      metrics.recordReload("held_back");
      const files = [...new Set(outcome.removed.map((e) => e.file))];
      log.warn(
        {
          event: RELOAD_EVENT,
          result: "held_back",
          removed: keys(outcome.removed),
          files,
          settleMs: outcome.settleMs,
        },
        `policy reload held back: it would remove ${keys(outcome.removed).join(", ")}; the last good policies keep serving until the files read the same twice ${outcome.settleMs} ms apart`,
      );
      return;
    }
    default: {
      // Every outcome is reported: a new one that is not fails to compile here.
      const unreported: never = outcome;
      throw new Error(`unreported reload outcome ${JSON.stringify(unreported)}`);
    }
  }
}
