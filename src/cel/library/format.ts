/**
 * Kubernetes' format library: named string formats (`format.dns1123Label()`, `format.named("uuid")`,
 * ...) whose `validate(s)` returns none for a valid string or the list of Kubernetes' validation
 * messages (apimachinery's texts, verbatim, including their quirks).
 */
import { CelObject, type CelValue, Optional } from "../runtime/values.ts";
import { daysInMonth } from "../go/time.ts";
import { requestURIError } from "../go/url.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

// --- apimachinery/pkg/util/validation ------------------------------------------------------------

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** RegexError; the doubled space before "or" is Kubernetes' own. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += " or ";
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

const EMPTY_ERROR = "must be non-empty";

/** Length in bytes, as Go's len() counts. */
function byteLength(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

// Go's regexp `$` matches only at the very end (no trailing-newline leniency), like JS without /m.
const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const dns1035LabelRe = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const qualifiedNameRe = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE_FMT}$`);

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label (length already checked) must have dots.
    if (dns1123SubdomainRe.test(value)) errs.push("must not contain dots");
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!dns1123SubdomainRe.test(value))
    errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"));
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!dns1035LabelRe.test(value))
    errs.push(regexError(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, "my-name", "abc-123"));
  return errs;
}

export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0] as string;
  } else if (parts.length === 2) {
    const prefix = parts[0] as string;
    name = parts[1] as string;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!qualifiedNameRe.test(name)) {
    errs.push(
      `name part ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")}`,
    );
  }
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!labelValueRe.test(value))
    errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  return errs;
}

/**
 * apimachinery's maskTrailingDash for generated-name prefixes: a trailing '-' is allowed because a
 * suffix will follow. Kubernetes drops the last two characters (not one) before appending "a";
 * that is reproduced, as it decides which prefixes pass.
 */
function maskTrailingDash(name: string): string {
  if (name.length > 1 && name.endsWith("-")) return `${name.slice(0, -2)}a`;
  return name;
}

// --- kube-openapi strfmt ------------------------------------------------------------------------

const uuidRe = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
// govalidator's Base64 pattern: standard alphabet, padded, at least one quantum.
const base64Re = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
// strfmt's DateTimePattern for the part after 'T' (already lower-cased). Its '.' is unescaped, so
// any character but a newline may stand before the fraction digits, as in Go.
const timeRe = /^([0-9]{2}):([0-9]{2}):([0-9]{2})([^\n][0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u;

/** Go's time.Parse("2006-01-02", s) succeeding: four-digit year, real month and day. */
function isDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/**
 * strfmt's IsDateTime: split the lower-cased string at each 't', the first piece a date, the second
 * a time; pieces after a second 't' are not looked at (as in kube-openapi).
 */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split("t");
  if (parts.length < 2 || !isDate(parts[0] as string)) return false;
  const m = timeRe.exec(parts[1] as string);
  if (!m) return false;
  return (m[1] as string) <= "23" && (m[2] as string) <= "59" && (m[3] as string) <= "59";
}

// --- the CEL type ------------------------------------------------------------------------------

/** `kubernetes.NamedFormat`: a named validation; two formats are equal when their names are. */
export class FormatValue extends CelObject {
  readonly celType = "kubernetes.NamedFormat";
  constructor(
    readonly name: string,
    readonly validate: (s: string) => readonly string[],
  ) {
    super();
  }
  equals(other: CelValue): boolean {
    return other instanceof FormatValue && other.name === this.name;
  }
  toJSON(): string {
    return this.name;
  }
}

function simple(name: string, message: string, valid: (s: string) => boolean): FormatValue {
  return new FormatValue(name, (s) => (valid(s) ? [] : [message]));
}

/** The formats by the name `format.named` takes; each also has a `format.<name>()` constant. */
export const NAMED_FORMATS: ReadonlyMap<string, FormatValue> = new Map([
  ["dns1123Label", new FormatValue("DNS1123Label", (s) => isDNS1123Label(s))],
  ["dns1123Subdomain", new FormatValue("DNS1123Subdomain", (s) => isDNS1123Subdomain(s))],
  ["dns1035Label", new FormatValue("DNS1035Label", (s) => isDNS1035Label(s))],
  ["qualifiedName", new FormatValue("QualifiedName", isQualifiedName)],
  ["dns1123LabelPrefix", new FormatValue("DNS1123LabelPrefix", (s) => isDNS1123Label(maskTrailingDash(s)))],
  [
    "dns1123SubdomainPrefix",
    new FormatValue("DNS1123SubdomainPrefix", (s) => isDNS1123Subdomain(maskTrailingDash(s))),
  ],
  ["dns1035LabelPrefix", new FormatValue("DNS1035LabelPrefix", (s) => isDNS1035Label(maskTrailingDash(s)))],
  ["labelValue", new FormatValue("LabelValue", isValidLabelValue)],
  [
    "uri",
    new FormatValue("URI", (s) => {
      const err = requestURIError(s);
      return err === undefined ? [] : [err];
    }),
  ],
  ["uuid", simple("uuid", "does not match the UUID format", (s) => uuidRe.test(s))],
  ["byte", simple("byte", "invalid base64", (s) => base64Re.test(s))],
  ["date", simple("date", "invalid date", isDate)],
  ["datetime", simple("datetime", "invalid datetime", isDateTime)],
]);

function validate(f: FormatValue, s: string): Optional {
  const errs = f.validate(s);
  return errs.length === 0 ? Optional.none : Optional.of([...errs]);
}

export const formatLibrary: Library = {
  name: "format",
  availability: "kubernetes",
  functions: [
    fn(
      "validate",
      memberFn("format-validate", ["kubernetes.NamedFormat", "string"], "optional_type", validate),
    ),
    fn(
      "format.named",
      globalFn("format-named", ["string"], "optional_type", (name: string) => {
        const f = NAMED_FORMATS.get(name);
        return f === undefined ? Optional.none : Optional.of(f);
      }),
    ),
    ...[...NAMED_FORMATS].map(([name, f]) =>
      fn(
        `format.${name}`,
        globalFn(`format.${name}`, [], "kubernetes.NamedFormat", () => f),
      ),
    ),
  ],
};
