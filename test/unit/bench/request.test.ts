/**
 * Correctness gates of the in-process request benchmark: both policy sets load through the real
 * loader, allow the benchmark Pod with every validating policy passing, set (b) patches it, and set (a)
 * denies a Pod that breaks the rules. Timings are never asserted here.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { inCodegenMode } from "../../../bench/common.ts";
import { EvalState, run } from "../../../src/cel/index.ts";
import {
  closuresOnlyProblems,
  gateProblems,
  loadOneExpressionSet,
  loadRulesSet,
  loadSet,
  podSecurityPaths,
  reviewOnce,
  rulesPolicyYaml,
  validationPrograms,
} from "../../../bench/request.ts";
import { badPodReview, podReview } from "../../../bench/review.ts";
import { RULES } from "../../../bench/rules.ts";

test("set (a) is one policy with the 20 rules as its validations", async () => {
  const a = await loadRulesSet();
  assert.equal(a.set.policies.length, 1);
  assert.equal(a.set.bindings.length, 1);
  const policy = a.set.policies[0];
  assert.equal(policy?.kind, "ValidatingAdmissionPolicy");
  if (policy?.kind !== "ValidatingAdmissionPolicy") return;
  assert.deepEqual(
    policy.validations.map((v) => v.expression.source),
    RULES.map((r) => r.cel),
  );
  assert.ok(policy.validations.every((v) => v.expression.program !== undefined));
});

test("set (a) allows the bench Pod and denies the bad one", async () => {
  const a = await loadRulesSet();
  assert.deepEqual(gateProblems(a, { expectPatch: false, denyBad: true }), []);
  const bad = reviewOnce(a.admitter, badPodReview(), "validate");
  assert.ok(typeof bad !== "string");
  assert.equal(bad.allowed, false);
});

test("set (b) allows the bench Pod, every validating policy passing, and patches it", async () => {
  const b = await loadSet("b", podSecurityPaths());
  assert.ok(b.set.policies.length >= 3);
  assert.deepEqual(gateProblems(b, { expectPatch: true, denyBad: false }), []);
  const mutated = reviewOnce(b.admitter, podReview(), "mutate");
  assert.ok(typeof mutated !== "string");
  assert.ok((mutated.patch?.length ?? 0) > 0);
});

test("set (b) denies the bad Pod too", async () => {
  const b = await loadSet("b", podSecurityPaths());
  const bad = reviewOnce(b.admitter, badPodReview(), "validate");
  assert.ok(typeof bad !== "string");
  assert.equal(bad.allowed, false);
});

test("the gate reports a set that allows the bad Pod", async () => {
  // One harmless rule (container names) allows the bad Pod, so a gate asking for its denial must fail.
  const dir = mkdtempSync(join(tmpdir(), "celgate-bench-test-"));
  try {
    const rule = RULES.find((r) => r.name === "container-name");
    assert.ok(rule);
    writeFileSync(join(dir, "lenient.yaml"), rulesPolicyYaml([rule], "lenient"));
    const lenient = await loadSet("lenient", [dir]);
    assert.deepEqual(gateProblems(lenient, { expectPatch: false, denyBad: false }), []);
    const problems = gateProblems(lenient, { expectPatch: false, denyBad: true });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? "", /bad Pod is allowed/);
    assert.match(gateProblems(lenient, { expectPatch: true, denyBad: false }).join("\n"), /no patch/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a review that does not decode is reported, not thrown", async () => {
  const a = await loadRulesSet();
  assert.match(String(reviewOnce(a.admitter, { kind: "Nope" }, "validate")), /^decode: /);
});

test("the closures-only copy of set (a) has programs of its own, answers alike, and stays on closures", async () => {
  const a = await loadRulesSet();
  const never = await loadRulesSet(true);
  assert.equal(validationPrograms(never).length, RULES.length);
  // Reviewed many times in "never" mode, as the bench's warm-up and jobs do: still no generated code.
  for (let i = 0; i < 5; i++)
    inCodegenMode("never", () => {
      assert.deepEqual(gateProblems(never, { expectPatch: false, denyBad: true }), []);
    });
  assert.deepEqual(closuresOnlyProblems(never, a), []);
  assert.ok(validationPrograms(never).every((p) => p !== undefined && !p.generated()));
});

test("the closures-only copy of set (a1) stays on closures too", async () => {
  const a1 = await loadOneExpressionSet();
  const never = await loadOneExpressionSet(true);
  for (let i = 0; i < 3; i++)
    inCodegenMode("never", () => {
      assert.deepEqual(gateProblems(never, { expectPatch: false, denyBad: true }), []);
    });
  assert.deepEqual(closuresOnlyProblems(never, a1), []);
});

test("the closures-only gate reports a set sharing the baseline's programs, and generated code", async () => {
  const a = await loadRulesSet();
  // The same set as its own "closures" copy: every program is shared.
  // (The baseline's own sequence may have switched to generated code in an earlier test of this
  // file, which the gate reports too: count the shared programs.)
  const shared = closuresOnlyProblems(a, a);
  assert.equal(shared.filter((p) => /shares its program/.test(p)).length, RULES.length, shared.join("\n"));
  // A copy reviewed outside "never" mode switches to generated code, which the gate must see.
  const never = await loadRulesSet(true);
  inCodegenMode("always", () => {
    assert.deepEqual(gateProblems(never, { expectPatch: false, denyBad: true }), []);
  });
  // (Programs the reviews ran on their own, if any, are reported too: the sequence's line must be there.)
  const afterAlways = closuresOnlyProblems(never, a);
  assert.ok(
    afterAlways.includes(
      "(a) 20 rules, 1 policy, closures only: policy bench-rules's validations run as generated code (its sequence)",
    ),
    afterAlways.join("\n"),
  );
  // A program run on its own outside "never" mode (as the engine runs one when it traces) too.
  const program = validationPrograms(never)[0];
  assert.ok(program);
  inCodegenMode("always", () =>
    run(program, { values: { object: {} }, json: true }, new EvalState(1e6, 1e12)),
  );
  assert.match(closuresOnlyProblems(never, a).join("\n"), /validation 0 runs as generated code/);
});
