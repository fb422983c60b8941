/**
 * A policy's validations run as one generated function (cel/sequence.ts) when the engine records no
 * trace. It must decide, charge and fail exactly as the validations run one by one: the same
 * verdicts, messages, error kinds and costs, the same halt at a cost or deadline failure, and the
 * same variables, shared values and messageExpressions. The reference here is the one-by-one loop on
 * closures with a trace; the sequence runs with the trace off and code generation forced.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { Activation } from "../../../src/cel/index.ts";
import { type CodegenMode, setCodegenMode } from "../../../src/cel/configure.ts";
import type { CompiledValidatingPolicy } from "../../../src/compile/policy.ts";
import { decide } from "../../../src/engine/decision.ts";
import { validate } from "../../../src/engine/validating.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import {
  compileText,
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

const before = setCodegenMode("lazy");
after(() => setCodegenMode(before));

const pod = (spec: Doc) => podRequest(podObject(spec));
const ints = (n: number) => Array.from({ length: n }, (_, i) => i);
/** About 3n² cost units over a list of n ints. */
const nested = "object.spec.xs.all(x, object.spec.xs.all(y, x + y >= 0))";

/** What a decision says, durations and traces left out (the sequence records none). */
function observable(d: AdmissionDecision): unknown {
  return {
    ...decisionOutline(d),
    results: d.results.map(({ trace: _t, durationMs: _d, ...rest }) => rest),
  };
}

interface Run {
  readonly decision: AdmissionDecision;
  /** How many functions the policy's sequence was generated as (0: it never ran). */
  readonly functions: number;
}

function runWith(
  mode: CodegenMode,
  trace: boolean,
  text: string,
  request: AdmissionRequest,
  deadline: number,
): Run {
  const was = setCodegenMode(mode);
  try {
    const set = compileText(text);
    const decision = decide(validate(set, request, contextFor(set), { deadline, trace }));
    const policy = set.policies[0] as CompiledValidatingPolicy;
    return { decision, functions: policy.sequence?.functions ?? 0 };
  } finally {
    setCodegenMode(was);
  }
}

/**
 * The sequence against the one-by-one loop (closures, and generated programs) on `request`; returns
 * the sequence's decision.
 */
function agree(spec: Doc, request: AdmissionRequest, bindingSpec: Doc = {}, deadline = FAR()): Run {
  const text = yamlDocs(vap("p", spec), vapBinding("b", "p", bindingSpec));
  const reference = runWith("never", true, text, request, deadline);
  const generated = runWith("always", true, text, request, deadline);
  const sequence = runWith("always", false, text, request, deadline);
  // The reference runs without generated code ("never"), the sequence's included.
  assert.ok(sequence.functions > 0, "the sequence was generated");
  assert.deepEqual(observable(generated.decision), observable(reference.decision));
  assert.deepEqual(observable(sequence.decision), observable(reference.decision));
  return sequence;
}

function only(d: AdmissionDecision) {
  assert.equal(d.results.length, 1);
  return d.results[0] as AdmissionDecision["results"][number];
}

test("every validation true: one pass, and the same cost", () => {
  const { decision } = agree(
    {
      validations: [
        { expression: "object.spec.replicas <= 5" },
        { expression: "object.metadata.name.startsWith('w')" },
        { expression: "object.spec.xs.all(x, x >= 0)" },
      ],
    },
    pod({ replicas: 3, xs: ints(10) }),
  );
  assert.equal(decision.allowed, true);
  assert.equal(only(decision).outcome, "pass");
  assert.ok(decision.cost > 10);
});

test("false validations are each reported, with message, messageExpression and reason", () => {
  const { decision } = agree(
    {
      validations: [
        { expression: "object.spec.a == 1", message: "a must be 1" },
        { expression: "object.spec.b == 2" },
        {
          expression: "object.spec.c == 3",
          messageExpression: "'c is ' + string(object.spec.c)",
          reason: "Forbidden",
        },
        { expression: "object.spec.d == 4", messageExpression: "'multi\\nline'", message: "d must be 4" },
      ],
    },
    pod({ a: 0, b: 2, c: 7, d: 0 }),
    { validationActions: ["Warn", "Audit"] },
  );
  assert.equal(decision.allowed, true);
  assert.deepEqual(
    only(decision)
      .violations.filter((v) => v.action === "Warn")
      .map((v) => [v.expressionIndex, v.message]),
    [
      [0, "a must be 1"],
      [2, "c is 7"],
      [3, "d must be 4"],
    ],
  );
  assert.equal(decision.warnings.length, 3);
});

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`a runtime error in one validation, failurePolicy ${failurePolicy}: the later ones still run`, () => {
    const { decision } = agree(
      {
        failurePolicy,
        validations: [
          { expression: "object.spec.a == 1" },
          { expression: "object.spec.missing.x == 1" },
          { expression: "object.spec.b == 2", message: "b must be 2" },
          // A dyn result (`dyn(object.spec.s)`) does not compile (compile.go's exact result type).
          { expression: "object.spec.s == true", message: "s is no bool" },
        ],
      },
      pod({ a: 1, b: 0, s: "yes" }),
    );
    const r = only(decision);
    assert.equal(r.outcome, "error");
    assert.equal(r.errorKind, "runtime");
    assert.match(r.reason ?? "", /^expression 'object\.spec\.missing\.x == 1' resulted in error: /);
    // Under Ignore the error admits and the false validations still deny.
    assert.deepEqual(
      r.violations.map((v) => v.expressionIndex),
      failurePolicy === "Fail" ? [1, 2, 3] : [2, 3],
    );
  });

  // An expression over its own per-call limit fails alone and the next ones run; only the budget
  // spent ends the policy (admission/plugin/cel/activation.go). Found by the Values fuzzer
  // against a real kube-apiserver (test/kube/values.test.ts).
  test(`over the per-call cost limit, failurePolicy ${failurePolicy}: that validation fails, the next ones run`, () => {
    const { decision } = agree(
      {
        failurePolicy,
        validations: [
          { expression: "object.spec.a == 2", message: "a must be 2" },
          { expression: nested },
          { expression: "object.spec.b == 2", message: "b must be 2" },
        ],
      },
      pod({ a: 1, b: 0, xs: ints(700) }),
    );
    const r = only(decision);
    assert.deepEqual(
      r.violations.map((v) => v.message),
      [
        "a must be 2",
        ...(failurePolicy === "Fail"
          ? [`expression '${nested}' resulted in error: operation cancelled: actual cost limit exceeded`]
          : []),
        "b must be 2",
      ],
    );
    assert.equal(decision.allowed, false);
  });
}

test("the policy's budget runs out part of the way: the bare budget message, nothing after it", () => {
  const { decision } = agree(
    {
      failurePolicy: "Fail",
      validations: [
        ...Array.from({ length: 13 }, () => ({ expression: nested })),
        { expression: "false", message: "never run" },
      ],
    },
    pod({ xs: ints(540) }),
  );
  const r = only(decision);
  assert.equal(r.errorKind, "cost");
  assert.equal(
    r.reason,
    "validation failed due to running out of cost budget, no further validation rules will be run",
  );
  // validator.go: the validations' ForInput fails as a whole, one decision at index 0.
  assert.deepEqual(
    r.violations.map((v) => v.expressionIndex),
    [0],
  );
});

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`a deadline already passed, failurePolicy ${failurePolicy}: timeout at the first validation`, () => {
    const { decision } = agree(
      { failurePolicy, validations: [{ expression: "true" }, { expression: "false" }] },
      pod({}),
      {},
      performance.now() - 1,
    );
    const r = only(decision);
    assert.equal(r.errorKind, "timeout");
    assert.equal(
      r.reason,
      "expression 'true' resulted in error: operation cancelled: evaluation deadline exceeded",
    );
    assert.equal(decision.allowed, failurePolicy === "Ignore");
  });
}

test("variables: evaluated once when first read, their errors surfacing where they are read", () => {
  const { decision } = agree(
    {
      variables: [
        { name: "n", expression: "object.spec.xs.size()" },
        { name: "bad", expression: "object.spec.missing.x" },
        { name: "walk", expression: nested },
      ],
      validations: [
        { expression: "variables.n > 5", messageExpression: "'n is ' + string(variables.n)" },
        { expression: "variables.bad == 1" },
        { expression: "variables.walk && variables.n == 3" },
        { expression: "variables.n < 2", messageExpression: "'n is still ' + string(variables.n)" },
      ],
    },
    pod({ xs: ints(3) }),
  );
  const violations = only(decision).violations;
  assert.deepEqual(
    violations.map((v) => v.expressionIndex),
    [0, 1, 3],
  );
  assert.equal(violations[0]?.message, "n is 3");
  assert.match(violations[1]?.message ?? "", /^expression 'variables\.bad == 1' resulted in error: /);
  assert.equal(violations[2]?.message, "n is still 3");
});

test("subexpressions the validations share are computed once and charged at each use", () => {
  const all = "(object.spec.containers + object.spec.?initContainers.orValue([]))";
  agree(
    {
      validations: [
        { expression: `${all}.all(c, c.name.size() < 10)` },
        {
          expression: `${all}.all(c, !c.?securityContext.?privileged.orValue(false))`,
          message: "privileged",
        },
        { expression: `${all}.size() <= 2`, message: "too many" },
      ],
    },
    pod({
      containers: [{ name: "a", securityContext: { privileged: true } }, { name: "b" }],
      initContainers: [{ name: "init" }],
    }),
  );
});

// The sequence keeps a path from `object` read by several validations in one local: a value, an
// absent field and an error each as the validation reading it would have it.
test("paths the validations share: each validation reads what it would alone", () => {
  const { decision } = agree(
    {
      validations: [
        { expression: "object.spec.missing.x == 1" },
        { expression: "object.spec.?missing.?x.orValue(1) == 1" },
        { expression: "!has(object.spec.missing) && object.spec.a == 1" },
        { expression: "object.spec.?a.orValue(0) == 2", message: "a is not 2" },
        { expression: "object.spec.containers.all(c, c.?securityContext.?privileged.orValue(false))" },
        {
          expression:
            "object.spec.containers.exists(c, c.?securityContext.?privileged.orValue(false) == false)",
          message: "one is not privileged",
        },
      ],
    },
    pod({ a: 1, containers: [{ securityContext: { privileged: true } }, { name: "b" }] }),
  );
  assert.deepEqual(
    only(decision).violations.map((v) => [
      v.expressionIndex,
      v.message.startsWith("expression") ? "error" : v.message,
    ]),
    [
      [0, "error"],
      [3, "a is not 2"],
      [4, "failed expression: object.spec.containers.all(c, c.?securityContext.?privileged.orValue(false))"],
    ],
  );
});

test("audit annotations are evaluated after the sequence, on the budget it left", () => {
  const { decision } = agree(
    {
      validations: [{ expression: "object.spec.a == 1" }, { expression: nested }],
      auditAnnotations: [{ key: "k", valueExpression: "'a=' + string(object.spec.a)" }],
    },
    pod({ a: 1, xs: ints(50) }),
  );
  assert.deepEqual(decision.auditAnnotations, { "p/k": "a=1" });
});

// Long lists of validations are generated as several functions (V8 optimizes no function past its
// bytecode limit); the outcomes cross the functions, and an ending failure stops the later ones.
const long = (i: number) =>
  `object.spec.containers.all(c, ${Array.from({ length: 40 }, (_, k) => `c.?env${k}.orValue('') != 'v${i}-${k}'`).join(" && ")})`;

test("a long list of validations spans several generated functions", () => {
  const validations = Array.from({ length: 24 }, (_, i) => ({ expression: long(i), message: `rule ${i}` }));
  // Rule 20 is false: its container has env0 = 'v20-0'.
  const request = pod({ containers: [{ name: "a", env0: "v20-0" }], xs: ints(700) });
  const run = agree({ validations }, request);
  assert.ok(run.functions >= 2, `generated as ${run.functions} function(s)`);
  assert.deepEqual(
    only(run.decision).violations.map((v) => v.message),
    ["rule 20"],
  );
  // A per-call cost failure in the first function fails that validation only: the later functions run.
  const halted = agree({ validations: [{ expression: nested }, ...validations] }, request);
  assert.equal(only(halted.decision).errorKind, "cost");
  assert.deepEqual(
    only(halted.decision).violations.map((v) => v.expressionIndex),
    [0, 21],
  );
});

test("lazily, the sequence is generated on the policy's second evaluation and then serves", () => {
  const text = yamlDocs(
    vap("p", {
      validations: [
        { expression: "object.spec.?lazy.orValue(1) == 1 && object.spec.a == 1", message: "a must be 1" },
      ],
    }),
    vapBinding("b", "p"),
  );
  const set = compileText(text);
  const policy = set.policies[0] as CompiledValidatingPolicy;
  const act: Activation = { values: {}, json: true };
  const decisions = [pod({ a: 1 }), pod({ a: 2 }), pod({ a: 1 })].map((request) =>
    decide(validate(set, request, contextFor(set), { deadline: FAR(), trace: false })),
  );
  assert.deepEqual(
    decisions.map((d) => d.allowed),
    [true, false, true],
  );
  assert.equal(policy.sequence?.functions, 1);
  assert.equal(policy.sequence?.ready(act), true);
  // An activation without the promise of JSON input is left to the programs one by one.
  assert.equal(policy.sequence?.ready({ values: {} }), false);
});

test("policies that run the same validations share one sequence, generated once", () => {
  const spec = { validations: [{ expression: "object.spec.?shared.orValue(0) < 5" }] };
  const first = compileText(yamlDocs(vap("p", spec), vapBinding("b", "p")));
  const second = compileText(yamlDocs(vap("q", spec), vapBinding("c", "q")));
  const a = first.policies[0] as CompiledValidatingPolicy;
  const b = second.policies[0] as CompiledValidatingPolicy;
  assert.ok(a.sequence !== undefined && a.sequence === b.sequence);
  const was = setCodegenMode("always");
  try {
    const d = decide(
      validate(first, pod({ shared: 9 }), contextFor(first), { deadline: FAR(), trace: false }),
    );
    assert.equal(d.allowed, false);
    assert.equal(b.sequence?.functions, 1);
  } finally {
    setCodegenMode(was);
  }
  // Without generated code ("never") the same policy decides the same, the sequence left unused.
  const d = runWith(
    "never",
    false,
    yamlDocs(vap("q", spec), vapBinding("c", "q")),
    pod({ shared: 1 }),
    FAR(),
  );
  assert.equal(d.decision.allowed, true);
});
