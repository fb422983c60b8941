/**
 * Where `authorizer` is bound. The API server evaluates a validating policy's validations with the
 * authorizer, and its messageExpressions and audit annotations without it
 * (k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go: `optionalVars` carries
 * the Authorizer, `expressionOptionalVars` and the audit annotations' options do not), each filter
 * evaluating the policy's variables afresh in its own activation (plugin/cel/composition.go). So a
 * variable that makes an authorizer check is an error when a messageExpression reads it, and the
 * message falls back to `message` (found against a real kube-apiserver: test/kube/connected.test.ts).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AuthorizerBackend } from "../../../src/cel/library/authz.ts";
import { contextFromSet } from "../../../src/engine/context.ts";
import { decide } from "../../../src/engine/decision.ts";
import { validate } from "../../../src/engine/validating.ts";
import { compileText, podObject, podRequest, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

const ALLOW_ALL: AuthorizerBackend = { authorize: () => ({ decision: "allow", reason: "allowed here" }) };

function run(spec: Record<string, unknown>, actions: string[] = ["Deny"]) {
  const set = compileText(yamlDocs(vap("p", spec), vapBinding("b", "p", { validationActions: actions })));
  const ctx = contextFromSet(set, { authorizer: ALLOW_ALL, assumeNamespaces: true });
  return decide(validate(set, podRequest(podObject()), ctx, { deadline: Date.now() + 60_000 }));
}

void test("a messageExpression reading a variable that checks the authorizer falls back to the message", () => {
  const d = run(
    {
      variables: [
        { name: "check", expression: "authorizer.group('').resource('pods').check('get')" },
        { name: "plain", expression: "'plain value'" },
      ],
      validations: [
        // The validation itself sees the authorizer: it is false because the check is allowed.
        {
          expression: "!variables.check.allowed()",
          messageExpression: "'reason: ' + variables.check.reason()",
          message: "fallback",
        },
        { expression: "false", messageExpression: "'still ' + variables.plain" },
      ],
    },
    ["Warn"],
  );
  assert.equal(d.allowed, true);
  assert.deepEqual(d.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': fallback",
    "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': still plain value",
  ]);
});

void test("an audit annotation reading a variable that checks the authorizer is an error", () => {
  const d = run({
    variables: [{ name: "check", expression: "authorizer.group('').resource('pods').check('get')" }],
    validations: [{ expression: "variables.check.allowed()" }],
    auditAnnotations: [{ key: "who", valueExpression: "variables.check.reason()" }],
  });
  const r = d.results[0];
  assert.equal(r?.outcome, "error", JSON.stringify(r));
  assert.equal(d.auditAnnotations?.["p/who"], undefined);
});
