/**
 * failurePolicy is applied in one module (src/engine/failure-policy.ts), to every kind of error.
 * Upstream: kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/
 * validator.go (`policyDecisionActionForError`: Fail → ActionDeny, Ignore → ActionAdmit, for a
 * matchCondition error, a validation's error and a policy out of budget alike) and dispatcher.go
 * (an ActionDeny decision is enforced through each of the binding's validationActions: Deny
 * denies, Warn warns, Audit annotates).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import type { AdmissionDecision, EvaluationErrorKind, PolicyResult } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import {
  map,
  mapBinding,
  mutateText,
  podObject,
  podRequest,
  validateText,
  vap,
  vapBinding,
  yamlDocs,
} from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

const ints = (n: number) => Array.from({ length: n }, (_, i) => i);
const pod = (spec: Doc = {}, overrides: Partial<AdmissionRequest> = {}) =>
  podRequest(podObject(spec), overrides);

/** One way for a validating policy to end in an error of one kind. */
interface ErrorCase {
  readonly name: string;
  readonly kind: EvaluationErrorKind;
  /** The policy's spec, without failurePolicy. */
  readonly spec: Doc;
  readonly bindingSpec?: Doc;
  readonly request: AdmissionRequest;
  /** A deadline already passed. */
  readonly late?: boolean;
  /** Kubernetes enforces this error through the binding's validationActions (dispatcher.go). */
  readonly throughActions: boolean;
}

const CASES: readonly ErrorCase[] = [
  {
    name: "a validation that does not compile",
    kind: "compile",
    spec: { validations: [{ expression: "object.spec.x ==" }] },
    request: pod(),
    throughActions: true,
  },
  {
    name: "a validation that fails at run time",
    kind: "runtime",
    spec: { validations: [{ expression: "object.spec.nope == 1" }] },
    request: pod(),
    throughActions: true,
  },
  {
    name: "a validation over the per-expression cost limit",
    kind: "cost",
    spec: { validations: [{ expression: "object.spec.xs.all(x, object.spec.xs.all(y, x + y >= 0))" }] },
    request: pod({ xs: ints(700) }),
    throughActions: true,
  },
  {
    name: "a validation past the request's deadline",
    kind: "timeout",
    spec: { validations: [{ expression: "object.spec.xs.all(x, x >= 0)" }] },
    request: pod({ xs: ints(5000) }),
    late: true,
    throughActions: true,
  },
  {
    name: "a matchCondition that fails at run time",
    kind: "runtime",
    spec: {
      matchConditions: [{ name: "c", expression: "object.spec.nope == 1" }],
      validations: [{ expression: "true" }],
    },
    request: pod(),
    throughActions: true,
  },
  {
    name: "a variable that fails where a validation reads it",
    kind: "runtime",
    spec: {
      variables: [{ name: "v", expression: "object.spec.nope" }],
      validations: [{ expression: "variables.v == 1" }],
    },
    request: pod(),
    throughActions: true,
  },
  {
    name: "an audit annotation that fails at run time",
    kind: "runtime",
    spec: {
      validations: [{ expression: "true" }],
      auditAnnotations: [{ key: "k", valueExpression: "string(object.spec.nope)" }],
    },
    request: pod(),
    throughActions: false,
  },
  {
    name: "params that a Deny paramRef cannot find",
    kind: "param-not-found",
    spec: {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      validations: [{ expression: "true" }],
    },
    bindingSpec: { paramRef: { name: "absent", namespace: "default", parameterNotFoundAction: "Deny" } },
    request: pod(),
    throughActions: false,
  },
  {
    name: "a namespaceSelector on a Namespace that is not known",
    kind: "namespace-not-found",
    spec: { validations: [{ expression: "true" }] },
    bindingSpec: { matchResources: { namespaceSelector: { matchLabels: { environment: "prod" } } } },
    request: pod({}, { namespace: "ghost" }),
    throughActions: false,
  },
];

function run(c: ErrorCase, failurePolicy: "Fail" | "Ignore", actions: readonly string[]): AdmissionDecision {
  const text = yamlDocs(
    vap("p", { ...c.spec, failurePolicy }),
    vapBinding("b", "p", { ...c.bindingSpec, validationActions: actions }),
  );
  return validateText(text, c.request, c.late ? { deadline: performance.now() - 1 } : {});
}

function errored(d: AdmissionDecision, kind: EvaluationErrorKind): PolicyResult {
  const r = d.results.find((x) => x.outcome === "error");
  assert.ok(r, `expected an error result, got ${JSON.stringify(d.results)}`);
  assert.equal(r.errorKind, kind);
  return r;
}

for (const c of CASES) {
  test(`${c.name} (${c.kind}): failurePolicy Fail denies with the error`, () => {
    const d = run(c, "Fail", ["Deny"]);
    const r = errored(d, c.kind);
    assert.equal(d.allowed, false);
    assert.equal(r.violations.length, 1);
    assert.equal(r.violations[0]?.action, "Deny");
    assert.ok(d.status?.message.endsWith(r.violations[0]?.message ?? "?"), d.status?.message);
  });

  test(`${c.name} (${c.kind}): failurePolicy Ignore admits, with no violation`, () => {
    const d = run(c, "Ignore", ["Deny"]);
    const r = errored(d, c.kind);
    assert.equal(d.allowed, true);
    assert.deepEqual(r.violations, []);
    // Only a policy cut short by the deadline says that it was ignored.
    assert.equal(
      d.warnings.some((w) => w.includes("did not finish before the request's deadline")),
      c.kind === "timeout",
    );
  });
}

for (const c of CASES.filter((x) => x.throughActions)) {
  test(`${c.name} (${c.kind}) under Fail with validationActions [Warn, Audit]: warned and audited, admitted`, () => {
    const d = run(c, "Fail", ["Warn", "Audit"]);
    const r = errored(d, c.kind);
    assert.equal(d.allowed, true);
    assert.deepEqual(
      r.violations.map((v) => v.action),
      ["Warn", "Audit"],
    );
    const message = r.violations[0]?.message ?? "?";
    assert.ok(
      d.warnings.includes(`Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': ${message}`),
      JSON.stringify(d.warnings),
    );
    const audit = JSON.parse(
      d.auditAnnotations["validation.policy.admission.k8s.io/validation_failure"] ?? "[]",
    );
    assert.equal(audit[0]?.message, message);
  });
}

// Kubernetes validating/dispatcher.go: a configuration error (`addConfigError`: a selector or
// namespace that cannot be read, params that CollectParams cannot collect) and an audit annotation
// that fails (AuditAnnotationActionError) become ActionDeny decisions appended to deniedDecisions
// directly, never through the binding's validationActions: under Fail they deny whatever the actions.
for (const c of CASES.filter((x) => !x.throughActions)) {
  for (const actions of [["Warn"], ["Audit"], ["Warn", "Audit"]]) {
    test(`${c.name} (${c.kind}) under Fail with validationActions [${actions.join(", ")}]: denied, as dispatcher.go denies it`, () => {
      const d = run(c, "Fail", actions);
      const r = errored(d, c.kind);
      assert.equal(d.allowed, false);
      assert.deepEqual(
        r.violations.map((v) => v.action),
        ["Deny"],
      );
      assert.equal(d.status?.code, 422);
      assert.equal(d.status?.reason, "Invalid");
      // Nothing is warned or audited for it: the actions do not apply.
      assert.deepEqual(d.warnings, []);
      assert.equal(d.auditAnnotations["validation.policy.admission.k8s.io/validation_failure"], undefined);
    });
  }
}

test("a binding configuration error is worded 'failed to configure binding', a policy one 'failed to configure policy' without the binding (dispatcher.go addConfigError)", () => {
  const viaBinding = run(CASES.find((c) => c.kind === "namespace-not-found") as ErrorCase, "Fail", ["Warn"]);
  assert.equal(
    viaBinding.status?.message,
    `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: namespaces "ghost" not found`,
  );
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      validations: [{ expression: "true" }],
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
        ],
        namespaceSelector: { matchLabels: { environment: "prod" } },
      },
    }),
    vapBinding("b", "p", { validationActions: ["Audit"] }),
  );
  const viaPolicy = validateText(text, pod({}, { namespace: "ghost" }));
  assert.equal(viaPolicy.allowed, false);
  assert.equal(
    viaPolicy.status?.message,
    `ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: namespaces "ghost" not found`,
  );
});

// An audit annotation typed dyn (`dyn(1)`) never reaches validator.go's "unsupported return type":
// CompileCELExpression (admission/plugin/cel/compile.go) accepts only an expression whose checked
// type is string or null, so it is a compilation error, which the policy's failurePolicy decides.
for (const failurePolicy of ["Fail", "Ignore"] as const)
  test(`an audit annotation typed dyn is a compilation error, decided by failurePolicy ${failurePolicy}`, () => {
    const text = yamlDocs(
      vap("p", {
        failurePolicy,
        validations: [{ expression: "true" }],
        auditAnnotations: [{ key: "k", valueExpression: "dyn(1)" }],
      }),
      vapBinding("b", "p", { validationActions: ["Warn"] }),
    );
    const d = validateText(text, pod());
    assert.equal(d.allowed, failurePolicy === "Ignore");
    if (failurePolicy === "Fail")
      assert.match(
        d.status?.message ?? "",
        /compilation error: must evaluate to one of \[string null_type\]/,
      );
  });

test("an audit annotation of null or only whitespace is left out, not an error (validator.go: AuditAnnotationActionExclude)", () => {
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      validations: [{ expression: "true" }],
      auditAnnotations: [
        { key: "a", valueExpression: "null" },
        { key: "b", valueExpression: "'  '" },
        { key: "c", valueExpression: "' x '" },
      ],
    }),
    vapBinding("b", "p"),
  );
  const d = validateText(text, pod());
  assert.equal(d.allowed, true);
  assert.deepEqual(d.auditAnnotations, { "p/c": "x" });
});

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`a mutation that fails at run time → failurePolicy ${failurePolicy}`, () => {
    const text = yamlDocs(
      map("m", {
        failurePolicy,
        mutations: [
          {
            patchType: "ApplyConfiguration",
            applyConfiguration: { expression: "Object{spec: Object.spec{x: object.spec.nope}}" },
          },
        ],
      }),
      mapBinding("mb", "m"),
    );
    const d = mutateText(text, pod());
    const r = errored(d, "runtime");
    assert.equal(d.allowed, failurePolicy === "Ignore");
    assert.equal(r.violations.length, failurePolicy === "Fail" ? 1 : 0);
  });
}

test("no engine module but failure-policy.ts applies failurePolicy", () => {
  const dir = new URL("../../../src/engine/", import.meta.url);
  const readers: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".ts") || name === "failure-policy.ts") continue;
    const text = readFileSync(new URL(name, dir), "utf8");
    for (const line of text.split("\n"))
      if (/\bpolicy\.failurePolicy\b/.test(line)) readers.push(`${name}: ${line.trim()}`);
  }
  // Which split path (/validate/fail …) serves a pair is policy/routing.ts's rule, read as `route`.
  assert.deepEqual(readers, []);
});

// validator.go: an error of the matchConditions, or the policy's budget running out during the
// validations, makes the policy's result one decision at index 0; publishValidationFailureAnnotation
// names it with that index and the binding's validationActions.
test("a matchCondition error audited: expressionIndex 0 and the binding's validationActions (validator.go, dispatcher.go)", () => {
  const c = CASES.find((x) => x.name === "a matchCondition that fails at run time") as ErrorCase;
  const d = run(c, "Fail", ["Warn", "Audit"]);
  const [failure] = JSON.parse(
    d.auditAnnotations["validation.policy.admission.k8s.io/validation_failure"] ?? "[]",
  );
  assert.equal(failure?.expressionIndex, 0);
  assert.deepEqual(failure?.validationActions, ["Warn", "Audit"]);
});

test("the budget running out after a false validation: only the budget error, no audit annotation (validator.go ForInput)", () => {
  const nested = "object.spec.xs.all(x, object.spec.xs.all(y, x + y >= 0))";
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      validations: [
        { expression: "false", message: "the first validation is false" },
        ...Array.from({ length: 13 }, () => ({ expression: nested })),
      ],
      auditAnnotations: [{ key: "k", valueExpression: "'v'" }],
    }),
    vapBinding("b", "p"),
  );
  const d = validateText(text, pod({ xs: ints(540) }));
  assert.equal(
    d.status?.message,
    "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: validation failed due to running out of cost budget, no further validation rules will be run",
  );
  assert.deepEqual(
    d.results[0]?.violations.map((v) => [v.expressionIndex, v.message]),
    [[0, "validation failed due to running out of cost budget, no further validation rules will be run"]],
  );
  assert.deepEqual(d.auditAnnotations, {});
});
