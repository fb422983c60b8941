/**
 * What `celgate expr` and the REPL check before evaluating an expression (engine/expression.ts):
 * the names of extra variables, and the CEL extras asked for.
 */
import { type CelExtras, EXTRA_NAMES } from "../../cel/index.ts";
import { err, ok, type Result } from "../../result.ts";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks the names of extra variables: they must be CEL identifiers. */
export function checkVariableNames(vars: Readonly<Record<string, unknown>>): Result<void, string> {
  const bad = Object.keys(vars).filter((k) => !IDENTIFIER.test(k));
  return bad.length === 0
    ? ok(undefined)
    : err(`variable names must be CEL identifiers: ${bad.map((b) => JSON.stringify(b)).join(", ")}`);
}

/** `bind,math` → the extras; `all` and `none` too. */
export function parseExtras(text: string): Result<CelExtras, string> {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const extras: Record<string, boolean> = {};
  for (const n of names) {
    if (n === "all") for (const e of EXTRA_NAMES) extras[e] = true;
    else if (n === "none") continue;
    else if ((EXTRA_NAMES as readonly string[]).includes(n)) extras[n] = true;
    else return err(`unknown CEL extra '${n}'; expected some of ${EXTRA_NAMES.join(", ")} (or all, none)`);
  }
  return ok(extras);
}
