/**
 * The CEL engine's public face: compile an expression once (cached by environment and source),
 * evaluate it many times. The rest of celgate imports CEL only from here.
 */
import type { ParsedExpression } from "./syntax/ast.ts";
import { type CelType, type CheckEnv, celTypes, checkExpression } from "./check/index.ts";
import { constantConversionProblem } from "./fold.ts";
import { type CelProblemCode, type CheckSpec, checkProblems, defaultCheckSpec } from "./checking.ts";
import { compileParsed, type Program } from "./compile.ts";
import type { Activation } from "./state/activation.ts";
import { PER_CALL_COST_LIMIT } from "./state/limits.ts";
import { EvalState } from "./state/state.ts";
import {
  ADMISSION_VARIABLES,
  type CelEnvironment,
  type CelExtras,
  type CheckMode,
  createEnvironment,
  type EnvOptions,
} from "./env/environment.ts";
import { toCel } from "./input.ts";
import { renderError } from "./syntax/source.ts";
import { type SharedKeys, SubexpressionIndex, sharedKeys } from "./plan/shared.ts";
import { ExpressionCoverage } from "./plan/coverage.ts";
import { CelSyntaxError, parseCel } from "./syntax/parse.ts";
import { CelError, type CelValue, typeName } from "./runtime/values.ts";
import { WeakCache } from "./weak-cache.ts";

export type { Program } from "./compile.ts";
export type { CelProblemCode, CheckSpec } from "./checking.ts";
export { defaultCheckSpec } from "./checking.ts";
export type { CelType, CheckEnv, ExpressionKind, MessageType } from "./check/index.ts";
export {
  admissionCheckEnv,
  celTypes,
  LATEST_KUBERNETES,
  resultTypeIssue,
  typeString,
  unavailableAt,
} from "./check/index.ts";
export type { Activation, MemoEntry, VariableResolver } from "./state/activation.ts";
export { EvalState } from "./state/state.ts";
export type { SharedKeys } from "./plan/shared.ts";
export type { BranchKind, CoveragePoint, ExpressionCoverage } from "./plan/coverage.ts";
export { OUTCOMES } from "./plan/coverage.ts";
export type { CelEnvironment, CelExtras, CheckMode, EnvOptions } from "./env/environment.ts";
export { ADMISSION_VARIABLES, createEnvironment, EXTRA_NAMES } from "./env/environment.ts";
export type { CodegenMode, RuntimeOptions } from "./configure.ts";
export { CODEGEN_ENV, codegenModeFrom, configureRuntime, runtimeOptionsFromEnv } from "./configure.ts";
export type { SequenceClock, SequenceOutcome } from "./sequence.ts";
export { ProgramSequence, sequenceOf } from "./sequence.ts";
export type { ExpressionClock } from "./state/limits.ts";
export {
  BUDGET_MESSAGE,
  BUDGET_SPENT,
  DEADLINE_MESSAGE,
  DEADLINE_PASSED,
  MATCH_CONDITIONS_COST_BUDGET,
  PER_CALL_COST_LIMIT,
  RUNTIME_COST_BUDGET,
  startExpression,
  Thrown,
} from "./state/limits.ts";
export { toCel, toJson } from "./input.ts";
export type { ExplainLimits } from "./explain.ts";
export { explainFalse, renderExpr, showValue } from "./explain.ts";
export { renderError } from "./syntax/source.ts";
export type { CelValue } from "./runtime/values.ts";
export { CelError, typeName } from "./runtime/values.ts";
export type { AuthorizationAnswer, AuthorizationAttributes, AuthorizerBackend } from "./library/authz.ts";
export { AuthorizerValue, ResourceCheck, unavailableAuthorizer } from "./library/authz.ts";
export type { AuthorizerCheck, AuthorizerRule } from "./library/authz-table.ts";
export { AUTHORIZER_DECISIONS, describeCheck, tableAuthorizer } from "./library/authz-table.ts";
export { compileRegex } from "./regex/index.ts";
/** Go behaviour other stages print or parse as the API server does (JSON Patch errors, Go %v). */
export { quote as goQuote } from "./go/quote.ts";
export { formatFloat, numError, parseInt64 } from "./go/strconv.ts";
export { setMember } from "./runtime/values.ts";
export type {
  ApiVersionVerdict,
  ParsedRelease,
  Release,
  ReleaseModel,
  RuntimeSwitches,
  ServedVersion,
} from "./env/releases.ts";
export {
  arrivalNote,
  BINARY_LIBRARIES,
  checkEnvironment,
  compareReleases,
  DEFAULT_RELEASE,
  isPreview,
  NEWEST_RELEASE,
  newExpressionEnvironment,
  OLDEST_RELEASE,
  PREVIEW_RELEASES,
  parseRelease,
  RELEASES,
  releaseModel,
  servesApiVersion,
} from "./env/releases.ts";

/** A compile problem with its position and the expression rendered with a caret. */
export interface ExpressionProblem {
  readonly code: CelProblemCode;
  readonly message: string;
  readonly offset: number | undefined;
  /** `ERROR: <input>:1:20: message` plus the source line and a caret, as cel-go prints it. */
  readonly rendered: string;
  /** For a call no overload takes: the argument types it was given. */
  readonly operands?: readonly CelType[];
}

export type CompileResult =
  | {
      readonly ok: true;
      readonly program: Program;
      /** The expression's type as the checker found it (`dyn` where it cannot tell). */
      readonly checkedType: CelType;
      /** What the program's runs covered, when compiled with `coverage` (plan/coverage.ts). */
      readonly coverage?: ExpressionCoverage;
    }
  | { readonly ok: false; readonly problems: readonly ExpressionProblem[] };

// Caches by source hold their entries weakly (weak-cache.ts): the serving set's programs keep their
// parsed trees, so a reload of mostly unchanged files finds them, and a replaced set is collected.
const parseCache = new WeakCache<ParsedExpression | CelSyntaxError>();
/** Compiled programs by environment, checker and source; failures are not cached (nothing keeps them). */
const programCache = new WeakCache<Program>();
/** The result each cached program came with (its checked type), for as long as the program lives. */
const compiledResults = new WeakMap<Program, CompileResult>();

function parseCached(
  source: string,
  bind: boolean,
  macros: CheckEnv["macros"],
): ParsedExpression | CelSyntaxError {
  const key = `${bind ? 1 : 0}${macros.twoVarComprehensions ? 1 : 0}${macros.sortBy ? 1 : 0}\u0000${source}`;
  let hit = parseCache.get(key);
  if (hit === undefined) {
    try {
      hit = parseCel(source, { bind, ...macros });
    } catch (e) {
      if (!(e instanceof CelSyntaxError)) throw e;
      hit = e;
    }
    parseCache.set(key, hit);
  }
  return hit;
}

const ALL_MACROS: CheckEnv["macros"] = { twoVarComprehensions: true, sortBy: true };

/**
 * Compiles an expression against an environment: parses it, type-checks it with cel-go's checker
 * and Kubernetes' validators (check/) in `check`'s environment (by default, defaultCheckSpec's for
 * `env`), and plans it. Never throws for bad input: syntax errors, and all the checker's
 * diagnostics at once, come back as problems. With `coverage`, the program counts what its runs
 * evaluate (`test --coverage`): it is its own, never cached nor shared, and runs only as closures.
 */
export function compile(
  source: string,
  env: CelEnvironment,
  shared?: SharedKeys,
  check?: CheckSpec,
  options: CoverageOptions = {},
): CompileResult {
  if (options.coverage === true) return compileCovered(source, env, check, options.booleanResult === true);
  const spec = check ?? defaultCheckSpec(env);
  // The macros a release's environment has are its parser's (CheckEnv.macros).
  const parsed = parseCached(source, env.extras.bind, spec.env.macros);
  // Canonical keys are kept per node while one expression is planned, then let go: kept for as long
  // as the parsed tree lives, they grew with its size times its depth.
  const index = new SubexpressionIndex();
  const ids =
    parsed instanceof CelSyntaxError || !shared?.size ? undefined : sharedIdsIn(parsed, shared, index);
  // Programs that share subexpressions are cached apart from those that do not, by which keys they
  // share at which places: places are per policy, so the same place may hold another key elsewhere.
  const key = `${env.key}\u0000${spec.key}\u0000${source}${ids ? `\u0000${[...ids].map(([k, id]) => `${id}=${k}`).join("\u0001")}` : ""}`;
  const cachedProgram = programCache.get(key);
  const cached = cachedProgram && compiledResults.get(cachedProgram);
  if (cached) return cached;
  let result: CompileResult;
  if (parsed instanceof CelSyntaxError) {
    result = {
      ok: false,
      problems: [
        {
          code: "PE_CEL_PARSE",
          message: parsed.message,
          offset: parsed.offset,
          rendered: renderError(source, parsed.offset, parsed.message),
        },
      ],
    };
  } else {
    const checked = env.checks === "none" ? undefined : checkExpression(parsed, spec.env);
    const problems = checked === undefined ? [] : checkProblems(parsed, checked.diagnostics);
    // Building the program folds conversions of constants, and refuses those that fail (fold.ts),
    // as the API server's OptOptimize does.
    const folded =
      problems.length === 0 && env.checks === "kubernetes"
        ? constantConversionProblem(parsed, env)
        : undefined;
    if (folded)
      problems.push({
        code: "PE_CEL_INVALID",
        message: folded.message,
        offset: parsed.offsets.get(folded.id),
      });
    result =
      problems.length === 0
        ? {
            ok: true,
            program: compileParsed(parsed, env, ids ? { ids, index } : undefined),
            checkedType: checked?.type ?? celTypes.DYN,
          }
        : {
            ok: false,
            problems: problems.map((p) => ({ ...p, rendered: renderError(source, p.offset, p.message) })),
          };
  }
  if (result.ok) {
    programCache.set(key, result.program);
    compiledResults.set(result.program, result);
  }
  return result;
}

/** How `compile` counts what a program's runs cover (`test --coverage`). */
export interface CoverageOptions {
  readonly coverage?: boolean;
  /** Count the value's two outcomes even when the checker cannot tell it is a bool (a validation). */
  readonly booleanResult?: boolean;
}

/** `compile` with coverage: checked the same way, planned with every node counted, not cached. */
function compileCovered(
  source: string,
  env: CelEnvironment,
  check: CheckSpec | undefined,
  booleanResult: boolean,
): CompileResult {
  const spec = check ?? defaultCheckSpec(env);
  const parsed = parseCached(source, env.extras.bind, spec.env.macros);
  if (parsed instanceof CelSyntaxError) return compile(source, env, undefined, check);
  const checked = env.checks === "none" ? undefined : checkExpression(parsed, spec.env);
  // What compile refuses (a checker problem, a constant conversion that fails) it reports itself.
  if (checked !== undefined && checked.diagnostics.length > 0) return compile(source, env, undefined, check);
  if (env.checks === "kubernetes" && constantConversionProblem(parsed, env))
    return compile(source, env, undefined, check);
  const coverage = new ExpressionCoverage(parsed, booleanResult || checked?.type.kind === "bool");
  return {
    ok: true,
    program: compileParsed(parsed, env, undefined, coverage),
    checkedType: checked?.type ?? celTypes.DYN,
    coverage,
  };
}

/**
 * Type-checks an expression in another checker environment without compiling it (a policy's
 * expression against its kind's schema types, compile/schema-typing.ts): the problems found, and
 * the type, as for `compile`. Nothing for a source that does not parse (compile reports that).
 */
export function typeCheck(
  source: string,
  bind: boolean,
  check: CheckEnv,
): { readonly problems: readonly ExpressionProblem[]; readonly type: CelType | undefined } {
  const parsed = parseCached(source, bind, check.macros);
  if (parsed instanceof CelSyntaxError) return { problems: [], type: undefined };
  const checked = checkExpression(parsed, check);
  const problems = checkProblems(parsed, checked.diagnostics).map((p) => ({
    ...p,
    rendered: renderError(source, p.offset, p.message),
  }));
  return { problems, type: checked.type };
}

/** Memo places of the keys in `shared` that stand in `parsed` where they can be shared; undefined if none. */
function sharedIdsIn(
  parsed: ParsedExpression,
  shared: SharedKeys,
  index: SubexpressionIndex,
): Map<string, number> | undefined {
  const ids = new Map<string, number>();
  index.walk(parsed.root, (e, bound) => {
    if (!index.shareable(e, bound)) return;
    const k = index.key(e);
    const id = shared.get(k);
    if (id !== undefined) ids.set(k, id);
  });
  return ids.size > 0 ? ids : undefined;
}

/**
 * The subexpressions that stand in two places or more across one policy's expressions and can be
 * computed once per evaluation (plan/shared.ts), as canonical keys with their places in the policy's
 * memo, for `compile`. Sources that do not parse are left out (compile reports them).
 */
export function sharedSubexpressions(sources: readonly string[], bind: boolean): SharedKeys {
  // Parsed with every macro: where a release lacks some, its expressions that use them do not
  // compile, and nothing is shared with them.
  const roots = sources
    .map((s) => parseCached(s, bind, ALL_MACROS))
    .filter((p): p is ParsedExpression => !(p instanceof CelSyntaxError))
    .map((p) => p.root);
  return sharedKeys(roots, new SubexpressionIndex());
}

/** An evaluation error described for people: the cause and where in the expression it happened. */
export interface EvalFailure {
  readonly message: string;
  readonly kind: "runtime" | "cost" | "timeout";
  readonly offset: number | undefined;
  readonly rendered: string;
}

export type EvalResult =
  | { readonly ok: true; readonly value: CelValue; readonly cost: number }
  | { readonly ok: false; readonly error: EvalFailure; readonly cost: number };

/** What a program's run threw, as a CelError: anything else is a bug, reported as an internal error. */
export function asCelError(e: unknown): CelError {
  return e instanceof CelError
    ? e
    : new CelError(`internal error: ${e instanceof Error ? e.message : String(e)}`);
}

/** Runs a program. Never throws: evaluation errors, cost and deadline overruns are values. */
export function run(program: Program, act: Activation, state: EvalState): EvalResult {
  const before = state.cost;
  try {
    const value = program.run(act, state);
    return { ok: true, value, cost: state.cost - before };
  } catch (e) {
    const err = asCelError(e);
    const offset = err.exprId === undefined ? undefined : program.parsed.offsets.get(err.exprId);
    return {
      ok: false,
      error: {
        message: err.message,
        kind: err.kind,
        offset,
        rendered: renderError(program.parsed.source, offset, err.message),
      },
      cost: state.cost - before,
    };
  }
}

let defaultEnv: CelEnvironment | undefined;

/** The environment `evaluate` uses: the admission variables plus every extra library. */
function convenienceEnv(extras?: CelExtras): CelEnvironment {
  if (!extras) {
    defaultEnv ??= createEnvironment({
      variables: { ...ADMISSION_VARIABLES },
      extras: { bind: true, math: true, base64: true },
    });
    return defaultEnv;
  }
  return createEnvironment({ variables: { ...ADMISSION_VARIABLES }, extras });
}

export type SimpleEvalResult =
  | { readonly ok: true; readonly value: CelValue; readonly type: string; readonly cost: number }
  | { readonly ok: false; readonly error: string; readonly stage: "compile" | "eval" };

/**
 * Compiles and evaluates one expression with plain JSON (or CEL) bindings: the convenience entry
 * for `celgate expr`, the REPL and tests. Bindings named in the environment's variables are converted
 * with `toCel`; others are declared as `dyn` variables on the fly.
 */
export function evaluate(
  source: string,
  bindings: Record<string, unknown> = {},
  options: { extras?: CelExtras; costLimit?: number; checks?: CheckMode } = {},
): SimpleEvalResult {
  const extraVars = Object.keys(bindings).filter((k) => !(k in ADMISSION_VARIABLES));
  const env =
    extraVars.length === 0 && options.checks === undefined
      ? convenienceEnv(options.extras)
      : createEnvironment({
          variables: { ...ADMISSION_VARIABLES, ...Object.fromEntries(extraVars.map((k) => [k, "dyn"])) },
          extras: options.extras ?? { bind: true, math: true, base64: true },
          ...(options.checks ? { checks: options.checks } : {}),
        } satisfies EnvOptions);
  const compiled = compile(source, env);
  if (!compiled.ok)
    return { ok: false, error: compiled.problems.map((p) => p.rendered).join("\n"), stage: "compile" };
  const values: Record<string, CelValue> = {};
  for (const [k, v] of Object.entries(bindings)) values[k] = toCel(v);
  const state = new EvalState(options.costLimit ?? PER_CALL_COST_LIMIT, performance.now() + 10_000);
  const r = run(compiled.program, { values }, state);
  if (!r.ok) return { ok: false, error: r.error.message, stage: "eval" };
  return { ok: true, value: r.value, type: typeName(r.value), cost: r.cost };
}
