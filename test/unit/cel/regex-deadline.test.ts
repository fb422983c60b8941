/**
 * A long match reads the evaluation's deadline as it goes and stops with the timeout error, which
 * the engine answers by failurePolicy. Cost limits do not stop these matches: cel-go charges
 * `matches` by string length times pattern length (interpreter/runtimecost.go), and these stay
 * well under Kubernetes' 1,000,000 per expression while taking seconds to run, in Go's regexp too
 * (its NFA steps every thread of a 1,000-instruction program at every character).
 *
 * No test asserts a time: a deadline already passed must end the match with the timeout error, and
 * a webhook given `?timeout=1s` must answer by failurePolicy, naming the deadline.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { setCodegenMode } from "../../../src/cel/configure.ts";
import {
  ADMISSION_VARIABLES,
  compile,
  createEnvironment,
  EvalState,
  PER_CALL_COST_LIMIT,
  run,
} from "../../../src/cel/index.ts";
import type { DeadlineCheck } from "../../../src/cel/library/types.ts";
import { compileRegex, compileRegexWith } from "../../../src/cel/regex/index.ts";
import { deploymentReview, postReview, startTestWebhook, tempDir } from "../../helpers/webhook.ts";

/** A deterministic random text over `a` and `b`. */
function randomAB(n: number, seed = 1): string {
  let s = seed;
  const chars: string[] = [];
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    chars.push((s >> 16) & 1 ? "a" : "b");
  }
  return chars.join("");
}

class Expired extends Error {}

/** A deadline that has passed: counts the times it is read and throws. */
class PassedDeadline implements DeadlineCheck {
  reads = 0;
  checkDeadline(): void {
    this.reads++;
    throw new Expired();
  }
}

/** A deadline far away: counts the times it is read. */
class Counter implements DeadlineCheck {
  reads = 0;
  checkDeadline(): void {
    this.reads++;
  }
}

const LONG = "a".repeat(1_000_000);

void test("every kind of search reads the deadline as it goes and stops when it has passed", () => {
  const cases = [
    { pattern: "(.*a){20}x", text: LONG },
    { pattern: "((a{1,10}){1,10}){1,10}b", text: LONG },
    // States multiply: the search soon goes on without its cache, as an NFA simulation.
    { pattern: "(a|b)*a(a|b){20}c", text: randomAB(1_000_000) },
  ];
  for (const { pattern, text } of cases) {
    for (const re of [compileRegex(pattern), compileRegexWith(pattern, "re2js", { budget: 1 })]) {
      const searches = [
        (d: DeadlineCheck) => re.test(text, d),
        (d: DeadlineCheck) => re.testWithoutSurrogates(text, d),
        (d: DeadlineCheck) => re.find(text, d),
        (d: DeadlineCheck) => re.findAll(text, -1, d),
      ];
      for (const search of searches) {
        assert.throws(() => search(new PassedDeadline()), Expired, pattern);
        const counter = new Counter();
        search(counter);
        // Read at least every 65,536 characters (in fact every 16,384 or sooner).
        assert.ok(
          counter.reads >= 1_000_000 / 65_536,
          `${pattern}: the deadline was read ${counter.reads} times`,
        );
      }
    }
  }
});

void test("matches, find and findAll end with the evaluation's timeout error once its deadline has passed", () => {
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  const expressions = [
    "object.s.matches('(.*a){20}x')", // compiled with its constant pattern (plan/matches.ts)
    "object.s.matches(object.p)", // the library's overload (std.ts)
    "matches(object.s, object.p)",
    "object.s.find(object.p)", // Kubernetes' regex library (library/regex.ts)
    "object.s.findAll(object.p)",
    "object.s.findAll(object.p, 1)",
  ];
  const before = setCodegenMode("never");
  try {
    for (const mode of ["never", "always"] as const) {
      setCodegenMode(mode);
      for (const source of expressions) {
        const c = compile(source, env);
        if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.message).join("; ")}`);
        const act = { values: { object: { s: LONG, p: "(.*a){20}x" } }, json: true };
        const late = run(c.program, act, new EvalState(PER_CALL_COST_LIMIT, performance.now() - 1));
        assert.equal(late.ok, false, `${mode} ${source} answered past its deadline`);
        if (!late.ok) {
          assert.equal(late.error.kind, "timeout", `${mode} ${source}: ${late.error.message}`);
          assert.equal(late.error.message, "operation cancelled: evaluation deadline exceeded");
        }
        // Given time, the same evaluation answers.
        const timely = run(c.program, act, new EvalState(PER_CALL_COST_LIMIT, performance.now() + 60_000));
        assert.ok(timely.ok, `${mode} ${source}: ${timely.ok ? "" : timely.error.message}`);
      }
    }
  } finally {
    setCodegenMode(before);
  }
});

function policy(name: string, failurePolicy: "Fail" | "Ignore"): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}.example.com
spec:
  failurePolicy: ${failurePolicy}
  matchConstraints:
    resourceRules:
    - apiGroups: ["example.com"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["widgets"]
  validations:
  # ceil(0.1 × 1,000,001) × ceil(0.25 × 16) = 400,004 cost units: within the limit, seconds of work.
  - expression: "!object.spec.text.matches('[ab]*a[ab]{999}c')"
    message: no c after an a a thousand characters back
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}-binding
spec:
  policyName: ${name}.example.com
  validationActions: [Deny]
`;
}

function widgetReview(uid: string, text: string): Record<string, unknown> {
  return deploymentReview({
    uid,
    resource: { group: "example.com", version: "v1", kind: "Widget", resource: "widgets" },
    object: {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "a" },
      spec: { text },
    },
  });
}

void test("?timeout=1s cuts a long match short: failurePolicy Fail denies, Ignore admits with a warning", {
  timeout: 60_000,
}, async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "fail.yaml"), policy("regex-fail", "Fail"));
  await writeFile(join(dir, "ignore.yaml"), policy("regex-ignore", "Ignore"));
  const { port, ca } = await startTestWebhook(t, { policies: [dir] });
  const text = randomAB(1_000_000);

  const denied = await postReview(port, ca, "/validate/fail", widgetReview("r1", text), {
    query: "timeout=1s",
    timeoutMs: 30_000,
  });
  assert.equal(denied.response.allowed, false, JSON.stringify(denied.response));
  assert.equal(
    denied.response.status?.message,
    "ValidatingAdmissionPolicy 'regex-fail.example.com' with binding 'regex-fail-binding' denied request: expression '!object.spec.text.matches('[ab]*a[ab]{999}c')' resulted in error: operation cancelled: evaluation deadline exceeded",
  );

  const admitted = await postReview(port, ca, "/validate/ignore", widgetReview("r2", text), {
    query: "timeout=1s",
    timeoutMs: 30_000,
  });
  assert.equal(admitted.response.allowed, true, JSON.stringify(admitted.response));
  assert.deepEqual(admitted.response.warnings, [
    "ValidatingAdmissionPolicy 'regex-ignore.example.com' did not finish before the request's deadline and was ignored (failurePolicy Ignore)",
  ]);
});
