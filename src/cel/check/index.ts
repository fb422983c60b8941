/**
 * celgate's CEL type checker: cel-go's checker and the validators the Kubernetes API server runs,
 * as one pass over a parsed expression (src/cel/syntax/ast.ts), giving the type of every node, the
 * overloads each call may resolve to, what each identifier refers to, and cel-go's diagnostics.
 *
 *   const env = admissionCheckEnv({ params: DYN });
 *   const r = checkExpression(parseCel("object.spec.replicas <= 5"), env);
 *   r.type          // bool
 *   r.diagnostics   // [] — or cel-go's errors, each at a node id and source offset
 *
 * Checking is linear in the size of the expression and runs once, at compile time.
 */
import type { ParsedExpression } from "../syntax/ast.ts";
import { Checker } from "./checker.ts";
import type { CheckEnv } from "./env.ts";
import { type CelType, DYN } from "./types.ts";
import { substitute } from "./unify.ts";
import { checkProgram, runValidators } from "./validators.ts";
import type { ValidatorName } from "./versions.ts";

export type { AdmissionCheckOptions } from "./admission.ts";
export type { DeclaredOverload, FunctionDecl, LibraryDecl, OverloadDecl } from "./decls/index.ts";
export { ALL_DECLS, BUILTIN_OVERLOADS, OVERLOADS_BY_ID, RUNTIME_ALIASES } from "./decls/index.ts";
export { admissionCheckEnv, variablesFieldType } from "./admission.ts";
export type { CelExtrasFlags, CheckEnv, CheckEnvOptions, MessageType } from "./env.ts";
export { createCheckEnv, messageType } from "./env.ts";
export type { ExpressionKind } from "./result-types.ts";
export { RESULT_TYPES, resultTypeIssue } from "./result-types.ts";
export type { CelType, Kind } from "./types.ts";
export * as celTypes from "./types.ts";
export { formatType, typeString } from "./types.ts";
export type { ValidatorName } from "./versions.ts";
export { LATEST_KUBERNETES, SETTINGS, VALIDATORS } from "./versions.ts";
export { unavailableAt } from "./arrival.ts";

/** Which stage of the API server's compilation reports an issue (parse errors are thrown by the parser). */
export type IssueSource = "checker" | ValidatorName;

export interface CheckIssue {
  /** The node at fault. */
  readonly id: number;
  /** Offset in the source (UTF-16 units), for the caret; from ParsedExpression.offsets. */
  readonly offset: number | undefined;
  /** cel-go's text, without the `ERROR: <input>:l:c:` prefix (source.ts renderError adds it). */
  readonly message: string;
  readonly severity: "error";
  readonly source: IssueSource;
  /** For a call no overload takes: the argument types it was given. */
  readonly operands?: readonly CelType[];
}

export interface CheckResult {
  /** The expression's type; dyn where the checker could not tell, error when it failed. */
  readonly type: CelType;
  /** Every node's checked type, type parameters substituted (unbound ones are dyn). */
  readonly types: ReadonlyMap<number, CelType>;
  /** For each call, the ids of the overloads it may resolve to (one, unless arguments are dyn). */
  readonly overloads: ReadonlyMap<number, readonly string[]>;
  /** For calls whose function is not the node's `fn`: the declared name (`optional.of`, `_+_` for `@append`). */
  readonly functions: ReadonlyMap<number, string>;
  /**
   * What identifiers refer to: for an ident, its name (local or global); for a select that names a
   * declaration (`authorizer.requestResource`, `google.protobuf.Timestamp`), the qualified name; for
   * a struct literal, its type name.
   */
  readonly references: ReadonlyMap<number, string>;
  /** Errors, in source order (as cel-go sorts them). Empty when the API server would accept it. */
  readonly diagnostics: readonly CheckIssue[];
}

/** Type-checks and validates a parsed expression against an environment. Never throws on bad input. */
export function checkExpression(parsed: ParsedExpression, env: CheckEnv): CheckResult {
  const c = new Checker(env);
  c.check(parsed.root);
  const types = new Map<number, CelType>();
  for (const [id, t] of c.types) types.set(id, substitute(c.mapping, t, true));
  const issues: CheckIssue[] = [];
  const seen = new Set<string>();
  const report = (id: number, message: string, source: IssueSource, operands?: readonly CelType[]) => {
    // A node the syntax tree shares (sortBy's list) is checked twice; report its faults once.
    const key = `${id}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    const issue: CheckIssue = { id, offset: parsed.offsets.get(id), message, severity: "error", source };
    issues.push(operands === undefined ? issue : { ...issue, operands });
  };
  for (const i of c.issues) report(i.id, i.message, "checker", i.operands);
  if (issues.length === 0) {
    const ctx = {
      root: parsed.root,
      types,
      functions: c.functions,
      overloads: c.overloads,
      validators: env.validators,
      report,
    };
    runValidators(ctx);
    if (issues.length === 0) checkProgram(ctx);
  }
  const order = (i: CheckIssue) => i.offset ?? Number.MAX_SAFE_INTEGER;
  issues.sort((a, b) => order(a) - order(b));
  return {
    type: types.get(parsed.root.id) ?? DYN,
    types,
    overloads: c.overloads,
    functions: c.functions,
    references: c.references,
    diagnostics: issues,
  };
}
