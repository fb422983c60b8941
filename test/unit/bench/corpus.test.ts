/**
 * Correctness gate for the CEL benchmark: on a small corpus, every rule's CEL expression evaluated by our
 * engine must give exactly what its hand-written JavaScript twin gives, and the corpus must be
 * reproducible from its seed. Timings are never asserted here.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { generatePods, meanJsonSize } from "../../../bench/corpus.ts";
import { compileRules, evalBuf, evalOurs, newState, planBufbuild } from "../../../bench/engines.ts";
import { RULES } from "../../../bench/rules.ts";
import { type CelValue, toCel } from "../../../src/cel/index.ts";

const SEED = 20261122;
const PODS = generatePods(200, SEED);

test("the same seed yields byte-identical Pods", () => {
  assert.equal(JSON.stringify(generatePods(200, SEED)), JSON.stringify(PODS));
});

test("a different seed yields different Pods", () => {
  assert.notEqual(JSON.stringify(generatePods(200, SEED + 1)), JSON.stringify(PODS));
});

test("Pods are JSON round-trippable and of benchmark size", () => {
  for (const pod of PODS) assert.deepEqual(JSON.parse(JSON.stringify(pod)), pod);
  const mean = meanJsonSize(PODS);
  assert.ok(mean > 3000 && mean < 7000, `mean Pod size ${mean} B`);
});

test("there are 20 rules with distinct names, including regex ones", () => {
  assert.equal(RULES.length, 20);
  assert.equal(new Set(RULES.map((r) => r.name)).size, 20);
  assert.ok(RULES.filter((r) => r.cel.includes(".matches(")).length >= 1);
  for (const r of RULES)
    assert.ok(!r.bufbuild.includes(".?"), `${r.name}: bufbuild form uses optional syntax`);
});

test("every rule both allows and denies some Pods of the corpus", () => {
  for (const r of RULES) {
    const allowed = PODS.filter((p) => r.js(p)).length;
    assert.ok(allowed > 0 && allowed < PODS.length, `${r.name} allows ${allowed} of ${PODS.length}`);
  }
});

test("our engine agrees with the hand-written JavaScript on every (rule, Pod) pair", () => {
  const programs = compileRules(RULES);
  const mismatches: string[] = [];
  for (const pod of PODS) {
    // Over the JSON Pod as the engine reads requests, and over its toCel conversion as the API takes it.
    for (const [form, object] of [
      ["JSON", pod as unknown as CelValue],
      ["toCel", toCel(pod)],
    ] as const) {
      const state = newState();
      RULES.forEach((rule, i) => {
        const expected = rule.js(pod);
        const got = evalOurs(programs[i]!, object, state);
        if (got !== expected)
          mismatches.push(`${rule.name} on ${pod.metadata.name} (${form}): expected ${expected}, got ${got}`);
      });
    }
  }
  assert.deepEqual(mismatches.slice(0, 20), []);
});

test("the rewritten @bufbuild/cel forms agree with the JavaScript too (the benchmark refuses to run otherwise)", () => {
  const programs = planBufbuild(RULES);
  const mismatches: string[] = [];
  for (const pod of PODS.slice(0, 60)) {
    RULES.forEach((rule, i) => {
      const expected = rule.js(pod);
      const got = evalBuf(programs[i]!, pod);
      if (got !== expected)
        mismatches.push(`${rule.name} on ${pod.metadata.name}: expected ${expected}, got ${got}`);
    });
  }
  assert.deepEqual(mismatches.slice(0, 20), []);
});
