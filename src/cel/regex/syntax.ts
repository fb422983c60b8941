/**
 * Parsing and validation: every pattern is parsed by `@bufbuild/re2` (a port of RE2/J), whose
 * syntax errors carry Go's messages (`error parsing regexp: missing closing ): ...`), and whose
 * compiled program the automata run (program.ts).
 *
 * One difference is undone here: RE2/J rejects two groups of the same name, which Go accepts
 * (regexp.go, SubexpIndex: "multiple subexpressions can be written using the same name"). Names
 * play no part in matching, so such a pattern is parsed again with its groups unnamed.
 */
import { RE2JS } from "@bufbuild/re2";
import { CelError } from "../runtime/values.ts";

/** RE2/J's compiled program and its instructions, as `@bufbuild/re2` exposes them. */
export type Re2Prog = ReturnType<RE2JS["re2"]>["prog"];
export type Re2Inst = Re2Prog["inst"][number];

const DUPLICATE_NAME = "error parsing regexp: duplicate capture group name";

function goMessage(e: unknown): string {
  return e instanceof Error ? e.message : `error parsing regexp: ${String(e)}`;
}

const GROUP_NAME = /^\(\?P?<([A-Za-z0-9_]+)>/;

/**
 * The pattern with `(?P<name>` and `(?<name>` turned into `(`, read as Go's parser reads it:
 * escapes (`\Q...\E` quotes) and character classes (a `]` first in a class is a literal, `[:name:]`
 * is one item) are copied as they are.
 */
export function withoutGroupNames(pattern: string): string {
  let out = "";
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") {
      const quoteEnd = pattern[i + 1] === "Q" ? pattern.indexOf("\\E", i + 2) : -2;
      const next = quoteEnd === -2 ? i + 2 : quoteEnd < 0 ? pattern.length : quoteEnd + 2;
      out += pattern.slice(i, next);
      i = next;
    } else if (c === "[") {
      const end = classEnd(pattern, i);
      out += pattern.slice(i, end);
      i = end;
    } else {
      const named = c === "(" ? GROUP_NAME.exec(pattern.slice(i, i + 256)) : null;
      out += named ? "(" : c;
      i += named ? named[0].length : 1;
    }
  }
  return out;
}

/** Where the character class opening at `open` ends (after its `]`, or the pattern's end). */
function classEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === "^") i++;
  let first = true;
  while (i < pattern.length && (pattern[i] !== "]" || first)) {
    first = false;
    if (pattern[i] === "\\") i += 2;
    else if (pattern.startsWith("[:", i) && pattern.indexOf(":]", i + 2) > 0)
      i = pattern.indexOf(":]", i + 2) + 2;
    else i++;
  }
  return Math.min(i + 1, pattern.length);
}

/** Parses and compiles as Go would: the compiled pattern, or Go's error message. */
function compileAsGo(pattern: string): RE2JS | string {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    const message = goMessage(e);
    if (!message.startsWith(DUPLICATE_NAME)) return message;
  }
  const unnamed = withoutGroupNames(pattern);
  try {
    return RE2JS.compile(unnamed);
  } catch (e) {
    // Errors quoting the whole pattern quote the one given.
    return goMessage(e).replace(`\`${unnamed}\``, `\`${pattern}\``);
  }
}

/** Parses and compiles a pattern with RE2 syntax; throws a CelError with Go's message if invalid. */
export function parseRe2(pattern: string): RE2JS {
  const compiled = compileAsGo(pattern);
  if (typeof compiled === "string") throw new CelError(compiled);
  return compiled;
}

/**
 * The error Go's `regexp.Compile` reports for a pattern (`error parsing regexp: ...`), or undefined
 * when the pattern is valid RE2 syntax. Never throws.
 */
export function validateRegex(pattern: string): string | undefined {
  const compiled = compileAsGo(pattern);
  return typeof compiled === "string" ? compiled : undefined;
}
