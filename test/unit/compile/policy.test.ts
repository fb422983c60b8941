/**
 * Stage 2, policy text → compiled set: every expression compiled once, its result type checked, and
 * every problem reported with its field path and place in the file.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { test } from "node:test";
import { type CompiledPolicySet, compilePolicySet, EXTRAS_ANNOTATION } from "../../../src/compile/policy.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { engineFixture, map, mapBinding, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

function compileDocs(...docs: Doc[]): CompiledPolicySet {
  const { set, diagnostics } = parsePolicyText(yamlDocs(...docs), "policies.yaml");
  assert.deepEqual(diagnostics, [], "the text must parse; these tests are about compiling");
  return compilePolicySet(set);
}

const problems = (set: CompiledPolicySet) =>
  set.diagnostics.map((d) => [d.object?.name, d.code, d.path, d.message]);

const typeCases: { name: string; policy: Doc; path: string; code: string; message: string }[] = [
  {
    name: "a validation must be bool",
    policy: vap("p", { validations: [{ expression: "1 + 1" }] }),
    path: "spec.validations[0].expression",
    code: "PE_CEL_TYPE",
    message: "must evaluate to bool but got int",
  },
  {
    name: "a messageExpression must be string",
    policy: vap("p", { validations: [{ expression: "true", messageExpression: "1" }] }),
    path: "spec.validations[0].messageExpression",
    code: "PE_CEL_TYPE",
    message: "must evaluate to string but got int",
  },
  {
    name: "a matchCondition must be bool",
    policy: vap("p", {
      matchConditions: [{ name: "m", expression: "'yes'" }],
      validations: [{ expression: "true" }],
    }),
    path: "spec.matchConditions[0].expression",
    code: "PE_CEL_TYPE",
    message: "must evaluate to bool but got string",
  },
  {
    name: "an auditAnnotation must be string or null",
    policy: vap("p", {
      auditAnnotations: [{ key: "k", valueExpression: "1" }],
      validations: [{ expression: "true" }],
    }),
    path: "spec.auditAnnotations[0].valueExpression",
    code: "PE_CEL_TYPE",
    message: "must evaluate to one of [string null_type] but got int",
  },
  {
    name: "a JSONPatch mutation must be a list",
    policy: map("p", { mutations: [{ patchType: "JSONPatch", jsonPatch: { expression: "Object{}" } }] }),
    path: "spec.mutations[0].jsonPatch.expression",
    code: "PE_CEL_TYPE",
    message: "must evaluate to list(JSONPatch) but got Object",
  },
  {
    name: "an ApplyConfiguration mutation must be an Object",
    policy: map("p", {
      mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression: "[1]" } }],
    }),
    path: "spec.mutations[0].applyConfiguration.expression",
    code: "PE_CEL_TYPE",
    message: "must evaluate to Object but got list(int)",
  },
  {
    name: "a syntax error",
    policy: vap("p", { validations: [{ expression: "object.x ==" }] }),
    path: "spec.validations[0].expression",
    code: "PE_CEL_PARSE",
    // cel-go's words and place (parser/parser.go), as kube-apiserver returns them (issue 34).
    message:
      "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
  },
  {
    name: "an undeclared variable",
    policy: vap("p", { validations: [{ expression: "objekt.x == 1" }] }),
    path: "spec.validations[0].expression",
    code: "PE_CEL_UNKNOWN_IDENT",
    message: "undeclared reference to 'objekt' (in container '')",
  },
  {
    name: "an unknown function",
    policy: vap("p", { validations: [{ expression: "nope(1)" }] }),
    path: "spec.validations[0].expression",
    code: "PE_CEL_UNKNOWN_FUNCTION",
    message: "undeclared reference to 'nope' (in container '')",
  },
];

for (const c of typeCases) {
  test(`compile: ${c.name}`, () => {
    const set = compileDocs(c.policy);
    assert.deepEqual(problems(set), [["p", c.code, c.path, c.message]]);
    const d = set.diagnostics[0];
    assert.equal(d?.severity, "error");
    assert.equal(d?.location?.file, "policies.yaml");
  });
}

// Kubernetes accepts an expression only when its checked type is exactly one its field takes; dyn
// is not bool (admission/plugin/cel/compile.go CompileCELExpression: OutputType().IsExactType).
test("compile: a dyn-typed expression fails the result type check, as in the API server", () => {
  const set = compileDocs(
    vap("p", {
      validations: [{ expression: "object.spec.enabled", messageExpression: "object.spec.why" }],
      auditAnnotations: [{ key: "k", valueExpression: "object.spec.note" }],
    }),
  );
  assert.deepEqual(problems(set), [
    ["p", "PE_CEL_TYPE", "spec.validations[0].expression", "must evaluate to bool but got dyn"],
    ["p", "PE_CEL_TYPE", "spec.validations[0].messageExpression", "must evaluate to string but got dyn"],
    [
      "p",
      "PE_CEL_TYPE",
      "spec.auditAnnotations[0].valueExpression",
      "must evaluate to one of [string null_type] but got dyn",
    ],
  ]);
  // Converted, they pass.
  const ok = compileDocs(
    vap("p", {
      validations: [
        { expression: "object.spec.enabled == true", messageExpression: "string(object.spec.why)" },
      ],
      auditAnnotations: [{ key: "k", valueExpression: "string(object.spec.note)" }],
    }),
  );
  assert.deepEqual(ok.diagnostics, []);
});

test("compile: every problem of a policy is reported, not just the first, each at its own line", () => {
  const set = compileDocs(
    vap("p", {
      validations: [{ expression: "1" }, { expression: "true" }, { expression: "objekt" }],
    }),
  );
  assert.deepEqual(
    set.diagnostics.map((d) => [d.path, d.code]),
    [
      ["spec.validations[0].expression", "PE_CEL_TYPE"],
      ["spec.validations[2].expression", "PE_CEL_UNKNOWN_IDENT"],
    ],
  );
  const [first, second] = set.diagnostics;
  assert.ok(first?.location && second?.location);
  assert.ok(second.location.line > first.location.line, JSON.stringify([first.location, second.location]));
  // The policy is still compiled; only the bad expressions lack a program.
  const p = set.policies[0];
  assert.ok(p && p.kind === "ValidatingAdmissionPolicy");
  assert.deepEqual(
    p.validations.map((v) => v.expression.program !== undefined),
    [false, true, false],
  );
  assert.deepEqual(p.diagnostics, set.diagnostics);
});

test("compile: a variable sees the variables before it, not after it", () => {
  const set = compileDocs(
    vap("p", {
      variables: [
        { name: "a", expression: "variables.b" },
        { name: "b", expression: "1" },
        { name: "c", expression: "variables.b + 1" },
      ],
      validations: [{ expression: "variables.c == 2 && variables.a == 1" }],
    }),
  );
  // `variables` is a message type of the variables compiled so far (composition.go), so cel-go's
  // checker reports the later one as an undefined field.
  assert.deepEqual(problems(set), [
    ["p", "PE_CEL_UNKNOWN_IDENT", "spec.variables[0].expression", "undefined field 'b'"],
  ]);
});

test("compile: an unknown variable name is a compile error", () => {
  const set = compileDocs(
    vap("p", {
      variables: [{ name: "a", expression: "1" }],
      validations: [{ expression: "variables.z == 1" }],
    }),
  );
  assert.deepEqual(
    set.diagnostics.map((d) => [d.code, d.path]),
    [["PE_CEL_UNKNOWN_IDENT", "spec.validations[0].expression"]],
  );
});

test("compile: problems of several policies are all in the set's diagnostics, in policy order", () => {
  const set = compileDocs(
    vap("one", { validations: [{ expression: "1" }] }),
    vap("fine", { validations: [{ expression: "true" }] }),
    vap("two", { validations: [{ expression: "'s'" }] }),
  );
  assert.deepEqual(
    set.diagnostics.map((d) => d.object?.name),
    ["one", "two"],
  );
  assert.deepEqual(
    set.policies.map((p) => [p.name, p.diagnostics.length]),
    [
      ["one", 1],
      ["fine", 0],
      ["two", 1],
    ],
  );
});

test("compile: cel.bind is not in the Kubernetes environment unless the policy opts in", () => {
  const plain = compileDocs(vap("p", { validations: [{ expression: "cel.bind(x, 1, x == 1)" }] }));
  // Without the macro, cel.bind(...) is a call on an undeclared `cel` (cel-go's checker).
  assert.equal(plain.diagnostics[0]?.code, "PE_CEL_UNKNOWN_IDENT");
  assert.equal(plain.diagnostics[0]?.message, "undeclared reference to 'cel' (in container '')");
  const optIn = vap("p", { validations: [{ expression: "cel.bind(x, 1, x == 1)" }] });
  optIn.metadata = { name: "p", annotations: { [EXTRAS_ANNOTATION]: "bind" } };
  assert.deepEqual(compileDocs(optIn).diagnostics, []);
});

test("compile: an unknown extra in the annotation is reported", () => {
  const doc = vap("p", { validations: [{ expression: "true" }] });
  doc.metadata = { name: "p", annotations: { [EXTRAS_ANNOTATION]: "bind, warp" } };
  assert.deepEqual(problems(compileDocs(doc)), [
    [
      "p",
      "PE_FIELD_VALUE",
      `metadata.annotations.${EXTRAS_ANNOTATION}`,
      'unknown CEL extra "warp"; expected some of bind, math, base64',
    ],
  ]);
});

test("compile: bindings join their policies; policies nobody binds are listed as unbound", () => {
  const set = compileDocs(
    vap("bound", { validations: [{ expression: "true" }] }),
    vap("lonely", { validations: [{ expression: "true" }] }),
    map("m", {
      mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression: "Object{}" } }],
    }),
    vapBinding("b1", "bound"),
    vapBinding("b2", "bound", { validationActions: ["Warn"] }),
    mapBinding("mb", "m"),
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "prod" } },
  );
  assert.deepEqual(
    set.bindings.map((b) => [b.binding.name, b.policy.name, b.policy.kind]),
    [
      ["b1", "bound", "ValidatingAdmissionPolicy"],
      ["b2", "bound", "ValidatingAdmissionPolicy"],
      ["mb", "m", "MutatingAdmissionPolicy"],
    ],
  );
  assert.deepEqual(
    set.unbound.map((p) => p.name),
    ["lonely"],
  );
  assert.deepEqual(
    set.resources.map((r) => [r.kind, r.name]),
    [["Namespace", "prod"]],
  );
  // Both bindings share the one compiled policy.
  assert.equal(set.bindings[0]?.policy, set.bindings[1]?.policy);
});

test("compile: a ValidatingAdmissionPolicyBinding never binds a MutatingAdmissionPolicy of the same name", () => {
  const { set } = parsePolicyText(
    yamlDocs(
      map("same", {
        mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression: "Object{}" } }],
      }),
      vapBinding("b", "same"),
    ),
    "x.yaml",
  );
  const compiled = compilePolicySet(set);
  assert.deepEqual(compiled.bindings, []);
  assert.deepEqual(
    compiled.unbound.map((p) => p.name),
    ["same"],
  );
});

test("compile: a policy's compiled pieces keep their sources and defaults", () => {
  const set = compileDocs(
    vap("p", {
      variables: [{ name: "v", expression: "object.spec" }],
      matchConditions: [{ name: "m", expression: "true" }],
      validations: [
        { expression: "true", message: "m1" },
        { expression: "false", reason: "Forbidden", messageExpression: "'x'" },
      ],
      auditAnnotations: [{ key: "k", valueExpression: "'v'" }],
    }),
  );
  const p = set.policies[0];
  assert.ok(p && p.kind === "ValidatingAdmissionPolicy");
  assert.equal(p.failurePolicy, "Fail");
  assert.deepEqual(
    p.variables.map((v) => [v.name, v.expression.source, v.expression.path]),
    [["v", "object.spec", "spec.variables[0].expression"]],
  );
  assert.deepEqual(
    p.matchConditions.map((m) => [m.name, m.expression.source]),
    [["m", "true"]],
  );
  assert.deepEqual(
    p.validations.map((v) => [
      v.index,
      v.expression.source,
      v.message,
      v.messageExpression?.source,
      v.reason,
    ]),
    [
      [0, "true", "m1", undefined, "Invalid"],
      [1, "false", undefined, "'x'", "Forbidden"],
    ],
  );
  assert.deepEqual(
    p.auditAnnotations.map((a) => [a.key, a.expression.source]),
    [["k", "'v'"]],
  );
});

/** Fixtures the API server refuses, with why (each has a test of its own refusal). */
const REFUSED_FIXTURES: ReadonlyMap<string, string> = new Map([
  // cel-go's checker: `cond ? string : null`, string is not nullable (docs-examples.test.ts).
  ["vap-audit-annotations.yaml", "PE_CEL_UNKNOWN_FUNCTION"],
]);

test("compile: every engine fixture compiles without a problem, but for the documented refusals", () => {
  const dir = new URL("../../fixtures/engine/", import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
  assert.ok(files.length >= 8, files.join(", "));
  for (const f of files) {
    const { set, diagnostics } = parsePolicyText(engineFixture(f), f);
    assert.deepEqual(diagnostics, [], f);
    // The Kubernetes docs' examples name custom paramKinds without their CRDs: only that is said.
    const codes = compilePolicySet(set)
      .diagnostics.filter((d) => d.code !== "PE_PARAM_SCOPE")
      .map((d) => d.code);
    const refused = REFUSED_FIXTURES.get(f);
    assert.deepEqual(codes, refused === undefined ? [] : [refused], f);
  }
});

// policy_dispatcher.go CollectParams reads the param kind's scope from the REST mapping; offline a
// custom kind's scope comes from its CRD, and without one celgate says it assumed namespaced.
test("compile: a custom paramKind without its CustomResourceDefinition is a warning; with it, none", () => {
  const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  paramKind: {apiVersion: rules.example.com/v1, kind: Limit}
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}]
  validations: [{expression: "true"}]
`;
  const crd = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: limits.rules.example.com}
spec:
  group: rules.example.com
  scope: Cluster
  names: {kind: Limit, plural: limits}
  versions: [{name: v1, served: true, storage: true}]
`;
  const binding = (paramRef: string) => `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
spec:
  policyName: p
  validationActions: [Deny]
${paramRef}`;
  const bound = policy + binding("  paramRef: {name: l, parameterNotFoundAction: Deny}\n");
  const warned = compilePolicySet(parsePolicyText(bound, "p.yaml").set).diagnostics;
  assert.deepEqual(
    warned.map((d) => [d.code, d.severity, d.path, d.location?.line]),
    [["PE_PARAM_SCOPE", "warning", "spec.paramKind", 5]],
  );
  assert.deepEqual(compilePolicySet(parsePolicyText(bound + crd, "p.yaml").set).diagnostics, []);
  // Only a binding's paramRef looks params up: a policy nothing binds, or bound without a
  // paramRef, assumes no scope, so there is nothing to warn about (issue 34).
  assert.deepEqual(compilePolicySet(parsePolicyText(policy, "p.yaml").set).diagnostics, []);
  assert.deepEqual(compilePolicySet(parsePolicyText(policy + binding(""), "p.yaml").set).diagnostics, []);
  // A built-in paramKind needs no CRD.
  const builtIn = policy.replace(
    "{apiVersion: rules.example.com/v1, kind: Limit}",
    "{apiVersion: v1, kind: ConfigMap}",
  );
  assert.deepEqual(compilePolicySet(parsePolicyText(builtIn, "p.yaml").set).diagnostics, []);
});

// kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/compile.go mustBuildEnvs, with the
// validating plugin's OptionalVariableDeclarations: `params` is declared only for a policy with a
// paramKind, and a messageExpression is compiled without `authorizer`.
test("compile: params only with a paramKind; no authorizer in a messageExpression", () => {
  const policy = (paramKind: string, validation: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
${paramKind}  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}]
  validations:
${validation}
`;
  const problems = (text: string) =>
    compilePolicySet(parsePolicyText(text, "p.yaml").set).diagnostics.map((d) => [d.path, d.message]);
  const withParams = "  paramKind: {apiVersion: v1, kind: ConfigMap}\n";
  assert.deepEqual(problems(policy("", `    - expression: "params == null"`)), [
    ["spec.validations[0].expression", "undeclared reference to 'params' (in container '')"],
  ]);
  assert.deepEqual(problems(policy(withParams, `    - expression: "params == null"`)), []);
  assert.deepEqual(
    problems(
      policy(
        "",
        `    - expression: "authorizer.path('/x').check('get').allowed()"
      messageExpression: "authorizer.path('/x').check('get').reason()"`,
      ),
    ),
    [["spec.validations[0].messageExpression", "undeclared reference to 'authorizer' (in container '')"]],
  );
});

test("compile: a structural error does not hide the policy's CEL errors; the API server reports both (validation.go)", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  failurePolicy: Bogus
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}]
  variables: [{name: v, expression: "object.metadata.name"}]
  validations:
  - expression: "variables.v == 'a' &&"
  - expression: "size(variables.v) > 1"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: m}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}]
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/x', value: nosuch}]"}
`;
  const parsed = parsePolicyText(text, "p.yaml");
  assert.deepEqual(
    parsed.diagnostics.map((d) => [d.code, d.path]),
    [
      ["PE_FIELD_VALUE", "spec.failurePolicy"],
      ["PE_MISSING_FIELD", "spec.reinvocationPolicy"],
    ],
  );
  const set = compilePolicySet(parsed.set);
  assert.deepEqual(set.policies, [], "neither policy is loaded");
  assert.deepEqual(
    set.diagnostics.map((d) => [d.code, d.severity, d.object?.name, d.path]),
    [
      ["PE_CEL_PARSE", "error", "p", "spec.validations[0].expression"],
      ["PE_CEL_UNKNOWN_IDENT", "error", "m", "spec.mutations[0].jsonPatch.expression"],
    ],
  );
});
