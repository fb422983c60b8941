/**
 * Param and Namespace lookups over the cluster caches (src/cluster/state.ts), against the test API
 * server. The rules are the API server's generic.CollectParams
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go) and
 * policy_source.go (an informer per paramKind, stopped when unused).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { contextFromResources } from "../../../src/engine/context.ts";
import { ParamIndex } from "../../../src/engine/param-index.ts";
import { collectParams, describeParamMiss, type ParamLookup } from "../../../src/engine/params.ts";
import type { ParamRef } from "../../../src/policy/types.ts";
import { Reflector } from "../../../src/cluster/reflector.ts";
import { ClusterState } from "../../../src/cluster/state.ts";
import { startKubeApiServer } from "../../helpers/kube-apiserver.ts";
import { clientFor, eventually } from "./helpers.ts";

const CM = { apiVersion: "v1", kind: "ConfigMap" };
const ref = (r: Partial<ParamRef>): ParamRef => ({ parameterNotFoundAction: "Deny", ...r });

/** The params the engine's one lookup path collects (the cluster's `select`), or its error's words. */
const collect = (params: ParamLookup, kind: typeof CM, r: ParamRef, requestNamespace: string) => {
  const found = collectParams(params, kind, r, requestNamespace);
  return found.ok ? found.value : found.error.message;
};

void test("namespaced params: paramRef.namespace, else the request's; a cluster-scoped request is an error (CollectParams)", async (t) => {
  const api = await startKubeApiServer(t);
  api.put({ ...CM, metadata: { name: "p", namespace: "a", labels: { tier: "x" } }, data: { v: "a" } });
  api.put({ ...CM, metadata: { name: "p", namespace: "b" }, data: { v: "b" } });
  const state = new ClusterState(await clientFor(t, api));
  t.after(() => state.stop());
  state.follow([CM]);
  assert.ok(await state.whenReady(5000));
  const params = state.context(contextFromResources([])).params;
  const values = (found: unknown) =>
    (found as { object: { data: { v: string } } }[]).map((r) => r.object.data.v);
  assert.deepEqual(values(collect(params, CM, ref({ name: "p" }), "b")), ["b"]);
  assert.deepEqual(values(collect(params, CM, ref({ name: "p", namespace: "a" }), "b")), ["a"]);
  assert.deepEqual(
    values(collect(params, CM, ref({ selector: { matchLabels: { tier: "x" }, matchExpressions: [] } }), "a")),
    ["a"],
  );
  assert.deepEqual(
    collect(params, CM, ref({ name: "missing", parameterNotFoundAction: "Allow" }), "a"),
    [],
    "missing, Allow: none, and the binding is not evaluated",
  );
  assert.equal(
    collect(params, CM, ref({ name: "missing" }), "a"),
    "no params found for policy binding with `Deny` parameterNotFoundAction",
    "missing, Deny: CollectParams' error",
  );
  assert.equal(
    collect(params, CM, ref({ name: "p" }), ""),
    "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
  );
});

void test("cluster-scoped params: paramRef.namespace is an error", async (t) => {
  const api = await startKubeApiServer(t);
  api.addType({ group: "example.com", version: "v1", kind: "Limit", plural: "limits", namespaced: false });
  api.put({ apiVersion: "example.com/v1", kind: "Limit", metadata: { name: "l" }, max: 2 });
  const state = new ClusterState(await clientFor(t, api));
  t.after(() => state.stop());
  const kind = { apiVersion: "example.com/v1", kind: "Limit" };
  state.follow([kind]);
  assert.ok(await state.whenReady(5000));
  const params = state.context(contextFromResources([])).params;
  assert.equal((collect(params, kind, ref({ name: "l" }), "team-a") as unknown[]).length, 1);
  assert.equal(
    collect(params, kind, ref({ name: "l", namespace: "x" }), "team-a"),
    "paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
  );
});

void test("a kind not yet synced, and one the cluster does not serve, are errors; the latter does not hold readiness", async (t) => {
  const api = await startKubeApiServer(t);
  await api.goAway();
  const state = new ClusterState(await clientFor(t, api), {
    reflector: { backoffInitialMs: 10, backoffMaxMs: 20 },
  });
  t.after(() => state.stop());
  state.follow([CM, { apiVersion: "nope.example.com/v1", kind: "Nothing" }]);
  const params = state.context(contextFromResources([])).params;
  assert.equal(
    collect(params, CM, ref({ name: "p" }), "a"),
    "paramKind kind `/v1, Kind=ConfigMap` not yet synced to use for admission",
  );
  assert.equal(state.ready(), false);
  // Long enough for discovery to fail while the server is away: it must then ask again, soon.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await api.comeBack();
  assert.ok(await state.whenReady(5000), "ready without the kind the cluster lacks");
  assert.equal(
    collect(params, { apiVersion: "nope.example.com/v1", kind: "Nothing" }, ref({ name: "p" }), "a"),
    "failed to find resource referenced by paramKind: 'nope.example.com/v1, Kind=Nothing'",
  );
});

void test("follow() stops caches of kinds no longer used and starts new ones", async (t) => {
  const api = await startKubeApiServer(t);
  const state = new ClusterState(await clientFor(t, api));
  t.after(() => state.stop());
  state.follow([CM]);
  await eventually(() => api.watchCount("configmaps") === 1);
  state.follow([{ apiVersion: "v1", kind: "Pod" }]);
  await eventually(() => api.watchCount("configmaps") === 0 && api.watchCount("pods") === 1);
  assert.deepEqual(
    state.status().map((s) => s.resource),
    ["namespaces", "pods"],
  );
});

void test("cluster objects replace file objects of the same name; file objects fill in", async (t) => {
  const api = await startKubeApiServer(t);
  api.put({ ...CM, metadata: { name: "p", namespace: "a" }, data: { from: "cluster" } });
  api.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "a", labels: { from: "cluster" } } });
  const state = new ClusterState(await clientFor(t, api));
  t.after(() => state.stop());
  state.follow([CM]);
  assert.ok(await state.whenReady(5000));
  const source = { file: "f", locate: () => ({ file: "f", line: 1, column: 1 }) };
  const fileObject = (name: string, data: Record<string, string>) => ({
    ...CM,
    name,
    namespace: "a",
    labels: { sel: "yes" },
    object: { ...CM, metadata: { name, namespace: "a" }, data },
    source,
  });
  const files = contextFromResources([
    fileObject("p", { from: "file" }),
    fileObject("q", { from: "file" }),
    {
      apiVersion: "v1",
      kind: "Namespace",
      name: "b",
      labels: {},
      object: { apiVersion: "v1", kind: "Namespace", metadata: { name: "b" } },
      source,
    },
  ]);
  const ctx = state.context(files);
  const data = (found: unknown) => (found as { object: { data: unknown } }[]).map((r) => r.object.data);
  assert.deepEqual(data(collect(ctx.params, CM, ref({ name: "p" }), "a")), [{ from: "cluster" }]);
  assert.deepEqual(data(collect(ctx.params, CM, ref({ name: "q" }), "a")), [{ from: "file" }]);
  // The label every stored Namespace has (the test API server writes it, as the real one does).
  assert.deepEqual((ctx.namespace("a")!.metadata as { labels: unknown }).labels, {
    from: "cluster",
    "kubernetes.io/metadata.name": "a",
  });
  assert.ok(ctx.namespace("b"), "a file Namespace fills in");
  assert.equal(ctx.namespace("c"), undefined, "no namespace is assumed");
});

/**
 * How the lookups read a large cache: as client-go's listers read an informer's Indexer
 * (k8s.io/client-go/tools/cache/index.go, thread_safe_store.go: ByIndex on the namespace index),
 * never by walking every cached object. Counted, not timed: every walk over a cache goes through a
 * reflector's or an index's `all()`, and none may happen for a lookup that finds its param, one that
 * finds none, or the words saying what it nearly found.
 */
void test("param lookups and what a miss nearly found read the indexes: no walk over the cache (client-go Indexer)", async (t) => {
  const api = await startKubeApiServer(t);
  const objects = [];
  for (let i = 0; i < 3000; i++)
    objects.push({
      ...CM,
      metadata: { name: "limits", namespace: `ns-${i}`, labels: { team: `t${i % 50}` } },
      data: { v: String(i) },
    });
  api.putMany(objects);
  const state = new ClusterState(await clientFor(t, api));
  t.after(() => state.stop());
  state.follow([CM]);
  assert.ok(await state.whenReady(30_000));
  const walks = { count: 0 };
  const spy = <T extends object>(proto: T, method: keyof T & string) => {
    const original = proto[method] as (...args: unknown[]) => unknown;
    (proto as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
      walks.count++;
      return original.apply(this, args);
    };
    t.after(() => {
      (proto as Record<string, unknown>)[method] = original;
    });
  };
  spy(Reflector.prototype, "all");
  spy(ParamIndex.prototype, "all");
  const ctx = state.context(contextFromResources([]));
  const data = (found: unknown) =>
    (found as { object: { data: { v: string } } }[]).map((r) => r.object.data.v);
  const byTeam = ref({ selector: { matchLabels: { team: "t7" }, matchExpressions: [] } });
  const missing = ref({ name: "missing", parameterNotFoundAction: "Allow" });
  const nobody = ref({ selector: { matchLabels: { team: "none" }, matchExpressions: [] } });
  assert.deepEqual(data(collect(ctx.params, CM, ref({ name: "limits" }), "ns-42")), ["42"]);
  assert.deepEqual(data(collect(ctx.params, CM, byTeam, "ns-7")), ["7"]);
  assert.deepEqual(collect(ctx.params, CM, missing, "ns-1"), []);
  assert.equal(
    describeParamMiss(ctx.params, CM, ref({ name: "limits" }), "elsewhere"),
    "looked up ConfigMap elsewhere/limits (v1); one of that name is in namespace ns-0; one of that name is in namespace ns-1; one of that name is in namespace ns-10",
  );
  assert.equal(
    describeParamMiss(ctx.params, CM, byTeam, "ns-8"),
    "looked up ConfigMap objects (v1, in namespace ns-8) with labels team=t7; 60 match elsewhere: ns-1007/limits (v1), ns-1057/limits (v1), ns-107/limits (v1)",
  );
  assert.equal(
    describeParamMiss(ctx.params, CM, nobody, "ns-8"),
    "looked up ConfigMap objects (v1, in namespace ns-8) with labels team=none",
  );
  assert.equal(walks.count, 0, "a lookup walked every cached object");
});
