/**
 * The debug trace and secrets (issue 28 item 10): at `--log-level debug` every policy's trace is
 * logged with the values its expressions produced. By default the values of a Secret's review, and
 * of fields named like credentials in any object, are replaced by `[redacted]`; `--log-values`
 * (logValues) logs them as they are.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { namesCredential, REDACTED, redactValue } from "../../src/adapters/server/redact.ts";
import { CapturedLog, deploymentReview, postReview, startTestWebhook, tempDir } from "../helpers/webhook.ts";

const POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: secret-strength.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["secrets", "configmaps"]
  variables:
  - name: data
    expression: "object.kind == 'Secret' ? object.stringData : object.data"
  validations:
  - expression: "variables.data.all(k, variables.data[k].size() >= 12)"
    message: "every value has at least 12 characters"
  - expression: "!has(object.data) || !has(object.data.token) || object.data.token.startsWith('tok-')"
  - expression: "!has(object.data) || !has(object.data.color) || object.data.color != 'hunter2-color'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: secret-strength-binding
spec:
  policyName: secret-strength.example.com
  validationActions: [Deny]
`;

const CORE = (kind: string, resource: string) => ({ group: "", version: "v1", kind, resource });

function secretReview(): Record<string, unknown> {
  return deploymentReview({
    uid: "s",
    namespace: "default",
    resource: CORE("Secret", "secrets"),
    object: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db", namespace: "default" },
      stringData: { password: "hunter2-password", user: "hunter2-user" },
    },
  });
}

function configMapReview(): Record<string, unknown> {
  return deploymentReview({
    uid: "c",
    namespace: "default",
    resource: CORE("ConfigMap", "configmaps"),
    object: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cfg", namespace: "default" },
      data: { token: "hunter2-token-value", color: "hunter2-color" },
    },
  });
}

async function traces(t: Parameters<typeof startTestWebhook>[0], logValues: boolean): Promise<string> {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const log = new CapturedLog();
  const { port, ca } = await startTestWebhook(t, {
    policies: [dir],
    logLevel: "debug",
    logStream: log,
    logValues,
  });
  const secret = await postReview(port, ca, "/validate", secretReview());
  assert.equal(secret.response.allowed, true);
  const config = await postReview(port, ca, "/validate", configMapReview());
  assert.equal(config.response.allowed, false);
  const lines = log.lines.filter((l) => l.includes('"admission review trace"'));
  assert.equal(lines.length, 2, "one trace line per review");
  return lines.join("\n");
}

void test("by default the trace shows no Secret value and no credential-named field's value", async (t) => {
  const text = await traces(t, false);
  for (const secret of ["hunter2-password", "hunter2-user", "hunter2-token-value"])
    assert.ok(!text.includes(secret), `${secret} appears in the debug log`);
  assert.ok(text.includes(REDACTED));
  // What is not a credential stays, so the trace still explains.
  assert.ok(text.includes("hunter2-color"), "an ordinary field's value was redacted too");
  assert.match(text, /variables\.data\.all/);
});

void test("with logValues the trace shows the values as they are", async (t) => {
  const text = await traces(t, true);
  for (const value of ["hunter2-password", "hunter2-token-value", "hunter2-color"])
    assert.ok(text.includes(value), `${value} missing from the debug log`);
});

void test("names like credentials, and nothing else", () => {
  for (const name of [
    "password",
    "dbPassword",
    "client_secret",
    "token",
    "apiKey",
    "api-key",
    "private_key",
    "auth",
    "Authorization",
    ".dockerconfigjson",
    "credentials",
  ])
    assert.ok(namesCredential(name), name);
  for (const name of ["color", "replicas", "author", "authorizer", "key", "image", "name"])
    assert.ok(!namesCredential(name), name);
  assert.deepEqual(redactValue({ a: 1, nested: { password: "x", list: [{ token: "y", ok: "z" }] } }), {
    a: 1,
    nested: { password: REDACTED, list: [{ token: REDACTED, ok: "z" }] },
  });
});
