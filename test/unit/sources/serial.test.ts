import assert from "node:assert/strict";
import { test } from "node:test";
import { serialized } from "../../../src/sources/serial.ts";

/** A task whose runs wait for the test to release them, recording how many overlap. */
function gatedTask() {
  const gates: (() => void)[] = [];
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  const task = async (): Promise<number> => {
    const run = ++runs;
    active++;
    maxActive = Math.max(maxActive, active);
    await new Promise<void>((resolve) => gates.push(resolve));
    active--;
    return run;
  };
  const release = async (): Promise<void> => {
    // Let the task reach its gate first.
    for (let i = 0; i < 100 && gates.length === 0; i++) await new Promise((r) => setImmediate(r));
    const gate = gates.shift();
    if (gate === undefined) throw new Error("no run is waiting");
    gate();
  };
  return { task, release, stats: () => ({ runs, maxActive, waiting: gates.length }) };
}

void test("a call during a run gets a run that starts after it, never the run already going", async () => {
  const { task, release, stats } = gatedTask();
  const run = serialized(task);
  const first = run();
  const second = run();
  assert.notEqual(first, second, "the second call must not share a run that may have read stale input");
  await release();
  assert.equal(await first, 1);
  await release();
  assert.equal(await second, 2);
  assert.deepEqual(stats(), { runs: 2, maxActive: 1, waiting: 0 });
});

void test("calls during one run share the one run after it; runs never overlap", async () => {
  const { task, release, stats } = gatedTask();
  const run = serialized(task);
  const first = run();
  const queued = [run(), run(), run()];
  assert.ok(queued.every((p) => p === queued[0]));
  await release();
  await first;
  // A call during the second run queues a third.
  const third = run();
  await release();
  assert.deepEqual(await Promise.all(queued), [2, 2, 2]);
  await release();
  assert.equal(await third, 3);
  assert.deepEqual(stats(), { runs: 3, maxActive: 1, waiting: 0 });
  // Idle again: a call starts a run at once.
  const fourth = run();
  await release();
  assert.equal(await fourth, 4);
});

void test("a failed run rejects its callers and the queued run still happens", async () => {
  let runs = 0;
  let fail = true;
  let open: () => void = () => {};
  const run = serialized(async () => {
    runs++;
    await new Promise<void>((resolve) => {
      open = resolve;
    });
    if (fail) throw new Error("boom");
    return runs;
  });
  const first = run();
  const second = run();
  fail = true;
  open();
  await assert.rejects(first, /boom/);
  fail = false;
  for (let i = 0; i < 100 && runs < 2; i++) await new Promise((r) => setImmediate(r));
  open();
  assert.equal(await second, 2);
});
