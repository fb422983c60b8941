/**
 * A review body's text parsed as the API server's JSON decoding bounds it. Go's encoding/json, and
 * sigs.k8s.io/json that the API server decodes objects with, refuse a document nested more than
 * 10,000 levels deep ("exceeded max depth"), so no object the API server admits nests deeper, and
 * the AdmissionReview it sends puts that object two levels down (review → request → object). A body
 * nested deeper comes from no API server: it is refused before anything walks it, which bounds the
 * depth every walk over request data must handle.
 */
import { err, ok, type Result } from "../../result.ts";
import { parseJson } from "../../yaml/json-numbers.ts";

/** The deepest nesting Go's JSON decoder accepts (encoding/json's maxNestingDepth). */
export const MAX_OBJECT_DEPTH = 10_000;

/** The deepest an AdmissionReview body can nest: an object at the limit, under `request`, under the review. */
export const MAX_REVIEW_DEPTH = MAX_OBJECT_DEPTH + 2;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests deeper than `max` levels (a top-level object or array is level 1). Text
 * shorter than two characters a level cannot, so an ordinary review costs one comparison; a longer
 * one is scanned once, skipping strings.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  if (text.length <= 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** The index of the quote that closes the string opened at `open` (the text's length if none does). */
function stringEnd(text: string, open: number): number {
  let i = open;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i < 0) return text.length;
    let slashes = 0;
    while (text.charCodeAt(i - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return i;
  }
}

/** Why a review body is refused (HTTP 400): not JSON, or nested deeper than any API server sends. */
export const NOT_JSON = "request body is not valid JSON";
export const TOO_DEEP = `request body nests deeper than ${MAX_REVIEW_DEPTH} levels: the API server decodes no object nested more than ${MAX_OBJECT_DEPTH} levels deep`;

/**
 * An AdmissionReview body's text parsed, or why it is refused. Numbers are read as the API server's
 * decoder reads them (yaml/json-numbers.ts: an int64 beyond 2^53 exactly, `1.0` a float64); a
 * number beyond float64's range is refused, as that decoder refuses it.
 */
export function parseReviewText(text: string): Result<unknown, string> {
  if (nestsDeeperThan(text, MAX_REVIEW_DEPTH)) return err(TOO_DEEP);
  try {
    return ok(parseJson(text));
  } catch (e) {
    return err(e instanceof RangeError ? `${NOT_JSON}: ${e.message}` : NOT_JSON);
  }
}
