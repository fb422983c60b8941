/**
 * The type checker (check/) as the compiler's first stage: the checker environment an expression is
 * checked in, and its diagnostics as compile problems with the diagnostics catalog's codes
 * (src/errors.ts). Every expression `compile` accepts has passed cel-go's checker and the validators
 * Kubernetes runs, so what compiles here compiles in the API server.
 */
import {
  admissionCheckEnv,
  type CelType,
  type CheckEnv,
  type CheckIssue,
  celTypes,
  createCheckEnv,
} from "./check/index.ts";
import type { CelEnvironment } from "./env/environment.ts";
import { checkEnvironment } from "./env/releases.ts";
import type { TypeTag } from "./runtime/tags.ts";
import { children, type Expr, type ParsedExpression } from "./syntax/ast.ts";

/** The codes of the diagnostics catalog a CEL compile problem may have. */
export type CelProblemCode =
  | "PE_CEL_PARSE"
  | "PE_CEL_UNKNOWN_IDENT"
  | "PE_CEL_UNKNOWN_FUNCTION"
  | "PE_CEL_TYPE"
  | "PE_CEL_INVALID";

/**
 * A checker environment with a key naming it (for the cache of compiled programs): the compile
 * option that types `object`, `params` and the policy's variables as Kubernetes does.
 */
export interface CheckSpec {
  readonly env: CheckEnv;
  readonly key: string;
}

const ADMISSION_NAMES = [
  "object",
  "oldObject",
  "request",
  "params",
  "namespaceObject",
  "authorizer",
  "authorizer.requestResource",
] as const;

/** A variable's type from its planner tag: dyn, or the message type it names. */
function typeOfTag(tag: TypeTag): CelType {
  return tag === "dyn" ? celTypes.DYN : celTypes.objectType(tag);
}

const derived = new WeakMap<CelEnvironment, CheckSpec>();

/**
 * The checker environment of a planner environment, for expressions compiled without one of their
 * own (`expr`, the REPL, webhook matchConditions): the admission variables typed as Kubernetes types
 * them (`request`, `namespaceObject`), `params` dyn, every other variable and every policy variable
 * dyn, at the environment's Kubernetes release.
 */
export function defaultCheckSpec(env: CelEnvironment): CheckSpec {
  const cached = derived.get(env);
  if (cached) return cached;
  const kubernetesVersion = env.kubernetesVersion;
  const vars = env.variables;
  const others: [string, CelType][] = [];
  for (const [name, tag] of vars)
    if (!(ADMISSION_NAMES as readonly string[]).includes(name)) others.push([name, typeOfTag(tag)]);
  // The planner environment names the cluster's release; the checker gets that release's
  // new-expression environment (cel/env/releases.ts checkEnvironment).
  const version = {
    ...(kubernetesVersion === undefined ? {} : checkEnvironment(kubernetesVersion)),
    ...(env.checks === "cel" ? { validators: [] } : {}),
  };
  const check = vars.has("object")
    ? admissionCheckEnv({
        params: vars.has("params") ? celTypes.DYN : null,
        authorizer: vars.has("authorizer"),
        variables: [...(env.policyVariables ?? [])].map((n) => [n, celTypes.DYN] as const),
        declareVariables: env.policyVariables !== undefined,
        declareNamespaceObject: vars.has("namespaceObject"),
        declareRequest: vars.has("request"),
        extraVariables: others,
        mutation: env.structTypes.has("Object"),
        extras: env.extras,
        ...version,
      })
    : createCheckEnv({ variables: others, extras: env.extras, ...version });
  // The planner environment's key names the version and the checks already.
  const spec = { env: check, key: "default" };
  derived.set(env, spec);
  return spec;
}

/** The node of each id in a tree. */
function nodesById(root: Expr): Map<number, Expr> {
  const out = new Map<number, Expr>();
  const walk = (e: Expr): void => {
    out.set(e.id, e);
    for (const c of children(e)) walk(c.expr);
  };
  walk(root);
  return out;
}

/**
 * The catalog code of a checker diagnostic: an undeclared name (of a variable or field, or of a
 * function at a call), a call no overload takes, a literal a validator refuses, any other type error.
 */
function codeOf(issue: CheckIssue, node: Expr | undefined): CelProblemCode {
  if (issue.source !== "checker")
    return issue.source === "cel.validator.homogeneous_literals" ? "PE_CEL_TYPE" : "PE_CEL_INVALID";
  if (issue.message.startsWith("undeclared reference"))
    return node?.kind === "call" ? "PE_CEL_UNKNOWN_FUNCTION" : "PE_CEL_UNKNOWN_IDENT";
  // A field a message type does not declare: `variables.<name>` the policy lacks, a typed object's.
  if (issue.message.startsWith("undefined field")) return "PE_CEL_UNKNOWN_IDENT";
  if (issue.message.startsWith("found no matching overload")) return "PE_CEL_UNKNOWN_FUNCTION";
  return "PE_CEL_TYPE";
}

/** The checker's diagnostics as compile problems, in source order. */
export function checkProblems(
  parsed: ParsedExpression,
  issues: readonly CheckIssue[],
): {
  code: CelProblemCode;
  message: string;
  offset: number | undefined;
  operands?: readonly CelType[];
}[] {
  if (issues.length === 0) return [];
  const nodes = nodesById(parsed.root);
  return issues.map((i) => {
    const p = { code: codeOf(i, nodes.get(i.id)), message: i.message, offset: i.offset };
    return i.operands === undefined ? p : { ...p, operands: i.operands };
  });
}
