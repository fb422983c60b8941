import assert from "node:assert/strict";
import { test } from "node:test";
import { deadlineFor, parseGoDuration, requestTimeoutMs } from "../../../src/adapters/server/deadline.ts";

void test("parseGoDuration reads what time.Duration.String() writes", () => {
  const cases: [string, number | undefined][] = [
    ["10s", 10_000],
    ["30s", 30_000],
    ["1m30s", 90_000],
    ["2h45m", 9_900_000],
    ["2.5s", 2500],
    ["750ms", 750],
    ["1.5ms", 1.5],
    ["300us", 0.3],
    ["300µs", 0.3],
    ["300μs", 0.3],
    ["1000000ns", 1],
    [".5s", 500],
    ["0", 0],
    ["-1s", -1000],
    ["+2s", 2000],
    ["", undefined],
    ["10", undefined],
    ["s", undefined],
    ["10 s", undefined],
    ["10sec", undefined],
    ["1d", undefined],
    ["abc", undefined],
  ];
  for (const [text, want] of cases) assert.equal(parseGoDuration(text), want, JSON.stringify(text));
});

void test("requestTimeoutMs falls back for missing, unusable and non-positive values, and caps at 30 s", () => {
  const cases: [unknown, number][] = [
    [undefined, 10_000],
    ["5s", 5000],
    ["45s", 30_000],
    ["0s", 10_000],
    ["-3s", 10_000],
    ["later", 10_000],
    [["5s", "6s"], 10_000],
  ];
  for (const [query, want] of cases)
    assert.equal(requestTimeoutMs(query, 10_000), want, JSON.stringify(query));
});

void test("deadlineFor leaves a tenth of the timeout, between 20 ms and 1 s", () => {
  const cases: [number, number][] = [
    [10_000, 9000],
    [30_000, 29_000],
    [2000, 1800],
    [100, 80],
    [10, 0],
  ];
  for (const [timeout, want] of cases) assert.equal(deadlineFor(1000, timeout) - 1000, want, String(timeout));
});
