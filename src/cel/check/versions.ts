/**
 * Which Kubernetes release enabled each compile-time rule of the admission environment
 * (k8s.io/apiserver/pkg/cel/environment/base.go), for checking against an older cluster.
 * The libraries carry their own release (decls/*.ts `kubernetes`); this is the rest.
 *
 * `1.0` marks what base.go puts in its first, unversioned block ("CEL epoch was actually 1.23, but
 * we artificially set it to 1.0 because these options should always be present").
 */

import { DEFAULT_RELEASE } from "../env/releases.ts";

/**
 * The Kubernetes release whose CEL environment this checker follows when given none: the default
 * release (cel/env/releases.ts).
 */
export const LATEST_KUBERNETES = DEFAULT_RELEASE;

export type ValidatorName =
  | "cel.validator.homogeneous_literals"
  | "cel.validator.duration"
  | "cel.validator.timestamp"
  | "cel.validator.matches"
  | "cel.validator.string_format"
  | "kubernetes.program.regex";

export interface ValidatorInfo {
  readonly name: ValidatorName;
  /** The first Kubernetes release whose admission environment runs it. */
  readonly kubernetes: string;
  /** Where upstream defines and enables it. */
  readonly source: string;
}

/** In the order the API server runs them: the order base.go registers them. */
export const VALIDATORS: readonly ValidatorInfo[] = [
  {
    name: "cel.validator.homogeneous_literals",
    kubernetes: "1.0",
    source:
      "base.go cel.HomogeneousAggregateLiterals() (a checker option until cel-go v0.17, the AST validator since); cel-go cel/validator.go",
  },
  {
    name: "cel.validator.duration",
    kubernetes: "1.29",
    source: "base.go ASTValidators(ValidateDurationLiterals()); cel-go cel/validator.go",
  },
  {
    name: "cel.validator.timestamp",
    kubernetes: "1.29",
    source: "base.go ASTValidators(ValidateTimestampLiterals()); cel-go cel/validator.go",
  },
  {
    name: "cel.validator.matches",
    kubernetes: "1.29",
    source: "base.go ASTValidators(ValidateRegexLiterals()); cel-go cel/validator.go",
  },
  {
    name: "cel.validator.string_format",
    kubernetes: "1.29",
    source: "base.go ext.Strings(StringsVersion(2)); cel-go ext/formatting.go stringFormatValidator",
  },
  {
    name: "kubernetes.program.regex",
    kubernetes: "1.0",
    source:
      "base.go EvalOptions(OptOptimize) with library.Regex's OptimizeRegex: constant patterns of matches, find and findAll compile when the program is built (cel-go interpreter/optimizations.go, library/regex.go)",
  },
];

/** Other settings of the environment that change what type-checks. */
export const SETTINGS: readonly {
  readonly name: string;
  readonly kubernetes: string;
  readonly source: string;
}[] = [
  {
    name: "CrossTypeNumericComparisons (<, <=, >, >= across int, uint and double)",
    kubernetes: "1.28",
    source: "base.go cel.CrossTypeNumericComparisons(true); cel-go checker/env.go",
  },
];

/** `a >= b` for releases written `major.minor`. */
export function atLeast(version: string, since: string): boolean {
  const [a1 = 0, a2 = 0] = version.split(".").map(Number);
  const [b1 = 0, b2 = 0] = since.split(".").map(Number);
  return a1 !== b1 ? a1 > b1 : a2 >= b2;
}

/** Overloads cel-go filters out unless CrossTypeNumericComparisons is on (checker/env.go). */
export const CROSS_TYPE_NUMERIC: ReadonlySet<string> = new Set(
  ["less", "less_equals", "greater", "greater_equals"].flatMap((op) =>
    ["double_int64", "double_uint64", "int64_double", "int64_uint64", "uint64_double", "uint64_int64"].map(
      (t) => `${op}_${t}`,
    ),
  ),
);
