/**
 * Members named after Object.prototype's properties are ordinary JSON: a ConfigMap may have a
 * `__proto__` data key (Kubernetes allows [-._a-zA-Z0-9]+), a custom resource a `constructor`
 * field, an impersonating user a `__proto__` extra. The webhook must review such objects like any
 * other: a 400 would make the API server fail the call and, under failurePolicy Fail, refuse a
 * valid write.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { deploymentReview, postReview, startTestWebhook, tempDir } from "../helpers/webhook.ts";

const TIMEOUT = { timeout: 30_000 };

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: odd-keys.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: ["", "example.com"]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["configmaps", "widgets"]
  validations:
    - expression: "!has(object.data) || object.data.__proto__ == 'ok'"
      messageExpression: "'data.__proto__ is ' + object.data.__proto__"
    - expression: "!has(object.spec) || object.spec.constructor.prototype.replicas <= 3"
      messageExpression: "'constructor.prototype.replicas is ' + string(object.spec.constructor.prototype.replicas)"
    - expression: "request.userInfo.extra.__proto__ == ['impersonated']"
      message: "the __proto__ extra is not ['impersonated']"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: odd-keys-binding
spec:
  policyName: odd-keys.example.com
  validationActions: [Deny]
`;

const CONFIGMAPS = { group: "", version: "v1", kind: "ConfigMap", resource: "configmaps" };
const WIDGETS = { group: "example.com", version: "v1", kind: "Widget", resource: "widgets" };

/** A review whose object and userInfo carry the given JSON text, parsed as the API server's bytes would be. */
function review(resource: typeof CONFIGMAPS, objectJson: string): Record<string, unknown> {
  const body = deploymentReview({ resource, object: JSON.parse(objectJson) as Record<string, unknown> });
  const request = body.request as Record<string, unknown>;
  request.userInfo = JSON.parse('{"username":"bob","groups":[],"extra":{"__proto__":["impersonated"]}}');
  return body;
}

void test("members named __proto__ and constructor are reviewed as members", TIMEOUT, async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "odd-keys.yaml"), POLICY);
  const { port, ca } = await startTestWebhook(t, { policies: [dir] });
  const cases = [
    [CONFIGMAPS, '{"metadata":{"name":"c"},"data":{"__proto__":"ok","a":"1"}}', true, ""],
    [CONFIGMAPS, '{"metadata":{"name":"c"},"data":{"__proto__":"bad"}}', false, "data.__proto__ is bad"],
    [WIDGETS, '{"metadata":{"name":"w"},"spec":{"constructor":{"prototype":{"replicas":2}}}}', true, ""],
    [
      WIDGETS,
      '{"metadata":{"name":"w"},"spec":{"constructor":{"prototype":{"replicas":5}}}}',
      false,
      "constructor.prototype.replicas is 5",
    ],
  ] as const;
  for (const [resource, object, allowed, message] of cases) {
    const body = review(resource, object);
    // JSON.stringify writes own members named __proto__; the key must be on the wire.
    assert.ok(JSON.stringify(body).includes('"__proto__"'));
    const reply = await postReview(port, ca, "/validate", body);
    assert.equal(reply.response.allowed, allowed, `${object}: ${reply.http.body}`);
    if (!allowed) assert.match(String(reply.response.status?.message), new RegExp(`${message}$`));
  }
});
