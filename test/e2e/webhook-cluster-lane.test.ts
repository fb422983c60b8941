/**
 * The slow lane of a cluster-connected `serve` (issue 36 item 2): a review still running when its
 * slice ends moves to the lane's worker, which reads the cluster through the main thread
 * (src/adapters/server/lane-remote.ts, lane-lookups.ts): its Namespace (namespaceSelector and
 * namespaceObject), its params (a paramRef by name in the request's namespace, by selector, and one
 * that finds none) and its authorizer checks (SubjectAccessReviews the main thread sends). Against
 * the test API server (test/helpers/kube-apiserver.ts) over a kubeconfig, with real AdmissionReviews
 * over TLS on 127.0.0.1.
 *
 * Upstream semantics are those the connected tests pin already (webhook-cluster.test.ts:
 * generic/policy_dispatcher.go CollectParams, policy_source.go's informers, cel/library/authz.go);
 * here the same reviews must get the same answers from a server that evaluates everything on its
 * main thread and from one that moves every review to the lane. No test here measures time: the
 * isolation test asserts an order of events.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { ServeOptions } from "../../src/adapters/server/app.ts";
import { send } from "../helpers/https.ts";
import { type KubeApiServer, startKubeApiServer } from "../helpers/kube-apiserver.ts";
import {
  deployment,
  deploymentReview,
  keepAliveAgent,
  postReview,
  sampleValue,
  scrape,
  startTestWebhook,
  type TestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const SLOW = fileURLToPath(new URL("../fixtures/webhook/slow", import.meta.url));

const DEPLOYMENTS = `
  matchConstraints:
    resourceRules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["deployments"]`;

/** Policies that read everything a connected review can read of the cluster. */
const CONNECTED = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replicas-by-namespace }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= int(params.data.max)"
      messageExpression: "'at most ' + params.data.max + ' replicas in ' + namespaceObject.metadata.name + ' (' + namespaceObject.metadata.labels.env + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replicas-by-namespace }
spec:
  policyName: replicas-by-namespace
  validationActions: [Deny]
  paramRef: { name: limits, parameterNotFoundAction: Deny }
  matchResources:
    namespaceSelector:
      matchExpressions: [{ key: env, operator: In, values: [prod, dev] }]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: tiers }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
${DEPLOYMENTS}
  validations:
    - expression: "!has(object.metadata.labels) || !('tier' in object.metadata.labels) || object.metadata.labels.tier != params.data.forbidden"
      messageExpression: "'tier ' + params.data.forbidden + ' is forbidden by ' + params.metadata.name"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: tiers }
spec:
  policyName: tiers
  validationActions: [Deny]
  paramRef:
    selector: { matchLabels: { kind: tier-rule } }
    parameterNotFoundAction: Allow
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: may-scale }
spec:
  failurePolicy: Fail
${DEPLOYMENTS}
  variables:
    - name: scale
      expression: "authorizer.group('apps').resource('deployments').subresource('scale').namespace(request.namespace).check('update')"
  validations:
    - expression: "object.spec.replicas <= 1 || variables.scale.allowed()"
      messageExpression: "'may not scale: ' + variables.scale.reason()"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: may-scale }
spec:
  policyName: may-scale
  validationActions: [Deny]
`;

function namespace(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } },
  };
}

function configMap(
  name: string,
  ns: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns, labels }, data };
}

/** The cluster the reviews read: Namespaces, per-namespace limits, tier rules, and an authorizer. */
async function cluster(t: TestContext): Promise<KubeApiServer> {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a", { env: "prod" }));
  api.put(namespace("team-b", { env: "dev" }));
  api.put(namespace("team-c", { env: "prod" }));
  api.put(namespace("sandbox"));
  api.put(configMap("limits", "team-a", { max: "3" }));
  api.put(configMap("limits", "team-b", { max: "6" }));
  api.put(configMap("no-latest", "team-a", { forbidden: "experimental" }, { kind: "tier-rule" }));
  api.put(configMap("no-gold", "team-a", { forbidden: "gold" }, { kind: "tier-rule" }));
  api.authorize = (a) =>
    a.groups.includes("dev")
      ? { allowed: true, reason: "RBAC: dev" }
      : { allowed: false, reason: "no RBAC rule" };
  return api;
}

async function serveConnected(
  t: TestContext,
  api: KubeApiServer,
  policies: readonly string[],
  { policiesFromCluster, ...extra }: Partial<ServeOptions> & { readonly policiesFromCluster?: boolean } = {},
): Promise<TestWebhook> {
  const dir = await tempDir(t);
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(kubeconfig, api.kubeconfig());
  const w = await startTestWebhook(t, {
    policies,
    cluster: {
      kubeconfig,
      reflector: { backoffInitialMs: 20, backoffMaxMs: 100 },
      sar: { ttlMs: 0 },
      ...(policiesFromCluster ? { policiesFromCluster } : {}),
    },
    ...extra,
  });
  assert.ok(await w.webhook.cluster?.whenReady(10_000), "the caches synced");
  return w;
}

async function policyDir(t: TestContext, text: string): Promise<string> {
  const dir = join(await tempDir(t), "policies");
  await mkdir(dir);
  await writeFile(join(dir, "policy.yaml"), text);
  return dir;
}

async function laneReady(w: TestWebhook): Promise<void> {
  await waitFor(
    "the slow lane to build the policy set",
    () => (w.webhook.slowLaneReady() ? true : undefined),
    60_000,
  );
}

async function offloaded(w: TestWebhook): Promise<number> {
  return (
    sampleValue(await scrape(w.webhook.metricsUrl), "celgate_slow_lane_reviews_total", { reason: "slice" }) ??
    0
  );
}

function asUser(body: Record<string, unknown>, username: string, groups: string[]): Record<string, unknown> {
  (body.request as { userInfo: unknown }).userInfo = { username, groups };
  return body;
}

/** Each case reads something else of the cluster; the comment says what decides it. */
const CASES: readonly { readonly what: string; readonly body: Record<string, unknown> }[] = [
  {
    what: "params by name and namespaceObject: allowed",
    body: deploymentReview({ uid: "a", object: deployment("web", 1) }),
  },
  {
    what: "params by name: 4 > 3, the message from params and namespaceObject",
    body: deploymentReview({ uid: "b", object: deployment("web", 4), namespace: "team-a" }),
  },
  {
    what: "another namespace's params: 4 <= 6, and the SAR allows scaling",
    body: deploymentReview({ uid: "c", object: deployment("web", 4), namespace: "team-b" }),
  },
  {
    what: "no limits ConfigMap in team-c: Deny by parameterNotFoundAction",
    body: deploymentReview({ uid: "d", object: deployment("web", 1), namespace: "team-c" }),
  },
  {
    what: "sandbox has no env label: not selected, the selector's params do not apply there",
    body: deploymentReview({ uid: "e", object: deployment("web", 1), namespace: "sandbox" }),
  },
  {
    what: "params by selector: the tier rule denies",
    body: deploymentReview({ uid: "f", object: deployment("web", 1, { labels: { tier: "gold" } }) }),
  },
  {
    what: "the SAR denies scaling for a user outside dev",
    body: asUser(deploymentReview({ uid: "g", object: deployment("web", 2), namespace: "team-b" }), "bob", [
      "system:authenticated",
    ]),
  },
  {
    what: "the SAR allows it for dev",
    body: asUser(deploymentReview({ uid: "h", object: deployment("web", 2), namespace: "team-b" }), "carol", [
      "dev",
    ]),
  },
];

async function answers(w: TestWebhook): Promise<string[]> {
  const out: string[] = [];
  for (const c of CASES) {
    const res = await send({ port: w.port, ca: w.ca, path: "/validate", body: c.body });
    out.push(`${c.what}: ${res.status} ${res.body}`);
  }
  return out;
}

void test("connected: the lane answers as the main thread does, reading params, namespaceObject and SubjectAccessReviews through it", {
  timeout: 180_000,
}, async (t) => {
  const api = await cluster(t);
  const dir = await policyDir(t, CONNECTED);
  const here = await serveConnected(t, api, [dir], { slowLane: false });
  // A slice too short for any review to finish in: every review with a policy to evaluate moves.
  const there = await serveConnected(t, api, [dir], { sliceMs: 1e-9 });
  await laneReady(there);
  const sarsBefore = api.sarCalls;
  const expected = await answers(here);
  const sarsHere = api.sarCalls - sarsBefore;
  const actual = await answers(there);
  assert.deepEqual(actual, expected);
  assert.equal(
    api.sarCalls - sarsBefore,
    2 * sarsHere,
    "the lane's reviews sent the same SubjectAccessReviews",
  );
  assert.ok(sarsHere >= 3, `${sarsHere} SARs`);
  assert.equal(await offloaded(there), CASES.length, "every review went to the lane");
  assert.equal(await offloaded(here), 0);
  // The decisions are the cluster's: spot-check the words that only its objects can give.
  const joined = expected.join("\n");
  assert.match(joined, /at most 3 replicas in team-a \(prod\)/);
  assert.match(joined, /tier gold is forbidden by no-gold/);
  // The SAR's denial, with the message a real API server gives: the messageExpression's variable
  // checks the authorizer, which messageExpressions do not have (validating/validator.go).
  assert.match(
    joined,
    /may-scale' denied request: failed expression: object\.spec\.replicas <= 1 \|\| variables\.scale\.allowed\(\)/,
  );
  assert.match(joined, /no params found for policy binding with `Deny` parameterNotFoundAction/);
});

void test("connected: while a slow review is evaluated in the lane, the ordinary ones sent meanwhile are all answered before it", {
  timeout: 180_000,
}, async (t) => {
  const api = await cluster(t);
  const dir = await policyDir(t, CONNECTED);
  const w = await serveConnected(t, api, [SLOW, dir]);
  await laneReady(w);
  let slowDone = false;
  const widget = deploymentReview({
    uid: "slow",
    resource: { group: "example.com", version: "v1", kind: "Widget", resource: "widgets" },
    object: {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "team-a" },
      spec: { items: Array.from({ length: 60 }, (_, i) => i) },
    },
  });
  const slow = postReview(w.port, w.ca, "/validate/fail", widget, {
    query: "timeout=30s",
    timeoutMs: 120_000,
  }).then((reply) => {
    slowDone = true;
    return reply;
  });
  await waitFor("the slow review to move to the lane", async () =>
    (await offloaded(w)) >= 1 ? true : undefined,
  );
  const agent = keepAliveAgent(w.ca);
  t.after(() => agent.destroy());
  const answeredBeforeSlow: boolean[] = [];
  for (let i = 0; i < 20; i++) {
    const reply = await postReview(
      w.port,
      w.ca,
      "/validate",
      deploymentReview({ uid: `o-${i}`, object: deployment("web", 4) }),
      { agent },
    );
    assert.match(reply.response.status?.message ?? "", /at most 3 replicas in team-a \(prod\)/);
    answeredBeforeSlow.push(!slowDone);
  }
  assert.deepEqual(answeredBeforeSlow, Array(20).fill(true), "an ordinary review waited for the slow one");
  assert.deepEqual((await slow).response, { uid: "slow", allowed: true });
});

void test("connected with --policies-from-cluster: the lane serves the cluster's own policies as the main thread does, and a changed one", {
  timeout: 180_000,
}, async (t) => {
  const api = await cluster(t);
  const noLatest = (message: string) => ({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: "no-latest", resourceVersion: "x", managedFields: [] },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
        ],
      },
      validations: [{ expression: "object.metadata.name != 'latest'", message }],
    },
  });
  api.put(noLatest("no deployment named latest"));
  api.put({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: "no-latest" },
    spec: { policyName: "no-latest", validationActions: ["Deny"] },
  });
  const dir = await policyDir(t, CONNECTED);
  const there = await serveConnected(t, api, [dir], { sliceMs: 1e-9, policiesFromCluster: true });
  await laneReady(there);
  const latest = () => deploymentReview({ object: deployment("latest", 1) });
  const first = await postReview(there.port, there.ca, "/validate", latest());
  assert.equal(first.response.allowed, false);
  assert.match(first.response.status?.message ?? "", /no deployment named latest/);
  const moved = await offloaded(there);
  assert.ok(moved >= 1, "the review went to the lane");
  // The cluster's policy changes: a new set, built in the lane too, answers with the new words.
  api.put(noLatest("latest is not a version"));
  const changed = await waitFor("the changed cluster policy in the lane", async () => {
    await laneReady(there);
    const r = (await postReview(there.port, there.ca, "/validate", latest())).response;
    return /latest is not a version/.test(r.status?.message ?? "") ? r : undefined;
  });
  assert.equal(changed.allowed, false);
  assert.ok((await offloaded(there)) > moved, "the review after the change went to the lane");
});
