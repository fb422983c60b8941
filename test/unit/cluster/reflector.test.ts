/**
 * The cache of one resource (src/cluster/reflector.ts) through the real @kubernetes/client-node
 * against the test API server (test/helpers/kube-apiserver.ts), over HTTPS with a kubeconfig and a
 * bearer token. The behaviours are client-go's reflector's (tools/cache/reflector.go): list in
 * pages, watch from the list's resourceVersion with bookmarks, resume from the last resourceVersion
 * after a watch ends, list again after 410 Gone.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { type ApiClient, connect } from "../../../src/cluster/client.ts";
import type { ResourceInfo } from "../../../src/cluster/discovery.ts";
import type { CacheObserver } from "../../../src/cluster/observe.ts";
import { Reflector } from "../../../src/cluster/reflector.ts";
import { startKubeApiServer } from "../../helpers/kube-apiserver.ts";
import { tempDir } from "../../helpers/webhook.ts";
import { clientFor, eventually } from "./helpers.ts";

const CONFIGMAPS: ResourceInfo = {
  apiVersion: "v1",
  kind: "ConfigMap",
  group: "",
  version: "v1",
  resource: "configmaps",
  namespaced: true,
};

function configMap(name: string, data: Record<string, string>, namespace = "default") {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

function recorder() {
  const events: string[] = [];
  const observer: CacheObserver = {
    synced: (r, s) => events.push(`synced ${r} ${s}`),
    relisted: (r, why) => events.push(`relisted ${r} ${why}`),
    watchRestarted: (r, why) => events.push(`restart ${r} ${why}`),
    objects: () => {},
    removed: () => {},
  };
  return { events, observer };
}

void test("lists in pages of `limit`, with `continue`, and fills in apiVersion and kind of list items", async (t) => {
  const api = await startKubeApiServer(t);
  for (let i = 0; i < 7; i++) api.put(configMap(`cm-${i}`, { i: String(i) }));
  const client = await clientFor(t, api);
  const r = new Reflector(client, CONFIGMAPS, { pageSize: 3 });
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  assert.equal(r.size, 7);
  const lists = api.requests.filter((q) => q.startsWith("GET /api/v1/configmaps?") && !q.includes("watch"));
  assert.equal(lists.length, 3, "7 objects in pages of 3");
  assert.ok(lists[1]!.includes("continue="));
  const cm = r.get("default", "cm-4");
  assert.equal(cm?.apiVersion, "v1");
  assert.equal(cm?.kind, "ConfigMap");
  assert.deepEqual(cm?.data, { i: "4" });
});

void test("a watch keeps the cache current: adds, changes and deletes, and asks for bookmarks", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(configMap("a", { v: "1" }));
  const client = await clientFor(t, api);
  const r = new Reflector(client, CONFIGMAPS);
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  await eventually(() => api.watchCount("configmaps") === 1);
  const watch = api.requests.find((q) => q.includes("watch=true"));
  assert.match(watch ?? "", /allowWatchBookmarks=true/);
  assert.match(watch ?? "", /resourceVersion=101/, "from the list's resourceVersion");
  api.put(configMap("a", { v: "2" }));
  api.put(configMap("b", { v: "1" }, "other"));
  await eventually(() => r.get("default", "a")?.data !== undefined && r.size === 2);
  assert.deepEqual(r.get("default", "a")?.data, { v: "2" });
  api.delete("v1", "ConfigMap", "default", "a");
  await eventually(() => r.size === 1);
  assert.equal(r.get("default", "a"), undefined);
  assert.equal(r.ageSeconds(), 0, "current while watching");
});

void test("after a bookmark a new watch resumes from the bookmark's resourceVersion, not a relist", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(configMap("a", { v: "1" }));
  const client = await clientFor(t, api);
  const { events, observer } = recorder();
  const r = new Reflector(client, CONFIGMAPS, { observer, backoffInitialMs: 10 });
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  await eventually(() => api.watchCount("configmaps") === 1);
  // Other kinds change: the configmaps watch sees no event, only the bookmark carries the version.
  api.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } });
  api.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "y" } });
  assert.equal(api.bookmark(), 1);
  await eventually(() => r.lastResourceVersion === "103");
  await api.goAway();
  await api.comeBack();
  await eventually(() => api.watchCount("configmaps") === 1);
  const watches = api.requests.filter((q) => q.includes("watch=true"));
  assert.match(watches.at(-1) ?? "", /resourceVersion=103/, "the bookmark's resourceVersion");
  assert.deepEqual(
    events.filter((e) => e.startsWith("relisted")),
    ["relisted configmaps initial"],
  );
});

void test("410 Gone on a watch lists again, and the cache drops what was deleted meanwhile", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(configMap("a", { v: "1" }));
  api.put(configMap("b", { v: "1" }));
  const client = await clientFor(t, api);
  const { events, observer } = recorder();
  const r = new Reflector(client, CONFIGMAPS, { observer, backoffInitialMs: 10 });
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  await eventually(() => api.watchCount("configmaps") === 1);
  api.compact();
  // While the cache relists, the server changes: b goes, c comes.
  api.delete("v1", "ConfigMap", "default", "b");
  api.put(configMap("c", { v: "1" }));
  await eventually(() => events.includes("relisted configmaps expired"));
  await eventually(() => r.get("default", "c") !== undefined);
  assert.equal(r.get("default", "b"), undefined);
  assert.ok(events.includes("restart configmaps expired"));
});

void test("the API server going away: the cache keeps its objects, ages, and catches up when it is back", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(configMap("a", { v: "1" }));
  const client = await clientFor(t, api);
  const lines: string[] = [];
  const log = {
    info: (_f: Record<string, unknown>, m: string) => lines.push(`info ${m}`),
    warn: (_f: Record<string, unknown>, m: string) => lines.push(`warn ${m}`),
    error: (_f: Record<string, unknown>, m: string) => lines.push(`error ${m}`),
  };
  let now = 1_000;
  const r = new Reflector(client, CONFIGMAPS, {
    log,
    backoffInitialMs: 20,
    backoffMaxMs: 50,
    now: () => now,
  });
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  await eventually(() => api.watchCount("configmaps") === 1);
  await api.goAway();
  await eventually(() => lines.includes("error cluster connection lost; serving from the last synced state"));
  now += 42_000;
  assert.equal(r.ageSeconds(), 42);
  assert.deepEqual(r.get("default", "a")?.data, { v: "1" }, "still served from the cache");
  api.put(configMap("a", { v: "2" }));
  await api.comeBack();
  await eventually(() => (r.get("default", "a")?.data as { v?: string } | undefined)?.v === "2");
  assert.equal(r.ageSeconds(), 0);
  assert.ok(lines.includes("info cluster connection restored"));
});

void test("an expired continue token starts the list over", async (t) => {
  const api = await startKubeApiServer(t);
  for (let i = 0; i < 5; i++) api.put(configMap(`cm-${i}`, {}));
  const client = await clientFor(t, api);
  // The first page is served, then history is compacted before the second page is asked for.
  const original = client.request.bind(client);
  let pages = 0;
  const wrapped: ApiClient = {
    server: client.server,
    watch: client.watch.bind(client),
    request: async (method, path, body, timeout) => {
      const res = await original(method, path, body, timeout);
      if (path.includes("limit=") && ++pages === 1) api.compact();
      return res;
    },
  };
  const r = new Reflector(wrapped, CONFIGMAPS, { pageSize: 2 });
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  assert.equal(r.size, 5);
  const firstPages = api.requests.filter(
    (q) => q.startsWith("GET /api/v1/configmaps?limit=2") && !q.includes("continue"),
  );
  assert.equal(firstPages.length, 2, "the list started over once");
});

void test("a wrong token is 401 and the cache never syncs", async (t) => {
  const api = await startKubeApiServer(t);
  const dir = await tempDir(t, "celgate-kubeconfig-");
  const file = join(dir, "kubeconfig");
  await writeFile(file, api.kubeconfig("wrong"));
  const c = await connect({ kubeconfig: file });
  assert.ok(c.ok);
  const r = new Reflector(c.value, CONFIGMAPS, { backoffInitialMs: 10 });
  t.after(() => r.stop());
  r.start();
  await eventually(() => api.requests.length >= 2);
  assert.equal(r.synced, false);
  const res = await c.value.request("GET", "/api/v1/configmaps");
  assert.equal(res.status, 401);
  assert.equal((res.body as { kind?: string }).kind, "Status");
});

// client-go tools/cache/reflector.go: a watch that ends in 410 Gone ends ListAndWatch, and the
// reflector's loop (delayHandler.Until, sliding) waits the backoff before it lists again:
// defaultBackoffInit 800 ms, doubling (defaultBackoffFactor 2), plus up to as much again of jitter
// (defaultBackoffJitter 1.0), capped at defaultBackoffMax 30 s. So within 3 s of the first list
// the lists after it start at least 0.8 s and then 0.8 + 1.6 s in: three at most.
void test("a watch that answers every time with 410 Gone: lists again with client-go's backoff, not in a tight loop", async (t) => {
  const api = await startKubeApiServer(t);
  for (let i = 0; i < 3; i++) api.put(configMap(`cm-${i}`, {}));
  api.expireWatches = true;
  const client = await clientFor(t, api);
  const { events, observer } = recorder();
  const r = new Reflector(client, CONFIGMAPS, { observer });
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  r.stop();
  const window = performance.now() - started;
  const lists = api.requests.filter((q) => q.startsWith("GET /api/v1/configmaps?limit=")).length;
  const watches = api.requests.filter((q) => q.includes("watch=true")).length;
  t.diagnostic(`${lists} lists and ${watches} watches in ${window.toFixed(0)} ms of 410 Gone`);
  assert.ok(lists >= 2, `it lists again after 410 (${lists} lists)`);
  assert.ok(lists <= 3 + (window > 3200 ? 1 : 0), `${lists} lists in ${window.toFixed(0)} ms`);
  assert.equal(events.filter((e) => e === "relisted configmaps expired").length, lists - 1);
  assert.equal(r.size, 3, "the cache keeps serving its objects meanwhile");
});

// A hung API server (SIGSTOP) keeps its connections open and sends nothing. The API server's watch
// cache sends every watch that asked for them a bookmark about once a minute
// (apiserver/pkg/storage/cacher: defaultBookmarkFrequency, cacheWatcher.nextBookmarkTime), and
// keeps its events for that plus 15 s (eventFreshDuration): a watch that brings neither an event
// nor a bookmark for longer is silent, and the cache is as old as the last thing it heard.
void test("a hung API server: the silent watch is noticed, the cache's real age reported and logged once, and it catches up on waking", async (t) => {
  const api = await startKubeApiServer(t);
  api.put(configMap("a", { v: "1" }));
  const client = await clientFor(t, api);
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const line = (level: string) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, message, fields });
  const { events, observer } = recorder();
  const r = new Reflector(client, CONFIGMAPS, {
    log: { info: line("info"), warn: line("warn"), error: line("error") },
    observer,
    backoffInitialMs: 20,
    backoffMaxMs: 100,
    silenceMs: 400,
  });
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  await eventually(() => r.ageSeconds() === 0, { what: "an open watch" });
  api.hang();
  api.put(configMap("a", { v: "2" }));
  await eventually(() => events.includes("restart configmaps silent"), {
    what: "the silence to be noticed",
    timeoutMs: 5000,
  });
  assert.ok((r.ageSeconds() ?? 0) >= 0.4);
  // Still silent a while later: the age grows from the last thing heard, and one line says so.
  await new Promise((resolve) => setTimeout(resolve, 600));
  assert.ok((r.ageSeconds() ?? 0) >= 1, `age ${r.ageSeconds()}`);
  const silent = lines.filter((l) => l.level !== "info");
  assert.equal(silent.length, 1, JSON.stringify(lines));
  assert.match(silent[0]!.message, /no event or bookmark/);
  assert.equal(silent[0]!.fields.resource, "configmaps");
  assert.ok(Number(silent[0]!.fields.cacheAgeSeconds) >= 0.4);
  assert.deepEqual(r.get("default", "a")?.data, { v: "1" }, "served from the cache meanwhile");
  api.wake();
  await eventually(() => (r.get("default", "a")?.data as { v?: string } | undefined)?.v === "2", {
    what: "the change made while hung",
  });
  await eventually(() => r.ageSeconds() === 0, { what: "a current cache" });
  assert.ok(lines.some((l) => l.message === "cluster connection restored"));
});

/**
 * The API server writes an int64 as its digits (Go's encoder) and its decoder reads them back as an
 * int64 (sigs.k8s.io/json PreserveInts), so a cached object holds the number a policy reading it in
 * the API server sees; JSON.parse (and the client library's Watch, which uses it) rounded an
 * integer beyond 2^53.
 */
void test("listed and watched objects keep integers beyond 2^53 exactly", async (t) => {
  const widgets: ResourceInfo = {
    apiVersion: "example.com/v1",
    kind: "Widget",
    group: "example.com",
    version: "v1",
    resource: "widgets",
    namespaced: true,
  };
  const api = await startKubeApiServer(t);
  api.addType({ group: "example.com", version: "v1", kind: "Widget", plural: "widgets", namespaced: true });
  const widget = (name: string, a: bigint) => ({
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: "default" },
    spec: { a, max: 2n ** 63n - 1n, small: 3 },
  });
  api.put(widget("listed", 9007199254740993n));
  const client = await clientFor(t, api);
  const r = new Reflector(client, widgets);
  t.after(() => r.stop());
  r.start();
  await r.whenSynced();
  assert.deepEqual(r.get("default", "listed")?.spec, { a: 9007199254740993n, max: 2n ** 63n - 1n, small: 3 });
  await eventually(() => api.watchCount("widgets") === 1);
  api.put(widget("watched", -9007199254740995n));
  await eventually(() => r.get("default", "watched") !== undefined);
  assert.deepEqual(r.get("default", "watched")?.spec, {
    a: -9007199254740995n,
    max: 2n ** 63n - 1n,
    small: 3,
  });
});
