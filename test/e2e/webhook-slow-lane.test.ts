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

// The worker is made to die by a heap too small to parse a body at the size limit yet big enough to
// build the policy set. On Node 24 there is no such heap for this set (16 MiB cannot build it, 20 MiB
// parses the body): there the test is skipped, with this reason, until the worker is made to die
// some other way.
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

void test("a lane worker that dies fails the reviews it held by failurePolicy; the server goes on and a new worker takes over", {
  timeout: 120_000,
  skip:
    NODE_MAJOR >= 24
      ? "Node 24: no worker heap both builds the policy set and runs out of memory on a body at the size limit"
      : false,
}, async (t) => {
  // A heap too small to parse the body: the worker runs out of memory in the review.
  const w = await startTestWebhook(t, { policies: [POLICIES], slowLane: { maxHeapMb: 16 } });
  await laneReady(w);
  const huge = deployment("web", 1, { annotations: { pad: "x".repeat(7 * 1024 * 1024 - 4096) } });
  const failed = await send({
    port: w.port,
    ca: w.ca,
    path: "/validate/fail",
    body: deploymentReview({ uid: "oom", object: huge }),
    timeoutMs: 60_000,
  });
  // The body was never decoded on the main thread: HTTP 500, which the API server answers by the
  // webhook's failurePolicy (Fail on this path); never an allow.
  assert.equal(failed.status, 500, failed.body);
  const ordinary = await postReview(
    w.port,
    w.ca,
    "/validate",
    deploymentReview({ uid: "next", object: deployment("web", 9) }),
  );
  assert.equal(ordinary.response.allowed, false);
  await laneReady(w);
  // Just over the lane's body threshold: the new worker has the same small heap, so the margin
  // between this body and that heap is kept as wide as the threshold allows.
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
