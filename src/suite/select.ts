/**
 * `celgate test --run PATTERN`: which cases to run, chosen the way `go test -run` chooses tests
 * (go/src/testing/match.go). A case's name is `suite/group/.../case`; the pattern is split at each
 * `/` outside brackets and parentheses (a `\` escapes the next character), and each element is an
 * unanchored regular expression that must match the name's element at the same level. Both sides
 * have white space replaced by `_` first, as Go rewrites names, so `--run 'replica limits/big'`
 * and `--run replica_limits/big` are the same. The expressions are RE2's, as Go's and CEL's are.
 *
 * One difference, on purpose: Go also runs a test whose name has fewer elements than the pattern,
 * since it cannot know whether the test has subtests to match the rest; a case has none, so here it
 * must have at least as many elements as the pattern to match.
 */
import { compileRegex } from "../cel/index.ts";

/** The pattern's elements, split at `/` outside `[...]` and `(...)` (Go's splitRegexp). */
export function splitPattern(pattern: string): string[] {
  const out: string[] = [];
  let brackets = 0;
  let parens = 0;
  let start = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "[") brackets++;
    else if (c === "]") brackets = Math.max(0, brackets - 1);
    else if (c === "(" && brackets === 0) parens++;
    else if (c === ")" && brackets === 0) parens--;
    else if (c === "\\") i++;
    else if (c === "/" && brackets === 0 && parens === 0) {
      out.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  out.push(pattern.slice(start));
  return out;
}

/** Go's testing.isSpace: the characters `rewrite` turns into `_`. */
function isSpace(code: number): boolean {
  if (code < 0x2000) return [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680].includes(code);
  return code <= 0x200a || [0x2028, 0x2029, 0x202f, 0x205f, 0x3000].includes(code);
}

/** White space as `_`, other unprintable characters as escapes (Go's testing.rewrite). */
export function rewriteName(s: string): string {
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (isSpace(code)) out += "_";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out;
}

/** Whether a case (its name's elements, suite first) is selected. */
export type CaseSelector = (elements: readonly string[]) => boolean;

/**
 * The selector for a pattern, or the error of an element that is not a valid RE2 expression
 * (element numbers from 0, as Go reports them).
 */
export function caseSelector(
  pattern: string,
): { ok: true; value: CaseSelector } | { ok: false; error: string } {
  const elements = splitPattern(pattern).map(rewriteName);
  const regexes: { test(s: string): boolean }[] = [];
  for (const [i, e] of elements.entries()) {
    try {
      regexes.push(compileRegex(e));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return {
        ok: false,
        error: `invalid regular expression for element ${i} of --run (${JSON.stringify(e)}): ${why}`,
      };
    }
  }
  return {
    ok: true,
    value: (names) => {
      // Go matches the full name split at every `/`, so a `/` inside a name makes two elements.
      const parts = names.map(rewriteName).join("/").split("/");
      return parts.length >= regexes.length && regexes.every((re, i) => re.test(parts[i] ?? ""));
    },
  };
}
