/**
 * The type checker wired into compiling a policy: each expression is checked in the environment the
 * API server gives it (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go, composition.go), with
 * cel-go's checker and the AST validators of environment/base.go, and its diagnostics are the compile
 * problems, in cel-go's words, at the faulty sub-expression's line and column of the file.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type CompiledPolicySet, compilePolicySet } from "../../../src/compile/policy.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { vap } from "../../helpers/engine.ts";
import { yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

function compileText(text: string, kubernetesVersion?: string): CompiledPolicySet {
  const { set, diagnostics } = parsePolicyText(text, "policies.yaml");
  assert.deepEqual(diagnostics, []);
  return compilePolicySet(set, kubernetesVersion === undefined ? {} : { kubernetesVersion });
}

const compileDocs = (...docs: Doc[]) => compileText(yamlDocs(...docs));

const problems = (set: CompiledPolicySet) => set.diagnostics.map((d) => [d.code, d.path, d.message]);

test("cel-go cel/validator.go homogeneous literals (environment/base.go, since 1.0): a map mixing string and dyn values", () => {
  const set = compileDocs(
    vap("p", {
      variables: [{ name: "m", expression: "object.spec.containers.map(c, {'path': 'x' + c.name, 'c': c})" }],
      validations: [{ expression: "true" }],
    }),
  );
  assert.deepEqual(problems(set), [
    ["PE_CEL_TYPE", "spec.variables[0].expression", "expected type 'string' but found 'dyn'"],
  ]);
  // The fix the bundled policies use: both values dyn.
  const fixed = compileDocs(
    vap("p", {
      variables: [
        { name: "m", expression: "object.spec.containers.map(c, {'path': dyn('x' + c.name), 'c': c})" },
      ],
      validations: [{ expression: "true" }],
    }),
  );
  assert.deepEqual(fixed.diagnostics, []);
});

test("compile.go: params is declared only when the policy has a paramKind", () => {
  const without = compileDocs(vap("p", { validations: [{ expression: "params.max > 1" }] }));
  assert.deepEqual(problems(without), [
    [
      "PE_CEL_UNKNOWN_IDENT",
      "spec.validations[0].expression",
      "undeclared reference to 'params' (in container '')",
    ],
  ]);
  const withKind = compileDocs(
    vap("p", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      validations: [{ expression: "params.max > 1" }],
    }),
  );
  assert.deepEqual(withKind.diagnostics, []);
});

test("composition.go: a variable is typed by its checked expression for the expressions after it", () => {
  const set = compileDocs(
    vap("p", {
      variables: [
        { name: "n", expression: "1" },
        { name: "names", expression: "['a', 'b']" },
      ],
      validations: [
        { expression: "variables.n + 'x' == 'y'" },
        { expression: "variables.names.exists(s, s.startsWith('a'))" },
      ],
    }),
  );
  assert.deepEqual(problems(set), [
    [
      "PE_CEL_UNKNOWN_FUNCTION",
      "spec.validations[0].expression",
      "found no matching overload for '_+_' applied to '(int, string)'",
    ],
  ]);
});

test("environment/base.go 1.29 ValidateDurationLiterals and ValidateRegexLiterals: bad constants are PE_CEL_INVALID", () => {
  const set = compileDocs(
    vap("p", {
      validations: [{ expression: "duration('1x') > duration('0s')" }, { expression: "'a'.matches('(')" }],
    }),
  );
  assert.deepEqual(
    set.diagnostics.map((d) => [d.code, d.path]),
    [
      ["PE_CEL_INVALID", "spec.validations[0].expression"],
      ["PE_CEL_INVALID", "spec.validations[1].expression"],
    ],
  );
  assert.match(set.diagnostics[0]?.message ?? "", /^invalid duration argument/);
  // The validators arrived in 1.29, so every release celgate models (1.30 on, whose new expressions
  // get 1.29's environment) runs them; before 1.29 (the checker's own tests) they did not.
  const oldest = compileText(
    yamlDocs(vap("p", { validations: [{ expression: "duration('1x') > duration('0s')" }] })),
    "1.30",
  );
  assert.deepEqual(
    oldest.diagnostics.map((d) => d.code),
    ["PE_CEL_INVALID"],
  );
});

test("every problem is located at its sub-expression: the line and column in the file, inside a block scalar", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods"]
  validations:
    - expression: |
        object.spec.replicas > 1 &&
          object.metadata.name.startsWith(1)
    - expression: "object.x == 1 && \\"a\\" + 1 == 'b'"
`;
  const set = compileText(text);
  assert.deepEqual(
    set.diagnostics.map((d) => [d.location?.line, d.location?.column, d.message]),
    [
      // The call, at its '(' (cel-go parser.go VisitMemberCall), on the block's second line.
      [15, 42, "found no matching overload for 'startsWith' applied to 'dyn.(int)'"],
      // The '+', past the escaped quotes of a double-quoted scalar.
      [16, 43, "found no matching overload for '_+_' applied to '(string, int)'"],
    ],
  );
  assert.match(set.diagnostics[0]?.detail ?? "", /^ERROR: <input>:2:34: /);
});

const deploymentPolicy = (expressions: string[]) =>
  vap("p", {
    matchConstraints: {
      resourceRules: [
        { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
      ],
    },
    validations: expressions.map((expression) => ({ expression })),
  });

const schemaTyped = (...docs: Doc[]) => {
  const { set, diagnostics } = parsePolicyText(yamlDocs(...docs), "policies.yaml");
  assert.deepEqual(diagnostics, []);
  return compilePolicySet(set, { schemaTyping: true });
};

test("schema typing (typechecking.go): with object typed as the one built-in kind matched, faults are warnings", () => {
  const exprs = [
    "object.spec.replicas + 'x' == 'y'",
    "has(object.spec.containres)",
    // (`size() > '1'` is an error without the schema too: size() is int whatever its receiver.)
    "object.metadata.labels.size() > object.metadata.name",
    "object.spec.replicas <= 5",
  ];
  const set = schemaTyped(deploymentPolicy(exprs));
  assert.deepEqual(
    set.diagnostics.map((d) => [d.severity, d.path, d.message]),
    [
      [
        "warning",
        "spec.validations[0].expression",
        "found no matching overload for '_+_' applied to '(int, string)'",
      ],
      ["warning", "spec.validations[1].expression", "undefined field 'containres'"],
      [
        "warning",
        "spec.validations[2].expression",
        "found no matching overload for '_>_' applied to '(int, string)'",
      ],
    ],
  );
  assert.match(set.diagnostics[0]?.detail ?? "", /\(with object typed as Deployment from its schema\)$/);
  // Without schema typing (serve, eval) the same policy compiles clean: the API server accepts it.
  const { set: parsed } = parsePolicyText(yamlDocs(deploymentPolicy(exprs)), "policies.yaml");
  assert.deepEqual(compilePolicySet(parsed).diagnostics, []);
});

test("schema typing: no warning where the expression is right (metadata.namespace, a Quantity's map)", () => {
  const set = schemaTyped(
    deploymentPolicy([
      "object.metadata.namespace != 'kube-system'",
      "object.spec.template.spec.containers.all(c, has(c.resources.limits))",
    ]),
  );
  assert.deepEqual(set.diagnostics, []);
});

test("schema typing: kinds without a schema, wildcards or several kinds leave object dyn", () => {
  const wild = vap("p", {
    matchConstraints: {
      resourceRules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["CREATE"], resources: ["*"] }],
    },
    validations: [{ expression: "has(object.spec.containres)" }],
  });
  assert.deepEqual(schemaTyped(wild).diagnostics, []);
});

// kubernetes pkg/apis/admissionregistration/validation/validation.go validateMatchConditionsExpression:
// a policy's matchConditions are validated by the stateless compiler, which declares no `variables`,
// so the API server refuses a matchCondition that names one; validations still see them.
test("a matchCondition cannot name variables; a validation can", () => {
  const set = compileDocs(
    vap("p", {
      variables: [{ name: "v", expression: "true" }],
      matchConditions: [{ name: "m", expression: "variables.v" }],
      validations: [{ expression: "variables.v" }],
    }),
  );
  assert.deepEqual(problems(set), [
    [
      "PE_CEL_UNKNOWN_IDENT",
      "spec.matchConditions[0].expression",
      "undeclared reference to 'variables' (in container '')",
    ],
  ]);
});
