/**
 * `celgate check --static-manifests DIR`: the pre-flight for KEP-5793's staticManifestsDir. Each
 * rule follows the API server's loaders (k8s.io/apiserver/pkg/admission/plugin/manifest/loader.go:
 * direct-child .yaml/.yml/.json files, empty files skipped; .../policy/manifest/loader/loader.go and
 * .../webhook/manifest/loader/loader.go: the .static.k8s.io suffix, unique names, no paramKind or
 * paramRef, bindings to policies in the set, url-only webhooks; strict decoding) and the
 * "Manifest-Based Admission Control" reference page, whose examples are the valid cases here.
 */
import assert from "node:assert/strict";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { cli, tempTree } from "../cli/fake-io.ts";

async function dir(t: TestContext, files: Record<string, string>): Promise<string> {
  const d = await tempTree(files);
  t.after(() => rm(d, { recursive: true, force: true }));
  return d;
}

// kubernetes/website content/en/examples/access/manifest-admission-control/deny-privileged-policy.yaml
const DENY_PRIVILEGED = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "example-deny-privileged.static.k8s.io"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["pods"]
  validations:
  - expression: >-
      !object.spec.containers.exists(c,
      has(c.securityContext) && has(c.securityContext.privileged) &&
      c.securityContext.privileged == true)
    message: "Privileged containers are not allowed"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "example-deny-privileged-binding.static.k8s.io"
spec:
  policyName: "example-deny-privileged.static.k8s.io"
  validationActions:
  - Deny
  matchResources:
    namespaceSelector:
      matchExpressions:
      - key: "kubernetes.io/metadata.name"
        operator: NotIn
        values: ["kube-system"]
`;

// .../list-format-policy.yaml
const LIST_FORMAT = `apiVersion: v1
kind: List
items:
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicy
  metadata:
    name: "example-require-labels.static.k8s.io"
  spec:
    failurePolicy: Fail
    matchConstraints:
      resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["pods"]
    validations:
    - expression: >-
        has(object.metadata.labels) &&
        'app.kubernetes.io/name' in object.metadata.labels
      message: "All pods must have the 'app.kubernetes.io/name' label"
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicyBinding
  metadata:
    name: "example-require-labels-binding.static.k8s.io"
  spec:
    policyName: "example-require-labels.static.k8s.io"
    validationActions:
    - Deny
`;

// .../validating-webhook.yaml
const WEBHOOK = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: "example-security-webhook.static.k8s.io"
webhooks:
- name: "security.platform.example.com"
  clientConfig:
    url: "https://security-webhook.platform.example.com:443/validate"
    caBundle: "<base64-encoded-CA-bundle>"
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE", "UPDATE"]
    resources: ["pods"]
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
`;

async function check(d: string, ...more: string[]) {
  return cli(["check", "--static-manifests", d, ...more]);
}

void test("the reference page's examples pass: a policy directory, a List, a webhook directory", async (t) => {
  const policies = await dir(t, {
    "deny-privileged.yaml": DENY_PRIVILEGED,
    "require-labels.yml": LIST_FORMAT,
    "empty.yaml": "",
    "notes.txt": "not read: the API server reads .yaml, .yml and .json only",
    "sub/ignored.yaml": "not read: subdirectories are ignored",
  });
  const r = await check(policies);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(
    r.stdout,
    "static manifests for the ValidatingAdmissionPolicy plugin: 3 files, 2 ValidatingAdmissionPolicys, 2 ValidatingAdmissionPolicyBindings, 0 problems\n",
  );
  const webhooks = await dir(t, { "security.json": JSON.stringify((await import("yaml")).parse(WEBHOOK)) });
  const w = await check(webhooks, "-o", "json");
  assert.equal(w.code, 0, w.stdout);
  const report = JSON.parse(w.stdout) as { plugin: string; objects: Record<string, number>; errors: number };
  assert.equal(report.plugin, "ValidatingAdmissionWebhook");
  assert.deepEqual(report.objects, { ValidatingWebhookConfiguration: 1 });
  assert.equal(report.errors, 0);
});

/** Runs one bad directory and returns its error lines. */
async function errors(t: TestContext, files: Record<string, string>): Promise<string[]> {
  const d = await dir(t, files);
  const r = await check(d);
  assert.equal(r.code, 1, r.stdout);
  return r.stdout
    .split("\n")
    .filter((l) => l.includes(": error: "))
    .map((l) => l.slice(d.length + 1));
}

void test("names must end in .static.k8s.io, a binding's policyName too, and be unique per kind", async (t) => {
  const plain = DENY_PRIVILEGED.replaceAll(".static.k8s.io", ".example.com");
  assert.deepEqual(await errors(t, { "a.yaml": plain }), [
    'a.yaml:4:9: error: metadata.name: ValidatingAdmissionPolicy name "example-deny-privileged.example.com" must end with ".static.k8s.io" [PE_FIELD_VALUE]',
    'a.yaml:23:9: error: metadata.name: ValidatingAdmissionPolicyBinding name "example-deny-privileged-binding.example.com" must end with ".static.k8s.io" [PE_FIELD_VALUE]',
    'a.yaml:25:15: error: spec.policyName: spec.policyName "example-deny-privileged.example.com" must end with ".static.k8s.io" [PE_FIELD_VALUE]',
  ]);
  const twice = await errors(t, { "a.yaml": DENY_PRIVILEGED, "b.yaml": DENY_PRIVILEGED });
  assert.equal(twice.length, 2, twice.join("\n"));
  assert.match(
    twice[0] ?? "",
    /^b\.yaml:4:9: error: metadata\.name: duplicate ValidatingAdmissionPolicy name "example-deny-privileged\.static\.k8s\.io" \(first at .*a\.yaml:4:9\): the API server would not start \[PE_DUPLICATE\]$/,
  );
});

void test("strict decoding: an unknown field and a field given twice are errors", async (t) => {
  const unknown = DENY_PRIVILEGED.replace(
    "  failurePolicy: Fail\n",
    "  failurePolicy: Fail\n  failurPolicy: Ignore\n",
  );
  assert.deepEqual(await errors(t, { "a.yaml": unknown }), [
    'a.yaml:7:3: error: spec.failurPolicy: unknown field "failurPolicy" (did you mean "failurePolicy"?) (strict decoding) [PE_FIELD_VALUE]',
  ]);
  const twice = DENY_PRIVILEGED.replace(
    "  failurePolicy: Fail\n",
    "  failurePolicy: Fail\n  failurePolicy: Ignore\n",
  );
  const e = await errors(t, { "a.yaml": twice });
  assert.equal(e.length, 1, e.join("\n"));
  assert.match(e[0] ?? "", /^a\.yaml:7:3: error: Map keys must be unique \[PE_YAML_SYNTAX\]$/);
  const webhookField = WEBHOOK.replace("  sideEffects: None\n", "  sideEffects: None\n  timeout: 5\n");
  assert.deepEqual(await errors(t, { "w.yaml": webhookField }), [
    'w.yaml:17:12: error: webhooks[0].timeout: unknown field "timeout" (strict decoding) [PE_FIELD_VALUE]',
  ]);
});

void test("no paramKind, no paramRef, no binding to a policy outside the directory", async (t) => {
  const params = DENY_PRIVILEGED.replace(
    "  failurePolicy: Fail\n",
    "  failurePolicy: Fail\n  paramKind: { apiVersion: v1, kind: ConfigMap }\n",
  ).replace(
    "  validationActions:\n",
    "  paramRef: { name: limits, namespace: default, parameterNotFoundAction: Deny }\n  validationActions:\n",
  );
  assert.deepEqual(await errors(t, { "a.yaml": params }), [
    "a.yaml:7:14: error: spec.paramKind: spec.paramKind is not supported for static manifests: they cannot reference objects of the API [PE_FIELD_VALUE]",
    "a.yaml:27:13: error: spec.paramRef: spec.paramRef is not supported for static manifests [PE_FIELD_VALUE]",
  ]);
  const orphan = DENY_PRIVILEGED.slice(DENY_PRIVILEGED.indexOf("---\n") + 4);
  assert.deepEqual(await errors(t, { "binding.yaml": orphan }), [
    'binding.yaml:6:15: error: spec.policyName: binding references policy "example-deny-privileged.static.k8s.io", which does not exist in the manifest directory [PE_UNKNOWN_POLICY]',
  ]);
});

void test("webhooks call a url, never a service", async (t) => {
  const service = WEBHOOK.replace(
    '    url: "https://security-webhook.platform.example.com:443/validate"\n',
    "    service: { namespace: platform, name: security, path: /validate }\n",
  );
  assert.deepEqual(await errors(t, { "w.yaml": service }), [
    "w.yaml:8:14: error: webhooks[0].clientConfig.service: clientConfig.service is not supported for static manifests (the service network may not be up when the API server starts); use clientConfig.url [PE_FIELD_VALUE]",
  ]);
  const http = WEBHOOK.replace("https://", "http://");
  assert.deepEqual(await errors(t, { "w.yaml": http }), [
    "w.yaml:8:10: error: webhooks[0].clientConfig.url: 'https' is the only allowed URL scheme [PE_FIELD_VALUE]",
  ]);
});

void test("one plugin's kinds per directory, only admissionregistration.k8s.io/v1, only admission kinds", async (t) => {
  const mixed = await errors(t, { "a.yaml": DENY_PRIVILEGED, "b.yaml": WEBHOOK });
  assert.equal(mixed.length, 1, mixed.join("\n"));
  assert.match(
    mixed[0] ?? "",
    /^b\.yaml:2:7: error: kind: a ValidatingWebhookConfiguration is for the ValidatingAdmissionWebhook plugin, but this directory is for ValidatingAdmissionPolicy \(first at .*a\.yaml:2\): each plugin's staticManifestsDir holds only its own kinds \[PE_UNKNOWN_KIND\]$/,
  );
  const beta = DENY_PRIVILEGED.replace(
    "admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n",
    "admissionregistration.k8s.io/v1beta1\nkind: ValidatingAdmissionPolicy\n",
  );
  const b = await errors(t, { "a.yaml": beta });
  assert.match(
    b[0] ?? "",
    /^a\.yaml:1:13: error: apiVersion: static manifests are read only as admissionregistration\.k8s\.io\/v1; got "admissionregistration\.k8s\.io\/v1beta1" \[PE_UNKNOWN_KIND\]$/,
  );
  const configmap = await errors(t, {
    "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x.static.k8s.io }\n",
  });
  assert.match(configmap[0] ?? "", /^a\.yaml:2:7: error: kind: v1 ConfigMap cannot be a static manifest/);
});

void test("an expression that does not compile is an error, as the API server's validation makes it", async (t) => {
  const broken = DENY_PRIVILEGED.replace(
    "c.securityContext.privileged == true)",
    "c.securityContext.privileged == true",
  );
  const e = await errors(t, { "a.yaml": broken });
  assert.equal(e.length, 1, e.join("\n"));
  assert.match(
    e[0] ?? "",
    // Where cel-go reports a missing ')': at the end of the multi-line expression, not its first line.
    /^a\.yaml:17:42: error: spec\.validations\[0\]\.expression: Syntax error: missing '\)' at '<EOF>' \[PE_CEL_PARSE\]$/,
  );
});

void test("--static-manifests takes no PATH, and a directory that cannot be read is exit 2", async (t) => {
  const d = await dir(t, { "a.yaml": DENY_PRIVILEGED });
  const withPath = await cli(["check", "--static-manifests", d, d]);
  assert.equal(withPath.code, 2);
  assert.match(withPath.stderr, /--static-manifests DIR checks one directory: give no PATH with it/);
  const missing = await cli(["check", "--static-manifests", join(d, "nowhere")]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--static-manifests .*nowhere: ENOENT/);
  const empty = join(d, "empty");
  await mkdir(empty);
  const none = await cli(["check", "--static-manifests", empty]);
  assert.equal(none.code, 0);
  assert.match(none.stderr, /holds no \.yaml, \.yml or \.json file/);
});
