/** Go's FindAllString over any engine's "leftmost-first match at or after a position". */

/** A match as [start, end) in UTF-16 units, or undefined for none. */
export type MatchAt = (pos: number) => readonly [number, number] | undefined;

export function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

export function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** Width in UTF-16 units of the code point at `i`: 2 for a surrogate pair, else 1. */
function codePointWidth(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return isHighSurrogate(c) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
}

/**
 * Go's `FindAllString`: successive matches, up to `limit` (all when negative), an empty match
 * abutting the previous match skipped. Allocates per match found, never per character read.
 */
export function findAllWith(text: string, limit: number, matchAt: MatchAt): string[] {
  const out: string[] = [];
  const max = limit < 0 ? Number.POSITIVE_INFINITY : limit;
  let pos = 0;
  let prevEnd = -1;
  while (out.length < max && pos <= text.length) {
    const m = matchAt(pos);
    if (m === undefined) break;
    const [start, end] = m;
    let accept = true;
    if (end === pos) {
      if (start === prevEnd) accept = false;
      pos += pos < text.length ? codePointWidth(text, pos) : 1;
    } else {
      pos = end;
    }
    prevEnd = end;
    if (accept) out.push(text.slice(start, end));
  }
  return out;
}
