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

/**
 * Redaction follows values (issue 37 item 8): a ConfigMap's data, a Pod's env values and a Secret's
 * data, each a marker string, moved by expressions through map(), filter(), a string concatenation,
 * variables (one built from another) and a messageExpression, must not appear anywhere in the
 * debug log; before, only a Secret's review and credential-named fields were redacted, so the
 * ConfigMap's and the env's markers were logged as map() and the variables carried them.
 */
const MOVING = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: moves-values.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps", "pods", "secrets"]
  variables:
  - name: vals
    expression: "has(object.data) ? object.data.map(k, object.data[k]) : []"
  - name: joined
    expression: "variables.vals.map(v, 'v=' + v)"
  - name: envs
    expression: "has(object.spec) ? object.spec.containers.map(c, c.env.map(e, e.value)) : []"
  - name: flat
    expression: "variables.envs.map(l, l.join('|'))"
  validations:
  - expression: "!has(object.data) || object.data.filter(k, object.data[k].contains('-value-')).size() == 0"
  - expression: "variables.joined.all(j, j.size() < 5)"
    messageExpression: "'bad values: ' + variables.joined.join(', ')"
  - expression: "variables.flat.all(f, f.size() < 5)"
    messageExpression: "'bad env: ' + variables.flat.join(';')"
  - expression: "!has(object.spec) || object.spec.containers.all(c, c.env.all(e, e.value.size() < 5))"
  - expression: "!has(object.spec) || object.spec.containers.all(c, c.image == 'other')"
  - expression: "!has(object.spec) || object.spec.containers.map(c, c).size() == 0"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: moves-values-binding
spec:
  policyName: moves-values.example.com
  validationActions: [Deny]
`;

const MARKERS = {
  configMap: "cm-value-MARK3RQ1",
  env: "env-value-MARK3RQ2",
  secret: "secret-value-MARK3RQ3",
};

void test("redaction follows a ConfigMap's data and a Pod's env values through map, filter, concatenation, variables and messages", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), MOVING);
  const log = new CapturedLog();
  const { port, ca } = await startTestWebhook(t, { policies: [dir], logLevel: "debug", logStream: log });
  const pod = deploymentReview({
    uid: "p",
    namespace: "default",
    resource: CORE("Pod", "pods"),
    object: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "default", labels: { app: "web-visible" } },
      spec: {
        containers: [
          { name: "app", image: "registry.example.com/app:1", env: [{ name: "X", value: MARKERS.env }] },
        ],
      },
    },
  });
  const configMap = deploymentReview({
    uid: "c",
    namespace: "default",
    resource: CORE("ConfigMap", "configmaps"),
    object: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cfg", namespace: "default" },
      data: { color: MARKERS.configMap },
    },
  });
  const secret = deploymentReview({
    uid: "s",
    namespace: "default",
    resource: CORE("Secret", "secrets"),
    object: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db", namespace: "default" },
      data: { key: Buffer.from(MARKERS.secret).toString("base64") },
      stringData: { plain: MARKERS.secret },
    },
  });
  for (const review of [pod, configMap, secret]) {
    const reply = await postReview(port, ca, "/validate", review);
    assert.equal(reply.response.allowed, false, JSON.stringify(reply.response));
  }
  const traces = log.lines.filter((l) => l.includes('"admission review trace"'));
  assert.equal(traces.length, 3, "one trace line per review");
  const text = log.lines.join("\n");
  for (const [where, marker] of Object.entries(MARKERS))
    assert.ok(!text.includes(marker), `the ${where} marker appears in the debug log`);
  assert.ok(
    !text.includes(Buffer.from(MARKERS.secret).toString("base64")),
    "the Secret's base64 data appears",
  );
  // The trace still explains what is not sensitive.
  assert.ok(text.includes("registry.example.com/app:1"), "an ordinary value was redacted too");
  assert.ok(text.includes(REDACTED));
});
