/** What the validators see of a checked expression. */
import type { CallNode, Expr } from "../syntax/ast.ts";
import type { CelType } from "./types.ts";
import type { ValidatorName } from "./versions.ts";

export interface ValidatorContext {
  readonly root: Expr;
  /** Final node types (type parameters substituted, unbound ones dyn). */
  readonly types: ReadonlyMap<number, CelType>;
  /** Resolved function names where they differ from the call node's. */
  readonly functions: ReadonlyMap<number, string>;
  readonly overloads: ReadonlyMap<number, readonly string[]>;
  readonly validators: ReadonlySet<ValidatorName>;
  report(id: number, message: string, source: ValidatorName): void;
}

/** A call's function name as the checked AST has it. */
export function functionName(ctx: ValidatorContext, e: CallNode): string {
  return ctx.functions.get(e.id) ?? e.fn;
}
