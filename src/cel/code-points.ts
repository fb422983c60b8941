/**
 * Strings' sizes in Unicode code points, which CEL's `size()` and its cost model count, and whether
 * a string holds any UTF-16 surrogate (without one, its size is its length and V8's regular
 * expressions can answer for RE2: regex.ts).
 *
 * Every string argument of a priced call is sized, and one expression often sizes the same string
 * several times: `c.image.contains('@sha256:') || c.image.matches(p) && !c.image.endsWith(':latest')`
 * sizes `c.image` three times and the constant once per container. So the last two strings scanned
 * are kept with their answers. Asking again costs a comparison, which for the same string object is
 * one pointer and for a string of another length is one length; only a different string of the same
 * length compares characters, and then at most as many as a scan reads.
 */

const ANY_SURROGATE = /[\ud800-\udfff]/;

// The most recent scan (a) and the one before it (b).
let aText = "";
let aSize = 0;
let aSurrogate = false;
let bText = "";
let bSize = 0;
let bSurrogate = false;

function scan(s: string): void {
  bText = aText;
  bSize = aSize;
  bSurrogate = aSurrogate;
  aText = s;
  // V8's regular expression engine answers the common case (no surrogate at all) in a fraction of
  // the time a loop over the characters takes.
  aSurrogate = ANY_SURROGATE.test(s);
  aSize = aSurrogate ? pairedSize(s) : s.length;
}

/** The size of a string that holds surrogates: a well-formed pair is one code point, a lone one is one too. */
function pairedSize(s: string): number {
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

/** Number of Unicode code points: what CEL's size() counts for strings. */
export function codePointLength(s: string): number {
  if (s === aText) return aSize;
  if (s === bText) return bSize;
  scan(s);
  return aSize;
}

/** Whether `s` holds any UTF-16 surrogate, paired or not. */
export function hasSurrogate(s: string): boolean {
  if (s === aText) return aSurrogate;
  if (s === bText) return bSurrogate;
  scan(s);
  return aSurrogate;
}
