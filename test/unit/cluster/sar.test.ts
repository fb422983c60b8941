/**
 * authorizer checks as SubjectAccessReviews (src/cluster/sar.ts) against the test API server.
 * Upstream: apiserver/pkg/cel/library/authz.go (resource checks carry APIVersion "*";
 * serviceAccount() is a user with a name and groups only; errored() is an authorizer error),
 * admission/plugin/policy/validating/caching_authorizer.go (one answer per distinct check in a
 * review, keyed with sorted groups and extra), plugin/pkg/authorizer/webhook/webhook.go (a SAR's
 * status read as allow, deny or no-opinion; a failed call is no-opinion with the error).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AuthorizationAttributes } from "../../../src/cel/index.ts";
import { SubjectAccessReviewer } from "../../../src/cluster/sar.ts";
import type { UserInfo } from "../../../src/request/types.ts";
import { startKubeApiServer } from "../../helpers/kube-apiserver.ts";
import { clientFor, eventually } from "./helpers.ts";

const alice: UserInfo = { username: "alice", uid: "u-1", groups: ["g2", "g1"], extra: { k: ["2", "1"] } };
const check = (verb: string, resource = "pods"): AuthorizationAttributes => ({
  user: alice.username,
  groups: alice.groups,
  verb,
  group: "",
  resource,
  namespace: "ns",
});
const far = () => performance.now() + 5000;

void test("a check asked twice in one review is one SAR; the answer is reused across reviews until its TTL", async (t) => {
  const api = await startKubeApiServer(t);
  api.authorize = () => ({ allowed: true, reason: "ok" });
  let now = 0;
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api), { ttlMs: 1000, now: () => now });
  const s1 = reviewer.session(alice);
  assert.equal(s1.authorize(check("get")).error, "authorization pending");
  s1.authorize(check("get"));
  await s1.resolve(far());
  assert.deepEqual(s1.authorize(check("get")), { decision: "allow", reason: "ok" });
  assert.equal(api.sarCalls, 1);
  const s2 = reviewer.session(alice);
  assert.equal(s2.authorize(check("get")).decision, "allow", "from the shared cache");
  assert.equal(s2.pending, false);
  now += 1001;
  const s3 = reviewer.session(alice);
  s3.authorize(check("get"));
  assert.equal(s3.pending, true, "expired");
});

void test("the request's user carries uid and sorted groups and extra; serviceAccount() users do not", async (t) => {
  const api = await startKubeApiServer(t);
  const specs: unknown[] = [];
  api.authorize = (a) => {
    specs.push(a);
    return { allowed: false };
  };
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api));
  const s = reviewer.session(alice);
  s.authorize(check("get"));
  // What authorizer.serviceAccount('ns', 'sa') builds: a new groups list.
  s.authorize({
    user: "system:serviceaccount:ns:sa",
    groups: ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"],
    verb: "get",
    path: "/metrics",
  });
  await s.resolve(far());
  // Sent concurrently: compare in a fixed order.
  specs.sort((a, b) => ((a as { user: string }).user < (b as { user: string }).user ? -1 : 1));
  assert.deepEqual(specs, [
    {
      user: "alice",
      groups: ["g1", "g2"],
      uid: "u-1",
      extra: { k: ["1", "2"] },
      resourceAttributes: { verb: "get", version: "*", resource: "pods", namespace: "ns" },
    },
    {
      user: "system:serviceaccount:ns:sa",
      groups: ["system:authenticated", "system:serviceaccounts", "system:serviceaccounts:ns"],
      nonResourceAttributes: { path: "/metrics", verb: "get" },
    },
  ]);
});

void test("denied, evaluationError, and a failed call: decisions, the last two with errors", async (t) => {
  const api = await startKubeApiServer(t);
  api.authorize = (a) =>
    a.resourceAttributes?.verb === "delete"
      ? { allowed: false, denied: true, reason: "forbidden by policy" }
      : { allowed: false, reason: "", evaluationError: "webhook authorizer timed out" };
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api));
  const s = reviewer.session(alice);
  s.authorize(check("delete"));
  s.authorize(check("get"));
  await s.resolve(far());
  assert.deepEqual(s.authorize(check("delete")), { decision: "deny", reason: "forbidden by policy" });
  assert.deepEqual(s.authorize(check("get")), {
    decision: "no-opinion",
    reason: "",
    error: "webhook authorizer timed out",
  });
  await api.goAway();
  const s2 = reviewer.session(alice);
  s2.authorize(check("list"));
  await s2.resolve(far());
  const failed = s2.authorize(check("list"));
  assert.equal(failed.decision, "no-opinion");
  assert.match(failed.error ?? "", /^SubjectAccessReview failed: /);
  // A failed call is remembered for its backoff (below): the next review gets the failure at once.
  const s3 = reviewer.session(alice);
  assert.match(
    s3.authorize(check("list")).error ?? "",
    /^SubjectAccessReview failed: .*not asked again for \d+ ms/,
  );
  assert.equal(s3.pending, false);
});

void test("a review's budget: checks past it answer with an error and send nothing", async (t) => {
  const api = await startKubeApiServer(t);
  api.authorize = () => ({ allowed: true });
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api), { budget: 2 });
  const s = reviewer.session(alice);
  for (const r of ["a", "b", "c"]) s.authorize(check("get", r));
  await s.resolve(far());
  assert.equal(api.sarCalls, 2);
  assert.match(s.authorize(check("get", "c")).error ?? "", /already sent 2 SubjectAccessReviews/);
});

// authz.go (AuthzSelectors, Kubernetes 1.31+): a resource check's fieldSelector()/labelSelector()
// reach the authorizer as selector requirements; a SAR carries them as authorization/v1
// FieldSelectorAttributes/LabelSelectorAttributes, which the API server parses the same way.
void test("a check's selectors go in the SAR as rawSelector, and checks that differ only in them are asked apart", async (t) => {
  const api = await startKubeApiServer(t);
  const seen: unknown[] = [];
  api.authorize = (a) => {
    seen.push(a.resourceAttributes);
    return { allowed: a.resourceAttributes?.labelSelector?.rawSelector === "team=a" };
  };
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api));
  const s = reviewer.session(alice);
  const selected = { ...check("list"), fieldSelector: "spec.nodeName=n1", labelSelector: "team=a" };
  s.authorize(selected);
  s.authorize(check("list"));
  await s.resolve(far());
  assert.equal(api.sarCalls, 2);
  assert.equal(s.authorize(selected).decision, "allow");
  assert.equal(s.authorize(check("list")).decision, "no-opinion");
  assert.ok(
    seen.some(
      (r) =>
        JSON.stringify(r) ===
        JSON.stringify({
          verb: "list",
          version: "*",
          resource: "pods",
          namespace: "ns",
          fieldSelector: { rawSelector: "spec.nodeName=n1" },
          labelSelector: { rawSelector: "team=a" },
        }),
    ),
    JSON.stringify(seen),
  );
});

// The API server's webhook authorizer (apiserver/plugin/pkg/authorizer/webhook/webhook.go) caches
// a SubjectAccessReview's status for the authorized or the unauthorized TTL
// (--authorization-webhook-cache-authorized-ttl 5m, -unauthorized-ttl 30s: kube-apiserver's
// pkg/kubeapiserver/options/authorization.go) and retries a failed call with backoff (500 ms, ×1.5,
// jitter 0.2: apiserver/pkg/util/webhook DefaultRetryBackoffWithInitialDelay) before it answers
// no-opinion with the error. celgate cannot wait in a review, so a failure is remembered instead: no
// SAR goes out until its backoff has passed.
const failing = () => {
  throw new Error("etcdserver: request timed out");
};
async function ask(reviewer: SubjectAccessReviewer, verb: string) {
  const s = reviewer.session(alice);
  s.authorize(check(verb));
  // No deadline: these tests' clock is their own.
  if (s.pending) await s.resolve(Number.POSITIVE_INFINITY);
  return s.authorize(check(verb));
}

void test("during an outage one user's reviews send SARs only as the backoff allows, and each check errored", async (t) => {
  const api = await startKubeApiServer(t);
  api.authorize = failing;
  let now = 0;
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api), { now: () => now });
  // 50 reviews over a second: the first SAR at 0, the next no sooner than 500 ms (at most 600 with
  // jitter), the one after no sooner than 750 ms later.
  for (let i = 0; i < 50; i++, now += 20) {
    const answer = await ask(reviewer, "get");
    assert.equal(answer.decision, "no-opinion");
    assert.match(answer.error ?? "", /SubjectAccessReview/);
  }
  assert.equal(api.sarCalls, 2);
  // Answering again: asked at the next try, and the backoff starts over.
  api.authorize = () => ({ allowed: true });
  now += 5000;
  assert.equal((await ask(reviewer, "get")).decision, "allow");
  api.authorize = failing;
  now += 20_000;
  await ask(reviewer, "get");
  await ask(reviewer, "list");
  now += 400;
  await ask(reviewer, "list");
  assert.equal(api.sarCalls, 4, "after a success the next failure waits from 500 ms again");
});

void test("while the API server cannot answer: an allow is served up to 5 minutes old, any other answer up to 30 s, then the error", async (t) => {
  const api = await startKubeApiServer(t);
  let up = true;
  api.authorize = (a) => {
    if (!up) failing();
    return a.resourceAttributes?.verb === "get"
      ? { allowed: true, reason: "RBAC: allowed" }
      : { allowed: false, reason: "no rule" };
  };
  let now = 0;
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api), { now: () => now });
  assert.deepEqual(await ask(reviewer, "get"), { decision: "allow", reason: "RBAC: allowed" });
  assert.deepEqual(await ask(reviewer, "delete"), { decision: "no-opinion", reason: "no rule" });
  up = false;
  now = 20_000;
  assert.deepEqual(await ask(reviewer, "get"), { decision: "allow", reason: "RBAC: allowed" });
  assert.deepEqual(await ask(reviewer, "delete"), { decision: "no-opinion", reason: "no rule" });
  now = 40_000;
  const denial = await ask(reviewer, "delete");
  assert.match(
    denial.error ?? "",
    /^SubjectAccessReview failed: HTTP 500/,
    "a denial 40 s old is not served",
  );
  assert.equal((await ask(reviewer, "get")).decision, "allow");
  now = 300_000;
  assert.equal((await ask(reviewer, "get")).decision, "allow", "5 minutes old");
  now = 301_000;
  const allow = await ask(reviewer, "get");
  assert.equal(allow.decision, "no-opinion");
  assert.match(allow.error ?? "", /SubjectAccessReview/);
  // An answering server decides: a stale answer is never used in place of a fresh one.
  up = true;
  api.authorize = () => ({ allowed: false, reason: "revoked" });
  now = 320_000;
  assert.deepEqual(await ask(reviewer, "get"), { decision: "no-opinion", reason: "revoked" });
});

void test("a status with an evaluationError is an answer: cached like any other (webhook.go caches r.Status)", async (t) => {
  const api = await startKubeApiServer(t);
  api.authorize = () => ({ allowed: false, evaluationError: "webhook authorizer timed out" });
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api));
  assert.equal((await ask(reviewer, "get")).error, "webhook authorizer timed out");
  assert.equal((await ask(reviewer, "get")).error, "webhook authorizer timed out");
  assert.equal(api.sarCalls, 1);
});

void test("after the backoff one SAR tries again; checks meanwhile answer without sending one", async (t) => {
  const api = await startKubeApiServer(t);
  api.authorize = failing;
  let now = 0;
  const reviewer = new SubjectAccessReviewer(await clientFor(t, api), { now: () => now });
  await ask(reviewer, "get");
  assert.equal(api.sarCalls, 1);
  now += 1000;
  let release: () => void = () => {};
  api.authorize = () => new Promise((resolve) => (release = () => resolve({ allowed: true })));
  const probe = reviewer.session(alice);
  probe.authorize(check("get"));
  const resolving = probe.resolve(Number.POSITIVE_INFINITY);
  await eventually(() => api.sarCalls === 2, { what: "the probe to reach the server" });
  const other = reviewer.session(alice);
  const answer = other.authorize(check("list"));
  assert.equal(other.pending, false, "not sent while the probe is on its way");
  assert.match(answer.error ?? "", /\(asked again now\)$/);
  release();
  await resolving;
  api.authorize = () => ({ allowed: true });
  assert.equal(probe.authorize(check("get")).decision, "allow");
  assert.equal((await ask(reviewer, "list")).decision, "allow", "sent again once the probe succeeded");
  assert.equal(api.sarCalls, 3);
});
