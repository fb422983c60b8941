/**
 * Audit annotations as the API server publishes them: kubernetes staging/src/k8s.io/apiserver/pkg/
 * admission/plugin/policy/validating/dispatcher.go (auditAnnotationCollector: per policy, the values
 * its bindings and params give a key, duplicates dropped, joined with ", "; the value cut at
 * maxAuditAnnotationValueLength bytes; publishValidationFailureAnnotation) and admission/attributes.go
 * (AddAnnotation refuses to overwrite a key with another value), with the cases of
 * validating/admission_test.go TestAuditAnnotations.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  configMapDoc,
  podObject,
  podRequest,
  validateText,
  vap,
  vapBinding,
  yamlDocs,
} from "../../helpers/engine.ts";

const FAILURE_KEY = "validation.policy.admission.k8s.io/validation_failure";

test("TestAuditAnnotations: one policy through three bindings; distinct values joined with ', ', a repeated one once", () => {
  const text = yamlDocs(
    vap("denypolicy.example.com", {
      failurePolicy: "Fail",
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      validations: [{ expression: "true" }],
      auditAnnotations: [
        // string(): an audit annotation must be typed string or null (compile.go ReturnTypes), params is dyn.
        { key: "example-key", valueExpression: "string(params.data.value)" },
        { key: "excluded-key", valueExpression: "null" },
      ],
    }),
    ...["", "2", "3"].map((n) =>
      vapBinding(`denybinding${n}.example.com`, "denypolicy.example.com", {
        paramRef: {
          name: `replicas-test${n}.example.com`,
          namespace: "default",
          parameterNotFoundAction: "Deny",
        },
      }),
    ),
    configMapDoc("replicas-test.example.com", "default", { value: "normal-value" }),
    configMapDoc("replicas-test2.example.com", "default", { value: "special-value" }),
    configMapDoc("replicas-test3.example.com", "default", { value: "normal-value" }),
  );
  const d = validateText(text, podRequest(podObject()));
  assert.equal(d.allowed, true);
  assert.deepEqual(d.auditAnnotations, {
    "denypolicy.example.com/example-key": "normal-value, special-value",
  });
});

test("TestAuditAnnotations: an annotation that fails under Fail denies, whatever the binding's actions", () => {
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      validations: [{ expression: "true" }],
      auditAnnotations: [
        { key: "ok", valueExpression: "'fine'" },
        { key: "error-key", valueExpression: "string(object.spec.nope)" },
      ],
    }),
    vapBinding("b", "p", { validationActions: ["Audit"] }),
  );
  const d = validateText(text, podRequest(podObject()));
  assert.equal(d.allowed, false);
  assert.match(
    d.status?.message ?? "",
    /^ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'string\(object\.spec\.nope\)' resulted in error: /,
  );
  // The annotation that did evaluate is still published.
  assert.equal(d.auditAnnotations["p/ok"], "fine");
});

test("validation_failure: the first Audit failure only, as later ones cannot overwrite the key (attributes.go AddAnnotation)", () => {
  const text = yamlDocs(
    vap("first", { validations: [{ expression: "true" }, { expression: "false", message: "one" }] }),
    vapBinding("b1", "first", { validationActions: ["Audit"] }),
    vap("second", { validations: [{ expression: "false", message: "two" }] }),
    vapBinding("b2", "second", { validationActions: ["Warn", "Audit"] }),
  );
  const d = validateText(text, podRequest(podObject()));
  assert.equal(d.allowed, true);
  assert.deepEqual(JSON.parse(d.auditAnnotations[FAILURE_KEY] ?? "null"), [
    { message: "one", policy: "first", binding: "b1", expressionIndex: 1, validationActions: ["Audit"] },
  ]);
  assert.deepEqual(d.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'second' with binding 'b2': two",
  ]);
});

test("an audit annotation's value is cut at 10 KiB of UTF-8, a character cut in two becoming U+FFFD per byte", () => {
  const text = yamlDocs(
    vap("p", {
      validations: [{ expression: "true" }],
      auditAnnotations: [{ key: "k", valueExpression: "string(object.metadata.annotations.long)" }],
    }),
    vapBinding("b", "p"),
  );
  const withValue = (long: string) => {
    const pod = podObject();
    (pod.metadata as Record<string, unknown>).annotations = { long };
    return validateText(text, podRequest(pod)).auditAnnotations["p/k"];
  };
  assert.equal(withValue("a".repeat(10241)), "a".repeat(10240));
  // 'é' is two bytes: 10239 bytes of 'a', then an 'é' whose second byte falls beyond the cut.
  assert.equal(withValue(`${"a".repeat(10239)}é`), `${"a".repeat(10239)}\ufffd`);
  // '€' is three: with 10238 bytes before it, two of its bytes are kept, each one U+FFFD.
  assert.equal(withValue(`${"a".repeat(10238)}€b`), `${"a".repeat(10238)}\ufffd\ufffd`);
  assert.equal(withValue(`${"é".repeat(5120)}x`), "é".repeat(5120));
});
