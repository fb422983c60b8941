/**
 * `celgate replay`'s tally keeps bounded memory whatever the number of reviews (issue 35): groups
 * past MAX_GROUPS are counted under OTHERS, examples stop at EXAMPLES_PER_GROUP, problems at
 * PROBLEMS_KEPT, and every count stays exact. bench/trial-replay.ts measures the heap of a replay
 * of 100,000 reviews; this pins the bound in counts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  EXAMPLES_PER_GROUP,
  MAX_GROUPS,
  OTHERS,
  PROBLEMS_KEPT,
  ReplayTally,
} from "../../../src/adapters/cli/replay/report.ts";
import { changesBetween } from "../../../src/adapters/cli/replay/compare.ts";
import type { RecordedDecision } from "../../../src/adapters/server/recording.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";

const allowed: RecordedDecision = { allowed: true, warnings: [], auditAnnotations: {}, patch: [] };
const denied: RecordedDecision = { ...allowed, allowed: false, code: 403, message: "no" };

function request(i: number): AdmissionRequest {
  return {
    uid: `u${i}`,
    kind: { group: "", version: "v1", kind: "Pod" },
    resource: { group: "", version: "v1", resource: "pods" },
    name: `p${i}`,
    namespace: `ns-${i}`,
    operation: "CREATE",
    userInfo: { username: `user-${i}` },
    object: {},
    oldObject: null,
    dryRun: false,
    options: null,
  } as AdmissionRequest;
}

void test("groups, examples and problems stop at their caps; the counts stay exact", () => {
  const tally = new ReplayTally("recorded");
  const n = 3 * MAX_GROUPS;
  for (let i = 0; i < n; i++) {
    const changes = changesBetween(allowed, denied);
    tally.add(
      {
        where: `f:${i}`,
        operation: "CREATE",
        resource: `Pod p${i}`,
        user: `user-${i}`,
        changes,
        before: allowed,
        after: denied,
      },
      request(i),
      new Map([["newly-denied", [`policy-${i % 7}`]]]),
    );
    tally.problem(`f:${i}`, "bad");
  }
  assert.equal(tally.reviews, n);
  assert.equal(tally.byKind["newly-denied"], n);
  for (const grouping of ["namespace", "user"] as const) {
    const groups = tally.grouped(grouping);
    assert.equal(groups.length, MAX_GROUPS + 1);
    const others = groups.find((g) => g.name === OTHERS);
    assert.equal(others?.reviews, n - MAX_GROUPS);
    assert.equal(
      groups.reduce((s, g) => s + g.reviews, 0),
      n,
    );
    assert.ok(groups.every((g) => g.examples.length <= EXAMPLES_PER_GROUP));
  }
  const policies = tally.grouped("policy");
  assert.equal(policies.length, 7);
  assert.equal(
    policies.reduce((s, g) => s + g.changes["newly-denied"], 0),
    n,
  );
  assert.equal(tally.problemCount, n);
  assert.equal(tally.problems.length, PROBLEMS_KEPT);
});

void test("what counts as a change: warnings as a multiset, annotations as a map, patches op by op", () => {
  const w = (warnings: string[]): RecordedDecision => ({ ...allowed, warnings });
  assert.deepEqual(changesBetween(w(["a", "b"]), w(["b", "a"])), []);
  assert.deepEqual(changesBetween(w(["a"]), w(["a", "a"])), ["warnings"]);
  const a = (auditAnnotations: Record<string, string>): RecordedDecision => ({
    ...allowed,
    auditAnnotations,
  });
  assert.deepEqual(changesBetween(a({ x: "1", y: "2" }), a({ y: "2", x: "1" })), []);
  assert.deepEqual(changesBetween(a({ x: "1" }), a({ x: "2" })), ["audit-annotations"]);
  const p = (value: string): RecordedDecision => ({ ...allowed, patch: [{ op: "add", path: "/a", value }] });
  assert.deepEqual(changesBetween(p("1"), p("2")), ["patch"]);
  assert.deepEqual(changesBetween(denied, { ...denied, message: "other" }), ["denial-changed"]);
  assert.deepEqual(changesBetween(denied, allowed), ["newly-allowed"]);
});
