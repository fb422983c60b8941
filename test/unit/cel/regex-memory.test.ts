/**
 * Memory independent of the text's length: hostile patterns matched (test, find, findAll) over
 * 1 MB and over 10 MB raise the process's resident memory by about the same, small amount. V8's
 * linear engine, which ran such patterns before the automata, took about 8.6 KB per character of
 * `(.*a){20}x` (9 GB at 1 MB).
 *
 * Each size runs in a child process of its own: it builds its texts (as a request brings them,
 * sequential strings from JSON.parse), warms the engine up on shorter ones, and then matches while
 * a worker thread samples the process's resident set every millisecond; it reports the highest
 * sample less the resident set when matching began. Loose bounds, generous margins.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const REGEX = fileURLToPath(new URL("../../../src/cel/regex/index.ts", import.meta.url));

/** The sampler: while state[0] is 1 it keeps the highest resident set in peak[0]; 2 ends it. */
const SAMPLER = `
const { workerData } = process.getBuiltinModule("node:worker_threads");
const state = new Int32Array(workerData.state);
const peak = new Float64Array(workerData.peak);
Atomics.store(state, 1, 1);
while (Atomics.load(state, 0) !== 2) {
  if (Atomics.load(state, 0) === 1) peak[0] = Math.max(peak[0], process.memoryUsage.rss());
  Atomics.wait(state, 2, 0, 1);
}
`;

const CHILD = `
import { Worker } from "node:worker_threads";
import { once } from "node:events";
import { compileRegex } from ${JSON.stringify(REGEX)};
const text = (body) => JSON.parse(JSON.stringify(body));
const random = (n) => {
  let seed = 1;
  const bytes = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    bytes[i] = (seed >> 16) & 1 ? 0x61 : 0x62;
  }
  return bytes.toString("latin1");
};
const cases = (n) => [
  ["(.*a){20}x", "a".repeat(n), "a".repeat(n) + "x"],
  ["((a{1,10}){1,10}){1,10}b", "a".repeat(n), "a".repeat(n) + "b"],
  ["(a|b)*a(a|b){20}c", random(n), random(n) + "c"],
].map(([pattern, failing, matching]) => ({ re: compileRegex(pattern), failing: text(failing), matching: text(matching) }));
const run = (c) =>
  [c.failing, c.matching].map((t) => [c.re.test(t), c.re.find(t)?.length ?? null, c.re.findAll(t, -1).length]);
// Warm up on shorter texts of the same kinds, so every path is compiled by V8 before measuring.
const warm = cases(100_000);
for (let k = 0; k < 3; k++) warm.forEach(run);
const measured = cases(Number(process.argv[1]));
const state = new Int32Array(new SharedArrayBuffer(12));
const peak = new Float64Array(new SharedArrayBuffer(8));
const sampler = new Worker(${JSON.stringify(SAMPLER)}, { eval: true, workerData: { state: state.buffer, peak: peak.buffer } });
sampler.on("error", (e) => { throw e; });
await once(sampler, "online");
for (let waited = 0; Atomics.load(state, 1) !== 1; waited++) {
  if (waited > 10_000) throw new Error("the sampler did not start");
  Atomics.wait(state, 1, 0, 1);
}
globalThis.gc();
const before = process.memoryUsage.rss();
peak[0] = before;
Atomics.store(state, 0, 1);
const answers = measured.map(run);
Atomics.store(state, 0, 2);
await once(sampler, "exit");
process.stdout.write(JSON.stringify({ growth: Math.max(peak[0], process.memoryUsage.rss()) - before, answers }));
`;

interface Report {
  /** Bytes the peak resident set grew by while matching. */
  readonly growth: number;
  readonly answers: unknown;
}

function measure(n: number): Report {
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", CHILD, String(n)],
    { encoding: "utf8", timeout: 180_000, maxBuffer: 1 << 20 },
  );
  assert.equal(r.status, 0, `the child for ${n} characters failed: ${r.error?.message ?? ""} ${r.stderr}`);
  return JSON.parse(r.stdout) as Report;
}

const MB = 1 << 20;

void test("matching 10 MB takes no more memory than matching 1 MB", { timeout: 400_000 }, () => {
  const small = measure(1_000_000);
  const large = measure(10_000_000);
  // The answers: no match without the final character; with it, one match.
  const expected = (n: number) => [
    [
      [false, null, 0],
      [true, n + 1, 1],
    ],
    [
      [false, null, 0],
      [true, 1001, 1],
    ],
  ];
  assert.deepEqual((small.answers as unknown[]).slice(0, 2), expected(1_000_000));
  assert.deepEqual((large.answers as unknown[]).slice(0, 2), expected(10_000_000));
  const mb = (b: number) => `${(b / MB).toFixed(1)} MB`;
  assert.ok(small.growth < 64 * MB, `matching 1 MB grew the peak by ${mb(small.growth)}`);
  assert.ok(large.growth < 64 * MB, `matching 10 MB grew the peak by ${mb(large.growth)}`);
  assert.ok(
    large.growth < small.growth + 32 * MB,
    `10 MB grew the peak by ${mb(large.growth)}, 1 MB by ${mb(small.growth)}`,
  );
});
