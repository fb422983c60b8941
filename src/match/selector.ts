/**
 * metav1.LabelSelector with the API server's semantics (apimachinery's LabelSelectorAsSelector and
 * labels.Requirement). Invalid selectors are reported as values, not thrown: a selector comes from
 * user-written policy files, so an invalid one is an expected failure (see src/result.ts).
 *
 * The error is deferred to matching time by the caller on purpose: the API server only reports a bad
 * selector for requests that the rest of the match criteria select (see matcher.ts).
 */
import { err, ok, type Result } from "../result.ts";
import type { LabelSelector, LabelSelectorRequirement } from "../policy/types.ts";

export type Labels = Readonly<Record<string, string>>;

/** A compiled selector. */
export interface LabelMatcher {
  /** True when the selector does not restrict anything (`{}`), so callers may skip label lookups. */
  readonly empty: boolean;
  matches(labels: Labels): boolean;
  /** The selector in Kubernetes' string syntax (`env in (prod,staging),!legacy`), for explanations. */
  readonly text: string;
}

export interface SelectorProblem {
  /** Field path inside the selector: `matchLabels["a/b/c"]`, `matchExpressions[1].values`. */
  readonly path: string;
  readonly message: string;
}

export interface InvalidSelectorError {
  readonly kind: "invalid-selector";
  /** All problems joined into one line. */
  readonly message: string;
  readonly problems: readonly SelectorProblem[];
}

type Operator = LabelSelectorRequirement["operator"];

interface Requirement {
  readonly key: string;
  /** `Equals` comes from matchLabels; it behaves as `In` with one value. */
  readonly operator: Operator | "Equals";
  readonly values: readonly string[];
}

// Kubernetes' qualified-name and label-value grammars (apimachinery util/validation).
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 63;
const MAX_PREFIX = 253;
const MAX_VALUE = 63;

function labelKeyProblems(key: string): string[] {
  const parts = key.split("/");
  if (parts.length > 2) {
    return [
      "a label key is a name with an optional DNS subdomain prefix and one '/' (e.g. 'example.com/name')",
    ];
  }
  const problems: string[] = [];
  const name = parts.length === 2 ? (parts[1] ?? "") : key;
  if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    if (prefix === "") problems.push("prefix part must be non-empty");
    else if (prefix.length > MAX_PREFIX)
      problems.push(`prefix part must be no more than ${MAX_PREFIX} characters`);
    else if (!DNS1123_SUBDOMAIN.test(prefix)) {
      problems.push("prefix part must be a DNS-1123 subdomain (lower case alphanumerics, '-' or '.')");
    }
  }
  if (name === "") problems.push("name part must be non-empty");
  else if (name.length > MAX_NAME) problems.push(`name part must be no more than ${MAX_NAME} characters`);
  if (name !== "" && !QUALIFIED_NAME.test(name)) {
    problems.push(
      "name part must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric",
    );
  }
  return problems;
}

function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > MAX_VALUE) problems.push(`must be no more than ${MAX_VALUE} characters`);
  // The empty string is a valid label value.
  if (value !== "" && !QUALIFIED_NAME.test(value)) {
    problems.push(
      "must be empty or consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric",
    );
  }
  return problems;
}

const OPERATORS: readonly string[] = ["In", "NotIn", "Exists", "DoesNotExist"];

function checkRequirement(req: Requirement, path: string, problems: SelectorProblem[]): void {
  for (const m of labelKeyProblems(req.key)) {
    problems.push({ path: `${path}.key`, message: `invalid key ${JSON.stringify(req.key)}: ${m}` });
  }
  switch (req.operator) {
    case "In":
    case "NotIn":
      if (req.values.length === 0) {
        problems.push({
          path: `${path}.values`,
          message: `values must be non-empty for operator ${req.operator}`,
        });
      }
      break;
    case "Exists":
    case "DoesNotExist":
      if (req.values.length !== 0) {
        problems.push({
          path: `${path}.values`,
          message: `values must be empty for operator ${req.operator}`,
        });
      }
      break;
    case "Equals":
      break;
    default:
      // The type says this cannot happen, but selectors may reach us from unchecked JSON.
      problems.push({
        path: `${path}.operator`,
        message: `${JSON.stringify(req.operator)} is not a valid label selector operator (${OPERATORS.join(", ")})`,
      });
  }
  req.values.forEach((v, i) => {
    const valuePath = req.operator === "Equals" ? path : `${path}.values[${i}]`;
    for (const m of labelValueProblems(v)) {
      problems.push({ path: valuePath, message: `invalid value ${JSON.stringify(v)}: ${m}` });
    }
  });
}

function requirementMatches(req: Requirement, labels: Labels): boolean {
  const has = Object.hasOwn(labels, req.key);
  switch (req.operator) {
    case "Equals":
    case "In":
      return has && req.values.includes(labels[req.key] as string);
    case "NotIn":
      // A missing key satisfies NotIn: Kubernetes reads it as "not labelled with one of these".
      return !has || !req.values.includes(labels[req.key] as string);
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
  }
}

function requirementText(req: Requirement): string {
  const values = [...req.values].sort().join(",");
  switch (req.operator) {
    case "Equals":
      return `${req.key}=${values}`;
    case "In":
      return `${req.key} in (${values})`;
    case "NotIn":
      return `${req.key} notin (${values})`;
    case "Exists":
      return req.key;
    case "DoesNotExist":
      return `!${req.key}`;
  }
}

const EVERYTHING: LabelMatcher = { empty: true, matches: () => true, text: "" };

/**
 * Compiles a selector. `{}` (no labels, no expressions) matches everything. An absent selector is the
 * caller's business: in admission match criteria it means "everything" too, after API defaulting.
 */
/** Parsed policies are immutable, so a selector is compiled once however many requests it sees. */
const compiledSelectors = new WeakMap<LabelSelector, Result<LabelMatcher, InvalidSelectorError>>();

export function compileLabelSelector(sel: LabelSelector): Result<LabelMatcher, InvalidSelectorError> {
  let compiled = compiledSelectors.get(sel);
  if (!compiled) {
    compiled = compileSelector(sel);
    compiledSelectors.set(sel, compiled);
  }
  return compiled;
}

function compileSelector(sel: LabelSelector): Result<LabelMatcher, InvalidSelectorError> {
  const requirements: Requirement[] = [];
  const problems: SelectorProblem[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels)) {
    const req: Requirement = { key, operator: "Equals", values: [value] };
    checkRequirement(req, `matchLabels[${JSON.stringify(key)}]`, problems);
    requirements.push(req);
  }
  sel.matchExpressions.forEach((expr, i) => {
    const req: Requirement = { key: expr.key, operator: expr.operator, values: [...expr.values] };
    checkRequirement(req, `matchExpressions[${i}]`, problems);
    requirements.push(req);
  });
  if (problems.length > 0) {
    const message = `invalid label selector: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`;
    return err({ kind: "invalid-selector", message, problems });
  }
  if (requirements.length === 0) return ok(EVERYTHING);
  // Kubernetes orders requirements by key; only the text shows it, matching is an AND either way.
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return ok({
    empty: false,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels)),
    text: requirements.map(requirementText).join(","),
  });
}

/** One-shot form of compileLabelSelector + matches, for callers that do not reuse the selector. */
export function matchesLabels(sel: LabelSelector, labels: Labels): Result<boolean, InvalidSelectorError> {
  const compiled = compileLabelSelector(sel);
  return compiled.ok ? ok(compiled.value.matches(labels)) : compiled;
}
