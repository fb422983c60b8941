/**
 * The reflector's backoff (src/cluster/backoff.ts) against client-go's numbers: tools/cache/
 * reflector.go (defaultBackoffInit 800 ms, defaultBackoffMax 30 s, defaultBackoffFactor 2.0,
 * defaultBackoffJitter 1.0, defaultBackoffReset 2 min; "backoff will stop at [30,60) sec") and
 * apimachinery pkg/util/wait/backoff.go (Backoff.Step's jitter and cap, DelayWithReset's reset).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Backoff, REFLECTOR_BACKOFF } from "../../../src/cluster/backoff.ts";

void test("waits double from 800 ms up to the 30 s cap; jitter adds up to as much again", () => {
  const low = new Backoff(
    REFLECTOR_BACKOFF,
    () => 0,
    () => 0,
  );
  assert.deepEqual(
    Array.from({ length: 9 }, () => low.next()),
    [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000],
  );
  const high = new Backoff(
    REFLECTOR_BACKOFF,
    () => 0,
    () => 0.999,
  );
  const waits = Array.from({ length: 9 }, () => high.next());
  assert.ok(
    waits.every((w, i) => w < 2 * [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000][i]!),
  );
  assert.ok((waits.at(-1) ?? 0) > 59_000, "capped waits fall in [30 s, 60 s)");
});

void test("starts again from 800 ms once 2 minutes have passed since the last reset", () => {
  let now = 0;
  const b = new Backoff(
    REFLECTOR_BACKOFF,
    () => now,
    () => 0,
  );
  for (let i = 0; i < 6; i++) b.next();
  now = 120_000;
  assert.equal(b.next(), 30_000, "not yet: exactly 2 minutes");
  now = 120_001;
  assert.equal(b.next(), 800);
  assert.equal(b.next(), 1600);
  b.reset();
  assert.equal(b.next(), 800, "an explicit reset");
});
