/**
 * A review body's text bounded before it is decoded: by nesting, as the API server's JSON decoder
 * bounds it (encoding/json maxNestingDepth 10,000), and by the heap decoding it would take.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_REVIEW_DEPTH, parseReviewText, scanJson } from "../../../src/adapters/admission/json-text.ts";

void test("the scan counts objects and arrays outside strings, and stops at the first level too deep", () => {
  const pad = " ".repeat(2 * MAX_REVIEW_DEPTH);
  assert.deepEqual(scanJson(`{"a":[{},[]],"s":"{[\\"{"}${pad}`, MAX_REVIEW_DEPTH), {
    tooDeep: false,
    containers: 4,
  });
  const deep = `${"[".repeat(MAX_REVIEW_DEPTH + 1)}${"]".repeat(MAX_REVIEW_DEPTH + 1)}`;
  assert.deepEqual(scanJson(deep, MAX_REVIEW_DEPTH), { tooDeep: true, containers: MAX_REVIEW_DEPTH + 1 });
  // Short text is not scanned: it can neither nest that deep nor hold enough to matter.
  assert.deepEqual(scanJson("[[[]]]", MAX_REVIEW_DEPTH), { tooDeep: false, containers: 0 });
});

void test("a body whose objects would outgrow the heap still free is refused with 413 before it is decoded", () => {
  // Far more empty maps than any heap this test runs with can decode (about 96 bytes each).
  const count = 60_000_000;
  const text = `[${"{},".repeat(count - 1)}{}]`;
  const parsed = parseReviewText(text);
  assert.equal(parsed.ok, false);
  if (parsed.ok) return;
  assert.equal(parsed.error.status, 413);
  assert.match(
    parsed.error.reason,
    new RegExp(`would take about \\d+ MiB of heap to decode \\(${count + 1} objects`),
  );
});

void test("a long body of strings, or few containers, is decoded", () => {
  const text = JSON.stringify({ a: "x".repeat(5_000_000), b: [1, 2, 3] });
  const parsed = parseReviewText(text);
  assert.ok(parsed.ok);
});
