/**
 * `celgate replay` (issue 35 item 3). The must-hold: reviews recorded through the real server
 * (TLS on 127.0.0.1, real AdmissionReview JSON, on every path, answered on the main thread and by
 * the slow lane) and replayed with the same set give zero differences. Then what a candidate
 * changes, grouped by policy, namespace and user, in text, JSON and JUnit, with the exit status a
 * pipeline gates on; audit.k8s.io Events and `eval -r` files against a baseline; and unreadable
 * lines named by file:line.
 */
import assert from "node:assert/strict";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import type { RecordedReview } from "../../src/adapters/server/recording.ts";
import { fakeIO } from "../unit/cli/fake-io.ts";
import { main } from "../../src/adapters/cli/main.ts";
import {
  deployment,
  deploymentReview,
  postReview,
  sampleValue,
  scrape,
  startTestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const validating = (name: string, expression: string, actions: string, failurePolicy = "Fail") => `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: ${failurePolicy}
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps", ""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE", "DELETE"]
      resources: ["deployments", "secrets"]
  validations:
  - expression: "${expression}"
    messageExpression: "'${name} refuses ' + request.name"
  auditAnnotations:
  - key: replicas
    valueExpression: "request.operation"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${name}
  validationActions: ${actions}
`;

const mutating = (label: string) => `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: team-label
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
        [JSONPatch{op: "add", path: "/metadata/labels", value: {"team": "${label}"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: team-label
spec:
  policyName: team-label
`;

const CURRENT =
  validating(
    "replicas",
    "object == null || !has(object.spec.replicas) || object.spec.replicas <= 5",
    "[Deny]",
  ) +
  validating("named", "request.name != 'forbidden'", "[Warn, Audit]", "Ignore") +
  mutating("a");

const CANDIDATE =
  validating(
    "replicas",
    "object == null || !has(object.spec.replicas) || object.spec.replicas <= 2",
    "[Deny]",
  ) +
  validating("named", "request.name != 'forbidden'", "[Warn, Audit]", "Ignore") +
  mutating("b");

const CORE = (kind: string, resource: string) => ({ group: "", version: "v1", kind, resource });

/** Reviews of every kind the paths answer, from several users and namespaces. */
function traffic(): { path: string; body: Record<string, unknown> }[] {
  const out: { path: string; body: Record<string, unknown> }[] = [];
  const users = ["alice", "bob", "carol"];
  for (let i = 0; i < 18; i++) {
    const review = deploymentReview({
      uid: `v${i}`,
      namespace: i % 2 === 0 ? "team-a" : "team-b",
      object: {
        ...deployment(i === 7 ? "forbidden" : `web-${i}`, i % 8),
        metadata: { name: i === 7 ? "forbidden" : `web-${i}`, namespace: i % 2 === 0 ? "team-a" : "team-b" },
      },
      ...(i % 5 === 0 ? { apiVersion: "admission.k8s.io/v1beta1" } : {}),
    });
    const user = (review.request as Record<string, unknown>).userInfo as Record<string, unknown>;
    user.username = users[i % 3];
    // A credential-named extra is recorded redacted, and the recording must still decode.
    if (i === 0) user.extra = { "authentication.kubernetes.io/credential-id": ["X509SHA256=abc"] };
    out.push({
      path: ["/validate", "/validate/fail", "/validate/ignore", "/mutate", "/mutate/fail"][i % 5] as string,
      body: review,
    });
  }
  out.push({
    path: "/validate",
    body: deploymentReview({
      uid: "upd",
      operation: "UPDATE",
      object: deployment("web-1", 4),
      oldObject: deployment("web-1", 1),
    }),
  });
  out.push({
    path: "/validate",
    body: deploymentReview({
      uid: "del",
      operation: "DELETE",
      object: null,
      oldObject: deployment("web-2", 3),
    }),
  });
  out.push({
    path: "/validate",
    body: deploymentReview({
      uid: "sec",
      namespace: "default",
      resource: CORE("Secret", "secrets"),
      object: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "db", namespace: "default" },
        data: { password: "aHVudGVyMg==" },
      },
    }),
  });
  return out;
}

async function recordTraffic(t: TestContext, policies: string, lane: boolean): Promise<string> {
  const out = await tempDir(t);
  const w = await startTestWebhook(t, {
    policies: [policies],
    record: { dir: out, sampleRate: 1, maxBytes: 1 << 20 },
    // Every review cut at its first slice: the slow lane answers it.
    ...(lane ? { sliceMs: 1e-9 } : { slowLane: false as const }),
  });
  // The worker builds the set beside everything else the machine runs: as long as the other lane tests allow.
  if (lane)
    await waitFor("the slow lane's set", () => (w.webhook.slowLaneReady() ? true : undefined), 60_000);
  const sent = traffic();
  for (const { path, body } of sent) {
    const reply = await postReview(w.port, w.ca, path, body);
    assert.equal(reply.http.status, 200);
  }
  await waitFor("every review recorded", async () =>
    (sampleValue(await scrape(w.webhook.metricsUrl), "celgate_record_reviews_total") ?? 0) >= sent.length
      ? true
      : undefined,
  );
  if (lane)
    assert.ok(
      (sampleValue(await scrape(w.webhook.metricsUrl), "celgate_slow_lane_reviews_total", {
        reason: "slice",
      }) ?? 0) > 0,
    );
  return out;
}

async function replay(...args: string[]) {
  const { io, out } = fakeIO();
  const code = await main(["replay", ...args], io);
  return { code, ...out };
}

async function policyFile(t: TestContext, text: string): Promise<string> {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policies.yaml"), text);
  return dir;
}

for (const lane of [false, true])
  void test(`replaying a recording with the set that served it changes nothing (${lane ? "the slow lane" : "the main thread"} answered)`, async (t) => {
    const current = await policyFile(t, CURRENT);
    const recording = await recordTraffic(t, current, lane);
    const r = await replay(recording, "-p", current, "-o", "json");
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(report.reviews, traffic().length);
    assert.equal(report.changed, 0);
    assert.equal(report.unchanged, traffic().length);
    assert.deepEqual(report.problems, { count: 0, first: [] });
    // The recording is real: denials, warnings, audit annotations and patches were answered.
    const lines = (await readFile(join(recording, (await readdir(recording))[0] as string), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as RecordedReview);
    assert.ok(lines.some((l) => !l.decision.allowed));
    assert.ok(lines.some((l) => l.decision.warnings.length > 0));
    assert.ok(lines.some((l) => Object.keys(l.decision.auditAnnotations).length > 0));
    assert.ok(lines.some((l) => l.decision.patch.length > 0));
    // As the baseline too: the same set against itself.
    const again = await replay(recording, "-p", current, "--baseline", current, "-o", "json");
    assert.equal(again.code, 0, again.stdout);
    assert.equal((JSON.parse(again.stdout) as { changed: number }).changed, 0);
  });

void test("a candidate's changes are counted, grouped by policy, namespace and user, and gate the exit status", async (t) => {
  const current = await policyFile(t, CURRENT);
  const candidate = await policyFile(t, CANDIDATE);
  const recording = await recordTraffic(t, current, false);
  const r = await replay(recording, "-p", candidate, "-o", "json");
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout) as {
    changes: Record<string, number>;
    byPolicy: { name: string; changes: Record<string, number>; examples: { where: string }[] }[];
    byNamespace: { name: string; reviews: number }[];
    byUser: { name: string; reviews: number }[];
  };
  // Deployments of 3 to 5 replicas are newly denied where the Fail policy `replicas` is served:
  // /validate and /validate/fail (not /validate/ignore, nor a DELETE, whose object is null).
  const expectedDenied = traffic().filter((x) => {
    const req = x.body.request as { operation: string; object: { spec?: { replicas?: number } } | null };
    const replicas = req.object?.spec?.replicas ?? 0;
    const served = x.path === "/validate" || x.path === "/validate/fail";
    return served && req.operation !== "DELETE" && replicas > 2 && replicas <= 5;
  }).length;
  assert.equal(report.changes["newly-denied"], expectedDenied);
  assert.equal(report.changes["newly-allowed"], 0);
  // Every CREATE on a mutating path gets another label.
  const expectedPatched = traffic().filter((x) => x.path.startsWith("/mutate")).length;
  assert.equal(report.changes.patch, expectedPatched);
  const byPolicy = new Map(report.byPolicy.map((g) => [g.name, g]));
  assert.deepEqual([...byPolicy.keys()].sort(), ["replicas", "team-label"]);
  assert.equal(byPolicy.get("replicas")?.changes["newly-denied"], expectedDenied);
  assert.equal(byPolicy.get("team-label")?.changes.patch, expectedPatched);
  assert.match(byPolicy.get("replicas")?.examples[0]?.where ?? "", /reviews-.*\.jsonl:\d+$/);
  // The Secret (no spec) was denied by an error before and after, in words that quote the expression.
  assert.equal(report.changes["denial-changed"], 1);
  assert.deepEqual(report.byNamespace.map((g) => g.name).sort(), ["default", "team-a", "team-b"]);
  assert.deepEqual(report.byUser.map((g) => g.name).sort(), ["alice", "bob", "carol"]);
  // The gate: only the kinds named fail the run.
  assert.equal((await replay(recording, "-p", candidate, "--fail-on", "newly-allowed")).code, 0);
  assert.equal((await replay(recording, "-p", candidate, "--fail-on", "newly-denied")).code, 1);
  const text = await replay(recording, "-p", candidate);
  assert.match(text.stdout, /^replayed 21 reviews against the recorded answers: \d+ unchanged, \d+ changed/);
  assert.match(text.stdout, /by policy:\n {2}team-label: patch changed 6\n/);
  assert.match(text.stdout, /\n {2}replicas: newly denied 3, denied differently 1\n/);
  assert.match(
    text.stdout,
    /allowed -> denied \(422: ValidatingAdmissionPolicy 'replicas' with binding 'replicas' denied request: replicas refuses web-\d+\)/,
  );
  const junit = await replay(recording, "-p", candidate, "-o", "junit");
  assert.match(
    junit.stdout,
    /<testcase classname="celgate.replay.policy" name="replicas">\n\s+<failure message="newly denied 3, denied differently 1"/,
  );
  assert.match(junit.stdout, /<testsuites name="celgate replay" tests="3" failures="3" errors="0">/);
});

/** An audit event at the RequestResponse level, as the API server logs it. */
function auditEvent(
  verb: string,
  name: string,
  replicas: number,
  extra: { stage?: string; impersonate?: string; uri?: string } = {},
): Record<string, unknown> {
  const object = { ...deployment(name, replicas), metadata: { name, namespace: "team-a" } };
  return {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "RequestResponse",
    auditID: `audit-${verb}-${name}-${replicas}`,
    stage: extra.stage ?? "ResponseComplete",
    requestURI:
      extra.uri ?? `/apis/apps/v1/namespaces/team-a/deployments${verb === "create" ? "" : `/${name}`}`,
    verb,
    user: { username: "dave", uid: "d-1", groups: ["system:authenticated"] },
    ...(extra.impersonate
      ? { impersonatedUser: { username: extra.impersonate, groups: ["system:authenticated"] } }
      : {}),
    objectRef: { resource: "deployments", namespace: "team-a", name, apiGroup: "apps", apiVersion: "v1" },
    responseStatus: { metadata: {}, code: 201 },
    ...(verb === "patch"
      ? { requestObject: { spec: { replicas } } }
      : verb === "delete"
        ? {}
        : { requestObject: object }),
    responseObject: verb === "delete" ? { kind: "Status", apiVersion: "v1", status: "Success" } : object,
  };
}

void test("audit.k8s.io Events become the requests the API server built, against a baseline", async (t) => {
  const current = await policyFile(t, CURRENT);
  const candidate = await policyFile(t, CANDIDATE);
  const dir = await tempDir(t);
  const events = [
    auditEvent("create", "api", 4, { stage: "RequestReceived" }), // the same request's first stage
    auditEvent("create", "api", 4),
    auditEvent("get", "api", 4),
    auditEvent("update", "api", 3, {
      impersonate: "erin",
      uri: "/apis/apps/v1/namespaces/team-a/deployments/api?dryRun=All",
    }),
    auditEvent("patch", "api", 1),
    auditEvent("update", "unknown", 4), // no earlier event holds its stored object
    auditEvent("delete", "api", 1),
  ];
  await writeFile(join(dir, "audit.log"), `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
  const r = await replay(dir, "-p", candidate, "--baseline", current, "-o", "json");
  const report = JSON.parse(r.stdout) as {
    reviews: number;
    skipped: number;
    skipReasons: Record<string, number>;
    changes: Record<string, number>;
    byUser: { name: string; reviews: number }[];
  };
  assert.equal(report.reviews, 4, r.stdout);
  assert.deepEqual(report.skipReasons, {
    "not the ResponseComplete stage": 1,
    "the verb 'get' does not reach admission": 1,
    "an update whose stored object no earlier event in the log holds": 1,
  });
  // The create (4 replicas) and the update (3) are newly denied; the patch (1) and the delete are not.
  assert.equal(report.changes["newly-denied"], 2);
  // The whole chain: the candidate's label on the create.
  assert.equal(report.changes.patch, 1);
  // The impersonated user is the one admission saw.
  assert.deepEqual(report.byUser.map((g) => g.name).sort(), ["dave", "erin"]);
  assert.equal(r.code, 1);
  // Without a baseline there is nothing to compare an audit event with: named, exit 2.
  const alone = await replay(dir, "-p", candidate);
  assert.equal(alone.code, 2);
  assert.match(alone.stdout, /audit\.log:2: no recorded answer to compare with .*give --baseline/);
});

void test("eval -r files (resources and AdmissionReviews) replay against a baseline; unreadable lines are named", async (t) => {
  const current = await policyFile(t, CURRENT);
  const candidate = await policyFile(t, CANDIDATE);
  const dir = await tempDir(t);
  await mkdir(join(dir, "nested"));
  await writeFile(
    join(dir, "deploy.yaml"),
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web, namespace: team-a }\nspec:\n  replicas: 3\n  selector: { matchLabels: { app: web } }\n  template:\n    metadata: { labels: { app: web } }\n    spec: { containers: [{ name: web, image: 'nginx:1.27' }] }\n",
  );
  await writeFile(
    join(dir, "nested", "review.json"),
    JSON.stringify(deploymentReview({ uid: "r1", object: deployment("web", 1) })),
  );
  const r = await replay(dir, "-p", candidate, "--baseline", current, "-o", "json");
  const report = JSON.parse(r.stdout) as { reviews: number; changes: Record<string, number> };
  assert.equal(report.reviews, 2);
  assert.equal(report.changes["newly-denied"], 1);
  assert.equal(r.code, 1);

  const recording = await tempDir(t);
  await writeFile(
    join(recording, "reviews.jsonl"),
    `{"kind": "RecordedReview"\n${JSON.stringify({ kind: "Pod" })}\n`,
  );
  const bad = await replay(recording, "-p", current);
  assert.equal(bad.code, 2);
  assert.match(bad.stdout, /reviews\.jsonl:1: not a JSON line/);
  assert.match(
    bad.stdout,
    /reviews\.jsonl:2: a Pod: expected a RecordedReview, an AdmissionReview or an audit\.k8s\.io Event/,
  );
  const usage = await replay(recording);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /missing -p\/--policy/);
});
