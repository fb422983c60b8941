import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ADMISSION_V1,
  ADMISSION_V1BETA1,
  auditAnnotationKey,
  decodeAdmissionReview,
  encodeAdmissionReview,
  MAX_STATUS_MESSAGE_LENGTH,
  MAX_WARNING_LENGTH,
  MAX_WARNINGS_TOTAL_LENGTH,
  sanitizeWarnings,
} from "../../../src/adapters/admission/codec.ts";
import type { AdmissionDecision, JsonPatchOp } from "../../../src/engine/types.ts";

function review(overrides: Record<string, unknown> = {}, requestOverrides: Record<string, unknown> = {}) {
  return {
    apiVersion: ADMISSION_V1,
    kind: "AdmissionReview",
    request: {
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      resource: { group: "apps", version: "v1", resource: "deployments" },
      name: "web",
      namespace: "default",
      operation: "CREATE",
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" } },
      oldObject: null,
      dryRun: false,
      ...requestOverrides,
    },
    ...overrides,
  };
}

function decision(overrides: Partial<AdmissionDecision> = {}): AdmissionDecision {
  return { allowed: true, warnings: [], auditAnnotations: {}, results: [], cost: 0, ...overrides };
}

const DROP = Symbol("drop");
function without(key: string): Record<string, unknown> {
  return { [key]: DROP };
}
function strip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v === DROP ? undefined : v))) as T;
}

const badInputs: ReadonlyArray<readonly [string, unknown, string]> = [
  ["not an object", "hello", "body: expected a JSON object, got string"],
  ["array body", [], "body: expected a JSON object, got array"],
  ["null body", null, "body: expected a JSON object, got null"],
  ["kind missing", strip(review(without("kind"))), "kind: required"],
  [
    "kind wrong",
    review({ kind: "AdmissionRequest" }),
    'kind: expected "AdmissionReview", got "AdmissionRequest"',
  ],
  [
    "kind lower-case",
    review({ kind: "admissionreview" }),
    'kind: expected "AdmissionReview", got "admissionreview"',
  ],
  ["kind not a string", review({ kind: 3 }), 'kind: expected "AdmissionReview", got number'],
  ["apiVersion missing", strip(review(without("apiVersion"))), "apiVersion: required"],
  [
    "apiVersion unknown",
    review({ apiVersion: "v2" }),
    'apiVersion: expected admission.k8s.io/v1 or admission.k8s.io/v1beta1, got "v2"',
  ],
  [
    "apiVersion wrong case",
    review({ apiVersion: "Admission.k8s.io/v1" }),
    'apiVersion: expected admission.k8s.io/v1 or admission.k8s.io/v1beta1, got "Admission.k8s.io/v1"',
  ],
  ["request missing", strip(review(without("request"))), "request: required"],
  ["request null", review({ request: null }), "request: required"],
  ["request array", review({ request: [] }), "request: expected an object, got array"],
  ["uid missing", strip(review({}, without("uid"))), "request.uid: required"],
  ["uid empty", review({}, { uid: "" }), "request.uid: required"],
  ["uid number", review({}, { uid: 42 }), "request.uid: expected a string, got number"],
  ["UID wrong case only", strip(review({}, { ...without("uid"), UID: "x" })), "request.uid: required"],
  ["kind object missing", strip(review({}, without("kind"))), "request.kind: required"],
  [
    "kind object a string",
    review({}, { kind: "Deployment" }),
    "request.kind: expected an object, got string",
  ],
  ["kind.kind missing", review({}, { kind: { group: "", version: "v1" } }), "request.kind.kind: required"],
  [
    "kind.group a number",
    review({}, { kind: { group: 1, version: "v1", kind: "Pod" } }),
    "request.kind.group: expected a string, got number",
  ],
  [
    "resource.resource missing",
    review({}, { resource: { group: "", version: "v1" } }),
    "request.resource.resource: required",
  ],
  [
    "requestKind malformed",
    review({}, { requestKind: { version: "v1" } }),
    "request.requestKind.kind: required",
  ],
  // Every field of the nested objects names its own path (they are joined only on failure).
  [
    "kind.version missing",
    review({}, { kind: { group: "", kind: "Pod" } }),
    "request.kind.version: required",
  ],
  [
    "resource.version empty",
    review({}, { resource: { group: "", version: "", resource: "pods" } }),
    "request.resource.version: required",
  ],
  [
    "requestResource.group a boolean",
    review({}, { requestResource: { group: true, version: "v1", resource: "pods" } }),
    "request.requestResource.group: expected a string, got boolean",
  ],
  [
    "userInfo.uid a number",
    review({}, { userInfo: { username: "a", uid: 1 } }),
    "request.userInfo.uid: expected a string, got number",
  ],
  [
    "userInfo.extra a list",
    review({}, { userInfo: { username: "a", extra: [] } }),
    "request.userInfo.extra: expected an object or null, got array",
  ],
  [
    "subResource a number",
    review({}, { subResource: 1 }),
    "request.subResource: expected a string, got number",
  ],
  ["operation missing", strip(review({}, without("operation"))), "request.operation: required"],
  [
    "operation lower-case",
    review({}, { operation: "create" }),
    'request.operation: expected one of CREATE, UPDATE, DELETE, CONNECT, got "create"',
  ],
  [
    "operation a list",
    review({}, { operation: ["CREATE"] }),
    "request.operation: expected one of CREATE, UPDATE, DELETE, CONNECT, got array",
  ],
  [
    "userInfo a string",
    review({}, { userInfo: "alice" }),
    "request.userInfo: expected an object, got string",
  ],
  [
    "groups not a list",
    review({}, { userInfo: { username: "a", groups: "admins" } }),
    "request.userInfo.groups: expected a list of strings, got string",
  ],
  [
    "groups with a number",
    review({}, { userInfo: { username: "a", groups: ["x", 1] } }),
    "request.userInfo.groups[1]: expected a string, got number",
  ],
  [
    "username a number",
    review({}, { userInfo: { username: 7 } }),
    "request.userInfo.username: expected a string, got number",
  ],
  [
    "extra values not lists",
    review({}, { userInfo: { username: "a", extra: { scopes: "x" } } }),
    'request.userInfo.extra["scopes"]: expected a list of strings, got string',
  ],
  ["object an array", review({}, { object: [] }), "request.object: expected an object or null, got array"],
  ["object a string", review({}, { object: "{}" }), "request.object: expected an object or null, got string"],
  [
    "oldObject a number",
    review({}, { oldObject: 1 }),
    "request.oldObject: expected an object or null, got number",
  ],
  [
    "options a bool",
    review({}, { options: true }),
    "request.options: expected an object or null, got boolean",
  ],
  ["dryRun a string", review({}, { dryRun: "true" }), "request.dryRun: expected a boolean, got string"],
  ["name a number", review({}, { name: 1 }), "request.name: expected a string, got number"],
  ["namespace an object", review({}, { namespace: {} }), "request.namespace: expected a string, got object"],
];

for (const [label, body, reason] of badInputs) {
  test(`decode rejects: ${label}`, () => {
    const result = decodeAdmissionReview(body);
    assert.deepEqual(result, { ok: false, error: { status: 400, reason } });
  });
}

test("decode v1 keeps every field", () => {
  const body = review(
    {},
    {
      subResource: "scale",
      requestKind: { group: "autoscaling", version: "v1", kind: "Scale" },
      requestResource: { group: "apps", version: "v1", resource: "deployments" },
      requestSubResource: "scale",
      operation: "UPDATE",
      userInfo: { username: "admin", uid: "014f", groups: ["g"], extra: { "some-key": ["a", "b"] } },
      oldObject: { kind: "Deployment" },
      options: { kind: "UpdateOptions" },
      dryRun: true,
      unknownField: { ignored: true },
    },
  );
  const result = decodeAdmissionReview(body);
  assert.ok(result.ok);
  assert.equal(result.value.apiVersion, ADMISSION_V1);
  assert.deepEqual(result.value.request, {
    uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    resource: { group: "apps", version: "v1", resource: "deployments" },
    subResource: "scale",
    requestKind: { group: "autoscaling", version: "v1", kind: "Scale" },
    requestResource: { group: "apps", version: "v1", resource: "deployments" },
    requestSubResource: "scale",
    name: "web",
    namespace: "default",
    operation: "UPDATE",
    userInfo: { username: "admin", uid: "014f", groups: ["g"], extra: { "some-key": ["a", "b"] } },
    object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" } },
    oldObject: { kind: "Deployment" },
    dryRun: true,
    options: { kind: "UpdateOptions" },
  });
});

test("decode applies defaults for absent optional fields", () => {
  const body = {
    apiVersion: ADMISSION_V1BETA1,
    kind: "AdmissionReview",
    request: {
      uid: "u1",
      kind: { version: "v1", kind: "Pod" },
      resource: { version: "v1", resource: "pods" },
      operation: "DELETE",
      subResource: "",
    },
  };
  const result = decodeAdmissionReview(body);
  assert.ok(result.ok);
  assert.equal(result.value.apiVersion, ADMISSION_V1BETA1);
  assert.deepEqual(result.value.request, {
    uid: "u1",
    kind: { group: "", version: "v1", kind: "Pod" },
    resource: { group: "", version: "v1", resource: "pods" },
    name: "",
    namespace: "",
    operation: "DELETE",
    userInfo: { username: "", groups: [] },
    object: null,
    oldObject: null,
    dryRun: false,
    options: null,
  });
});

test("decode treats explicit nulls like absent fields", () => {
  const result = decodeAdmissionReview(
    review(
      {},
      { object: null, oldObject: null, options: null, dryRun: null, userInfo: null, requestKind: null },
    ),
  );
  assert.ok(result.ok);
  assert.equal(result.value.request.object, null);
  assert.equal(result.value.request.dryRun, false);
  assert.deepEqual(result.value.request.userInfo, { username: "", groups: [] });
  assert.equal("requestKind" in result.value.request, false);
});

for (const apiVersion of [ADMISSION_V1, ADMISSION_V1BETA1] as const) {
  test(`round trip ${apiVersion}: reply echoes apiVersion, kind and uid`, () => {
    const decoded = decodeAdmissionReview(review({ apiVersion }));
    assert.ok(decoded.ok);
    const { request } = decoded.value;
    const reply = encodeAdmissionReview(decoded.value.apiVersion, request.uid, decision(), {
      mutating: false,
      operation: request.operation,
    });
    assert.deepEqual(JSON.parse(JSON.stringify(reply)), {
      apiVersion,
      kind: "AdmissionReview",
      response: { uid: "705ab4f5-6393-11e8-b7cc-42010a800002", allowed: true },
    });
  });
}

const ops: readonly JsonPatchOp[] = [
  { op: "add", path: "/metadata/labels", value: { team: "a" } },
  { op: "replace", path: "/spec/replicas", value: 3 },
  { op: "remove", path: "/spec/paused" },
  { op: "move", from: "/a", path: "/b" },
];

test("mutating reply carries the patch as base64 JSON that decodes back to the ops", () => {
  const reply = encodeAdmissionReview(ADMISSION_V1, "u", decision({ patch: ops }), {
    mutating: true,
    operation: "CREATE",
  });
  assert.equal(reply.response.patchType, "JSONPatch");
  assert.ok(reply.response.patch !== undefined);
  assert.deepEqual(JSON.parse(Buffer.from(reply.response.patch, "base64").toString("utf8")), ops);
});

test("the seed's example patch encodes to the same operations", () => {
  const reply = encodeAdmissionReview(
    ADMISSION_V1,
    "u",
    decision({ patch: [{ op: "add", path: "/spec/replicas", value: 3 }] }),
    { mutating: true, operation: "UPDATE" },
  );
  const seed = "W3sib3AiOiAiYWRkIiwgInBhdGgiOiAiL3NwZWMvcmVwbGljYXMiLCAidmFsdWUiOiAzfV0=";
  assert.deepEqual(
    JSON.parse(Buffer.from(reply.response.patch ?? "", "base64").toString()),
    JSON.parse(Buffer.from(seed, "base64").toString()),
  );
});

const noPatchCases: ReadonlyArray<
  readonly [string, Partial<AdmissionDecision>, { mutating: boolean; operation: "CREATE" | "DELETE" }]
> = [
  ["validating reply", { patch: ops }, { mutating: false, operation: "CREATE" }],
  ["DELETE", { patch: ops }, { mutating: true, operation: "DELETE" }],
  ["empty patch", { patch: [] }, { mutating: true, operation: "CREATE" }],
  ["no patch", {}, { mutating: true, operation: "CREATE" }],
  [
    "denied",
    { allowed: false, patch: ops, status: { code: 403, reason: "Forbidden", message: "no" } },
    { mutating: true, operation: "CREATE" },
  ],
];

for (const [label, d, opts] of noPatchCases) {
  test(`no patch fields: ${label}`, () => {
    const reply = encodeAdmissionReview(ADMISSION_V1, "u", decision(d), opts);
    assert.equal("patch" in reply.response, false);
    assert.equal("patchType" in reply.response, false);
  });
}

test("denial: status with code, reason and a single-line message; allowed stays boolean", () => {
  const reply = encodeAdmissionReview(
    ADMISSION_V1,
    "u",
    decision({
      allowed: false,
      status: { code: 422, reason: "Invalid", message: "replicas too high\nsee policy\r\nfor details\t!" },
    }),
    { mutating: false, operation: "CREATE" },
  );
  assert.deepEqual(reply.response, {
    uid: "u",
    allowed: false,
    status: { code: 422, reason: "Invalid", message: "replicas too high see policy for details !" },
  });
});

test("denial without a status reads as 403 Forbidden; bad codes become 400", () => {
  const bare = encodeAdmissionReview(ADMISSION_V1, "u", decision({ allowed: false }), {
    mutating: false,
    operation: "CREATE",
  });
  assert.deepEqual(bare.response.status, { code: 403, reason: "Forbidden" });
  for (const code of [200, 0, 99.5, 600]) {
    const r = encodeAdmissionReview(
      ADMISSION_V1,
      "u",
      decision({ allowed: false, status: { code, reason: "Forbidden", message: "m" } }),
      { mutating: false, operation: "CREATE" },
    );
    assert.equal(r.response.status?.code, 400, `code ${code}`);
  }
});

test("denial message is bounded", () => {
  const long = "x".repeat(MAX_STATUS_MESSAGE_LENGTH * 2);
  const reply = encodeAdmissionReview(
    ADMISSION_V1,
    "u",
    decision({ allowed: false, status: { code: 403, reason: "Forbidden", message: long } }),
    { mutating: false, operation: "CREATE" },
  );
  const message = reply.response.status?.message ?? "";
  assert.equal(Array.from(message).length, MAX_STATUS_MESSAGE_LENGTH);
  assert.ok(message.endsWith("…"));
});

test("allowed replies carry no status", () => {
  const reply = encodeAdmissionReview(
    ADMISSION_V1,
    "u",
    decision({ allowed: true, status: { code: 403, reason: "Forbidden", message: "ignored" } }),
    { mutating: false, operation: "CREATE" },
  );
  assert.equal("status" in reply.response, false);
});

test("warnings are single-line, control-free, deduplicated and non-empty", () => {
  const reply = encodeAdmissionReview(
    ADMISSION_V1,
    "u",
    decision({
      warnings: [
        "line one\nline two",
        "bell\u0007 here",
        "dup",
        "dup",
        "  ",
        "line one\r\nline two",
        "\u001b[31mred",
      ],
    }),
    { mutating: false, operation: "CREATE" },
  );
  assert.deepEqual(reply.response.warnings, ["line one line two", "bell here", "dup", "[31mred"]);
});

test("each warning is cut to 256 code points without splitting a surrogate pair", () => {
  const [w] = sanitizeWarnings([`${"a".repeat(MAX_WARNING_LENGTH - 1)}😀😀`]);
  assert.equal(Array.from(w ?? "").length, MAX_WARNING_LENGTH);
  assert.ok(w?.endsWith("a😀"));
});

test("warnings stop before their total passes 4096 code points", () => {
  const many = Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(MAX_WARNING_LENGTH, "w"));
  const out = sanitizeWarnings(many);
  assert.equal(out.length, MAX_WARNINGS_TOTAL_LENGTH / MAX_WARNING_LENGTH);
  assert.equal(out[0], many[0]);
  assert.ok(out.join("").length <= MAX_WARNINGS_TOTAL_LENGTH);
});

test("lone surrogates become U+FFFD so the JSON is valid UTF-8", () => {
  assert.deepEqual(sanitizeWarnings(["bad \ud800 text"]), ["bad \ufffd text"]);
});

test("empty warnings and audit annotations are omitted", () => {
  const reply = encodeAdmissionReview(ADMISSION_V1, "u", decision({ warnings: ["\n"] }), {
    mutating: false,
    operation: "CREATE",
  });
  assert.deepEqual(Object.keys(reply.response).sort(), ["allowed", "uid"]);
});

const QUALIFIED_NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

const auditKeyCases: ReadonlyArray<readonly [string, string]> = [
  ["require-labels/owner", "require-labels_owner"],
  ["policy.example.com/high_risk", "policy.example.com_high_risk"],
  ["weird key/with space!", "weird-key_with-space"],
  ["/leading", "leading"],
];

for (const [key, expected] of auditKeyCases) {
  test(`audit annotation key ${JSON.stringify(key)} → ${expected}`, () => {
    assert.equal(auditAnnotationKey(key), expected);
  });
}

test("audit annotation keys are always valid name parts, long ones hashed apart", () => {
  const a = `${"p".repeat(100)}/one`;
  const b = `${"p".repeat(100)}/two`;
  for (const key of [a, b, "!!!", "é/ü", "a/b/c"]) {
    const name = auditAnnotationKey(key);
    assert.match(name, QUALIFIED_NAME_PART, key);
    assert.ok(name.length <= 63, key);
  }
  assert.notEqual(auditAnnotationKey(a), auditAnnotationKey(b));
});

test("audit annotations in the reply use the sanitised keys and keep distinct values apart", () => {
  const reply = encodeAdmissionReview(
    ADMISSION_V1,
    "u",
    decision({ auditAnnotations: { "p/a b": "1", "p/a-b": "2", "q/k": "3" } }),
    { mutating: false, operation: "CREATE" },
  );
  const annotations = reply.response.auditAnnotations ?? {};
  assert.equal(annotations["p_a-b"], "1");
  assert.equal(annotations.q_k, "3");
  assert.deepEqual(Object.values(annotations).sort(), ["1", "2", "3"]);
  for (const k of Object.keys(annotations)) assert.match(k, QUALIFIED_NAME_PART);
});
