/**
 * A review body's text parsed as the API server's JSON decoding bounds it, and as this thread's heap
 * bounds it. Go's encoding/json, and
 * sigs.k8s.io/json that the API server decodes objects with, refuse a document nested more than
 * 10,000 levels deep ("exceeded max depth"), so no object the API server admits nests deeper, and
 * the AdmissionReview it sends puts that object two levels down (review → request → object). A body
 * nested deeper comes from no API server: it is refused before anything walks it, which bounds the
 * depth every walk over request data must handle.
 */
import { getHeapStatistics } from "node:v8";
import { resourceLimits } from "node:worker_threads";
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

/** What one scan of a body's text found: whether it nests too deep, and how many maps and lists it holds. */
export interface JsonShape {
  readonly tooDeep: boolean;
  readonly containers: number;
}

const NOT_SCANNED: JsonShape = { tooDeep: false, containers: 0 };

/**
 * One pass over JSON text, skipping strings: whether it nests deeper than `max` levels (a top-level
 * object or array is level 1), and how many objects and arrays it opens (stopping at the first level
 * too deep). Text shorter than two characters a level can neither nest that deep nor hold enough
 * maps and lists to matter to the heap, so an ordinary review costs one comparison.
 */
export function scanJson(text: string, max: number): JsonShape {
  if (text.length <= 2 * max) return NOT_SCANNED;
  let depth = 0;
  let containers = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      containers++;
      if (++depth > max) return { tooDeep: true, containers };
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return { tooDeep: false, containers };
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
 * What decoding costs the heap, at most: each object or array (an empty map is 64 bytes once parsed,
 * with room for the parser's growing element lists) and each character (a string's characters, two
 * bytes each at worst). A body at the size limit can hold millions of empty maps, which decode into
 * far more heap than its bytes; past the heap's limit a worker thread on Node 24 does not fail alone
 * but aborts the whole process, so such a body is refused before it is parsed.
 */
const HEAP_PER_CONTAINER = 96;
const HEAP_PER_CHAR = 2;
/** The share of the heap still free that one decoding may take: the review's evaluation needs the rest. */
const DECODE_SHARE = 0.8;

/** A body refused: HTTP 400 (not a usable review) or 413 (too costly for this heap to decode). */
export interface BodyProblem {
  readonly status: 400 | 413;
  readonly reason: string;
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(0);
}

/**
 * Why decoding a body of `chars` characters holding `containers` objects and arrays would not fit in
 * the heap still free, or undefined when it fits. A body too short to be scanned (scanJson) is
 * taken to fit, so an ordinary review costs nothing here.
 */
export function decodeHeapProblem(chars: number, containers: number): string | undefined {
  if (chars <= 2 * MAX_REVIEW_DEPTH) return undefined;
  const need = containers * HEAP_PER_CONTAINER + chars * HEAP_PER_CHAR;
  const heap = getHeapStatistics();
  // A worker's decoded values outlive the young generation, so its old generation is what bounds
  // them; heap_size_limit adds the young generation's size (on Node 24, three 64 MiB semi-spaces).
  const oldLimitMb = resourceLimits.maxOldGenerationSizeMb;
  const limit = oldLimitMb !== undefined ? oldLimitMb * 1024 * 1024 : heap.heap_size_limit;
  const free = Math.max(0, limit - heap.used_heap_size) * DECODE_SHARE;
  if (need <= free) return undefined;
  const what = containers > 0 ? ` (${containers} objects and arrays)` : "";
  return `request body would take about ${mib(need)} MiB of heap to decode${what}, more than the ${mib(free)} MiB it may take here: refused before decoding rather than run out of memory, and the API server applies the webhook's failurePolicy`;
}

/**
 * An AdmissionReview body's text parsed, or why it is refused. Numbers are read as the API server's
 * decoder reads them (yaml/json-numbers.ts: an int64 beyond 2^53 exactly, `1.0` a float64); a
 * number beyond float64's range is refused, as that decoder refuses it.
 */
export function parseReviewText(text: string): Result<unknown, BodyProblem> {
  const shape = scanJson(text, MAX_REVIEW_DEPTH);
  if (shape.tooDeep) return err({ status: 400, reason: TOO_DEEP });
  const costly = decodeHeapProblem(text.length, shape.containers);
  if (costly !== undefined) return err({ status: 413, reason: costly });
  try {
    return ok(parseJson(text));
  } catch (e) {
    return err({ status: 400, reason: e instanceof RangeError ? `${NOT_JSON}: ${e.message}` : NOT_JSON });
  }
}
