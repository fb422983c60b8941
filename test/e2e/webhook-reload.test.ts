/**
 * Hot reload under load: the policy file is replaced (renamed into place, as a ConfigMap update
 * does) while requests run on several keep-alive connections. Every answer must come from one
 * whole policy set, old or new; once a new answer has been seen, no later request may get an old
 * one; a file that does not parse is rejected and the last good set keeps serving.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { send } from "../helpers/https.ts";
import {
  CapturedLog,
  deployment,
  deploymentReview,
  keepAliveAgent,
  type LoadRecord,
  postReview,
  type ReviewResponse,
  replaceFile,
  runLoad,
  sampleValue,
  scrape,
  sleep,
  startTestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

/** A Deny policy and a Warn policy with the same limit, in one file, so a mix would show. */
function replicaPolicies(limit: number): string {
  const policy = (
    name: string,
    action: string,
    message: string,
  ) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= ${limit}"
    message: "${message}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}-binding
spec:
  policyName: ${name}
  validationActions: [${action}]
`;
  return [
    policy("replica-cap", "Deny", `replicas must be at most ${limit}`),
    policy("replica-hint", "Warn", `consider at most ${limit} replicas`),
  ].join("---\n");
}

/** What a set with this limit answers for a Deployment with `replicas`. */
function expected(limit: number, replicas: number, uid: string): ReviewResponse {
  if (replicas <= limit) return { uid, allowed: true };
  return {
    uid,
    allowed: false,
    status: {
      code: 422,
      reason: "Invalid",
      message: `ValidatingAdmissionPolicy 'replica-cap' with binding 'replica-cap-binding' denied request: replicas must be at most ${limit}`,
    },
    warnings: [
      `Validation failed for ValidatingAdmissionPolicy 'replica-hint' with binding 'replica-hint-binding': consider at most ${limit} replicas`,
    ],
  };
}

type Answer = "old" | "new";

function classify(response: ReviewResponse, replicas: number, uid: string): Answer | string {
  if (JSON.stringify(response) === JSON.stringify(expected(5, replicas, uid))) return "old";
  if (JSON.stringify(response) === JSON.stringify(expected(3, replicas, uid))) return "new";
  return `neither set's answer: ${JSON.stringify(response)}`;
}

void test("hot reload under concurrent requests: old or new, never an error or a mix; a broken file keeps its last good content", {
  timeout: 60_000,
}, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, replicaPolicies(5));
  const log = new CapturedLog();
  const { webhook, port, ca } = await startTestWebhook(t, {
    policies: [dir],
    logLevel: "warn",
    logStream: log,
  });
  const workers = 8;
  const agents = Array.from({ length: workers }, () => keepAliveAgent(ca));
  t.after(() => {
    for (const a of agents) a.destroy();
  });

  let rewritten: Promise<void> | undefined;
  const records = await runLoad<Answer | string>({
    workers,
    maxRequests: 3000,
    maxMs: 20_000,
    pauseMs: 2,
    shouldStop: (done) => done.filter((r) => r.result === "new").length >= 150,
    request: async (index, worker) => {
      // After a first batch, replace the file once, from inside the load.
      if (index === 80) rewritten = replaceFile(file, replicaPolicies(3));
      const replicas = index % 2 === 0 ? 4 : 6;
      const uid = `r-${index}`;
      const reply = await postReview(
        port,
        ca,
        "/validate",
        deploymentReview({ uid, object: deployment("web", replicas) }),
        { agent: agents[worker] as NonNullable<(typeof agents)[number]> },
      );
      return classify(reply.response, replicas, uid);
    },
  });
  await rewritten;

  const failed = records.filter((r) => r.error !== undefined);
  assert.deepEqual(
    failed.map((r) => r.error?.message),
    [],
    "requests failed during the reload",
  );
  const odd = records.filter((r) => r.result !== "old" && r.result !== "new");
  assert.deepEqual(
    odd.map((r) => r.result),
    [],
  );
  const old = records.filter((r) => r.result === "old");
  const fresh = records.filter((r) => r.result === "new");
  t.diagnostic(
    `${records.length} requests: ${old.length} answered by the old set, ${fresh.length} by the new`,
  );
  assert.ok(old.length > 0, "no request saw the old policies");
  assert.ok(fresh.length >= 150, `only ${fresh.length} requests saw the new policies (of ${records.length})`);
  // The swap is atomic and final: a request sent after a new answer arrived gets a new answer.
  const firstNewAt = Math.min(...fresh.map((r) => r.doneAt));
  const stale: LoadRecord<Answer | string>[] = old.filter((r) => r.sentAt > firstNewAt);
  assert.deepEqual(
    stale.map((r) => r.index),
    [],
    "old answers after the new policies had answered",
  );

  let text = await scrape(webhook.metricsUrl);
  assert.equal(sampleValue(text, "celgate_policy_reloads_total", { result: "success" }), 2);
  // prom-client prints no sample for a label value never counted.
  assert.equal(sampleValue(text, "celgate_policy_reloads_total", { result: "failure" }) ?? 0, 0);
  assert.equal(sampleValue(text, "celgate_policy_last_reload_success"), 1);

  // A file that does not parse: counted, and its last good content keeps answering.
  await replaceFile(file, "apiVersion: admissionregistration.k8s.io/v1\nkind: [unclosed\n");
  text = await waitFor("a partial reload in the metrics", async () => {
    const now = await scrape(webhook.metricsUrl);
    return (sampleValue(now, "celgate_policy_reloads_total", { result: "partial" }) ?? 0) >= 1
      ? now
      : undefined;
  });
  assert.equal(sampleValue(text, "celgate_policy_last_reload_success"), 0);
  assert.deepEqual(
    log.reloads().map((e) => [e.result, e.failedFiles]),
    [["partial", [file]]],
  );
  for (const replicas of [4, 6, 2]) {
    const uid = `after-broken-${replicas}`;
    const reply = await postReview(
      port,
      ca,
      "/validate",
      deploymentReview({ uid, object: deployment("web", replicas) }),
    );
    assert.deepEqual(reply.response, expected(3, replicas, uid));
  }
  const readyz = await send({ port, ca, path: "/readyz" });
  assert.equal(readyz.status, 200, "a rejected reload must not make the webhook unready");

  // Fixing the file is picked up again.
  await replaceFile(file, replicaPolicies(1));
  await waitFor("the fixed file to be served", async () => {
    const reply = await postReview(
      port,
      ca,
      "/validate",
      deploymentReview({ uid: "fix", object: deployment("web", 2) }),
    );
    return JSON.stringify(reply.response) === JSON.stringify(expected(1, 2, "fix")) ? true : undefined;
  });
  text = await scrape(webhook.metricsUrl);
  assert.equal(sampleValue(text, "celgate_policy_last_reload_success"), 1);
});

void test("a broken file is reported once, not again on every poll until it changes", {
  timeout: 30_000,
}, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, replicaPolicies(5));
  const log = new CapturedLog();
  const { webhook } = await startTestWebhook(t, { policies: [dir], logLevel: "info", logStream: log });
  await replaceFile(file, "kind: [unclosed\n");
  await waitFor("a partial reload in the metrics", async () => {
    const now = await scrape(webhook.metricsUrl);
    return (sampleValue(now, "celgate_policy_reloads_total", { result: "partial" }) ?? 0) >= 1
      ? now
      : undefined;
  });
  // Two poll intervals with nothing changed on disk.
  await sleep(4500);
  const text = await scrape(webhook.metricsUrl);
  assert.equal(sampleValue(text, "celgate_policy_reloads_total", { result: "partial" }), 1);
  assert.deepEqual(
    log.reloads().map((e) => e.result),
    ["partial"],
  );
});
