/**
 * Strings' sizes in Unicode code points, which CEL's `size()` and its cost model count, and whether
 * a string holds any UTF-16 surrogate (without one, its size is its length and V8's regular
 * expressions can answer for RE2: regex/v8.ts).
 *
 * Each call scans its string. Remembering the last strings scanned was tried: an expression often
 * sizes one string several times (image-tag sizes `c.image` for contains, matches and endsWith), and
 * a string that misses the memory is compared with the remembered ones first, and strings of one
 * length with a common prefix (image names, container names) compare slowly: the misses cost more
 * than the hits saved (docs/benchmarks.md).
 */

const ANY_SURROGATE = /[\ud800-\udfff]/;
const SURROGATE_PAIR = /[\ud800-\udbff][\udc00-\udfff]/;

/**
 * Number of Unicode code points: what CEL's size() counts for strings. The common case (no pair at
 * all) is asked of V8's regular expression engine, which answers in a fraction of the time a loop
 * over the characters takes.
 */
export function codePointLength(s: string): number {
  if (!SURROGATE_PAIR.test(s)) return s.length;
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Whether `s` holds any UTF-16 surrogate, paired or not. */
export function hasSurrogate(s: string): boolean {
  return ANY_SURROGATE.test(s);
}
