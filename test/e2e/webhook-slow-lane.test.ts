/**
 * Isolation between reviews (issue 28 item 5): a review that is slow by nature — still running when
 * its time slice on the main thread ends, or too large to parse there — is answered by the slow
 * lane's worker thread, and the other requests are answered meanwhile. The lane answers exactly as
 * the main thread does: the same set, built from the same files, the same encoding.
 *
 * No test here measures time. The isolation test asserts an order of events: ordinary reviews sent
 * while a slow one is being evaluated are all answered before it (on one event loop they were all
 * answered after it).
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { send } from "../helpers/https.ts";
import {
  deployment,
  deploymentReview,
  keepAliveAgent,
  postReview,
  replaceFile,
  sampleValue,
  scrape,
  startTestWebhook,
  type TestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const POLICIES = fileURLToPath(new URL("../fixtures/webhook/policies", import.meta.url));
const SLOW = fileURLToPath(new URL("../fixtures/webhook/slow", import.meta.url));
const WIDGETS = { group: "example.com", version: "v1", kind: "Widget", resource: "widgets" } as const;
const items = Array.from({ length: 60 }, (_, i) => i);

function widgetReview(uid: string): Record<string, unknown> {
  return deploymentReview({
    uid,
    resource: WIDGETS,
    object: {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "team-a" },
      spec: { items },
    },
  });
}

async function laneReady(w: TestWebhook): Promise<void> {
  await waitFor(
    "the slow lane to build the policy set",
    () => (w.webhook.slowLaneReady() ? true : undefined),
    60_000,
  );
}

async function offloaded(w: TestWebhook, reason: "slice" | "large_body"): Promise<number> {
  return sampleValue(await scrape(w.webhook.metricsUrl), "celgate_slow_lane_reviews_total", { reason }) ?? 0;
}

void test("while a slow review is evaluated, the ordinary ones sent meanwhile are all answered before it", {
  timeout: 180_000,
}, async (t) => {
  const w = await startTestWebhook(t, { policies: [SLOW, POLICIES] });
  await laneReady(w);
  // Every policy of the slow set passes given the time: a long timeout, and the answer is allowed.
  let slowDone = false;
  const slow = postReview(w.port, w.ca, "/validate/fail", widgetReview("slow"), {
    query: "timeout=30s",
    timeoutMs: 120_000,
  }).then((reply) => {
    slowDone = true;
    return reply;
  });
  // Once it has left the main thread (its slice is over), send ordinary reviews one after another.
  await waitFor("the slow review to move to the lane", async () =>
    (await offloaded(w, "slice")) >= 1 ? true : undefined,
  );
  const agent = keepAliveAgent(w.ca);
  t.after(() => agent.destroy());
  const answeredBeforeSlow: boolean[] = [];
  for (let i = 0; i < 20; i++) {
    const reply = await postReview(
      w.port,
      w.ca,
      "/validate",
      deploymentReview({ uid: `o-${i}`, object: deployment("web", 9) }),
      {
        agent,
      },
    );
    assert.equal(reply.response.allowed, false, "replica limit: 9 > 5");
    answeredBeforeSlow.push(!slowDone);
  }
  assert.deepEqual(answeredBeforeSlow, Array(20).fill(true), "an ordinary review waited for the slow one");
  const reply = await slow;
  assert.deepEqual(reply.response, { uid: "slow", allowed: true });
});

/** Requests and the replies compared between a server that answers everything itself and one that hands everything to the lane. */
const CASES: readonly { readonly path: string; readonly query?: string; readonly body: unknown }[] = [
  {
    path: "/validate",
    body: deploymentReview({ uid: "a", object: deployment("web", 3, { labels: { team: "a" } }) }),
  },
  { path: "/validate", body: deploymentReview({ uid: "b", object: deployment("web", 9) }) },
  {
    path: "/validate/fail",
    body: deploymentReview({
      uid: "c",
      apiVersion: "admission.k8s.io/v1beta1",
      object: deployment("web", 7),
    }),
  },
  { path: "/mutate", body: deploymentReview({ uid: "d", object: deployment("web", 1) }) },
  {
    path: "/mutate/fail",
    body: deploymentReview({
      uid: "e",
      operation: "UPDATE",
      object: deployment("web", 2),
      oldObject: deployment("web", 1),
    }),
  },
  // The deadline passes at once: each path's failurePolicy answers.
  {
    path: "/validate/fail",
    query: "timeout=1ms",
    body: deploymentReview({ uid: "f", object: deployment("web", 9) }),
  },
  {
    path: "/validate/ignore",
    query: "timeout=1ms",
    body: deploymentReview({ uid: "g", object: deployment("web", 9) }),
  },
  { path: "/validate", body: { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" } },
];

async function answers(w: TestWebhook): Promise<string[]> {
  const out: string[] = [];
  for (const c of CASES) {
    const res = await send({
      port: w.port,
      ca: w.ca,
      path: c.query ? `${c.path}?${c.query}` : c.path,
      body: c.body,
    });
    out.push(`${res.status} ${res.body}`);
  }
  return out;
}

void test("the lane answers exactly as the main thread does", { timeout: 120_000 }, async (t) => {
  const here = await startTestWebhook(t, { policies: [POLICIES], slowLane: false });
  // A slice too short for any review to finish in: every review with a policy to evaluate moves.
  const there = await startTestWebhook(t, { policies: [POLICIES], sliceMs: 1e-9 });
  await laneReady(there);
  const expected = await answers(here);
  const actual = await answers(there);
  assert.deepEqual(actual, expected);
  // Each review with a policy to evaluate (the two whose deadline has passed on arrival are
  // answered at once, and the last is not a review).
  assert.equal(await offloaded(there, "slice"), 5, "the reviews did not go to the lane");
  assert.equal(await offloaded(here, "slice"), 0);
});

void test("a body too large to parse on the main thread is parsed and answered in the lane", {
  timeout: 120_000,
}, async (t) => {
  const w = await startTestWebhook(t, { policies: [POLICIES] });
  await laneReady(w);
  const big = deployment("web", 9, { annotations: { pad: "x".repeat(2 * 1024 * 1024) } });
  const reply = await postReview(
    w.port,
    w.ca,
    "/validate/fail",
    deploymentReview({ uid: "big", object: big }),
  );
  assert.equal(reply.response.uid, "big");
  assert.equal(reply.response.allowed, false);
  assert.match(reply.response.status?.message ?? "", /replicas must be at most 5, got 9/);
  assert.equal(await offloaded(w, "large_body"), 1);
  // Not a review at all: the lane's 400 is the main thread's.
  const junk = await send({
    port: w.port,
    ca: w.ca,
    path: "/validate",
    headers: { "content-type": "application/json" },
    body: `{"x": "${"y".repeat(1024 * 1024)}"}`,
  });
  assert.equal(junk.status, 400);
  assert.match(JSON.parse(junk.body).message, /kind|apiVersion|request/);
});

const POLICY = (message: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "${message}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas-binding
spec:
  policyName: replicas.example.com
  validationActions: [Deny]
`;

void test("after a reload the lane answers with the new policies", { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, POLICY("first set"));
  const w = await startTestWebhook(t, { policies: [dir], sliceMs: 1e-9, pollMs: 100 });
  await laneReady(w);
  const before = await postReview(
    w.port,
    w.ca,
    "/validate",
    deploymentReview({ uid: "1", object: deployment("web", 9) }),
  );
  assert.match(before.response.status?.message ?? "", /first set/);
  await replaceFile(file, POLICY("second set"));
  const first = w.webhook.store.current().fingerprint;
  await waitFor("the reload", () => (w.webhook.store.current().fingerprint !== first ? true : undefined));
  await laneReady(w);
  const after = await postReview(
    w.port,
    w.ca,
    "/validate",
    deploymentReview({ uid: "2", object: deployment("web", 9) }),
  );
  assert.match(after.response.status?.message ?? "", /second set/);
  assert.ok((await offloaded(w, "slice")) >= 2);
});

// A body at the size limit can hold millions of empty maps, which decode into far more heap than its
// bytes (a long string does not). Past its heap's limit a worker thread on Node 24 aborts the whole
// process rather than fail alone, so such a body is refused before it is decoded, on every Node version.
void test("a review too costly for the lane's heap to decode is refused with 413 before decoding; the lane and the server go on", {
  timeout: 120_000,
}, async (t) => {
  const w = await startTestWebhook(t, { policies: [POLICIES], slowLane: { maxHeapMb: 32 } });
  await laneReady(w);
  const huge = deployment("web", 1);
  (huge.spec as Record<string, unknown>).pad = Array.from(
    { length: Math.floor((7 * 1024 * 1024 - 8192) / 3) },
    () => ({}),
  );
  const refused = await send({
    port: w.port,
    ca: w.ca,
    path: "/validate/fail",
    body: deploymentReview({ uid: "costly", object: huge }),
    timeoutMs: 60_000,
  });
  // Not a 200: the API server answers it by the webhook's failurePolicy (Fail on this path).
  assert.equal(refused.status, 413, refused.body);
  assert.match(refused.body, /would take about \d+ MiB of heap to decode/);
  const ordinary = await postReview(
    w.port,
    w.ca,
    "/validate",
    deploymentReview({ uid: "next", object: deployment("web", 9) }),
  );
  assert.equal(ordinary.response.allowed, false);
  // Just over the lane's body threshold: the same worker, alive, decides it.
  const big = deployment("web", 9, { annotations: { pad: "x".repeat(513 * 1024) } });
  const again = await postReview(
    w.port,
    w.ca,
    "/validate/fail",
    deploymentReview({ uid: "again", object: big }),
  );
  assert.equal(again.response.allowed, false);
  assert.ok((await offloaded(w, "large_body")) >= 2);
});

// A worker whose heap cannot hold the policy set dies building it (and each replacement the same):
// the reviews the lane would have taken are decided on the main thread, as with no lane at all.
void test("a lane worker that cannot build the policy set: its reviews are decided on the main thread, none allowed by accident", {
  timeout: 120_000,
}, async (t) => {
  const w = await startTestWebhook(t, { policies: [POLICIES], slowLane: { maxHeapMb: 4 } });
  const big = deployment("web", 9, { annotations: { pad: "x".repeat(513 * 1024) } });
  for (const uid of ["first", "second"]) {
    const decided = await postReview(w.port, w.ca, "/validate/fail", deploymentReview({ uid, object: big }));
    assert.equal(decided.response.allowed, false);
    assert.match(decided.response.status?.message ?? "", /replicas/);
  }
  assert.equal(w.webhook.slowLaneReady(), false);
  assert.equal(await offloaded(w, "large_body"), 0);
});
