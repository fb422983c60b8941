/**
 * cel-go's run-time error texts as they reach users, through the engine: in a denial under
 * failurePolicy Fail, in a warning, in an audit annotation's error (issue 26 item 8). The validator
 * wraps them as k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go does
 * ("expression '...' resulted in error: ..."); the texts inside are cel-go v0.26's.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { podObject, podRequest, validateText, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

const pod = (): AdmissionRequest => podRequest(podObject({ containers: [{ name: "app", image: "nginx" }] }));

function run1(spec: Doc, bindingSpec: Doc = {}): AdmissionDecision {
  return validateText(yamlDocs(vap("p", spec), vapBinding("b", "p", bindingSpec)), pod());
}

const denied = (message: string) => ({
  code: 422,
  reason: "Invalid",
  message: `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ${message}`,
});

// cel-go common/decls/decls.go MaybeNoSuchOverload, not the checker's "found no matching overload".
test("a dispatch failure at run time denies with cel-go's `no such overload: f(types)`", () => {
  const expression = "dyn(object.metadata.name) + 1 == 2";
  const d = run1({ failurePolicy: "Fail", validations: [{ expression }] });
  assert.equal(d.allowed, false);
  assert.deepEqual(
    d.status,
    denied(`expression '${expression}' resulted in error: no such overload: _+_(string, int)`),
  );
});

// cel-go common/types/list.go IndexOrError, through interpreter/attributes.go refQualify.
test("a list read with a key that is no index denies with cel-go's `unsupported index ...`", () => {
  const byName = "dyn(object.spec.containers).name == 'app'";
  assert.deepEqual(
    run1({ failurePolicy: "Fail", validations: [{ expression: byName }] }).status,
    denied(`expression '${byName}' resulted in error: unsupported index type 'string' in list`),
  );
  const byDouble = "object.spec.containers[dyn(0.5)].name == 'app'";
  const d = run1(
    { failurePolicy: "Fail", validations: [{ expression: byDouble }] },
    { validationActions: ["Warn"] },
  );
  assert.equal(d.allowed, true);
  assert.deepEqual(d.warnings, [
    `Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': expression '${byDouble}' resulted in error: unsupported index value 0.5 in list`,
  ]);
});

// interpreter/attributes.go resolutionError: a strict read of a scalar is `no such key`.
test("an audit annotation reading into a string denies under Fail with cel-go's `no such key`", () => {
  const d = run1({
    failurePolicy: "Fail",
    validations: [{ expression: "true" }],
    auditAnnotations: [{ key: "bad", valueExpression: "string(dyn(object.metadata.name).first)" }],
  });
  assert.equal(d.allowed, false);
  assert.deepEqual(
    d.status,
    denied("expression 'string(dyn(object.metadata.name).first)' resulted in error: no such key: first"),
  );
});

// interpreter/attributes.go refQualify: a presence test on null is false (issue 26 item 1).
test("has(oldObject.metadata) on a CREATE is false, not an error, so the policy admits", () => {
  const d = run1({
    failurePolicy: "Fail",
    validations: [
      { expression: "!has(oldObject.metadata) || oldObject.metadata.name == object.metadata.name" },
    ],
  });
  assert.equal(d.allowed, true);
});
