/**
 * `serve` connected to a cluster, end to end: the real webhook over TLS on 127.0.0.1 with real
 * AdmissionReviews, connected through a kubeconfig to the test API server
 * (test/helpers/kube-apiserver.ts) by the real @kubernetes/client-node. Every wait is bounded.
 *
 * Upstream behaviours pinned here: namespaceSelector and params read live cluster state
 * (apiserver/pkg/admission/plugin/policy/generic/policy_source.go keeps informers for them);
 * parameterNotFoundAction and "not yet synced" (generic/policy_dispatcher.go CollectParams);
 * authorizer checks as SubjectAccessReviews with authorizer errors as decisions that errored
 * (apiserver/pkg/cel/library/authz.go).
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import type { ClusterLog } from "../../src/cluster/observe.ts";
import { send } from "../helpers/https.ts";
import { type KubeApiServer, startKubeApiServer } from "../helpers/kube-apiserver.ts";
import {
  deployment,
  deploymentReview,
  postReview,
  replaceFile,
  runLoad,
  sampleValue,
  scrape,
  startTestWebhook,
  type TestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const DEPLOYMENTS = `
  matchConstraints:
    resourceRules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["deployments"]`;

function namespace(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } },
  };
}

function configMap(name: string, namespace: string, data: Record<string, string>) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

interface Started extends TestWebhook {
  readonly dir: string;
  readonly clusterLines: string[];
}

async function serveConnected(
  t: TestContext,
  api: KubeApiServer,
  policies: string,
  extra: {
    policiesFromCluster?: boolean;
    sarTtlMs?: number;
    waitReady?: boolean;
    silenceMs?: number;
    staleReadiness?: "serve" | "unready";
  } = {},
): Promise<Started> {
  const dir = await tempDir(t);
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(kubeconfig, api.kubeconfig());
  const policyDir = join(dir, "policies");
  await import("node:fs/promises").then((fs) => fs.mkdir(policyDir));
  await writeFile(join(policyDir, "policy.yaml"), policies);
  const clusterLines: string[] = [];
  const line =
    (level: string): ClusterLog["info"] =>
    (fields, message) =>
      clusterLines.push(`${level} ${message} ${JSON.stringify(fields)}`);
  const started = await startTestWebhook(t, {
    policies: [policyDir],
    pollMs: 100,
    cluster: {
      kubeconfig,
      log: { info: line("info"), warn: line("warn"), error: line("error") },
      reflector: {
        backoffInitialMs: 20,
        backoffMaxMs: 100,
        ...(extra.silenceMs !== undefined ? { silenceMs: extra.silenceMs } : {}),
      },
      ...(extra.staleReadiness !== undefined ? { staleReadiness: extra.staleReadiness } : {}),
      staleLogMs: 50,
      ...(extra.policiesFromCluster ? { policiesFromCluster: true } : {}),
      ...(extra.sarTtlMs !== undefined ? { sar: { ttlMs: extra.sarTtlMs } } : {}),
    },
  });
  if (extra.waitReady !== false) {
    const ready = await started.webhook.cluster!.whenReady(10_000);
    assert.ok(ready, "the caches synced");
  }
  return { ...started, dir: policyDir, clusterLines };
}

async function review(w: TestWebhook, body: Record<string, unknown>, path = "/validate") {
  return (await postReview(w.port, w.ca, path, body)).response;
}

const PROD_ONLY = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: prod-replicas }
spec:
  failurePolicy: Fail
${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= 2"
      message: "production runs at most 2 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: prod-replicas }
spec:
  policyName: prod-replicas
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: { env: prod }
`;

void test("a Namespace's label changed in the cluster flips the decision, without a restart", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a", { env: "dev" }));
  const w = await serveConnected(t, api, PROD_ONLY);
  const body = () => deploymentReview({ object: deployment("web", 5) });
  assert.equal((await review(w, body())).allowed, true, "dev: not selected");
  api.put(namespace("team-a", { env: "prod" }));
  const denied = await waitFor("the label change to reach the decision", async () => {
    const r = await review(w, body());
    return r.allowed ? undefined : r;
  });
  assert.match(denied.status?.message ?? "", /production runs at most 2 replicas/);
});

const PARAMS = (action: "Deny" | "Allow") => `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replica-limit }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= int(params.data.max)"
      messageExpression: "'at most ' + params.data.max + ' replicas'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replica-limit }
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef: { name: limits, parameterNotFoundAction: ${action} }
`;

void test("a param ConfigMap edited in the cluster takes effect; deleted, parameterNotFoundAction decides", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a"));
  api.put(configMap("limits", "team-a", { max: "3" }));
  const w = await serveConnected(t, api, PARAMS("Deny"));
  const body = () => deploymentReview({ object: deployment("web", 5) });
  const first = await review(w, body());
  assert.equal(first.allowed, false);
  assert.match(first.status?.message ?? "", /at most 3 replicas/);
  api.put(configMap("limits", "team-a", { max: "10" }));
  await waitFor("the edit to take effect", async () =>
    (await review(w, body())).allowed ? true : undefined,
  );
  api.delete("v1", "ConfigMap", "team-a", "limits");
  const gone = await waitFor("the deletion to take effect", async () => {
    const r = await review(w, body());
    return r.allowed ? undefined : r;
  });
  // policy_dispatcher.go: "no params found for policy binding with `Deny` parameterNotFoundAction".
  assert.match(
    gone.status?.message ?? "",
    /no params found for policy binding with `Deny` parameterNotFoundAction/,
  );
  // Allow: the binding is skipped when its param is missing.
  await replaceFile(join(w.dir, "policy.yaml"), PARAMS("Allow"));
  await waitFor("the Allow binding to load", async () =>
    (await review(w, body())).allowed ? true : undefined,
  );
});

void test("readiness waits for the first sync; the API server going away leaves decisions to the cache, with its age in metrics and logs", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a", { env: "prod" }));
  await api.goAway();
  const w = await serveConnected(t, api, PROD_ONLY, { waitReady: false });
  const readyz = () => send({ port: w.port, ca: w.ca, path: "/readyz", timeoutMs: 5000 });
  assert.equal((await readyz()).status, 503, "not ready before the caches sync");
  await api.comeBack();
  await waitFor("ready", async () => ((await readyz()).status === 200 ? true : undefined));
  let metrics = await scrape(w.webhook.metricsUrl);
  assert.equal(sampleValue(metrics, "celgate_cluster_cache_synced", { resource: "namespaces" }), 1);
  // 0 once the watch that follows the list is open.
  await waitFor("a current cache", async () =>
    sampleValue(await scrape(w.webhook.metricsUrl), "celgate_cluster_cache_age_seconds", {
      resource: "namespaces",
    }) === 0
      ? true
      : undefined,
  );

  await api.goAway();
  await waitFor("the lost connection to be logged", () =>
    w.clusterLines.some((l) => l.startsWith("error cluster connection lost")) ? true : undefined,
  );
  const body = deploymentReview({ object: deployment("web", 5) });
  const r = await review(w, body);
  assert.equal(r.allowed, false, "the cached Namespace (env=prod) still selects the binding");
  assert.equal((await readyz()).status, 200, "still ready: the cache keeps serving");
  metrics = await waitFor("the cache age to grow", async () => {
    const m = await scrape(w.webhook.metricsUrl);
    return (sampleValue(m, "celgate_cluster_cache_age_seconds", { resource: "namespaces" }) ?? 0) > 0
      ? m
      : undefined;
  });
  assert.ok(
    (sampleValue(metrics, "celgate_cluster_watch_restarts_total", {
      resource: "namespaces",
      reason: "error",
    }) ?? 0) >= 1,
  );
  await waitFor("the stale state to be logged", () =>
    w.clusterLines.some((l) => l.startsWith("warn the API server cannot be reached")) ? true : undefined,
  );

  api.put(namespace("team-a", { env: "dev" }));
  await api.comeBack();
  await waitFor("the cache to catch up", async () => ((await review(w, body)).allowed ? true : undefined));
  await waitFor("a current cache again", async () =>
    sampleValue(await scrape(w.webhook.metricsUrl), "celgate_cluster_cache_age_seconds", {
      resource: "namespaces",
    }) === 0
      ? true
      : undefined,
  );
});

// A hung API server (SIGSTOP) answers nothing and closes nothing. The watch cache bookmarks every
// watch about once a minute (apiserver/pkg/storage/cacher cacheWatcher.nextBookmarkTime); here
// every 100 ms, with the silence threshold at 1.5 s.
void test("a hung API server: the cache's real age in metrics and one log line; with --cluster-stale-readiness=unready the pod is unready until it wakes", async (t) => {
  const api = await startKubeApiServer(t, { bookmarkEveryMs: 100 });
  api.put(namespace("team-a", { env: "prod" }));
  const w = await serveConnected(t, api, PROD_ONLY, { silenceMs: 1500, staleReadiness: "unready" });
  const readyz = () => send({ port: w.port, ca: w.ca, path: "/readyz", timeoutMs: 5000 });
  const age = async () =>
    sampleValue(await scrape(w.webhook.metricsUrl), "celgate_cluster_cache_age_seconds", {
      resource: "namespaces",
    });
  await waitFor("a current cache", async () => ((await age()) === 0 ? true : undefined));
  // Quiet but bookmarked: still current a while later.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.equal(await age(), 0);
  assert.equal((await readyz()).status, 200);

  api.hang();
  const hungAt = w.clusterLines.length;
  const silentLines = () => w.clusterLines.slice(hungAt).filter((l) => l.includes("no event or bookmark"));
  const notReady = await waitFor("readiness to turn off", async () => {
    const r = await readyz();
    return r.status === 503 ? r : undefined;
  });
  assert.match(notReady.body, /cluster state .*old \(namespaces\)/);
  await waitFor("the silence to be logged", () => (silentLines().length > 0 ? true : undefined));
  assert.ok(((await age()) ?? 0) >= 1.5, "the real age, from the last bookmark");
  // Hung for another threshold and more: still one line.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.equal(silentLines().length, 1, w.clusterLines.join("\n"));
  assert.match(silentLines()[0] ?? "", /"resource":"namespaces".*"cacheAgeSeconds":/);
  assert.ok(((await age()) ?? 0) >= 3.5, "the age keeps growing");
  const r = await review(w, deploymentReview({ object: deployment("web", 5) }));
  assert.equal(r.allowed, false, "decided from the cache: team-a is env=prod");

  api.wake();
  await waitFor("ready again", async () => ((await readyz()).status === 200 ? true : undefined));
  await waitFor("a current cache again", async () => ((await age()) === 0 ? true : undefined));
});

void test("a namespace the cache has never seen is an error that failurePolicy decides", async (t) => {
  const api = await startKubeApiServer(t);
  const w = await serveConnected(t, api, PROD_ONLY);
  const r = await review(w, deploymentReview({ namespace: "nowhere", object: deployment("web", 1) }));
  assert.equal(r.allowed, false, "failurePolicy Fail");
  assert.match(r.status?.message ?? "", /nowhere/);
});

void test("410 Gone: the caches list again and count it", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a", { env: "dev" }));
  const w = await serveConnected(t, api, PROD_ONLY);
  await waitFor("the watch", () => (api.watchCount("namespaces") === 1 ? true : undefined));
  api.compact();
  api.put(namespace("team-a", { env: "prod" }));
  await waitFor("the relist", async () => {
    const m = await scrape(w.webhook.metricsUrl);
    return sampleValue(m, "celgate_cluster_relists_total", { resource: "namespaces", reason: "expired" }) ===
      1
      ? true
      : undefined;
  });
  await waitFor("the new label", async () =>
    (await review(w, deploymentReview({ object: deployment("web", 5) }))).allowed ? undefined : true,
  );
  assert.ok(w.clusterLines.some((l) => l.startsWith("info relisted")));
});

void test("a policy reload with another paramKind starts its cache and stops the unused one", async (t) => {
  const api = await startKubeApiServer(t);
  api.addType({ group: "example.com", version: "v1", kind: "Limit", plural: "limits", namespaced: false });
  api.put(namespace("team-a"));
  api.put(configMap("limits", "team-a", { max: "3" }));
  const w = await serveConnected(t, api, PARAMS("Deny"));
  await waitFor("the configmaps watch", () => (api.watchCount("configmaps") === 1 ? true : undefined));
  api.put({ apiVersion: "example.com/v1", kind: "Limit", metadata: { name: "cluster-wide" }, max: 1 });
  const custom = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: custom-limit }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: example.com/v1, kind: Limit }
${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= params.max"
      messageExpression: "'a Limit allows ' + string(params.max)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: custom-limit }
spec:
  policyName: custom-limit
  validationActions: [Deny]
  paramRef: { name: cluster-wide, parameterNotFoundAction: Deny }
`;
  await replaceFile(join(w.dir, "policy.yaml"), custom);
  const denied = await waitFor("the custom resource's param to decide", async () => {
    const r = await review(w, deploymentReview({ object: deployment("web", 2) }));
    return /a Limit allows 1/.test(r.status?.message ?? "") ? r : undefined;
  });
  assert.equal(denied.allowed, false);
  await waitFor("the configmaps watch to stop", () =>
    api.watchCount("configmaps") === 0 ? true : undefined,
  );
  // Its list came first (the decision above used it); its watch opens right after.
  await waitFor("the limits watch", () => (api.watchCount("limits") === 1 ? true : undefined));
  assert.ok(api.requests.includes("GET /apis/example.com/v1"), "found through discovery");
});

const AUTHZ = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: may-delete-pods }
spec:
  failurePolicy: Fail
${DEPLOYMENTS}
  # A messageExpression has no authorizer (validating/plugin.go compiles it with HasAuthorizer
  # false), nor do the variables it reads (validator.go evaluates them afresh without it): the
  # message falls back to the expression, as a real API server's does (test/kube/connected.test.ts).
  variables:
    - name: deletePods
      expression: "authorizer.group('').resource('pods').namespace(request.namespace).check('delete')"
    - name: health
      expression: "authorizer.path('/healthz').check('get')"
  validations:
    - expression: "variables.deletePods.allowed()"
      messageExpression: "'not allowed to delete pods: ' + variables.deletePods.reason()"
    - expression: "!variables.health.errored()"
      messageExpression: "'authorizer error: ' + variables.health.error()"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: may-delete-pods }
spec:
  policyName: may-delete-pods
  validationActions: [Deny]
`;

void test("authorizer checks are SubjectAccessReviews for the request's user, cached, and errors are decisions that errored", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a"));
  const seen: Record<string, unknown>[] = [];
  api.authorize = (a) => {
    seen.push({ ...a });
    if (a.nonResourceAttributes) return { allowed: true };
    return a.groups.includes("dev")
      ? { allowed: true, reason: "RBAC: dev" }
      : { allowed: false, reason: "no RBAC rule" };
  };
  const w = await serveConnected(t, api, AUTHZ);
  const asAlice = () => {
    const body = deploymentReview();
    (body.request as { userInfo: unknown }).userInfo = {
      username: "alice",
      uid: "u-1",
      groups: ["system:authenticated", "dev"],
      extra: { scopes: ["b", "a"] },
    };
    return body;
  };
  assert.equal((await review(w, asAlice())).allowed, true);
  assert.equal(api.sarCalls, 2, "one SAR per distinct check");
  const resourceCheck = seen.find((s) => s.resourceAttributes !== undefined);
  assert.deepEqual(resourceCheck, {
    user: "alice",
    groups: ["dev", "system:authenticated"],
    uid: "u-1",
    extra: { scopes: ["a", "b"] },
    resourceAttributes: { verb: "delete", version: "*", resource: "pods", namespace: "team-a" },
  });
  // The same checks again: answered from the cache.
  assert.equal((await review(w, asAlice())).allowed, true);
  assert.equal(api.sarCalls, 2, "no new SAR");
  const bob = deploymentReview();
  (bob.request as { userInfo: unknown }).userInfo = { username: "bob", groups: ["system:authenticated"] };
  const denied = await review(w, bob);
  assert.equal(denied.allowed, false);
  assert.match(
    denied.status?.message ?? "",
    /denied request: failed expression: variables\.deletePods\.allowed\(\)$/,
  );
  const metrics = await scrape(w.webhook.metricsUrl);
  assert.ok((sampleValue(metrics, "celgate_authorizer_checks_total", { cache: "hit" }) ?? 0) >= 2);
  assert.equal(
    sampleValue(metrics, "celgate_subjectaccessreviews_total", { outcome: "ok" }),
    4,
    "bob's two checks",
  );

  // The API server gone: a new user's checks fail; the decision errored() and allowed() is false.
  await api.goAway();
  const carol = deploymentReview();
  (carol.request as { userInfo: unknown }).userInfo = { username: "carol", groups: ["dev"] };
  const failed = await review(w, carol);
  assert.equal(failed.allowed, false);
  assert.match(
    failed.status?.message ?? "",
    /failed expression: (variables\.deletePods\.allowed\(\)|!variables\.health\.errored\(\))$/,
  );
});

void test("one review sends at most its budget of SubjectAccessReviews", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a"));
  api.authorize = () => ({ allowed: true });
  const checks = Array.from(
    { length: 20 },
    (_, i) => `authorizer.group('').resource('r${i}').check('get').allowed()`,
  );
  const policy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: many-checks }
spec:
  failurePolicy: Fail
${DEPLOYMENTS}
  validations:
    - expression: "${checks.join(" && ")}"
      message: "a check was not allowed"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: many-checks }
spec: { policyName: many-checks, validationActions: [Deny] }
`;
  const w = await serveConnected(t, api, policy);
  const r = await review(w, deploymentReview());
  // `&&` stops at the first false: each round reveals one more check, up to the budget (16).
  assert.equal(r.allowed, false);
  assert.equal(api.sarCalls, 16);
  const metrics = await scrape(w.webhook.metricsUrl);
  assert.equal(sampleValue(metrics, "celgate_subjectaccessreviews_total", { outcome: "budget" }), 1);
});

void test("--policies-from-cluster serves the cluster's own policies next to the files, and reports a name clash", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a", { env: "prod" }));
  const w = await serveConnected(t, api, PROD_ONLY, { policiesFromCluster: true });
  api.put({
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
      validations: [
        { expression: "object.metadata.name != 'latest'", message: "no deployment named latest" },
      ],
    },
    status: { observedGeneration: 1 },
  });
  api.put({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: "no-latest" },
    spec: { policyName: "no-latest", validationActions: ["Deny"] },
  });
  const denied = await waitFor("the cluster policy to apply", async () => {
    const r = await review(w, deploymentReview({ object: deployment("latest", 1) }));
    return r.allowed ? undefined : r;
  });
  assert.match(denied.status?.message ?? "", /no deployment named latest/);
  // A MutatingAdmissionPolicy served only as v1beta1 in this cluster is watched in that version.
  assert.ok(
    api.requests.some((q) =>
      q.startsWith("GET /apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies?"),
    ),
  );
  // The file's prod-replicas wins over a cluster policy of the same name.
  api.put({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: "prod-replicas" },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"] }],
      },
      validations: [{ expression: "false" }],
    },
  });
  await waitFor(
    "the clash to be reported",
    () =>
      w.clusterLines.some((l) => l.includes("defined in the policy files and in the cluster"))
        ? true
        : undefined,
    10_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}: ${w.clusterLines.join("\n")}`);
  });
  assert.equal((await review(w, deploymentReview({ object: deployment("web", 1) }))).allowed, true);
});

void test("under load, SubjectAccessReviews are one per user and check: the rest hit the cache or share one in flight", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a"));
  // Slow answers, so that concurrent reviews by one user overlap while their SAR is on its way.
  api.authorize = async (a) => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { allowed: a.nonResourceAttributes !== undefined || a.groups.includes("dev") };
  };
  const w = await serveConnected(t, api, AUTHZ, { sarTtlMs: 60_000 });
  // Two users over ten connections: every user has several reviews in flight at once.
  const users = ["u0", "u1"];
  const records = await runLoad({
    workers: 10,
    maxRequests: 400,
    maxMs: 60_000,
    request: async (i) => {
      const body = deploymentReview();
      const user = users[i % users.length]!;
      (body.request as { userInfo: unknown }).userInfo = {
        username: user,
        groups: i % 2 === 0 ? ["dev"] : ["dev", "x"],
      };
      return (await postReview(w.port, w.ca, "/validate", body)).response;
    },
  });
  assert.equal(records.length, 400);
  assert.deepEqual(
    records
      .filter((r) => r.error || !r.result?.allowed)
      .map((r) => r.error?.message ?? r.result?.status?.message),
    [],
  );
  // 2 users × 2 checks.
  assert.equal(api.sarCalls, 4);
  const metrics = await scrape(w.webhook.metricsUrl);
  const hits = sampleValue(metrics, "celgate_authorizer_checks_total", { cache: "hit" }) ?? 0;
  const misses = sampleValue(metrics, "celgate_authorizer_checks_total", { cache: "miss" }) ?? 0;
  assert.equal(misses, 4);
  t.diagnostic(
    `SAR cache: ${hits} hits, ${misses} misses over 400 reviews (${((100 * hits) / (hits + misses)).toFixed(1)}% hits)`,
  );
});

// The API server's webhook authorizer keeps an allow for 5 minutes and anything else for 30 s
// (kube-apiserver --authorization-webhook-cache-authorized-ttl / -unauthorized-ttl), and retries a
// failed call after 500 ms, ×1.5 (apiserver/plugin/pkg/authorizer/webhook/webhook.go). celgate asks
// again after its own TTL, but while SubjectAccessReviews fail it serves answers that old, and
// sends none until the backoff has passed.
void test("a SubjectAccessReview outage: allowed users stay allowed from their last answer, and SARs follow the backoff", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(namespace("team-a"));
  api.authorize = () => ({ allowed: true, reason: "RBAC" });
  const w = await serveConnected(t, api, AUTHZ, { sarTtlMs: 100 });
  const asAlice = () => {
    const body = deploymentReview();
    (body.request as { userInfo: unknown }).userInfo = { username: "alice", groups: ["dev"] };
    return body;
  };
  assert.equal((await review(w, asAlice())).allowed, true);
  assert.equal(api.sarCalls, 2);
  api.authorize = () => {
    throw new Error("etcdserver: request timed out");
  };
  await new Promise((resolve) => setTimeout(resolve, 150));
  const started = performance.now();
  const records = await runLoad({
    workers: 4,
    maxRequests: 300,
    maxMs: 30_000,
    request: async () => (await postReview(w.port, w.ca, "/validate", asAlice())).response,
  });
  const elapsed = performance.now() - started;
  assert.deepEqual(
    records
      .filter((r) => r.error || !r.result?.allowed)
      .map((r) => r.error?.message ?? r.result?.status?.message),
    [],
  );
  // Tries at 0, then after 500 ms, 750 ms, … (up to 20% later each): two checks per try at most.
  let tries = 1;
  for (let at = 0, wait = 500; at + wait <= elapsed; at += wait, wait *= 1.5) tries++;
  const sent = api.sarCalls - 2;
  t.diagnostic(`${sent} SARs during ${elapsed.toFixed(0)} ms of outage, ${records.length} reviews`);
  assert.ok(
    sent >= 1 && sent <= 2 * tries,
    `${sent} SARs in ${elapsed.toFixed(0)} ms (at most ${2 * tries})`,
  );
  const metrics = await scrape(w.webhook.metricsUrl);
  assert.ok((sampleValue(metrics, "celgate_authorizer_checks_total", { cache: "stale" }) ?? 0) > 0);
});
