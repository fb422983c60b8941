/**
 * A policy whose expressions share subexpressions (cel/plan/shared.ts) computes them once per
 * evaluation; it must decide, charge and fail exactly as the same policy compiled without sharing:
 * the same verdicts and messages, and the same cost, value and error at every step of the trace.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePolicySet } from "../../../src/compile/policy.ts";
import { decide } from "../../../src/engine/decision.ts";
import { validate } from "../../../src/engine/validating.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { checkReferences, parsePolicyText } from "../../../src/policy/parse.ts";
import {
  contextFor,
  decisionOutline,
  FAR,
  podObject,
  podRequest,
  vap,
  vapBinding,
  yamlDocs,
} from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

function validateShared(text: string, request: AdmissionRequest, share: boolean): AdmissionDecision {
  const { set, diagnostics } = parsePolicyText(text, "test.yaml");
  const errors = [...diagnostics, ...checkReferences(set)].filter((d) => d.severity === "error");
  assert.deepEqual(errors, []);
  const compiled = compilePolicySet(set, { shareSubexpressions: share });
  return decide(validate(compiled, request, contextFor(compiled), { deadline: FAR() }));
}

/** What a decision says, step by step (durations left out). */
function observable(d: AdmissionDecision): unknown {
  return {
    ...decisionOutline(d),
    results: d.results.map((r) => ({
      policy: r.policy,
      outcome: r.outcome,
      reason: r.reason,
      errorKind: r.errorKind,
      violations: r.violations,
      cost: r.cost,
      trace: r.trace.map((s) => [s.stage, s.name, s.cost, s.error ?? null]),
    })),
  };
}

/** Reviews `request` three times each way (closures first, then generated code) and compares. */
function assertSameEitherWay(text: string, request: AdmissionRequest): AdmissionDecision {
  let last: AdmissionDecision | undefined;
  for (let i = 0; i < 3; i++) {
    const shared = validateShared(text, request, true);
    const plain = validateShared(text, request, false);
    assert.deepEqual(observable(shared), observable(plain), `review ${i + 1}`);
    last = shared;
  }
  return last as AdmissionDecision;
}

const ALL = "(object.spec.containers + object.spec.?initContainers.orValue([]))";

const POLICY: Doc = {
  failurePolicy: "Fail",
  matchConditions: [{ name: "has-containers", expression: `size(${ALL}) > 0` }],
  validations: [
    { expression: `${ALL}.all(c, has(c.image))`, message: "every container needs an image" },
    {
      expression: `${ALL}.all(c, !c.?securityContext.?privileged.orValue(false))`,
      messageExpression: `'privileged among ' + string(size(${ALL})) + ' containers'`,
    },
    // The same value inside a loop: computed once, not once per element.
    {
      expression:
        "object.spec.containers.all(c, object.spec.containers.map(d, d.name).exists(n, n == c.name))",
    },
    // A shared subexpression that fails: absorbed here, an error there, both as without sharing.
    { expression: "object.spec.nope.size() > 0 || true" },
    { expression: "object.spec.?strict.orValue(false) ? object.spec.nope.size() == 0 : true" },
  ],
  auditAnnotations: [{ key: "containers", valueExpression: `string(size(${ALL}))` }],
};

const text = yamlDocs(vap("p", POLICY), vapBinding("b", "p"));

const container = (name: string, extra: Doc = {}) => ({ name, image: `${name}:1`, ...extra });

test("shared subexpressions: allowed, denied by a message expression, and errors, as without sharing", () => {
  const allowed = assertSameEitherWay(
    text,
    podRequest(podObject({ containers: [container("a"), container("b")], initContainers: [container("i")] })),
  );
  assert.equal(allowed.allowed, true);
  assert.deepEqual(allowed.auditAnnotations, { "p/containers": "3" });

  const privileged = assertSameEitherWay(
    text,
    podRequest(podObject({ containers: [container("a", { securityContext: { privileged: true } })] })),
  );
  assert.equal(privileged.allowed, false);
  assert.match(privileged.status?.message ?? "", /privileged among 1 containers/);

  const strict = assertSameEitherWay(
    text,
    podRequest(podObject({ strict: true, containers: [container("a")] })),
  );
  assert.equal(strict.allowed, false);
  assert.match(strict.status?.message ?? "", /no such key: nope/);

  // No containers at all: the match condition's own error, shared with every validation.
  const none = assertSameEitherWay(text, podRequest(podObject({})));
  assert.equal(none.allowed, false);
});

/** A list of n ints and an expression that walks it n² times: about 3n² cost units. */
const nested = "object.spec.xs.all(x, object.spec.xs.all(y, x + y >= 0))";
const ints = (n: number) => Array.from({ length: n }, (_, i) => i);

test("a shared value whose cost would pass the per-expression limit is computed again, and fails there", () => {
  // Each walk is about 0.6M: the first is shared, the second would take the expression past 1M.
  const d = assertSameEitherWay(
    yamlDocs(
      vap("p", {
        failurePolicy: "Fail",
        validations: [{ expression: nested }, { expression: `${nested} && ${nested}` }],
      }),
      vapBinding("b", "p"),
    ),
    podRequest(podObject({ xs: ints(450) })),
  );
  assert.equal(d.allowed, false);
  assert.match(d.status?.message ?? "", /actual cost limit exceeded/);
});

test("shared values count towards the policy's budget as computed ones do, and run out at the same step", () => {
  // Twelve walks of about 0.88M: the twelfth runs out of the 10M budget either way.
  const d = assertSameEitherWay(
    yamlDocs(
      vap("p", {
        failurePolicy: "Fail",
        validations: Array.from({ length: 12 }, () => ({ expression: nested })),
      }),
      vapBinding("b", "p"),
    ),
    podRequest(podObject({ xs: ints(540) })),
  );
  assert.equal(d.allowed, false);
  assert.match(d.status?.message ?? "", /running out of cost budget/);
});

test("two policies with one expression in common, each sharing other parts of it, keep their memos apart", () => {
  // Memo places are per policy: in `a` the a-filter takes the first places, in `b` the b-filter.
  // The common expression compiles once per policy; were it cached by places alone, `b` would run
  // `a`'s copy, which keeps a-values where `b`'s other expression looks for b-values.
  const both = "size(object.spec.a.filter(x, x > 1)) + size(object.spec.b.filter(y, y > 1)) > 0";
  const text = yamlDocs(
    vap("a", {
      validations: [{ expression: both }, { expression: "size(object.spec.a.filter(x, x > 1)) == 2" }],
    }),
    vapBinding("ba", "a"),
    vap("b", {
      validations: [{ expression: both }, { expression: "size(object.spec.b.filter(y, y > 1)) == 3" }],
    }),
    vapBinding("bb", "b"),
  );
  const request = podRequest(podObject({ a: [1, 2, 3], b: [1, 2, 3, 4] }));
  const d = validateShared(text, request, true);
  assert.deepEqual(
    d.results.map((r) => [r.policy, r.outcome]),
    [
      ["a", "pass"],
      ["b", "pass"],
    ],
  );
  assert.deepEqual(observable(d), observable(validateShared(text, request, false)));
});
