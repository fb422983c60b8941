/**
 * Go strings are bytes. The ports that must see what Go sees (net/url, netip inside a URL host,
 * strconv.Quote of invalid UTF-8) work on "byte strings": JavaScript strings holding one char per
 * UTF-8 byte. This module converts to and from them and decodes runes as Go's unicode/utf8 does
 * (utf8.DecodeRuneInString: an invalid sequence is one bad byte).
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The UTF-8 bytes of `s`, one char per byte; a lone surrogate becomes U+FFFD's bytes, as Go's JSON decoder reads it. */
export function toByteString(s: string): string {
  const bytes = encoder.encode(s);
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return out;
}

/** Text from a byte string; invalid UTF-8 becomes U+FFFD, as CEL strings cannot hold it. */
export function fromByteString(b: string): string {
  // Pure ASCII is the common case and needs no decoding.
  let ascii = true;
  for (let i = 0; i < b.length && ascii; i++) ascii = b.charCodeAt(i) < 0x80;
  if (ascii) return b;
  const bytes = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) bytes[i] = b.charCodeAt(i);
  return decoder.decode(bytes);
}

/**
 * The code point and byte length of the UTF-8 sequence at `i` of a byte string, or undefined where
 * Go's utf8.DecodeRuneInString would return RuneError with width 1 (overlong forms, surrogates,
 * values past U+10FFFF, truncated sequences).
 */
export function decodeRune(b: string, i: number): [number, number] | undefined {
  const c0 = b.charCodeAt(i);
  if (c0 < 0x80) return [c0, 1];
  let need: number;
  let v: number;
  let min: number;
  if (c0 >= 0xc2 && c0 <= 0xdf) [need, v, min] = [1, c0 & 0x1f, 0x80];
  else if (c0 >= 0xe0 && c0 <= 0xef) [need, v, min] = [2, c0 & 0x0f, 0x800];
  else if (c0 >= 0xf0 && c0 <= 0xf4) [need, v, min] = [3, c0 & 0x07, 0x10000];
  else return undefined;
  if (i + need >= b.length) return undefined;
  for (let k = 1; k <= need; k++) {
    const ck = b.charCodeAt(i + k);
    if ((ck & 0xc0) !== 0x80) return undefined;
    v = (v << 6) | (ck & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return undefined;
  return [v, need + 1];
}
