/**
 * `serve --record DIR` (issue 35 item 2), through the real server over TLS: what is written (the
 * review, redacted as the debug log redacts, with the answer given), the disk budget (rotating
 * files, the oldest deleted), and that a recording never fails a review (a full queue drops and
 * counts; a write error is one log line and a count).
 */
import assert from "node:assert/strict";
import { readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { REDACTED } from "../../src/adapters/server/redact.ts";
import type { RecordedReview } from "../../src/adapters/server/recording.ts";
import {
  CapturedLog,
  decodePatch,
  deployment,
  deploymentReview,
  postReview,
  sampleValue,
  scrape,
  startTestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";
import { cli } from "../unit/cli/fake-io.ts";

const POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    messageExpression: "'at most 5 replicas, got ' + string(object.spec.replicas)"
  - expression: "!has(object.metadata.annotations) || !('apiToken' in object.metadata.annotations)"
    message: "no tokens in annotations"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas.example.com
spec:
  policyName: replicas.example.com
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: label.example.com
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [JSONPatch{op: "add", path: "/metadata/labels", value: {"team": "a"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: label.example.com
spec:
  policyName: label.example.com
`;

const CORE = (kind: string, resource: string) => ({ group: "", version: "v1", kind, resource });

/** Every line of every recording file in `dir`, in file-name order. */
async function recorded(dir: string): Promise<RecordedReview[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith(".jsonl")).sort();
  const out: RecordedReview[] = [];
  for (const n of names)
    for (const line of (await readFile(join(dir, n), "utf8")).split("\n"))
      if (line !== "") out.push(JSON.parse(line) as RecordedReview);
  return out;
}

async function recordedCount(metricsUrl: string): Promise<number> {
  return sampleValue(await scrape(metricsUrl), "celgate_record_reviews_total") ?? 0;
}

void test("each review answered is recorded with its answer, redacted as the debug log redacts", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const out = join(await tempDir(t), "rec");
  const { port, ca, webhook } = await startTestWebhook(t, {
    policies: [dir],
    slowLane: false,
    record: { dir: out, sampleRate: 1, maxBytes: 1 << 20 },
  });
  const denied = deploymentReview({
    uid: "d1",
    object: deployment("big", 9, { annotations: { note: "hello" } }),
  });
  const secret = deploymentReview({
    uid: "s1",
    namespace: "default",
    resource: CORE("Secret", "secrets"),
    object: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "db",
        namespace: "default",
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration":
            '{"stringData":{"password":"hunter2 \\"pw\\""}}',
        },
      },
      stringData: { password: 'hunter2 "pw"', user: "hunter2-user" },
    },
  });
  const replies = [
    await postReview(port, ca, "/validate", denied),
    await postReview(port, ca, "/mutate", deploymentReview({ uid: "m1" })),
    await postReview(port, ca, "/validate", secret),
  ];
  await waitFor("3 reviews recorded", async () =>
    (await recordedCount(webhook.metricsUrl)) >= 3 ? true : undefined,
  );
  const lines = await recorded(out);
  assert.deepEqual(
    lines.map((l) => [l.path, l.review.request.uid, l.decision.allowed]),
    [
      ["/validate", "d1", false],
      ["/mutate", "m1", true],
      ["/validate", "s1", true],
    ],
  );
  // The decision as the reply said it, the patch decoded.
  assert.equal(lines[0]?.decision.message, replies[0]?.response.status?.message);
  assert.equal(lines[0]?.decision.code, 422);
  assert.deepEqual(lines[1]?.decision.patch, decodePatch(replies[1]?.response ?? { uid: "", allowed: true }));
  // A Secret's contents are gone, from its data and from the annotation that repeats them; keys stay.
  const text = JSON.stringify(lines[2]);
  assert.ok(!text.includes("hunter2"), text);
  assert.deepEqual(lines[2]?.review.request.object?.stringData, { password: REDACTED, user: REDACTED });
});

void test("the files rotate and keep within the budget, the oldest deleted first", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const out = await tempDir(t);
  const maxBytes = 64 * 1024;
  const { port, ca, webhook } = await startTestWebhook(t, {
    policies: [dir],
    slowLane: false,
    record: { dir: out, sampleRate: 1, maxBytes },
  });
  const total = 120;
  for (let i = 0; i < total; i++) await postReview(port, ca, "/validate", deploymentReview({ uid: `r${i}` }));
  await waitFor("every review recorded", async () =>
    (await recordedCount(webhook.metricsUrl)) >= total ? true : undefined,
  );
  const names = (await readdir(out)).sort();
  let bytes = 0;
  for (const n of names) bytes += (await stat(join(out, n))).size;
  assert.ok(bytes <= maxBytes, `${bytes} bytes on disk, budget ${maxBytes}`);
  assert.ok(names.length > 1 && names.length <= 9, `${names.length} files`);
  const metrics = await scrape(webhook.metricsUrl);
  assert.ok((sampleValue(metrics, "celgate_record_files_deleted_total") ?? 0) > 0);
  assert.equal(sampleValue(metrics, "celgate_record_bytes"), bytes);
  // What is left is the newest reviews, in order, ending with the last one.
  const uids = (await recorded(out)).map((l) => Number(l.review.request.uid.slice(1)));
  assert.equal(uids.at(-1), total - 1);
  assert.deepEqual(
    uids,
    uids.map((_, i) => (uids[0] as number) + i),
  );
});

void test("a sampling rate records that share of the reviews", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const out = await tempDir(t);
  let draw = 0;
  const { port, ca, webhook } = await startTestWebhook(t, {
    policies: [dir],
    slowLane: false,
    // Draws 0, 0.25, 0.5, 0.75, ...: a rate of 0.5 records every other review.
    record: { dir: out, sampleRate: 0.5, maxBytes: 1 << 20, random: () => (draw++ % 4) / 4 },
  });
  for (let i = 0; i < 8; i++) await postReview(port, ca, "/validate", deploymentReview({ uid: `r${i}` }));
  await waitFor("4 reviews recorded", async () =>
    (await recordedCount(webhook.metricsUrl)) >= 4 ? true : undefined,
  );
  assert.deepEqual(
    (await recorded(out)).map((l) => l.review.request.uid),
    ["r0", "r1", "r4", "r5"],
  );
});

void test("a full queue drops reviews and counts them; every review is still answered", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const out = await tempDir(t);
  const { port, ca, webhook } = await startTestWebhook(t, {
    policies: [dir],
    slowLane: false,
    record: { dir: out, sampleRate: 1, maxBytes: 1 << 20, queueEntries: 1 },
  });
  const sent = 40;
  const replies = await Promise.all(
    Array.from({ length: sent }, (_, i) =>
      postReview(port, ca, "/validate", deploymentReview({ uid: `q${i}` })),
    ),
  );
  assert.equal(replies.filter((r) => r.http.status === 200).length, sent);
  const counted = await waitFor("recorded and dropped add up", async () => {
    const m = await scrape(webhook.metricsUrl);
    const recordedN = sampleValue(m, "celgate_record_reviews_total") ?? 0;
    const dropped = sampleValue(m, "celgate_record_dropped_total", { reason: "queue_full" }) ?? 0;
    return recordedN + dropped === sent ? { recordedN, dropped } : undefined;
  });
  assert.ok(counted.dropped > 0, JSON.stringify(counted));
  assert.equal((await recorded(out)).length, counted.recordedN);
});

void test("a write error is one log line and a count, never a failed review", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const out = join(await tempDir(t), "rec");
  const log = new CapturedLog();
  const { port, ca, webhook } = await startTestWebhook(t, {
    policies: [dir],
    slowLane: false,
    logLevel: "info",
    logStream: log,
    // Files of about two reviews each: the next file must be created soon.
    record: { dir: out, sampleRate: 1, maxBytes: 16 * 1024 },
  });
  await postReview(port, ca, "/validate", deploymentReview({ uid: "before" }));
  await waitFor("the first review recorded", async () =>
    (await recordedCount(webhook.metricsUrl)) >= 1 ? true : undefined,
  );
  // The directory goes away: the next file cannot be created.
  await rm(out, { recursive: true, force: true });
  const after = 10;
  for (let i = 0; i < after; i++) {
    const reply = await postReview(port, ca, "/validate", deploymentReview({ uid: `after${i}` }));
    assert.equal(reply.http.status, 200);
  }
  const failed = await waitFor("write errors counted", async () => {
    const n = sampleValue(await scrape(webhook.metricsUrl), "celgate_record_dropped_total", {
      reason: "write_error",
    });
    return n !== undefined && n > 0 ? n : undefined;
  });
  assert.ok(failed <= after);
  const lines = log.entries().filter((e) => e.event === "record");
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.equal(lines[0]?.level, 50);
  assert.match(String(lines[0]?.error), /ENOENT/);
});

void test("a review too large for the main thread, answered by the slow lane, is recorded from a copy of its body", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const out = await tempDir(t);
  const { port, ca, webhook } = await startTestWebhook(t, {
    policies: [dir],
    record: { dir: out, sampleRate: 1, maxBytes: 64 << 20 },
  });
  await waitFor("the slow lane's set", () => (webhook.slowLaneReady() ? true : undefined));
  // Over OFF_THREAD_BODY_BYTES: its bytes move to the worker.
  const big = deploymentReview({
    uid: "big",
    object: deployment("big", 9, { annotations: { note: "x".repeat(600 * 1024) } }),
  });
  const reply = await postReview(port, ca, "/validate", big);
  assert.equal(reply.response.allowed, false);
  const metrics = await waitFor("the review recorded", async () => {
    const m = await scrape(webhook.metricsUrl);
    return (sampleValue(m, "celgate_record_reviews_total") ?? 0) >= 1 ? m : undefined;
  });
  assert.equal(sampleValue(metrics, "celgate_slow_lane_reviews_total", { reason: "large_body" }), 1);
  const [line] = await recorded(out);
  assert.ok(line !== undefined);
  assert.equal(line.review.request.uid, "big");
  assert.equal(line.decision.message, reply.response.status?.message);
  const metadata = line.review.request.object?.metadata as { annotations: { note: string } };
  assert.equal(metadata.annotations.note.length, 600 * 1024);
});

void test("serve's --record flags: usage errors say what is expected; an unusable directory stops the start", async (t) => {
  const bad = await cli(["serve", "--policies", "policies", "--record", "rec", "--record-sample", "0"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--record-sample must be a number above 0 and at most 1, got '0'/);
  const budget = await cli(["serve", "--policies", "policies", "--record", "rec", "--record-max-mib", "0.5"]);
  assert.equal(budget.code, 2);
  assert.match(budget.stderr, /--record-max-mib must be a number of MiB, at least 1, got '0.5'/);
  // A file where the directory should be: the start fails, saying why.
  const file = join(await tempDir(t), "taken");
  await writeFile(file, "");
  const taken = await cli([
    "serve",
    "--policies",
    "policies",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--metrics-port",
    "0",
    "--no-cluster",
    "--record",
    join(file, "rec"),
  ]);
  assert.equal(taken.code, 2);
  assert.match(taken.stderr, /celgate serve: --record .*taken\/rec: ENOTDIR/);
});
