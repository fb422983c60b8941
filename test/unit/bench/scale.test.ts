/**
 * Correctness gate of the scale benchmark: the generator yields the promised set, it loads through the
 * real loader without a problem, and exactly the 20 matching policies evaluate (and pass) for the
 * benchmark Pod. Timings are never asserted here.
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { test } from "node:test";
import { loadSet } from "../../../bench/request.ts";
import { generateScalePolicies, scaleGateProblems, writeScalePolicies } from "../../../bench/scale.ts";

const POLICIES = generateScalePolicies(1000, 20);

test("1,000 policies, 20 of them for the Pod, every name distinct", () => {
  assert.equal(POLICIES.length, 1000);
  assert.equal(POLICIES.filter((p) => p.matchesPod).length, 20);
  assert.equal(new Set(POLICIES.map((p) => p.name)).size, 1000);
  for (const p of POLICIES) assert.ok(p.validations >= 1 && p.validations <= 3, p.name);
});

test("the same arguments give the same text", () => {
  assert.deepEqual(generateScalePolicies(1000, 20), POLICIES);
});

test("no two non-matching policies share a validation's source text", () => {
  const sources = POLICIES.filter((p) => !p.matchesPod).flatMap((p) =>
    [...p.yaml.matchAll(/^ {4}- expression: (.*)$/gm)].map((m) => m[1]),
  );
  assert.equal(
    sources.length,
    POLICIES.filter((p) => !p.matchesPod).reduce((n, p) => n + p.validations, 0),
  );
  assert.equal(new Set(sources).size, sources.length);
});

test("the non-matching policies spread over several groups, resources and operations", () => {
  const others = POLICIES.filter((p) => !p.matchesPod).map((p) => p.yaml);
  const groups = new Set(others.map((y) => /apiGroups: \[(.*)\]/.exec(y)?.[1]));
  const resources = new Set(others.map((y) => /resources: \[(.*)\]/.exec(y)?.[1]));
  assert.ok(groups.size >= 5, `groups: ${[...groups].join(", ")}`);
  assert.ok(resources.size >= 8, `resources: ${[...resources].join(", ")}`);
  assert.ok(others.some((y) => y.includes('resources: ["pods"]') && !y.includes('"CREATE"')));
});

test("the 1,000 load without errors and exactly the 20 apply to the Pod, and pass", async () => {
  const dir = writeScalePolicies(POLICIES, "test");
  try {
    const loaded = await loadSet("1000", [dir]);
    assert.deepEqual(scaleGateProblems(loaded, 1000, 20), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the gate notices a set in which the wrong number of policies apply", async () => {
  const dir = writeScalePolicies(generateScalePolicies(40, 20), "gate");
  try {
    const loaded = await loadSet("40", [dir]);
    assert.deepEqual(scaleGateProblems(loaded, 40, 20), []);
    assert.notDeepEqual(scaleGateProblems(loaded, 40, 19), []);
    assert.notDeepEqual(scaleGateProblems(loaded, 41, 20), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
