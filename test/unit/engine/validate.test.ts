/**
 * The validating phase against the API server's semantics, with real policy YAML:
 * k8s.io/apiserver/pkg/admission/plugin/policy/validating/{dispatcher.go,validator.go} and
 * .../policy/generic/policy_dispatcher.go (CollectParams). Tests marked `todo` assert what Kubernetes
 * does where the engine does not (yet).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AdmissionDecision, PolicyResult } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import {
  configMapDoc,
  deploymentRequest,
  namespaceDoc,
  podObject,
  podRequest,
  validateText,
  vap,
  vapBinding,
  yamlDocs,
} from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

const pod = (spec: Doc = {}, labels?: Record<string, string>, overrides: Partial<AdmissionRequest> = {}) =>
  podRequest(podObject(spec, labels), overrides);

/** One policy `p` bound by `b`, evaluated against `request`. */
function run1(
  spec: Doc,
  request: AdmissionRequest,
  bindingSpec: Doc = {},
  extra: readonly Doc[] = [],
): AdmissionDecision {
  return validateText(yamlDocs(vap("p", spec), vapBinding("b", "p", bindingSpec), ...extra), request);
}

/**
 * Not evaluated: the policy index left the binding out (no result at all), or the matcher skipped it.
 * Without `explain` the engine reports nothing for a binding whose rules cannot select the request.
 */
function notEvaluated(d: AdmissionDecision): void {
  assert.ok(
    d.results.every((r) => r.outcome === "skip"),
    `expected no evaluated result, got ${JSON.stringify(d.results)}`,
  );
}

function only(d: AdmissionDecision): PolicyResult {
  assert.equal(d.results.length, 1, `expected one result, got ${JSON.stringify(d.results)}`);
  return d.results[0] as PolicyResult;
}

const DENIED = (message: string, code = 422, reason = "Invalid") => ({
  code,
  reason,
  message: `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ${message}`,
});

// ---- validations -------------------------------------------------------------------------------

test("a passing validation admits and reports pass", () => {
  const d = run1({ validations: [{ expression: "object.spec.replicas <= 5" }] }, pod({ replicas: 3 }));
  assert.equal(d.allowed, true);
  assert.equal(d.status, undefined);
  const r = only(d);
  assert.equal(r.outcome, "pass");
  assert.deepEqual(r.violations, []);
  assert.equal(r.policy, "p");
  assert.equal(r.binding, "b");
});

test("every failing validation is reported, in order; the first one gives the status", () => {
  const d = run1(
    {
      validations: [
        { expression: "object.spec.a == 1", message: "a must be 1" },
        { expression: "object.spec.b == 2", message: "b must be 2" },
        { expression: "object.spec.c == 3", message: "c must be 3", reason: "Forbidden" },
      ],
    },
    pod({ a: 0, b: 2, c: 0 }),
  );
  assert.equal(d.allowed, false);
  assert.deepEqual(d.status, DENIED("a must be 1"));
  const r = only(d);
  assert.equal(r.outcome, "fail");
  assert.deepEqual(
    r.violations.map((v) => [v.expressionIndex, v.message, v.reason, v.code, v.action]),
    [
      [0, "a must be 1", "Invalid", 422, "Deny"],
      [2, "c must be 3", "Forbidden", 403, "Deny"],
    ],
  );
});

test("a validation that evaluates to false is a failure whatever else it could be", () => {
  // The only non-error, non-true result a bool-typed expression can give (`object.spec.enabled`
  // alone is dyn, which the API server refuses as a validation: compile.go's exact result type).
  const d = run1({ validations: [{ expression: "object.spec.enabled == true" }] }, pod({ enabled: false }));
  assert.deepEqual(d.status, DENIED("failed expression: object.spec.enabled == true"));
});

// ---- messages (validator.go: messageExpression → message → "failed expression: <expr>") -------

const LONG_OK = "m".repeat(5 * 1024);
const LONG_BAD = "m".repeat(5 * 1024 + 1);

const messageCases: {
  name: string;
  validation: Doc;
  spec?: Doc;
  want: string;
  todo?: string;
}[] = [
  {
    name: "no message: the trimmed expression",
    validation: { expression: "  object.spec.x == 1  " },
    want: "failed expression: object.spec.x == 1",
  },
  {
    name: "message",
    validation: { expression: "object.spec.x == 1", message: "x must be 1" },
    want: "x must be 1",
  },
  {
    name: "message is trimmed",
    validation: { expression: "object.spec.x == 1", message: "  x must be 1 " },
    want: "x must be 1",
  },
  {
    name: "messageExpression wins over message",
    validation: {
      expression: "object.spec.x == 1",
      message: "static",
      messageExpression: "'x is ' + string(object.spec.x)",
    },
    want: "x is 2",
  },
  {
    name: "messageExpression is trimmed",
    validation: { expression: "object.spec.x == 1", messageExpression: "'  padded  '" },
    want: "padded",
  },
  {
    name: "messageExpression error → message",
    validation: {
      expression: "object.spec.x == 1",
      message: "static",
      messageExpression: "string(object.spec.nope)",
    },
    want: "static",
  },
  {
    name: "messageExpression error, no message → failed expression",
    validation: { expression: "object.spec.x == 1", messageExpression: "string(object.spec.nope)" },
    want: "failed expression: object.spec.x == 1",
  },
  // A messageExpression that is not a string (`object.spec.x`, dyn) does not compile in the API
  // server (compile.go's exact result type): test/unit/compile/policy.test.ts.
  {
    name: "messageExpression of null fails (string(null)) → message",
    validation: {
      expression: "object.spec.x == 1",
      message: "static",
      messageExpression: "string(object.spec.none)",
    },
    spec: { x: 2, none: null },
    want: "static",
  },
  {
    name: "messageExpression gives only whitespace → message",
    validation: { expression: "object.spec.x == 1", message: "static", messageExpression: "'   '" },
    want: "static",
  },
  {
    name: "messageExpression with a newline → message",
    validation: { expression: "object.spec.x == 1", message: "static", messageExpression: "'line1\\nline2'" },
    want: "static",
  },
  {
    name: "messageExpression of exactly 5 KiB is kept",
    validation: {
      expression: "object.spec.x == 1",
      message: "static",
      messageExpression: "string(object.spec.long)",
    },
    spec: { x: 2, long: LONG_OK },
    want: LONG_OK,
  },
  {
    name: "messageExpression over 5 KiB → message",
    validation: {
      expression: "object.spec.x == 1",
      message: "static",
      messageExpression: "string(object.spec.long)",
    },
    spec: { x: 2, long: LONG_BAD },
    want: "static",
  },
  {
    name: "messageExpression over 5 KiB in UTF-8 bytes (2561 × 'é' = 5122 bytes) → message",
    validation: {
      expression: "object.spec.x == 1",
      message: "static",
      messageExpression: "string(object.spec.long)",
    },
    spec: { x: 2, long: "é".repeat(2561) },
    want: "static",
  },
];

for (const c of messageCases) {
  test(`message: ${c.name}`, c.todo ? { todo: c.todo } : {}, () => {
    const d = run1({ validations: [c.validation] }, pod(c.spec ?? { x: 2 }));
    assert.equal(d.allowed, false);
    assert.equal(only(d).violations[0]?.message, c.want);
    assert.equal(
      d.status?.message,
      `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ${c.want}`,
    );
  });
}

// ---- reason → HTTP code (dispatcher.go: reasonToCode) --------------------------------------------

const reasonCases: { reason?: string; code: number; want: string }[] = [
  { reason: "Unauthorized", code: 401, want: "Unauthorized" },
  { reason: "Forbidden", code: 403, want: "Forbidden" },
  { reason: "Invalid", code: 422, want: "Invalid" },
  { reason: "RequestEntityTooLarge", code: 413, want: "RequestEntityTooLarge" },
  { code: 422, want: "Invalid" },
];

for (const c of reasonCases) {
  test(`reason ${c.reason ?? "(absent)"} → ${c.code}`, () => {
    const d = run1(
      { validations: [{ expression: "false", message: "no", ...(c.reason ? { reason: c.reason } : {}) }] },
      pod(),
    );
    assert.deepEqual(d.status, DENIED("no", c.code, c.want));
  });
}

// ---- validationActions ---------------------------------------------------------------------------

test("validationActions Deny: denied, no warning, no audit annotation", () => {
  const d = run1({ validations: [{ expression: "false", message: "no" }] }, pod(), {
    validationActions: ["Deny"],
  });
  assert.equal(d.allowed, false);
  assert.deepEqual(d.warnings, []);
  assert.deepEqual(d.auditAnnotations, {});
});

test("validationActions Warn: admitted with the API server's warning text", () => {
  const d = run1({ validations: [{ expression: "false", message: "no" }] }, pod(), {
    validationActions: ["Warn"],
  });
  assert.equal(d.allowed, true);
  assert.equal(d.status, undefined);
  assert.deepEqual(d.warnings, ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': no"]);
  assert.deepEqual(d.auditAnnotations, {});
});

test("validationActions Audit: admitted with the validation_failure annotation", () => {
  const d = run1({ validations: [{ expression: "true" }, { expression: "false", message: "no" }] }, pod(), {
    validationActions: ["Audit"],
  });
  assert.equal(d.allowed, true);
  assert.deepEqual(d.warnings, []);
  assert.deepEqual(d.auditAnnotations, {
    "validation.policy.admission.k8s.io/validation_failure":
      '[{"message":"no","policy":"p","binding":"b","expressionIndex":1,"validationActions":["Audit"]}]',
  });
});

test("validationActions Warn+Audit: warning, and the annotation lists the binding's actions", {}, () => {
  const d = run1({ validations: [{ expression: "false", message: "no" }] }, pod(), {
    validationActions: ["Warn", "Audit"],
  });
  assert.equal(d.allowed, true);
  assert.deepEqual(d.warnings, ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': no"]);
  assert.deepEqual(d.auditAnnotations, {
    "validation.policy.admission.k8s.io/validation_failure":
      '[{"message":"no","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Warn","Audit"]}]',
  });
});

test("validationActions Warn also reports a runtime error under failurePolicy Fail, and admits", () => {
  const d = run1({ failurePolicy: "Fail", validations: [{ expression: "object.spec.nope == 1" }] }, pod(), {
    validationActions: ["Warn"],
  });
  assert.equal(d.allowed, true);
  assert.deepEqual(d.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': expression 'object.spec.nope == 1' resulted in error: no such key: nope",
  ]);
});

test("the first denial across policies gives the status; every result is kept", () => {
  const text = yamlDocs(
    vap("first", { validations: [{ expression: "false", message: "first says no", reason: "Forbidden" }] }),
    vap("second", { validations: [{ expression: "false", message: "second says no" }] }),
    vapBinding("b1", "first"),
    vapBinding("b2", "second"),
  );
  const d = validateText(text, pod());
  assert.deepEqual(d.status, {
    code: 403,
    reason: "Forbidden",
    message: "ValidatingAdmissionPolicy 'first' with binding 'b1' denied request: first says no",
  });
  assert.deepEqual(
    d.results.map((r) => [r.policy, r.binding, r.outcome]),
    [
      ["first", "b1", "fail"],
      ["second", "b2", "fail"],
    ],
  );
});

test("one policy with two bindings is evaluated once per binding", () => {
  const text = yamlDocs(
    vap("p", { validations: [{ expression: "false", message: "no" }] }),
    vapBinding("warn", "p", { validationActions: ["Warn"] }),
    vapBinding("deny", "p"),
  );
  const d = validateText(text, pod());
  assert.equal(d.allowed, false);
  assert.equal(d.status?.message, "ValidatingAdmissionPolicy 'p' with binding 'deny' denied request: no");
  assert.deepEqual(d.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'warn': no",
  ]);
});

// ---- auditAnnotations ----------------------------------------------------------------------------

test("auditAnnotations: published as <policy>/<key>", () => {
  const d = run1(
    {
      validations: [{ expression: "true" }],
      auditAnnotations: [{ key: "replicas", valueExpression: "'replicas: ' + string(object.spec.replicas)" }],
    },
    pod({ replicas: 7 }),
  );
  assert.equal(d.allowed, true);
  assert.deepEqual(d.auditAnnotations, { "p/replicas": "replicas: 7" });
});

test("auditAnnotations: a null value is omitted", () => {
  const d = run1(
    {
      validations: [{ expression: "true" }],
      auditAnnotations: [
        { key: "big", valueExpression: "object.spec.replicas > 5 ? 'big' : null" },
        { key: "always", valueExpression: "'yes'" },
      ],
    },
    pod({ replicas: 3 }),
  );
  assert.deepEqual(d.auditAnnotations, { "p/always": "yes" });
});

test("auditAnnotations: a value longer than 10 KiB is truncated to 10 KiB", () => {
  const d = run1(
    {
      validations: [{ expression: "true" }],
      auditAnnotations: [{ key: "k", valueExpression: "string(object.spec.long)" }],
    },
    pod({ long: "a".repeat(11_000) }),
  );
  assert.equal(d.auditAnnotations["p/k"], "a".repeat(10 * 1024));
});

test("auditAnnotations: the value is trimmed and an empty value is omitted", {}, () => {
  const d = run1(
    {
      validations: [{ expression: "true" }],
      auditAnnotations: [
        { key: "padded", valueExpression: "'  v  '" },
        { key: "blank", valueExpression: "'   '" },
      ],
    },
    pod(),
  );
  assert.deepEqual(d.auditAnnotations, { "p/padded": "v" });
});

test("auditAnnotations: an error under failurePolicy Ignore is left out and admits", () => {
  const d = run1(
    {
      failurePolicy: "Ignore",
      validations: [{ expression: "true" }],
      auditAnnotations: [
        { key: "bad", valueExpression: "string(object.spec.nope)" },
        { key: "good", valueExpression: "'ok'" },
      ],
    },
    pod(),
  );
  assert.equal(d.allowed, true);
  assert.deepEqual(d.auditAnnotations, { "p/good": "ok" });
});

test("auditAnnotations: an error under failurePolicy Fail denies the request", {}, () => {
  const d = run1(
    {
      failurePolicy: "Fail",
      validations: [{ expression: "true" }],
      auditAnnotations: [{ key: "bad", valueExpression: "string(object.spec.nope)" }],
    },
    pod(),
  );
  assert.equal(d.allowed, false);
  assert.deepEqual(
    d.status,
    DENIED("expression 'string(object.spec.nope)' resulted in error: no such key: nope"),
  );
});

test("auditAnnotations: distinct values from several params are joined with ', '", {}, () => {
  const d = validateText(
    yamlDocs(
      vap("p", {
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        validations: [{ expression: "true" }],
        auditAnnotations: [{ key: "team", valueExpression: "string(params.data.team)" }],
      }),
      vapBinding("b", "p", {
        paramRef: { selector: { matchLabels: { kind: "team" } }, parameterNotFoundAction: "Deny" },
      }),
      configMapDoc("a", "default", { team: "alpha" }, { kind: "team" }),
      configMapDoc("b", "default", { team: "beta" }, { kind: "team" }),
    ),
    pod(),
  );
  assert.deepEqual(d.auditAnnotations, { "p/team": "alpha, beta" });
});

// ---- match constraints and binding match resources -----------------------------------------------

const denyAll = { validations: [{ expression: "false", message: "no" }] };

test("matchConstraints not matching: the policy is skipped and the request admitted", () => {
  const d = run1(denyAll, deploymentRequest(3));
  assert.equal(d.allowed, true);
  assert.deepEqual(d.results, []);
});

test("with explain, a binding whose rules do not select the request still reports why it was skipped", () => {
  const text = yamlDocs(vap("p", denyAll), vapBinding("b", "p"));
  const d = validateText(text, deploymentRequest(3), { explain: true });
  assert.equal(d.allowed, true);
  assert.equal(only(d).outcome, "skip");
  assert.match(only(d).reason ?? "", /^matchConstraints: /);
});

test("the policy index: of many bindings only those whose rules can select the request are evaluated", () => {
  const docs: Doc[] = [];
  for (let i = 0; i < 50; i++) {
    const resource = i % 10 === 3 ? "pods" : `widgets${i}`;
    docs.push(
      vap(`p${i}`, {
        ...denyAll,
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: [resource] },
          ],
        },
      }),
      vapBinding(`b${i}`, `p${i}`),
    );
  }
  const d = validateText(yamlDocs(...docs), pod());
  assert.deepEqual(
    d.results.map((r) => r.policy),
    ["p3", "p13", "p23", "p33", "p43"],
  );
  assert.ok(d.results.every((r) => r.outcome === "fail"));
  const all = validateText(yamlDocs(...docs), pod(), { explain: true });
  assert.equal(all.results.length, 50);
  assert.equal(all.results.filter((r) => r.outcome === "skip").length, 45);
});

const bindingMatchCases: {
  name: string;
  matchResources: Doc;
  request: AdmissionRequest;
  extra?: Doc[];
  evaluated: boolean;
}[] = [
  {
    name: "binding rules narrower than the policy's: UPDATE only, request CREATE",
    matchResources: {
      resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["pods"] }],
    },
    request: pod(),
    evaluated: false,
  },
  {
    name: "binding rules matching too",
    matchResources: {
      resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
    },
    request: pod(),
    evaluated: true,
  },
  {
    name: "binding rules match a resource the policy does not (deployments): both must match",
    matchResources: {
      resourceRules: [
        { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
      ],
    },
    request: deploymentRequest(1),
    evaluated: false,
  },
  {
    name: "excludeResourceRules by name",
    matchResources: {
      excludeResourceRules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["*"],
          resources: ["pods"],
          resourceNames: ["web"],
        },
      ],
    },
    request: pod(),
    evaluated: false,
  },
  {
    name: "excludeResourceRules for another name",
    matchResources: {
      excludeResourceRules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["*"],
          resources: ["pods"],
          resourceNames: ["other"],
        },
      ],
    },
    request: pod(),
    evaluated: true,
  },
  {
    name: "namespaceSelector matching the request's Namespace loaded from the same YAML",
    matchResources: { namespaceSelector: { matchLabels: { environment: "prod" } } },
    request: pod({}, undefined, { namespace: "prod" }),
    extra: [namespaceDoc("prod", { environment: "prod" }), namespaceDoc("dev", { environment: "dev" })],
    evaluated: true,
  },
  {
    name: "namespaceSelector not matching the request's Namespace",
    matchResources: { namespaceSelector: { matchLabels: { environment: "prod" } } },
    request: pod({}, undefined, { namespace: "dev" }),
    extra: [namespaceDoc("prod", { environment: "prod" }), namespaceDoc("dev", { environment: "dev" })],
    evaluated: false,
  },
  {
    name: "namespaceSelector with matchExpressions NotIn",
    matchResources: {
      namespaceSelector: { matchExpressions: [{ key: "environment", operator: "NotIn", values: ["dev"] }] },
    },
    request: pod({}, undefined, { namespace: "prod" }),
    extra: [namespaceDoc("prod", { environment: "prod" })],
    evaluated: true,
  },
  {
    name: "an empty namespaceSelector matches without looking the Namespace up",
    matchResources: { namespaceSelector: {} },
    request: pod({}, undefined, { namespace: "nowhere" }),
    evaluated: true,
  },
  {
    name: "objectSelector matching the object's labels",
    matchResources: { objectSelector: { matchLabels: { app: "web" } } },
    request: pod({}, { app: "web" }),
    evaluated: true,
  },
  {
    name: "objectSelector not matching",
    matchResources: { objectSelector: { matchLabels: { app: "web" } } },
    request: pod({}, { app: "db" }),
    evaluated: false,
  },
  {
    name: "objectSelector matching the oldObject only (UPDATE removing the label)",
    matchResources: { objectSelector: { matchLabels: { app: "web" } } },
    request: podRequest(podObject({}, {}), { operation: "UPDATE", oldObject: podObject({}, { app: "web" }) }),
    evaluated: true,
  },
];

for (const c of bindingMatchCases) {
  test(`binding matchResources: ${c.name} → ${c.evaluated ? "evaluated" : "skipped"}`, () => {
    const d = run1(denyAll, c.request, { matchResources: c.matchResources }, c.extra ?? []);
    assert.equal(d.allowed, !c.evaluated);
    if (c.evaluated) assert.equal(only(d).outcome, "fail");
    else notEvaluated(d);
  });
}

test("policy matchConstraints namespaceSelector and excludeResourceRules apply as well", () => {
  const spec = {
    ...denyAll,
    matchConstraints: {
      resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
      excludeResourceRules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["CREATE"],
          resources: ["pods"],
          resourceNames: ["skip-me"],
        },
      ],
      namespaceSelector: { matchLabels: { enforce: "yes" } },
    },
  };
  const extra = [namespaceDoc("on", { enforce: "yes" }), namespaceDoc("off", {})];
  assert.equal(run1(spec, pod({}, undefined, { namespace: "on" }), {}, extra).allowed, false);
  assert.equal(run1(spec, pod({}, undefined, { namespace: "off" }), {}, extra).allowed, true);
  assert.equal(run1(spec, pod({}, undefined, { namespace: "on", name: "skip-me" }), {}, extra).allowed, true);
});

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`a namespaceSelector whose Namespace is unknown → failurePolicy ${failurePolicy}`, () => {
    const d = run1({ ...denyAll, failurePolicy }, pod({}, undefined, { namespace: "ghost" }), {
      matchResources: { namespaceSelector: { matchLabels: { environment: "prod" } } },
    });
    assert.equal(d.allowed, failurePolicy === "Ignore");
    const r = only(d);
    assert.equal(r.outcome, "error");
    assert.equal(r.errorKind, "namespace-not-found");
  });
}

test("an unknown Namespace under Fail: the denial is Kubernetes' config error, 422 Invalid", {}, () => {
  const d = run1(denyAll, pod({}, undefined, { namespace: "ghost" }), {
    matchResources: { namespaceSelector: { matchLabels: { environment: "prod" } } },
  });
  assert.deepEqual(d.status, DENIED('failed to configure binding: namespaces "ghost" not found'));
});

test("namespaceObject gives the request's Namespace to CEL", () => {
  const spec = {
    validations: [
      {
        expression: "namespaceObject.metadata.labels.environment != 'prod' || object.spec.replicas <= 2",
        messageExpression: "'too many replicas for ' + namespaceObject.metadata.name",
      },
    ],
  };
  const extra = [namespaceDoc("prod", { environment: "prod" }), namespaceDoc("dev", { environment: "dev" })];
  const prod = run1(spec, pod({ replicas: 3 }, undefined, { namespace: "prod" }), {}, extra);
  assert.deepEqual(prod.status, DENIED("too many replicas for prod"));
  assert.equal(run1(spec, pod({ replicas: 3 }, undefined, { namespace: "dev" }), {}, extra).allowed, true);
});

// ---- matchConditions (matchconditions/matcher.go) ------------------------------------------------

const mcCases: {
  name: string;
  conditions: { name: string; expression: string }[];
  failurePolicy: "Fail" | "Ignore";
  outcome: PolicyResult["outcome"];
  allowed: boolean;
}[] = [
  {
    name: "all true → validations run",
    conditions: [
      { name: "a", expression: "true" },
      { name: "b", expression: "object.spec.x == 1" },
    ],
    failurePolicy: "Fail",
    outcome: "fail",
    allowed: false,
  },
  {
    name: "one false → skipped",
    conditions: [
      { name: "a", expression: "true" },
      { name: "b", expression: "object.spec.x == 2" },
    ],
    failurePolicy: "Fail",
    outcome: "skip",
    allowed: true,
  },
  {
    name: "an error and a false → skipped (false wins over error)",
    conditions: [
      { name: "broken", expression: "object.spec.nope == 1" },
      { name: "no", expression: "false" },
    ],
    failurePolicy: "Fail",
    outcome: "skip",
    allowed: true,
  },
  {
    name: "an error, none false, Fail → denied",
    conditions: [
      { name: "broken", expression: "object.spec.nope == 1" },
      { name: "yes", expression: "true" },
    ],
    failurePolicy: "Fail",
    outcome: "error",
    allowed: false,
  },
  {
    name: "an error, none false, Ignore → admitted",
    conditions: [
      { name: "broken", expression: "object.spec.nope == 1" },
      { name: "yes", expression: "true" },
    ],
    failurePolicy: "Ignore",
    outcome: "error",
    allowed: true,
  },
];

for (const c of mcCases) {
  test(`matchConditions: ${c.name}`, () => {
    const d = run1(
      { failurePolicy: c.failurePolicy, matchConditions: c.conditions, ...denyAll },
      pod({ x: 1 }),
    );
    assert.equal(d.allowed, c.allowed);
    assert.equal(only(d).outcome, c.outcome);
    if (c.outcome !== "fail")
      assert.deepEqual(
        only(d).violations.filter((v) => v.message === "no"),
        [],
      );
  });
}

test("matchConditions: the denial for an errored condition carries the CEL error as Kubernetes words it", {}, () => {
  const d = run1(
    { matchConditions: [{ name: "broken", expression: "object.spec.nope == 1" }], ...denyAll },
    pod(),
  );
  assert.deepEqual(
    d.status,
    DENIED("expression 'object.spec.nope == 1' resulted in error: no such key: nope"),
  );
});

// Not variables: the API server validates matchConditions with its stateless compiler
// (admissionregistration validation.go validateMatchConditionsExpression; compile/checking.test.ts).
test("matchConditions see request", () => {
  const d = run1(
    {
      matchConditions: [{ name: "not-admin", expression: "request.userInfo.username != 'admin'" }],
      ...denyAll,
    },
    pod({}, undefined, { userInfo: { username: "admin", groups: [] } }),
  );
  assert.equal(d.allowed, true);
  assert.equal(only(d).outcome, "skip");
});

// ---- variables ----------------------------------------------------------------------------------

test("variables: a variable that errors but is never used does not fail the policy", () => {
  const d = run1(
    {
      variables: [
        { name: "broken", expression: "object.spec.nope" },
        { name: "fine", expression: "object.spec.x" },
      ],
      validations: [{ expression: "variables.fine == 1" }],
    },
    pod({ x: 1 }),
  );
  assert.equal(d.allowed, true);
  assert.equal(only(d).outcome, "pass");
  assert.deepEqual(
    only(d)
      .trace.filter((s) => s.stage === "variable")
      .map((s) => s.name),
    ["fine"],
  );
});

test("variables: a used variable's error fails the expression that uses it (failurePolicy Fail)", () => {
  const d = run1(
    {
      variables: [{ name: "broken", expression: "object.spec.nope" }],
      validations: [{ expression: "variables.broken == 1" }],
    },
    pod(),
  );
  assert.equal(d.allowed, false);
  assert.equal(only(d).outcome, "error");
  assert.equal(only(d).errorKind, "runtime");
  assert.match(
    d.status?.message ?? "",
    /^ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'variables.broken == 1' resulted in error: .*no such key: nope/,
  );
});

// The API server's variableAccessor (staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/
// composition.go, Callback) returns a failed variable's error as `composited variable "<name>" fails
// to evaluate: <error>`, and a variable read through another is wrapped once per variable. Found by
// the Values fuzzer against a real kube-apiserver (test/kube/values.test.ts).
test("variables: a used variable's error is worded as Kubernetes' composition words it", () => {
  const status = (expression: string) =>
    run1(
      {
        variables: [
          { name: "broken", expression: "object.spec.nope" },
          { name: "outer", expression: "variables.broken + 1" },
        ],
        validations: [{ expression }],
      },
      pod(),
    ).status?.message;
  assert.equal(
    status("variables.broken == 1"),
    `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'variables.broken == 1' resulted in error: composited variable "broken" fails to evaluate: no such key: nope`,
  );
  assert.equal(
    status("variables.outer == 1"),
    `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'variables.outer == 1' resulted in error: composited variable "outer" fails to evaluate: composited variable "broken" fails to evaluate: no such key: nope`,
  );
});

test("variables: evaluated at most once however often they are used", () => {
  const d = run1(
    {
      variables: [{ name: "names", expression: "object.spec.containers.map(c, c.name)" }],
      validations: [
        { expression: "size(variables.names) > 0" },
        { expression: "variables.names.all(n, n != 'bad')" },
        {
          expression: "!('worse' in variables.names)",
          messageExpression: "'names: ' + variables.names.join(',')",
        },
      ],
    },
    pod({ containers: [{ name: "a" }, { name: "worse" }] }),
  );
  assert.equal(d.allowed, false);
  assert.deepEqual(d.status, DENIED("names: a,worse"));
  const steps = only(d).trace.filter((s) => s.stage === "variable");
  assert.deepEqual(
    steps.map((s) => s.name),
    ["names"],
  );
});

test("variables: each sees the ones before it", () => {
  const d = run1(
    {
      variables: [
        { name: "a", expression: "object.spec.x" },
        { name: "b", expression: "variables.a + 1" },
        { name: "c", expression: "variables.b * 10" },
      ],
      validations: [{ expression: "variables.c == 30", messageExpression: "'c is ' + string(variables.c)" }],
    },
    pod({ x: 2 }),
  );
  assert.equal(d.allowed, true);
  const d2 = run1(
    {
      variables: [
        { name: "a", expression: "object.spec.x" },
        { name: "b", expression: "variables.a + 1" },
        { name: "c", expression: "variables.b * 10" },
      ],
      validations: [{ expression: "variables.c == 30", messageExpression: "'c is ' + string(variables.c)" }],
    },
    pod({ x: 5 }),
  );
  assert.deepEqual(d2.status, DENIED("c is 60"));
});

// ---- failurePolicy for each kind of error --------------------------------------------------------

test("a compile error in a policy: Fail denies the requests it matches, and only those", () => {
  const text = yamlDocs(
    vap("p", { failurePolicy: "Fail", validations: [{ expression: "object.spec.x ==" }] }),
    vapBinding("b", "p"),
  );
  const d = validateText(text, pod());
  assert.equal(d.allowed, false);
  assert.equal(only(d).outcome, "error");
  assert.equal(only(d).errorKind, "compile");
  assert.match(d.status?.message ?? "", /^ValidatingAdmissionPolicy 'p' with binding 'b' denied request: /);
  const other = validateText(text, deploymentRequest(1));
  assert.equal(other.allowed, true);
  notEvaluated(other);
});

test('a compile error in a policy under Fail: the denial is 422 Invalid with a "compilation error: " message', {}, () => {
  const d = run1({ failurePolicy: "Fail", validations: [{ expression: "object.spec.x ==" }] }, pod());
  assert.equal(d.status?.code, 422);
  assert.equal(d.status?.reason, "Invalid");
  assert.match(
    d.status?.message ?? "",
    /^ValidatingAdmissionPolicy 'p' with binding 'b' denied request: compilation error: /,
  );
});

test("a compile error in a policy: Ignore admits", () => {
  const d = run1({ failurePolicy: "Ignore", validations: [{ expression: "object.spec.x ==" }] }, pod());
  assert.equal(d.allowed, true);
  assert.equal(only(d).outcome, "error");
  assert.equal(only(d).errorKind, "compile");
});

test("a compile error in one validation under Ignore: the other validations are still enforced", {}, () => {
  const d = run1(
    {
      failurePolicy: "Ignore",
      validations: [{ expression: "object.spec.x ==" }, { expression: "false", message: "still enforced" }],
    },
    pod(),
  );
  assert.equal(d.allowed, false);
  assert.deepEqual(d.status, DENIED("still enforced"));
});

test("a runtime error under Fail denies with the CEL error", () => {
  const d = run1({ failurePolicy: "Fail", validations: [{ expression: "object.spec.nope == 1" }] }, pod());
  assert.deepEqual(
    d.status,
    DENIED("expression 'object.spec.nope == 1' resulted in error: no such key: nope"),
  );
  assert.equal(only(d).errorKind, "runtime");
});

test("a runtime error under Ignore admits, but a failing validation beside it still denies", () => {
  const ignoreOnly = run1(
    { failurePolicy: "Ignore", validations: [{ expression: "object.spec.nope == 1" }] },
    pod(),
  );
  assert.equal(ignoreOnly.allowed, true);
  assert.deepEqual(ignoreOnly.warnings, []);
  const withFailure = run1(
    {
      failurePolicy: "Ignore",
      validations: [{ expression: "object.spec.nope == 1" }, { expression: "false", message: "plain no" }],
    },
    pod(),
  );
  assert.deepEqual(withFailure.status, DENIED("plain no"));
});

/** A list of n ints and an expression that walks it n² times: about 3n² cost units. */
const nested = "object.spec.xs.all(x, object.spec.xs.all(y, x + y >= 0))";
const ints = (n: number) => Array.from({ length: n }, (_, i) => i);

test("under the per-expression cost limit a nested comprehension runs to its value", () => {
  const d = run1({ validations: [{ expression: nested }] }, pod({ xs: ints(100) }));
  assert.equal(d.allowed, true);
  assert.ok(only(d).cost > 10_000, `cost ${only(d).cost}`);
});

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`over the per-expression cost limit (1,000,000) → failurePolicy ${failurePolicy}`, () => {
    const d = run1({ failurePolicy, validations: [{ expression: nested }] }, pod({ xs: ints(700) }));
    assert.equal(d.allowed, failurePolicy === "Ignore");
    assert.equal(only(d).errorKind, "cost");
    if (failurePolicy === "Fail")
      assert.deepEqual(
        d.status,
        DENIED(`expression '${nested}' resulted in error: operation cancelled: actual cost limit exceeded`),
      );
  });
}

// A variable's evaluation is its own call, as in Kubernetes' composition (each variable runs as its
// own program with its own per-call limit, its cost reported to the budget): reading a costly
// variable does not eat the reading expression's own per-call limit.
test("a variable evaluated inside an expression does not count against that expression's per-call limit", () => {
  const walkTwice = (n: number) =>
    run1(
      {
        failurePolicy: "Fail",
        variables: [{ name: "walk", expression: nested }],
        validations: [{ expression: `variables.walk && ${nested}` }],
      },
      pod({ xs: ints(n) }),
    );
  const d = walkTwice(450);
  assert.equal(d.allowed, true, d.status?.message);
  // Both walks still count towards the policy's budget.
  assert.ok(only(d).cost > 1_100_000, `cost ${only(d).cost}`);
  // Its own walk over the limit still stops it.
  const over = walkTwice(700);
  assert.equal(over.allowed, false);
  assert.equal(only(over).errorKind, "cost");
  // A variable's own per-call limit is an error of its evaluation, wrapped as composition wraps it.
  assert.match(
    over.status?.message ?? "",
    /resulted in error: composited variable "walk" fails to evaluate: operation cancelled: actual cost limit exceeded$/,
  );
});

// An expression over its own per-call limit is that expression's error, and the next ones still
// run: Kubernetes stops a policy's expressions only when the budget is spent
// (admission/plugin/cel/activation.go, evaluation of one expression; condition.go ForInput).
// Found by the Values fuzzer against a real kube-apiserver (test/kube/values.test.ts).
test("a validation over its per-call limit fails alone: the validations after it still run", () => {
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      validations: [{ expression: nested }, { expression: "object.spec.nope == 1" }],
    }),
    vapBinding("b", "p"),
  );
  // With a trace the validations run one by one; without, as the policy's generated sequence.
  for (const trace of [true, false]) {
    const d = validateText(text, pod({ xs: ints(700) }), { trace });
    assert.deepEqual(
      only(d).violations.map((v) => [v.expressionIndex, v.message]),
      [
        [0, `expression '${nested}' resulted in error: operation cancelled: actual cost limit exceeded`],
        [1, "expression 'object.spec.nope == 1' resulted in error: no such key: nope"],
      ],
      `trace: ${trace}`,
    );
  }
});

/** The evaluation ran `count` steps of `stage`, the last of which ran out of budget. */
function assertRanOutAt(d: AdmissionDecision, stage: string, count: number): void {
  const steps = only(d).trace.filter((s) => s.stage === stage);
  assert.equal(steps.length, count);
  assert.equal(
    steps.at(-1)?.error,
    "validation failed due to running out of cost budget, no further validation rules will be run",
  );
}

// Thirteen expressions of about 0.88M each: each is under the per-call limit, the twelfth runs out.
// About a second of evaluation: computed once for the two tests that read it.
let overBudgetDecision: AdmissionDecision | undefined;
const overBudget = (): AdmissionDecision => {
  overBudgetDecision ??= run1(
    { failurePolicy: "Fail", validations: Array.from({ length: 13 }, () => ({ expression: nested })) },
    pod({ xs: ints(540) }),
  );
  return overBudgetDecision;
};

test("over the policy's total cost budget (10,000,000) → failurePolicy Fail denies", () => {
  const d = overBudget();
  assert.equal(d.allowed, false);
  assert.equal(only(d).errorKind, "cost");
  // It stopped at the budget: no further validation was run after the one that ran out.
  assertRanOutAt(d, "validation", 12);
  assert.ok(only(d).cost > 9_000_000, `cost ${only(d).cost}`);
});

test("over the policy's total cost budget: the denial is the API server's bare budget message", {}, () => {
  assert.equal(
    overBudget().status?.message,
    "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: validation failed due to running out of cost budget, no further validation rules will be run",
  );
});

// matchConditions have a budget of their own, as in Kubernetes (RuntimeCELCostBudgetMatchConditions,
// 2,500,000), and what they spend is not taken from the validations' budget.
test("matchConditions run on their own budget of 2,500,000 → Fail denies when it runs out", () => {
  const d = run1(
    {
      failurePolicy: "Fail",
      matchConditions: ["a", "b", "c"].map((name) => ({ name, expression: nested })),
      validations: [{ expression: "true" }],
    },
    pod({ xs: ints(540) }),
  );
  assert.equal(d.allowed, false);
  assert.equal(only(d).errorKind, "cost");
  assertRanOutAt(d, "matchCondition", 3);
});

test("what matchConditions spend is not taken from the validations' budget", () => {
  // 0.88M in the gate, then eleven validations of 0.88M: 9.6M, under the validations' 10M.
  const d = run1(
    {
      failurePolicy: "Fail",
      matchConditions: [{ name: "walk", expression: nested }],
      validations: Array.from({ length: 11 }, () => ({ expression: nested })),
    },
    pod({ xs: ints(540) }),
  );
  assert.equal(d.allowed, true, d.status?.message);
  assert.ok(only(d).cost > 10_000_000, `cost ${only(d).cost}`);
});

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`a deadline already passed, long comprehension → failurePolicy ${failurePolicy}`, () => {
    const set = yamlDocs(
      vap("p", { failurePolicy, validations: [{ expression: "object.spec.xs.all(x, x >= 0)" }] }),
      vapBinding("b", "p"),
    );
    const d = validateText(set, pod({ xs: ints(5000) }), { deadline: performance.now() - 1 });
    assert.equal(d.allowed, failurePolicy === "Ignore");
    assert.equal(only(d).errorKind, "timeout");
  });
}

test("a deadline already passed, nested comprehension of short lists → Fail denies", {}, () => {
  const text = yamlDocs(
    vap("p", { failurePolicy: "Fail", validations: [{ expression: nested }] }),
    vapBinding("b", "p"),
  );
  const d = validateText(text, pod({ xs: ints(300) }), { deadline: performance.now() - 1 });
  assert.equal(d.allowed, false);
  assert.equal(only(d).errorKind, "timeout");
});

// ---- params ------------------------------------------------------------------------------------

const replicaLimitPolicy = (spec: Doc = {}) =>
  vap("p", {
    paramKind: { apiVersion: "rules.example.com/v1", kind: "ReplicaLimit" },
    validations: [
      {
        expression: "object.spec.replicas <= params.maxReplicas",
        messageExpression:
          "'at most ' + string(params.maxReplicas) + ' replicas (' + params.metadata.name + ')'",
      },
    ],
    ...spec,
  });

const replicaLimit = (
  name: string,
  namespace: string | undefined,
  maxReplicas: number,
  labels: Record<string, string> = {},
) => ({
  apiVersion: "rules.example.com/v1",
  kind: "ReplicaLimit",
  metadata: { name, ...(namespace ? { namespace } : {}), labels },
  maxReplicas,
});

test("params by name and namespace", () => {
  const text = yamlDocs(
    replicaLimitPolicy(),
    vapBinding("b", "p", {
      paramRef: { name: "limit", namespace: "limits", parameterNotFoundAction: "Deny" },
    }),
    replicaLimit("limit", "limits", 3),
    replicaLimit("limit", "default", 100),
  );
  const d = validateText(text, pod({ replicas: 4 }));
  assert.deepEqual(d.status, DENIED("at most 3 replicas (limit)"));
  assert.equal(only(d).param, "limits/limit");
  assert.equal(validateText(text, pod({ replicas: 3 })).allowed, true);
});

test("params by name without a namespace: looked up in the request's namespace", () => {
  const text = yamlDocs(
    replicaLimitPolicy(),
    vapBinding("b", "p", { paramRef: { name: "limit", parameterNotFoundAction: "Deny" } }),
    replicaLimit("limit", "team-a", 2),
    replicaLimit("limit", "team-b", 10),
  );
  const a = validateText(text, pod({ replicas: 5 }, undefined, { namespace: "team-a" }));
  assert.deepEqual(a.status, DENIED("at most 2 replicas (limit)"));
  assert.equal(only(a).param, "team-a/limit");
  const b = validateText(text, pod({ replicas: 5 }, undefined, { namespace: "team-b" }));
  assert.equal(b.allowed, true);
  assert.equal(only(b).param, "team-b/limit");
});

test("params by selector: one evaluation per selected param", () => {
  const text = yamlDocs(
    replicaLimitPolicy(),
    vapBinding("b", "p", {
      paramRef: { selector: { matchLabels: { tier: "web" } }, parameterNotFoundAction: "Deny" },
    }),
    replicaLimit("small", "default", 2, { tier: "web" }),
    replicaLimit("large", "default", 8, { tier: "web" }),
    replicaLimit("other", "default", 1, { tier: "db" }),
  );
  const d = validateText(text, pod({ replicas: 5 }));
  assert.deepEqual(
    d.results.map((r) => [r.param, r.outcome]),
    [
      ["default/small", "fail"],
      ["default/large", "pass"],
    ],
  );
  assert.deepEqual(d.status, DENIED("at most 2 replicas (small)"));
});

test("a ConfigMap as params", () => {
  const text = yamlDocs(
    vap("p", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      validations: [
        {
          expression: "object.spec.replicas <= int(params.data.maxReplicas)",
          messageExpression: "'replicas must be at most ' + params.data.maxReplicas",
        },
      ],
    }),
    vapBinding("b", "p", {
      paramRef: { name: "replica-limit", namespace: "default", parameterNotFoundAction: "Deny" },
    }),
    configMapDoc("replica-limit", "default", { maxReplicas: "4" }),
  );
  assert.deepEqual(validateText(text, pod({ replicas: 5 })).status, DENIED("replicas must be at most 4"));
  assert.equal(validateText(text, pod({ replicas: 4 })).allowed, true);
});

const missingParamCases: { action: "Deny" | "Allow"; failurePolicy: "Fail" | "Ignore"; allowed: boolean }[] =
  [
    { action: "Deny", failurePolicy: "Fail", allowed: false },
    { action: "Deny", failurePolicy: "Ignore", allowed: true },
    { action: "Allow", failurePolicy: "Fail", allowed: true },
  ];

for (const c of missingParamCases) {
  test(`missing params, parameterNotFoundAction ${c.action}, failurePolicy ${c.failurePolicy} → ${c.allowed ? "admitted" : "denied"}`, () => {
    const text = yamlDocs(
      replicaLimitPolicy({ failurePolicy: c.failurePolicy }),
      vapBinding("b", "p", {
        paramRef: { name: "absent", namespace: "default", parameterNotFoundAction: c.action },
      }),
    );
    const d = validateText(text, pod({ replicas: 1 }));
    assert.equal(d.allowed, c.allowed);
    const r = only(d);
    if (c.action === "Allow") assert.equal(r.outcome, "skip");
    else assert.equal(r.errorKind, "param-not-found");
  });
}

test("missing params by selector with parameterNotFoundAction Deny → denied", () => {
  const text = yamlDocs(
    replicaLimitPolicy(),
    vapBinding("b", "p", {
      paramRef: { selector: { matchLabels: { tier: "none" } }, parameterNotFoundAction: "Deny" },
    }),
    replicaLimit("small", "default", 2, { tier: "web" }),
  );
  const d = validateText(text, pod({ replicas: 1 }));
  assert.equal(d.allowed, false);
  assert.equal(only(d).errorKind, "param-not-found");
});

test("missing params with Deny: the denial is Kubernetes' config error, 422 Invalid", {}, () => {
  const text = yamlDocs(
    replicaLimitPolicy(),
    vapBinding("b", "p", {
      paramRef: { name: "absent", namespace: "default", parameterNotFoundAction: "Deny" },
    }),
  );
  const d = validateText(text, pod({ replicas: 1 }));
  assert.deepEqual(
    d.status,
    DENIED(
      "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    ),
  );
});

test("a policy with paramKind and a binding without paramRef is evaluated with params null", {}, () => {
  const text = yamlDocs(
    vap("p", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      validations: [{ expression: "params == null || object.spec.replicas <= int(params.data.max)" }],
    }),
    vapBinding("b", "p"),
  );
  const d = validateText(text, pod({ replicas: 100 }));
  assert.equal(d.allowed, true);
  assert.equal(only(d).outcome, "pass");
});

// ---- admission configuration resources are never evaluated ---------------------------------------

test("a request for a ValidatingAdmissionPolicy object is never evaluated", () => {
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"] }],
      },
      ...denyAll,
    }),
    vapBinding("b", "p"),
  );
  const request = podRequest(
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "x" },
    },
    {
      kind: { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingAdmissionPolicy" },
      resource: {
        group: "admissionregistration.k8s.io",
        version: "v1",
        resource: "validatingadmissionpolicies",
      },
      namespace: "",
      name: "x",
    },
  );
  const d = validateText(text, request);
  assert.equal(d.allowed, true);
  assert.deepEqual(d.results, []);
  // The same wildcard policy does deny an ordinary object.
  assert.equal(validateText(text, pod()).allowed, false);
});

// ---- the request variable and oldObject ----------------------------------------------------------

test("request and oldObject are visible: an UPDATE may not lower replicas", () => {
  const spec = {
    validations: [
      {
        expression: "request.operation != 'UPDATE' || object.spec.replicas >= oldObject.spec.replicas",
        messageExpression: "request.userInfo.username + ' may not scale down'",
      },
    ],
  };
  const update = pod({ replicas: 1 }, undefined, {
    operation: "UPDATE",
    oldObject: podObject({ replicas: 3 }),
  });
  assert.deepEqual(run1(spec, update).status, DENIED("alice may not scale down"));
  assert.equal(run1(spec, pod({ replicas: 1 })).allowed, true);
});

test("oldObject is null on CREATE", () => {
  const d = run1({ validations: [{ expression: "oldObject == null" }] }, pod());
  assert.equal(d.allowed, true);
});

test("the request's objects are read as JSON where they are: ints are ints, and nothing is converted in place", () => {
  const text = yamlDocs(
    vap("p", {
      validations: [
        { expression: "object.spec.replicas + 1 == 4 && type(object.spec.replicas) == int" },
        { expression: "object.spec.ratio == 0.5 && object.spec.ports.all(p, p > 0 && type(p) == int)" },
      ],
    }),
    vapBinding("b", "p"),
  );
  const request = pod({ replicas: 3, ratio: 0.5, ports: [80, 443] });
  const before = JSON.stringify(request);
  const d = validateText(text, request);
  assert.equal(d.allowed, true, JSON.stringify(d.results));
  assert.deepEqual(
    d.results.map((r) => r.outcome),
    ["pass"],
  );
  assert.equal(JSON.stringify(request), before, "the request must come out as it went in");
  assert.equal(validateText(text, pod({ replicas: 3.5, ratio: 0.5, ports: [80, 443] })).allowed, false);
});

// ---- the trace ---------------------------------------------------------------------------------

test("trace: off, the decision and cost are the same and no step is recorded; explaining records anyway", () => {
  const text = yamlDocs(
    vap("p", {
      variables: [{ name: "n", expression: "object.spec.x + 1" }],
      validations: [{ expression: "variables.n < 2", messageExpression: "'n is ' + string(variables.n)" }],
    }),
    vapBinding("b", "p"),
  );
  const request = pod({ x: 5 });
  const on = validateText(text, request);
  const off = validateText(text, request, { trace: false });
  assert.deepEqual(
    only(on).trace.map((s) => s.stage),
    ["variable", "validation", "messageExpression"],
  );
  assert.deepEqual(only(off).trace, []);
  assert.equal(off.allowed, false);
  assert.deepEqual(off.status, on.status);
  assert.equal(off.status?.message, DENIED("n is 6").message);
  assert.equal(only(off).cost, only(on).cost);
  const explained = validateText(text, request, { trace: false, explain: true });
  assert.deepEqual(
    only(explained).trace.map((s) => [s.stage, s.value]),
    [
      ["variable", 6],
      ["validation", false],
      ["messageExpression", "n is 6"],
    ],
  );
});

// ---- the request's variables, built for the policies that read them ---------------------------

test("each request variable reaches the one expression of its policy that reads it, wherever that stands", () => {
  // The engine builds `request`, `namespaceObject` and the authorizer only for policies whose
  // expressions read them (CompiledPolicy.needs). Each policy here reads one of them in one place
  // only, so a place the compiler failed to count would see null and give another answer.
  const text = yamlDocs(
    vap("in-variable", {
      variables: [{ name: "user", expression: "request.userInfo.username" }],
      validations: [{ expression: "variables.user == 'bob'", message: "variable saw the user" }],
    }),
    vapBinding("b1", "in-variable"),
    vap("in-match-condition", {
      matchConditions: [{ name: "ns", expression: "namespaceObject.metadata.name == 'default'" }],
      validations: [{ expression: "false", message: "match condition saw the namespace" }],
    }),
    vapBinding("b2", "in-match-condition"),
    vap("in-message", {
      validations: [{ expression: "false", messageExpression: "'user ' + request.userInfo.username" }],
    }),
    vapBinding("b3", "in-message"),
    vap("in-audit-annotation", {
      validations: [{ expression: "true" }],
      auditAnnotations: [{ key: "op", valueExpression: "request.operation" }],
    }),
    vapBinding("b4", "in-audit-annotation"),
    vap("in-authorizer", {
      validations: [{ expression: "authorizer.requestResource.check('get').allowed()" }],
    }),
    vapBinding("b5", "in-authorizer"),
    namespaceDoc("default"),
  );
  const d = validateText(text, pod({}, undefined, { userInfo: { username: "bob", groups: [] } }));
  const byPolicy = new Map(d.results.map((r) => [r.policy, r]));
  assert.equal(byPolicy.get("in-variable")?.outcome, "pass");
  assert.equal(
    byPolicy.get("in-match-condition")?.violations[0]?.message,
    "match condition saw the namespace",
  );
  assert.equal(byPolicy.get("in-message")?.violations[0]?.message, "user bob");
  assert.deepEqual(byPolicy.get("in-audit-annotation")?.auditAnnotations, {
    "in-audit-annotation/op": "CREATE",
  });
  // No authorizer backend here: the check fails with the authorizer's own error, not a null's.
  assert.match(byPolicy.get("in-authorizer")?.reason ?? "", /authorizer is not available/);
});

// The API server builds `request` with runtime.DefaultUnstructuredConverter, which drops the
// AdmissionRequest fields tagged omitempty when they are empty (k8s.io/api/admission/v1/types.go:
// name, namespace; k8s.io/apiserver/pkg/admission/plugin/cel/condition.go CreateAdmissionRequest and
// convertObjectToUnstructured): on a cluster-scoped request `request.namespace` is no such key, and a
// messageExpression reading it fails. Found by test/kube/decisions.test.ts against kube-apiserver.
test("request.namespace and request.name are absent, not empty, when the request has none", () => {
  const rules = [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"] }];
  const spec = {
    matchConstraints: { resourceRules: rules },
    validations: [
      {
        expression: "!has(request.namespace) && !has(request.name)",
        messageExpression: "'in ' + request.namespace",
      },
    ],
  };
  const clusterRole = pod({}, undefined, {
    kind: { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRole" },
    resource: { group: "rbac.authorization.k8s.io", version: "v1", resource: "clusterroles" },
    namespace: "",
    name: "",
  });
  assert.equal(run1(spec, clusterRole).allowed, true, "has() is false for both");
  const named = run1(spec, { ...clusterRole, name: "viewer" });
  assert.equal(named.allowed, false);
  // The messageExpression fails on the missing key, so the API server's fallback text is used.
  assert.match(named.status?.message ?? "", /denied request: failed expression: !has\(request\.namespace\)/);
});
