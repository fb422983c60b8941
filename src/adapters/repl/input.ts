/**
 * Whether a line of REPL input is a whole expression yet. An open bracket, parenthesis, brace or
 * string literal, or a trailing operator (`&&`, `||`, `?`, `,`, `.`...), means more is coming on the
 * next line, as when a policy's multi-line expression is pasted.
 */

const TRAILING_OPERATOR = /(&&|\|\||[?:,.+\-*/%!<>=])\s*$/;

/** True when `text` cannot end here: unbalanced brackets, an unterminated string, or an operator at the end. */
export function isIncomplete(text: string): boolean {
  let depth = 0;
  let i = 0;
  const n = text.length;
  let last = "";
  while (i < n) {
    const c = text[i] as string;
    if (c === "/" && text[i + 1] === "/") {
      while (i < n && text[i] !== "\n") i++;
      continue;
    }
    const lit = /^(?:[rR][bB]?|[bB][rR]?)?("""|'''|"|')/.exec(text.slice(i, i + 5));
    // A prefix letter is only a prefix at the start of a token, not the end of an identifier (`attr"`).
    if (lit && (lit[0].length === lit[1]?.length || !/[A-Za-z0-9_]/.test(text[i - 1] ?? ""))) {
      const quote = lit[1] as string;
      const raw = lit[0].length > quote.length && /[rR]/.test(lit[0].slice(0, -quote.length));
      let j = i + lit[0].length;
      let closed = false;
      while (j < n) {
        if (text.startsWith(quote, j)) {
          closed = true;
          break;
        }
        // A single-quoted string ends at the line's end: the parser reports it, no point waiting.
        if (quote.length === 1 && text[j] === "\n") break;
        if (!raw && text[j] === "\\") j++;
        j++;
      }
      if (!closed) return quote.length === 3;
      i = j + quote.length;
      last = "x";
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    if (!/\s/.test(c)) last = c;
    i++;
  }
  if (depth > 0) return true;
  if (last === "x") return false;
  // Strip comments before looking at the last operator.
  const code = text.replace(/\/\/[^\n]*$/gm, "");
  return TRAILING_OPERATOR.test(code) && !/^\s*$/.test(code);
}

/** Whether REPL input continues on the next line: an unfinished expression, or `:let` with one. */
export function needsMore(text: string): boolean {
  const t = text.trimStart();
  if (t.startsWith(":")) {
    const m = /^:let\s+[A-Za-z_]\w*\s*=([\s\S]*)$/.exec(t);
    return m !== null && (m[1]?.trim() === "" || isIncomplete(m[1] as string));
  }
  return t.trim() !== "" && isIncomplete(t);
}

/**
 * Splits buffered input where a line starts a `:command`: a command never continues an unfinished
 * expression, so `1 +` then `:vars` is two inputs (the first reported as the syntax error it is).
 */
export function splitInputs(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  for (const line of text.split("\n")) {
    if (current.length > 0 && line.trimStart().startsWith(":")) {
      out.push(current.join("\n"));
      current = [];
    }
    current.push(line);
  }
  if (current.length > 0) out.push(current.join("\n"));
  return out;
}
