/**
 * The cel part's closures-only row (issue 34 item 2) must time closures: its programs are compiled
 * apart from the baseline's and stay off generated code when run only in "never" mode; the gate
 * reports a shared program and one that switched to generated code. Timings are never asserted.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { assertClosuresOnly } from "../../../bench/cel.ts";
import { closuresSource, inCodegenMode } from "../../../bench/common.ts";
import { generatePods } from "../../../bench/corpus.ts";
import { compileRules, evalOurs, newState } from "../../../bench/engines.ts";
import { RULES } from "../../../bench/rules.ts";
import type { CelValue, Program } from "../../../src/cel/index.ts";

const rules = RULES.slice(0, 3);
const pods = generatePods(5, 42);

test("closures-only programs run many times in never mode answer as the rules and stay on closures", () => {
  const programs = compileRules(rules);
  const closures = compileRules(rules.map((r) => ({ ...r, cel: closuresSource(r.cel) })));
  for (const pod of pods)
    rules.forEach((rule, i) => {
      for (let k = 0; k < 3; k++) {
        const got = inCodegenMode("never", () =>
          evalOurs(closures[i] as Program, pod as unknown as CelValue, newState()),
        );
        assert.equal(got, rule.js(pod), `${rule.name} on ${pod.metadata.name}`);
      }
    });
  assert.doesNotThrow(() => assertClosuresOnly(rules, programs, closures, "after"));
  assert.ok(closures.every((p) => !p.generated()));
});

test("the gate refuses programs shared with the baseline, and generated ones", () => {
  const programs = compileRules(rules);
  assert.throws(() => assertClosuresOnly(rules, programs, programs, "now"), /shared or generated/);
  // Sources of their own (the compile cache is keyed by source): the test above leaves its programs alone.
  const closures = compileRules(rules.map((r) => ({ ...r, cel: closuresSource(closuresSource(r.cel)) })));
  const pod = pods[0] as unknown as CelValue;
  inCodegenMode("always", () => evalOurs(closures[0] as Program, pod, newState()));
  assert.throws(
    () => assertClosuresOnly(rules, programs, closures, "now"),
    new RegExp(`generated: ${rules[0]?.name}$`),
  );
});
