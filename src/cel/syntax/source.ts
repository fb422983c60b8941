/** Source positions of CEL expressions and the caret rendering of errors, in cel-go's format. */

export interface ExprLocation {
  /** 1-based line within the expression. */
  readonly line: number;
  /** 1-based column, counted in code points as cel-go does. */
  readonly column: number;
}

export function locate(source: string, offset: number): ExprLocation {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < source.length; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  const column = [...source.slice(lineStart, Math.max(lineStart, offset))].length + 1;
  return { line, column };
}

/** cel-go prints no source line for a line longer than this many bytes (common/error.go maxSnippetLength). */
const MAX_SNIPPET_BYTES = 16384;

function utf8Length(text: string): number {
  let n = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/** Whether UTF-8 takes more than one byte for `ch`, which cel-go marks with full-width dots. */
function wide(ch: string | undefined): boolean {
  return ch !== undefined && (ch.codePointAt(0) ?? 0) > 0x7f;
}

/**
 * `ERROR: <input>:1:20: message` followed by the offending line and a caret under the column,
 * exactly as cel-go (and so the API server and kubectl) prints compile errors: common/error.go
 * ToDisplayString shows tabs as spaces, puts a dot under each character before the column (a
 * full-width one, U+FF0E, under a character of more than one UTF-8 byte) and the caret under the
 * column (full-width, U+FF3E, under such a character), and leaves the two lines out when the line
 * is longer than 16384 bytes.
 */
export function renderError(source: string, offset: number | undefined, message: string): string {
  if (offset === undefined) return `ERROR: <input>: ${message}`;
  const { line, column } = locate(source, offset);
  const head = `ERROR: <input>:${line}:${column}: ${message}`;
  const raw = source.split("\n")[line - 1] ?? "";
  if (utf8Length(raw) > MAX_SNIPPET_BYTES) return head;
  const text = raw.replaceAll("\t", " ");
  const chars = [...text];
  const pad = chars
    .slice(0, column - 1)
    .map((ch) => (wide(ch) ? "\uff0e" : "."))
    .join("");
  return `${head}\n | ${text}\n | ${pad}${wide(chars[column - 1]) ? "\uff3e" : "^"}`;
}
