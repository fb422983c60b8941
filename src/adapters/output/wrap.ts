/**
 * Fitting text to a terminal's width: words wrapped at spaces, a word longer than the line broken
 * where it must be, nothing dropped. Only the people's table on a terminal is fitted; piped output,
 * JSON and YAML are never wrapped or cut, so they stay whole for grep and for tools.
 */

/** How many columns a string takes: one per code point (wide characters are rare in policies). */
export function textWidth(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The first `width` code points of `s`, and the rest. */
function splitAt(s: string, width: number): [string, string] {
  const chars = [...s];
  return [chars.slice(0, width).join(""), chars.slice(width).join("")];
}

/**
 * `text` as lines of at most `width` columns, broken at spaces where there are any. A width below
 * one, or text that already fits, comes back as one line.
 */
export function wrapText(text: string, width: number): string[] {
  if (width < 1 || textWidth(text) <= width) return [text];
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    let rest = word;
    const sep = line === "" ? "" : " ";
    if (textWidth(line) + sep.length + textWidth(rest) <= width) {
      line += sep + rest;
      continue;
    }
    if (line !== "") lines.push(line);
    line = "";
    while (textWidth(rest) > width) {
      const [head, tail] = splitAt(rest, width);
      lines.push(head);
      rest = tail;
    }
    line = rest;
  }
  lines.push(line);
  return lines;
}

/**
 * `text` wrapped to `width` columns with the first line after `first` and the others after
 * `hanging` (both already counted in width), for a line that must stay readable as one item.
 */
export function wrapHanging(text: string, width: number, first: string, hanging: string): string[] {
  const room = width - Math.max(textWidth(first), textWidth(hanging));
  if (room < 20) return [`${first}${text}`];
  return wrapText(text, room).map((l, i) => `${i === 0 ? first : hanging}${l}`);
}
