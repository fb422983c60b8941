/**
 * Diagnostics: every problem celgate reports about user input (policy files, expressions, requests,
 * test suites) is one of these, with a stable code so tools and tests can match on it.
 */

/** A place in a source file. Lines and columns are 1-based, as editors show them. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export type DiagnosticSeverity = "error" | "warning";

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: DiagnosticSeverity;
  /** One line saying what is wrong and what was expected. */
  readonly message: string;
  /** Field path inside the document, e.g. `spec.validations[2].expression`. */
  readonly path?: string;
  readonly location?: SourceLocation;
  /** Extra lines shown under the message, e.g. the expression with a caret under the fault. */
  readonly detail?: string;
  /** The policy or binding the problem belongs to, when known. */
  readonly object?: { readonly kind: string; readonly name: string };
}

/** The code catalog. docs/diagnostics.md's table is kept in sync with this by a test. */
export const DIAGNOSTIC_CODES = {
  PE_IO: "a file or directory could not be read",
  PE_YAML_SYNTAX: "the file is not valid YAML or JSON",
  PE_TOO_LARGE:
    "a policy file, or the policy files together, hold more bytes than `serve` reads (`--max-policy-file-mib`, `--max-policy-set-mib`); not read",
  PE_YAML_ALIASES:
    "a YAML document's aliases expand too far (an alias bomb, judged as Kubernetes' YAML decoder judges it), or an alias is inside the node it names",
  PE_NOT_OBJECT: "a document is not a mapping with apiVersion and kind",
  PE_UNKNOWN_KIND:
    "a policy or binding in an apiVersion celgate does not read, or a kind where only some are taken (a --static-manifests directory, a CustomResourceDefinition not in apiextensions.k8s.io/v1); any other kind (a Deployment, a webhook configuration) is kept as an object and not reported",
  PE_MISSING_FIELD: "a required field is absent",
  PE_FIELD_TYPE: "a field has the wrong type",
  PE_FIELD_VALUE: "a field has a value outside what is allowed",
  PE_DUPLICATE: "a name is used twice where it must be unique",
  PE_UNKNOWN_POLICY: "a binding names a policy that is not loaded (a warning: the binding is inert)",
  PE_UNKNOWN_RESOURCE:
    "a rule names a resource its API groups do not have (built in to Kubernetes 1.36, or a loaded CustomResourceDefinition's), so the policy or binding never applies (a warning, with a did-you-mean)",
  PE_PARAM_SCOPE:
    "the paramKind of a policy a binding looks params up for (a paramRef) is neither built in nor defined by a loaded CustomResourceDefinition (a warning: taken to be namespaced)",
  PE_CRD_SCHEMA: "a CustomResourceDefinition's schema is not structural, so its objects stay untyped",
  PE_NO_POLICIES:
    "a path given holds no policy or binding, nor a CustomResourceDefinition beside paths that hold policies (every command that reads policies says so), or a `--crd` path no CustomResourceDefinition (a warning; `check --strict` fails on it)",
  PE_SET_MEMORY:
    "`serve` refuses a policy set whose estimated memory is over what its heap leaves a set (the last good set keeps serving)",
  PE_CEL_PARSE: "a CEL expression does not parse",
  PE_CEL_UNKNOWN_IDENT: "a CEL expression refers to a variable or field that is not declared",
  PE_CEL_UNKNOWN_FUNCTION:
    "a CEL expression calls a function that does not exist or with the wrong arguments",
  PE_CEL_TYPE: "a CEL expression does not type-check: mixed list or map literals, or the wrong result type",
  PE_CEL_INVALID:
    "a CEL expression has a constant Kubernetes refuses: a regex, duration, timestamp or format string its validators refuse, or a type conversion of a constant that fails when the program is built",
  TE_SUITE: "a test suite file is malformed",
  RE_INPUT: "an input resource or request file is malformed",
} as const;

export type DiagnosticCode = keyof typeof DIAGNOSTIC_CODES;

/** Renders a diagnostic as people read it: `file:line:col: path: message` and the detail lines. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.location ? `${d.location.file}:${d.location.line}:${d.location.column}: ` : "";
  const path = d.path ? `${d.path}: ` : "";
  const head = `${where}${d.severity}: ${path}${d.message} [${d.code}]`;
  return d.detail ? `${head}\n${d.detail}` : head;
}
