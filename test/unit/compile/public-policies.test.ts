/**
 * Real public policies as compile fixtures (issue 25, "Must hold": everything the API server accepts
 * still compiles). Each file of test/fixtures/public-policies is a genuine
 * admissionregistration.k8s.io ValidatingAdmissionPolicy or MutatingAdmissionPolicy, copied unchanged
 * from the Kubernetes docs (kubernetes/website), from the VAPs Kyverno generates
 * (kyverno/kyverno's generate-validating-admission-policy conformance tests) or from
 * undistro/cel-playground's VAP test data, under a header naming its repository, path and commit.
 *
 * A file named `refused-*` is one the API server refuses at create time; it is pinned below with the
 * exact diagnostic, in cel-go's words, at the faulty sub-expression's line and column.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { type CompileOptions, compilePolicySet } from "../../../src/compile/policy.ts";
import type { Diagnostic } from "../../../src/errors.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";

const DIR = fileURLToPath(new URL("../../fixtures/public-policies/", import.meta.url));
const files = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .sort();
const accepted = files.filter((f) => !f.startsWith("refused-"));

/**
 * Kyverno's generated policies name their ClusterPolicy as owner without a uid, which Kyverno fills in
 * when it creates them: as written, the API server refuses them for that alone (apimachinery
 * ValidateOwnerReferences; the kube acceptance suite saw 1.36.3 and 1.37.2 do so, and
 * test/unit/policy/parse.test.ts pins it). Everything else about them is held to compile.
 */
const isOwnerUid = (d: Diagnostic) => /^metadata\.ownerReferences\[\d+\]\.uid$/.test(d.path ?? "");

function compileFile(file: string, options: CompileOptions = {}): readonly Diagnostic[] {
  const { set, diagnostics } = parsePolicyText(readFileSync(join(DIR, file), "utf8"), file);
  assert.deepEqual(
    diagnostics.filter((d) => !(file.startsWith("kyverno-") && isOwnerUid(d))),
    [],
    `${file} parses`,
  );
  assert.equal(set.policies.length, 1, `${file} holds one policy`);
  return compilePolicySet(set, options).diagnostics;
}

/** code, severity, field path, message, line, column: what a refusal is pinned by. */
const shape = (d: Diagnostic) => [
  d.code,
  d.severity,
  d.path,
  d.message,
  d.location?.line,
  d.location?.column,
];

const errors = (ds: readonly Diagnostic[]) => ds.filter((d) => d.severity === "error").map(shape);

test("public policies: every fixture names its repository, path and commit", () => {
  assert.ok(accepted.length >= 12, `a dozen or more accepted fixtures, found ${accepted.length}`);
  for (const file of files) {
    const header = readFileSync(join(DIR, file), "utf8").split("\n").slice(0, 4).join("\n");
    assert.match(header, /^# Source: [\w.-]+\/[\w.-]+,/, `${file} names its repository`);
    assert.match(header, /commit [0-9a-f]{40}/, `${file} names its commit`);
  }
});

for (const file of accepted) {
  test(`public policies: ${file} compiles as the API server accepts it (no error diagnostics)`, () => {
    assert.deepEqual(errors(compileFile(file)), []);
    // Schema typing (`check`) only ever adds warnings, as status.typeChecking does.
    assert.deepEqual(errors(compileFile(file, { schemaTyping: true })), []);
  });
}

test("public policies: the docs' typechecking.yaml is accepted, its unknown field a schema-typing warning", () => {
  // kubernetes/website docs/reference/access-authn-authz/validating-admission-policy.md "Type checking":
  // the API server creates the policy and reports `ERROR: <input>:1:7: undefined field 'replicas'` in
  // status.typeChecking.expressionWarnings (typechecking.go), so celgate warns and never refuses.
  const file = "k8s-website-typechecking.yaml";
  assert.deepEqual(compileFile(file), []);
  assert.deepEqual(compileFile(file, { schemaTyping: true }).map(shape), [
    [
      "PE_CEL_UNKNOWN_IDENT",
      "warning",
      "spec.validations[0].expression",
      "undefined field 'replicas'",
      31,
      26,
    ],
  ]);
});

test("public policies refused: startWith is no function (cel-go checker/checker.go resolveOverloadOrError)", () => {
  // cel-go places a receiver call's error at its open parenthesis (parser/parser.go VisitMemberCall).
  assert.deepEqual(errors(compileFile("refused-k8s-website-match-conditions.yaml")), [
    [
      "PE_CEL_UNKNOWN_FUNCTION",
      "error",
      "spec.validations[0].expression",
      "undeclared reference to 'startWith' (in container '')",
      26,
      50,
    ],
  ]);
});

test("public policies refused: a conditional of a map and null (cel-go checker/types.go internalIsAssignableNull)", () => {
  // The playground's own test quotes the API server's compiler: `<input>:1:47`, the `?` of the conditional.
  assert.deepEqual(errors(compileFile("refused-cel-playground-ternary-null.yaml")), [
    [
      "PE_CEL_UNKNOWN_FUNCTION",
      "error",
      "spec.variables[0].expression",
      "found no matching overload for '_?_:_' applied to '(bool, map(string, list(string)), null)'",
      21,
      66,
    ],
  ]);
});

// validation.go validateMatchConditionsExpression compiles matchConditions with the stateless compiler
// (no variable composition), so the API server refuses this policy.
test("public policies refused: a matchCondition reading variables (kubernetes pkg/apis/admissionregistration/validation/validation.go)", () => {
  assert.deepEqual(errors(compileFile("refused-cel-playground-match-condition-variable.yaml")), [
    [
      "PE_CEL_UNKNOWN_IDENT",
      "error",
      "spec.matchConditions[0].expression",
      "undeclared reference to 'variables' (in container '')",
      23,
      21,
    ],
  ]);
});
