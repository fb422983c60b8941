/**
 * String formats the Kubernetes API server enforces on admissionregistration objects (apimachinery's
 * util/validation and api/validation/path). Each check returns the reasons a value is rejected, empty
 * when it is accepted, so callers can report every reason at the value's location.
 */

const DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);
const DNS1035_LABEL_RE = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_PART_RE = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const CEL_IDENT_RE = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

/**
 * CEL's reserved words: an identifier may not be one of them (cel-spec's lexis, as Kubernetes checks
 * it), and a schema property named like one is escaped as `__word__` (apiserver cel/escaping.go).
 */
export const CEL_RESERVED: ReadonlySet<string> = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);

export function dns1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push("must be no more than 253 characters");
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errors.push(
      "must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. 'example.com')",
    );
  }
  return errors;
}

export function dns1035Label(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push("must be no more than 63 characters");
  if (!DNS1035_LABEL_RE.test(value)) {
    errors.push(
      "must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (e.g. 'v1')",
    );
  }
  return errors;
}

/**
 * A qualified name: an optional DNS subdomain prefix and '/', then a name of at most 63 characters.
 * Label keys, match condition names and audit annotation keys all follow it.
 */
export function qualifiedName(value: string): string[] {
  const parts = value.split("/");
  let name: string;
  const errors: string[] = [];
  if (parts.length === 1) {
    name = parts[0] ?? "";
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix.length === 0) {
      errors.push("prefix part must be non-empty");
    } else {
      for (const e of dns1123Subdomain(prefix)) errors.push(`prefix part ${e}`);
    }
  } else {
    return [
      "must be a qualified name: a name with an optional DNS subdomain prefix and '/' (e.g. 'MyName' or 'example.com/MyName'); it has more than one '/'",
    ];
  }
  if (name.length === 0) {
    errors.push("name part must be non-empty");
  } else {
    if (name.length > 63) errors.push("name part must be no more than 63 characters");
    if (!QUALIFIED_NAME_PART_RE.test(name)) {
      errors.push(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')",
      );
    }
  }
  return errors;
}

export function labelValue(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push("must be no more than 63 characters");
  if (!LABEL_VALUE_RE.test(value)) {
    errors.push(
      "a label value must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    );
  }
  return errors;
}

/** A name that becomes one segment of a URL path (resourceNames, paramRef.name). */
export function pathSegmentName(value: string): string[] {
  if (value === "." || value === "..") return [`may not be '${value}'`];
  const errors: string[] = [];
  for (const c of ["/", "%"]) {
    if (value.includes(c)) errors.push(`may not contain '${c}'`);
  }
  return errors;
}

export function isCelIdentifier(value: string): boolean {
  return CEL_IDENT_RE.test(value) && !CEL_RESERVED.has(value);
}

/** The edit distance between two short strings, for "did you mean" hints on misspelt field names. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** The known name closest to a misspelt one, if it is close enough to be a likely typo. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const lower = name.toLowerCase();
  for (const k of known) {
    const d = k.toLowerCase() === lower ? 0 : editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  const limit = Math.max(1, Math.min(3, Math.floor(name.length / 3)));
  return bestDistance <= limit ? best : undefined;
}
