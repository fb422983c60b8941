/**
 * What `matches`, `find` and `findAll` are charged, against upstream's formulas, whatever engine
 * answers (V8 on short texts, the automata on long ones) and in both evaluator tiers:
 *
 * - `s.matches(p)` (overload `matches_string`): cel-go interpreter/runtimecost.go, case
 *   overloads.MatchesString: ceil((1 + size(s)) × 0.1) × ceil(size(p) × 0.25), in place of the
 *   call's unit (common/cost.go: StringTraversalCostFactor 0.1, RegexStringLengthCostFactor 0.25).
 * - `matches(s, p)` (overload `matches`): not priced by size there; the default branch charges 1.
 * - `s.find(p)`, `s.findAll(p)`, `s.findAll(p, n)`: Kubernetes
 *   staging/src/k8s.io/apiserver/pkg/cel/library/cost.go, CallCost case "find", "findAll": the same
 *   product, returned by the estimator in place of the default.
 *
 * Sizes are cel-go's actualSize of a string: code points (utf8.RuneCountInString), not UTF-16 units.
 * Each call's cost is what the expression costs beyond reading its arguments (`object.s`,
 * `object.p`), so the formulas are checked alone.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setCodegenMode } from "../../../src/cel/configure.ts";
import {
  ADMISSION_VARIABLES,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  PER_CALL_COST_LIMIT,
  run,
} from "../../../src/cel/index.ts";
import { V8_MAX_INPUT } from "../../../src/cel/regex/index.ts";

/** cel-go's actualSize of a string: its code points. */
function size(s: string): number {
  return Array.from(s).length;
}

/** The product both upstream files charge for a regular expression over a string. */
function upstreamRegexCost(s: string, p: string): number {
  return Math.ceil((1 + size(s)) * 0.1) * Math.ceil(size(p) * 0.25);
}

const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });

interface Outcome {
  readonly value?: CelValue;
  readonly error?: string;
  readonly cost: number;
}

function outcome(source: string, s: string, p: string): Outcome {
  const c = compile(source, env);
  if (!c.ok) assert.fail(`${source}: ${c.problems.map((x) => x.message).join("; ")}`);
  const r = run(
    c.program,
    { values: { object: { s, p } }, json: true },
    new EvalState(PER_CALL_COST_LIMIT, performance.now() + 60_000),
  );
  return r.ok ? { value: r.value, cost: r.cost } : { error: r.error.message, cost: r.cost };
}

/** The cost of `call`, less that of reading its arguments (`reads`, each evaluated alone). */
function callCost(call: string, reads: readonly string[], s: string, p: string): number {
  const whole = outcome(call, s, p);
  assert.equal(whole.error, undefined, `${call} failed: ${whole.error}`);
  return reads.reduce((cost, read) => cost - outcome(read, s, p).cost, whole.cost);
}

const SUBJECT = ["object.s"];
const BOTH = ["object.s", "object.p"];

const SUBJECTS: readonly string[] = [
  "",
  "a",
  "a".repeat(9),
  "a".repeat(10),
  "my-app-1",
  "😀".repeat(9), // 9 code points, 18 UTF-16 units
  `x${"😀".repeat(20)}`,
  "a".repeat(V8_MAX_INPUT), // the longest text V8 is given
  "a".repeat(V8_MAX_INPUT + 1), // the automata answer
  "a".repeat(100_000),
];
const PATTERNS: readonly string[] = ["a", "ab", "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "😀+", "(.*a){20}x", ""];

function eachTier(body: () => void): void {
  const before = setCodegenMode("never");
  try {
    for (const mode of ["never", "always"] as const) {
      setCodegenMode(mode);
      body();
    }
  } finally {
    setCodegenMode(before);
  }
}

void test("s.matches(p) costs ceil((1 + |s|) × 0.1) × ceil(|p| × 0.25), as cel-go charges matches_string", () => {
  eachTier(() => {
    for (const s of SUBJECTS)
      for (const p of PATTERNS) {
        const expected = upstreamRegexCost(s, p);
        // A constant pattern is compiled with the expression (plan/matches.ts); a pattern read at
        // run time goes through the library's overload. Both are charged alike.
        assert.equal(
          callCost(`object.s.matches(${JSON.stringify(p)})`, SUBJECT, s, p),
          expected,
          `constant ${p} over ${s.length} units`,
        );
        assert.equal(
          callCost("object.s.matches(object.p)", BOTH, s, p),
          expected,
          `runtime ${p} over ${s.length} units`,
        );
      }
  });
});

void test("matches(s, p) costs 1 whatever the sizes, as cel-go's default branch charges the global overload", () => {
  eachTier(() => {
    for (const s of ["", "a".repeat(100_000), "😀".repeat(300)])
      for (const p of ["a", "(.*a){20}x"]) {
        assert.equal(callCost(`matches(object.s, ${JSON.stringify(p)})`, SUBJECT, s, p), 1);
        assert.equal(callCost("matches(object.s, object.p)", BOTH, s, p), 1);
      }
  });
});

void test("find and findAll cost the product Kubernetes' library/cost.go charges", () => {
  eachTier(() => {
    for (const s of SUBJECTS)
      for (const p of PATTERNS) {
        const expected = upstreamRegexCost(s, p);
        for (const call of [
          "object.s.find(object.p)",
          "object.s.findAll(object.p)",
          "object.s.findAll(object.p, 2)",
        ])
          assert.equal(callCost(call, BOTH, s, p), expected, `${call}: ${p} over ${s.length} units`);
      }
  });
});

void test("the trial's pattern over 1 MB is within the per-expression limit and answers", () => {
  // ceil(1,000,001 × 0.1) × ceil(10 × 0.25) = 100,001 × 3: under Kubernetes' 1,000,000.
  const s = "a".repeat(1_000_000);
  const r = outcome("object.s.matches('(.*a){20}x')", s, "");
  assert.deepEqual(r, { value: false, cost: 300_003 + outcome("object.s", s, "").cost });
  const found = outcome("object.s.find('(.*a){20}x')", s, "");
  assert.deepEqual(found, { value: "", cost: 300_003 + outcome("object.s", s, "").cost });
});
