/**
 * Request data nested deep (issue 37 item 1, issue 36 item 5): reading a list converted each nested
 * level twice, so a Pod with a list nested 40 deep in an unknown field (519 bytes) held the event loop
 * for hours, in files and in cluster-connected mode; equality recursed, so a 10,000-deep comparison
 * overflowed the main thread's stack but not the slow lane's, and the two decided differently.
 *
 * The bound is the API server's: it decodes objects with sigs.k8s.io/json, Go's encoding/json, which
 * refuses a document nested more than 10,000 levels (encoding/json scanner.go, maxNestingDepth). So
 * every depth up to that must be decided, the same way on every thread; a body nested deeper comes
 * from no API server and is refused with a 400 before anything walks it.
 *
 * No test here measures time: each review must be answered within its request timeout, which the
 * old code missed by hours.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { send } from "../helpers/https.ts";
import { startKubeApiServer } from "../helpers/kube-apiserver.ts";
import {
  decodePatch,
  postReview,
  scrape,
  startTestWebhook,
  type TestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const BUNDLED = fileURLToPath(new URL("../../policies", import.meta.url));

/** A JSON list nested `depth` levels, as text (JSON.stringify itself recurses), innermost `[leaf]`. */
function nestedList(depth: number, leaf = 1): string {
  return `${"[".repeat(depth - 1)}[${leaf}]${",1]".repeat(depth - 1)}`;
}

/** A Pod whose unknown field spec.deep holds `deep` (JSON text); `pad` bytes of annotation make it large. */
function pod(deep: string, pad = 0): string {
  const annotations = pad > 0 ? `,"annotations":{"pad":"${"x".repeat(pad)}"}` : "";
  return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team-a","labels":{"app.kubernetes.io/name":"p"}${annotations}},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}],"deep":${deep}}}`;
}

/** An AdmissionReview of a Pod, as text: a CREATE of `object`, or an UPDATE from `oldObject`. */
function podReview(uid: string, object: string, oldObject?: string): string {
  const old = oldObject === undefined ? "" : `,"oldObject":${oldObject}`;
  return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"team-a","name":"p","operation":"${oldObject === undefined ? "CREATE" : "UPDATE"}","userInfo":{"username":"alice"},"object":${object}${old}}}`;
}

const DEEP_EQUAL = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: deep-equal }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["UPDATE"]
        resources: ["pods"]
  validations:
    - expression: "object.spec.deep == oldObject.spec.deep"
      message: "spec.deep changed"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: deep-equal }
spec:
  policyName: deep-equal
  validationActions: [Deny]
`;

async function deepEqualServer(t: TestContext): Promise<TestWebhook> {
  const dir = await tempDir(t);
  await writeFile(join(dir, "deep-equal.yaml"), DEEP_EQUAL);
  const w = await startTestWebhook(t, { policies: [dir] });
  await waitFor(
    "the slow lane to build the policy set",
    () => (w.webhook.slowLaneReady() ? true : undefined),
    60_000,
  );
  return w;
}

/** Bytes of annotation that put a review over the size the main thread parses (server.ts OFF_THREAD_BODY_BYTES). */
const TO_THE_LANE = 600 * 1024;

void test("a Pod with a list nested 40 deep is decided at once by the bundled policies, on every route", {
  timeout: 120_000,
}, async (t) => {
  const w = await startTestWebhook(t, { policies: [BUNDLED] });
  const object = pod(nestedList(40));
  for (const path of ["/validate", "/mutate"]) {
    for (const body of [podReview("create", object), podReview("update", object, object)]) {
      const reply = await postReview(w.port, w.ca, path, body, { timeoutMs: 30_000 });
      assert.equal(typeof reply.response.allowed, "boolean", `${path}: a decision`);
    }
  }
  const health = await send({ port: w.port, ca: w.ca, path: "/healthz" });
  assert.equal(health.status, 200);
});

void test("lists nested as deep as the API server decodes compare the same on the main thread and in the slow lane", {
  timeout: 180_000,
}, async (t) => {
  const w = await deepEqualServer(t);
  const depth = 9_990; // the object itself and spec add two levels: 9,992 of the decoder's 10,000
  const same = nestedList(depth);
  const differs = nestedList(depth, 2);
  for (const [where, pad] of [
    ["main thread", 0],
    ["slow lane", TO_THE_LANE],
  ] as const) {
    const equal = await postReview(
      w.port,
      w.ca,
      "/validate",
      podReview("eq", pod(same, pad), pod(same, pad)),
      {
        timeoutMs: 60_000,
      },
    );
    assert.deepEqual(
      { allowed: equal.response.allowed, message: equal.response.status?.message },
      { allowed: true, message: undefined },
      `${where}: equal lists`,
    );
    const unequal = await postReview(
      w.port,
      w.ca,
      "/validate",
      podReview("ne", pod(differs, pad), pod(same, pad)),
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(unequal.response.allowed, false, `${where}: lists that differ at the innermost level`);
    assert.match(unequal.response.status?.message ?? "", /denied request: spec\.deep changed$/, where);
  }
  const offloaded = await scrape(w.webhook.metricsUrl);
  assert.match(
    offloaded,
    /celgate_slow_lane_reviews_total\{reason="large_body"\} [1-9]/,
    "the large reviews went to the lane",
  );
});

void test("a body nested deeper than any object the API server decodes is refused with a 400, on either thread", {
  timeout: 120_000,
}, async (t) => {
  const w = await deepEqualServer(t);
  // 10,001 levels inside the object: one past encoding/json's limit.
  const tooDeep = nestedList(10_001 - 2);
  for (const pad of [0, TO_THE_LANE]) {
    const res = await send({
      port: w.port,
      ca: w.ca,
      path: "/validate",
      body: podReview("deep", pod(tooDeep, pad)),
      headers: { "content-type": "application/json" },
      timeoutMs: 60_000,
    });
    assert.equal(res.status, 400, res.body);
    assert.match(res.body, /request body nests deeper than 10002 levels/);
  }
  // The largest that can come from an API server is decided.
  const atLimit = nestedList(10_000 - 2);
  const reply = await postReview(w.port, w.ca, "/validate", podReview("limit", pod(atLimit), pod(atLimit)), {
    timeoutMs: 60_000,
  });
  assert.equal(reply.response.allowed, true);
});

void test("connected to a cluster, a Pod with a list nested 40 deep is decided at once", {
  timeout: 120_000,
}, async (t) => {
  const api = await startKubeApiServer(t);
  api.put({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: "team-a",
      labels: { "kubernetes.io/metadata.name": "team-a", "celgate.dev/pod-security": "restricted" },
    },
  });
  const dir = await tempDir(t);
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(kubeconfig, api.kubeconfig());
  const w = await startTestWebhook(t, { policies: [BUNDLED], cluster: { kubeconfig } });
  assert.ok(await w.webhook.cluster?.whenReady(10_000), "the caches synced");
  const object = pod(nestedList(40));
  for (const body of [podReview("create", object), podReview("update", object, object)]) {
    const reply = await postReview(w.port, w.ca, "/validate", body, { timeoutMs: 30_000 });
    assert.equal(typeof reply.response.allowed, "boolean");
  }
});

const COPY_DEEP = `
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: copy-deep }
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
      - apiGroups: ["example.com"]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["widgets"]
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: '[JSONPatch{op: "add", path: "/spec/copy", value: object.spec.deep}]'
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: "Object{spec: Object.spec{applied: object.spec.deep}}"
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: copy-deep }
spec: { policyName: copy-deep }
`;

/** How deep a JSON list nests (its first element's chain). */
function listDepth(v: unknown): number {
  let depth = 0;
  for (let x = v; Array.isArray(x); x = x[0]) depth++;
  return depth;
}

void test("mutations that copy a list nested as deep as the API server decodes patch it whole, on either thread", {
  timeout: 180_000,
}, async (t) => {
  // Rendering the mutation's value, applying it, and writing the patch each recursed, and failed with
  // "Maximum call stack size exceeded" (an HTTP 500) from about 4,000 levels.
  const dir = await tempDir(t);
  await writeFile(join(dir, "copy-deep.yaml"), COPY_DEEP);
  const w = await startTestWebhook(t, { policies: [dir] });
  await waitFor(
    "the slow lane to build the policy set",
    () => (w.webhook.slowLaneReady() ? true : undefined),
    60_000,
  );
  const depth = 9_990;
  for (const pad of [0, TO_THE_LANE]) {
    const annotations = pad > 0 ? `,"annotations":{"pad":"${"x".repeat(pad)}"}` : "";
    const body = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"w","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"namespace":"team-a","operation":"CREATE","userInfo":{"username":"alice"},"object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"team-a"${annotations}},"spec":{"deep":${nestedList(depth)}}}}}`;
    const reply = await postReview(w.port, w.ca, "/mutate", body, { timeoutMs: 60_000 });
    assert.equal(reply.response.allowed, true);
    const ops = decodePatch(reply.response) as { op: string; path: string; value: unknown }[];
    assert.deepEqual(
      ops.map((o) => [o.op, o.path, listDepth(o.value)]),
      [
        ["add", "/spec/copy", depth],
        ["add", "/spec/applied", depth],
      ],
    );
  }
});
