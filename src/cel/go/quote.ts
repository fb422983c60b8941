/**
 * Go's strconv.Quote (strconv/quote.go), so that messages which embed Go's `%q` (netip, net/url,
 * strconv and semver errors the API server shows) match it byte for byte.
 *
 * Quote keeps printable runes (unicode.IsPrint: letters, marks, numbers, punctuation, symbols and
 * the ASCII space) and escapes the rest: `\a \b \f \n \r \t \v`, `\\` and `\"`, then `\xNN` below
 * U+0020 and for DEL, `\uNNNN` in the BMP and `\UNNNNNNNN` beyond it. An invalid UTF-8 byte, which
 * only a byte string (utf8.ts) can hold, is written `\xNN`.
 */
import { decodeRune } from "./utf8.ts";

/** The escapes Go's strconv writes for the quote, the backslash and the C control characters. */
const SHORT_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x07, "\\a"],
  [0x08, "\\b"],
  [0x0c, "\\f"],
  [0x0a, "\\n"],
  [0x0d, "\\r"],
  [0x09, "\\t"],
  [0x0b, "\\v"],
  [0x5c, "\\\\"],
  [0x22, '\\"'],
]);

/** unicode.IsPrint above ASCII (the only space it counts, U+0020, is ASCII). */
const NON_ASCII_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's unicode.IsPrint. */
export function isPrint(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f;
  return NON_ASCII_PRINTABLE.test(String.fromCodePoint(cp));
}

function hex(cp: number, width: number): string {
  return cp.toString(16).padStart(width, "0");
}

/**
 * One rune as strconv's appendEscapedRune writes it inside double quotes; `keep` says which runes
 * stand as they are (strconv.Quote keeps the printable ones).
 */
function escapeRune(cp: number, keep: (cp: number) => boolean): string {
  const short = SHORT_ESCAPES.get(cp);
  if (short !== undefined) return short;
  if (keep(cp)) return String.fromCodePoint(cp);
  if (cp < 0x20 || cp === 0x7f) return `\\x${hex(cp, 2)}`;
  if (cp < 0x10000) return `\\u${hex(cp, 4)}`;
  return `\\U${hex(cp, 8)}`;
}

/**
 * A JavaScript string quoted the way Go quotes its UTF-8 encoding, keeping the runes `keep` accepts.
 * A lone surrogate cannot reach Go as UTF-8 (its JSON decoder turns it into U+FFFD), so it is
 * written as U+FFFD.
 */
export function quoteWith(s: string, keep: (cp: number) => boolean): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    out += cp >= 0xd800 && cp <= 0xdfff ? "\ufffd" : escapeRune(cp, keep);
  }
  return `${out}"`;
}

/** Go's strconv.Quote of a JavaScript string's UTF-8 encoding. */
export function quote(s: string): string {
  return quoteWith(s, isPrint);
}

/** Go's strconv.Quote of a byte string (utf8.ts): invalid UTF-8 bytes are written `\xNN`. */
export function quoteBytes(b: string): string {
  let out = '"';
  let i = 0;
  while (i < b.length) {
    const rune = decodeRune(b, i);
    if (rune === undefined) {
      out += `\\x${hex(b.charCodeAt(i), 2)}`;
      i++;
    } else {
      out += escapeRune(rune[0], isPrint);
      i += rune[1];
    }
  }
  return `${out}"`;
}
