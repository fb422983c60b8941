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

/**
 * `ERROR: <input>:1:20: message` followed by the offending line and a caret under the column,
 * exactly as cel-go (and so kubectl) prints compile errors.
 */
export function renderError(source: string, offset: number | undefined, message: string): string {
  if (offset === undefined) return `ERROR: <input>: ${message}`;
  const { line, column } = locate(source, offset);
  const text = source.split("\n")[line - 1] ?? "";
  // Tabs and wide characters would misplace the caret; cel-go replaces them with dots too.
  const pad = [...text]
    .slice(0, column - 1)
    .map((ch) => (ch === "\t" ? "\t" : "."))
    .join("");
  return `ERROR: <input>:${line}:${column}: ${message}\n | ${text}\n | ${pad}^`;
}
