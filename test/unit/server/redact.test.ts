/**
 * The debug trace's redaction (redact.ts, issue 37 item 8): which of a request's values are sensitive,
 * and how a trace is scrubbed of them. The served behaviour is in test/e2e/webhook-redact.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  REDACTED,
  redactPatch,
  redactRequest,
  redactResults,
  sensitiveOf,
} from "../../../src/adapters/server/redact.ts";
import type { PolicyResult } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";

function request(kind: string, object: Record<string, unknown>): AdmissionRequest {
  const gvk = { group: "", version: "v1", kind };
  return {
    uid: "u",
    kind: gvk,
    resource: { group: "", version: "v1", resource: `${kind.toLowerCase()}s` },
    name: "x",
    namespace: "default",
    operation: "CREATE",
    userInfo: { username: "alice" },
    object,
    oldObject: null,
  } as unknown as AdmissionRequest;
}

void test("a ConfigMap's data, env values at any depth and credential-named fields are sensitive; nothing else", () => {
  const s = sensitiveOf(
    request("ConfigMap", {
      metadata: { name: "cfg", labels: { app: "web" } },
      data: { color: "blue-ish", n: "7" },
      binaryData: { blob: "AAAA" },
      nested: { env: [{ name: "A", value: "env-a" }], apiToken: "tok-1" },
    }),
  );
  assert.equal(s.secret, false);
  assert.deepEqual([...s.values].sort(), ["7", "AAAA", "blue-ish", "env-a", "tok-1"]);
  // A Secret's contents, and each as JSON text writes it (for a last-applied-configuration annotation).
  assert.deepEqual(sensitiveOf(request("Secret", { data: { a: "YQ==" }, stringData: { b: 'say "hi"' } })), {
    secret: true,
    values: ["YQ==", 'say "hi"', 'say \\"hi\\"'],
  });
  // A Pod's `data` field (not a ConfigMap's) is not sensitive by itself.
  assert.deepEqual(sensitiveOf(request("Pod", { data: { a: "plain" } })).values, []);
});

void test("finding them is one pass, whatever the nesting depth", () => {
  let deep: unknown = { env: [{ value: "deep-value" }] };
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.deepEqual(sensitiveOf(request("Pod", { spec: deep })).values, ["deep-value"]);
});

void test("a sensitive value is replaced wherever it stands; a short one only where it is the whole string", () => {
  const result = {
    policy: "p",
    policyKind: "ValidatingAdmissionPolicy",
    outcome: "fail",
    reason: "saw blue-ish",
    violations: [],
    warnings: [],
    auditAnnotations: {},
    cost: 0,
    durationMs: 0,
    trace: [
      {
        stage: "validation",
        name: "0",
        expression: "object.metadata.labels.all(k, k != 'x')",
        cost: 0,
        value: ["7", "17", "a blue-ish b", { "blue-ish": 1 }],
      },
      {
        stage: "validation",
        name: "1",
        expression: "object.metadata.name == 'y'",
        cost: 0,
        value: false,
        because: ['object.metadata.name = "blue-ish"'],
        error: "no such key: blue-ish",
      },
    ],
  } as unknown as PolicyResult;
  const [r] = redactResults([result], { secret: false, values: ["blue-ish", "7"] });
  assert.equal(r?.reason, `saw ${REDACTED}`);
  assert.deepEqual(r?.trace[0]?.value, [REDACTED, "17", `a ${REDACTED} b`, { [REDACTED]: 1 }]);
  assert.deepEqual(r?.trace[1]?.because, [`object.metadata.name = "${REDACTED}"`]);
  assert.equal(r?.trace[1]?.error, `no such key: ${REDACTED}`);
  assert.equal(r?.trace[1]?.value, false);
});

void test("a recorded request (serve --record): a Secret's contents, sensitive values anywhere, credential-named members", () => {
  const secret = {
    ...request("Secret", {
      metadata: {
        name: "db",
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration": '{"stringData":{"pw":"s3cr\\"et-value"}}',
        },
      },
      stringData: { pw: 's3cr"et-value' },
      data: { token: "dG9rZW4tdmFsdWU=" },
      type: "Opaque",
    }),
    userInfo: {
      username: "alice",
      groups: [],
      extra: { "authentication.kubernetes.io/credential-id": ["X509SHA256=abc"], scopes: ["read"] },
    },
  } as AdmissionRequest;
  const out = redactRequest(secret);
  assert.deepEqual(out.object?.stringData, { pw: REDACTED });
  assert.deepEqual(out.object?.data, { token: REDACTED });
  assert.equal(out.object?.type, "Opaque");
  const text = JSON.stringify(out);
  assert.ok(!text.includes("s3cr") && !text.includes("dG9rZW4"), text);
  // Extra values stay lists, as the AdmissionReview decoder requires (replay decodes the recording).
  assert.deepEqual(out.userInfo.extra, {
    "authentication.kubernetes.io/credential-id": [REDACTED],
    scopes: ["read"],
  });
  // The request given is left as it was.
  assert.deepEqual(secret.object?.stringData, { pw: 's3cr"et-value' });

  const pod = request("Pod", {
    metadata: { name: "web" },
    spec: { containers: [{ name: "app", env: [{ name: "DB", value: "env-secret-1" }] }] },
  });
  const redacted = redactRequest(pod);
  assert.ok(!JSON.stringify(redacted).includes("env-secret-1"));
  assert.equal(JSON.stringify(redacted.object?.metadata), JSON.stringify({ name: "web" }));
  // A patch: a credential-named member's value, and a sensitive value anywhere in another.
  const s = sensitiveOf(pod);
  assert.deepEqual(
    redactPatch(
      [
        { op: "add", path: "/spec/apiToken", value: "abc" },
        { op: "add", path: "/metadata/annotations", value: { copy: "env-secret-1 here" } },
        { op: "remove", path: "/spec/x" },
      ],
      s,
    ),
    [
      { op: "add", path: "/spec/apiToken", value: REDACTED },
      { op: "add", path: "/metadata/annotations", value: { copy: `${REDACTED} here` } },
      { op: "remove", path: "/spec/x" },
    ],
  );
});
