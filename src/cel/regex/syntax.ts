/**
 * Parsing and validation: every pattern is parsed by `@bufbuild/re2` (a port of RE2/J), whose
 * syntax errors carry Go's messages (`error parsing regexp: missing closing ): ...`), and whose
 * compiled program the automata run (program.ts).
 */
import { RE2JS } from "@bufbuild/re2";
import { CelError } from "../values.ts";

/** RE2/J's compiled program and its instructions, as `@bufbuild/re2` exposes them. */
export type Re2Prog = ReturnType<RE2JS["re2"]>["prog"];
export type Re2Inst = Re2Prog["inst"][number];

function goMessage(e: unknown): string {
  return e instanceof Error ? e.message : `error parsing regexp: ${String(e)}`;
}

/** Parses and compiles a pattern with RE2 syntax; throws a CelError with Go's message if invalid. */
export function parseRe2(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    throw new CelError(goMessage(e));
  }
}

/**
 * The error Go's `regexp.Compile` reports for a pattern (`error parsing regexp: ...`), or undefined
 * when the pattern is valid RE2 syntax. Never throws.
 */
export function validateRegex(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (e) {
    return goMessage(e);
  }
}
