import assert from "node:assert/strict";
import { test } from "node:test";
import { textWidth, wrapHanging, wrapText } from "../../../src/adapters/output/wrap.ts";

test("wrapText: words wrapped at spaces, nothing dropped, each line within the width", () => {
  const text = "images must be pinned to a version tag or a digest, not latest or untagged";
  const lines = wrapText(text, 20);
  assert.deepEqual(lines, [
    "images must be",
    "pinned to a version",
    "tag or a digest, not",
    "latest or untagged",
  ]);
  assert.ok(lines.every((l) => textWidth(l) <= 20));
  assert.equal(lines.join(" "), text);
});

test("wrapText: a word longer than the line is broken where it must be", () => {
  assert.deepEqual(wrapText("see default/replica-limit-test.example.com now", 12), [
    "see",
    "default/repl",
    "ica-limit-te",
    "st.example.c",
    "om now",
  ]);
});

test("wrapText: text that fits, or no room at all, is one line", () => {
  assert.deepEqual(wrapText("short", 10), ["short"]);
  assert.deepEqual(wrapText("a b c", 0), ["a b c"]);
});

test("wrapText counts code points, not UTF-16 units", () => {
  assert.equal(textWidth("→ 𝔸"), 3);
  assert.deepEqual(wrapText("𝔸𝔸𝔸 𝔸𝔸", 3), ["𝔸𝔸𝔸", "𝔸𝔸"]);
});

test("wrapHanging: the first line after its prefix, the rest after the hanging indent", () => {
  assert.deepEqual(wrapHanging("one two three four five six seven", 30, "    ", "      "), [
    "    one two three four five",
    "      six seven",
  ]);
  // Too little room to wrap sensibly: left as it is.
  assert.deepEqual(wrapHanging("one two three", 22, "    ", "      "), ["    one two three"]);
});
