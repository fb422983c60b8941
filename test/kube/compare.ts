/**
 * What the API server and `celgate check` said about one object, brought to one shape, and the
 * differences between them.
 *
 * Normalisation, kept to the least that makes the two comparable:
 * - A refusal is its list of causes, each a field path and a text. The API server's causes are the
 *   Status's `details.causes` (field.ErrorList, one per field error); celgate's are its error
 *   diagnostics for that object (`path`, and `detail` when it has one, else `message`).
 * - A CEL compile error's text is cel-go's report from "ERROR: <input>:" on: the API server puts
 *   `Invalid value: "<expression>": compilation failed: ` before it, and celgate may add lines of its
 *   own after it (`hint: did you mean ...`, `(with object typed as ... from its schema)`); both are
 *   cut off. Those texts must then be equal. Other causes (a missing field, a bad enum value) are
 *   worded differently by design, so for them the field path must match and the text is shown.
 * - A `status.typeChecking` warning (fieldRef, warning) has its `<group/version>, Kind=<kind>: `
 *   prefix cut from each line, then compares as a CEL text with celgate's schema warnings (its
 *   warnings from the CEL checker: codes PE_CEL_*).
 */
import type { CreateAnswer } from "../helpers/kube-objects.ts";

export interface CheckDiagnostic {
  readonly code: string;
  readonly severity: "error" | "warning";
  readonly message: string;
  readonly path?: string;
  readonly detail?: string;
  readonly object?: { readonly kind: string; readonly name: string };
  readonly location?: { readonly file: string; readonly line: number; readonly column: number };
}

export interface Cause {
  readonly field: string;
  readonly text: string;
}

export interface Verdict {
  readonly accepted: boolean;
  readonly causes: readonly Cause[];
}

export type Aspect = "accept" | "message" | "typeChecking";

export interface Difference {
  readonly input: string;
  /** `Kind/name`. */
  readonly object: string;
  readonly aspect: Aspect;
  readonly field: string;
  readonly server: string;
  readonly celgate: string;
}

const NOT_SERVED = "kind not served in this version";

const CEL_REPORT = /ERROR: <input>:[\s\S]*$/;

/** cel-go's report out of a message, without what either side puts around it; else the message trimmed. */
export function celText(message: string): string {
  const report = CEL_REPORT.exec(message)?.[0];
  if (report === undefined) return message.trim();
  return report
    .split("\n")
    .filter((l) => !l.startsWith("hint:") && !l.startsWith("(with "))
    .join("\n")
    .trim();
}

function isCelReport(text: string): boolean {
  return text.startsWith("ERROR: <input>:");
}

interface StatusBody {
  readonly message?: string;
  readonly details?: { readonly causes?: readonly { readonly field?: string; readonly message?: string }[] };
}

export function serverVerdict(answer: CreateAnswer): Verdict {
  if (!answer.served) return { accepted: false, causes: [{ field: "apiVersion", text: NOT_SERVED }] };
  if (answer.status >= 200 && answer.status < 300) return { accepted: true, causes: [] };
  const body = (typeof answer.body === "object" && answer.body !== null ? answer.body : {}) as StatusBody;
  const causes = (body.details?.causes ?? []).map((c) => ({
    field: c.field ?? "",
    text: celText(c.message ?? ""),
  }));
  return {
    accepted: false,
    causes:
      causes.length > 0
        ? causes
        : [{ field: "", text: `${answer.status}: ${body.message ?? String(answer.body)}` }],
  };
}

export function celgateVerdict(diagnostics: readonly CheckDiagnostic[]): Verdict {
  const errors = diagnostics.filter((d) => d.severity === "error");
  return {
    accepted: errors.length === 0,
    causes: errors.map((d) => ({ field: d.path ?? "", text: celText(d.detail ?? d.message) })),
  };
}

function show(causes: readonly Cause[]): string {
  return causes.map((c) => `${c.field || "(no field)"}: ${c.text}`).join(" | ") || "(accepted)";
}

/** The differences of accept/refuse and, for two refusals, of their causes. */
export function compareVerdicts(
  input: string,
  object: string,
  server: Verdict,
  celgate: Verdict,
): Difference[] {
  const base = { input, object };
  if (server.accepted !== celgate.accepted)
    return [
      { ...base, aspect: "accept", field: "", server: show(server.causes), celgate: show(celgate.causes) },
    ];
  if (server.accepted) return [];
  // A kind the server does not serve in that version is refused before any field is looked at.
  if (server.causes.length === 1 && server.causes[0]?.text === NOT_SERVED)
    return celgate.causes.some((c) => c.field === "apiVersion")
      ? []
      : [
          {
            ...base,
            aspect: "message",
            field: "apiVersion",
            server: NOT_SERVED,
            celgate: show(celgate.causes),
          },
        ];
  const out: Difference[] = [];
  for (const s of server.causes) {
    const same = celgate.causes.filter((c) => c.field === s.field);
    const text = same.map((c) => c.text).join("\n");
    if (same.length === 0)
      out.push({
        ...base,
        aspect: "message",
        field: s.field,
        server: s.text,
        celgate: "(no error at this field)",
      });
    // cel-go reports all of one expression's errors in one text, a line block each; celgate one diagnostic each.
    else if (isCelReport(s.text) && s.text !== same.map((c) => c.text).join("\n"))
      out.push({ ...base, aspect: "message", field: s.field, server: s.text, celgate: text });
  }
  for (const c of celgate.causes)
    if (!server.causes.some((s) => s.field === c.field))
      out.push({
        ...base,
        aspect: "message",
        field: c.field,
        server: "(no error at this field)",
        celgate: c.text,
      });
  return out;
}

interface TypeCheckingStatus {
  readonly typeChecking?: {
    readonly expressionWarnings?: readonly { fieldRef?: string; warning?: string }[];
  };
}

/** The API server's typeChecking warnings by field, each line without its `<gv>, Kind=<kind>: ` prefix. */
export function serverTypeWarnings(status: unknown): Cause[] {
  const warnings = (status as TypeCheckingStatus | undefined)?.typeChecking?.expressionWarnings ?? [];
  return warnings.map((w) => ({
    field: w.fieldRef ?? "",
    text: celText((w.warning ?? "").replace(/^[^\n]*?, Kind=[^:\n]*: /gm, "")),
  }));
}

/** celgate's warnings from the CEL checker (typed by a schema), by field. */
export function celgateTypeWarnings(diagnostics: readonly CheckDiagnostic[]): Cause[] {
  return diagnostics
    .filter((d) => d.severity === "warning" && d.code.startsWith("PE_CEL_"))
    .map((d) => ({ field: d.path ?? "", text: celText(d.detail ?? d.message) }));
}

/** Differences between the two sides' typeChecking warnings: a field warned about on one side only, or other texts. */
export function compareTypeWarnings(
  input: string,
  object: string,
  server: readonly Cause[],
  celgate: readonly Cause[],
): Difference[] {
  const out: Difference[] = [];
  const fields = [...new Set([...server, ...celgate].map((c) => c.field))].sort();
  for (const field of fields) {
    const s = server.filter((c) => c.field === field).map((c) => c.text);
    const c = celgate.filter((x) => x.field === field).map((x) => x.text);
    const agree =
      s.length > 0 && c.length > 0 && s.every((t) => c.includes(t) || c.some((x) => t.includes(x)));
    if (!agree)
      out.push({
        input,
        object,
        aspect: "typeChecking",
        field,
        server: s.join(" | ") || "(no warning)",
        celgate: c.join(" | ") || "(no warning)",
      });
  }
  return out;
}
