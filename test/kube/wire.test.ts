/**
 * The wire format of the test API server (test/helpers/kube-apiserver.ts), checked against the real
 * kube-apiserver of each release tools/kube/ builds: the same requests — lists in pages
 * (`limit`/`continue`), a watch from a list's resourceVersion with bookmarks, its end at
 * `timeoutSeconds`, a continue token and a watch older than a compaction (410 Expired), a bad
 * continue token (400), SubjectAccessReviews (allowed, denied, invalid), 404, 403 and 409 Status
 * answers, a delete's Status — go to both, and the shapes of the answers (field paths and JSON
 * types, not values; wire.ts) are compared. The celgate tests that drive the test API server
 * (test/e2e/webhook-cluster*, test/e2e/audit*) stand on it speaking as the real one speaks.
 *
 * The real server runs with the watch cache off for podtemplates and etcd compacted every 2 s, so
 * that a 410 can be had from it: a watch or a continue token older than a compaction, answered from
 * etcd (storage/etcd3). The test server is asked the same of configmaps-like podtemplates and told
 * to `compact()`.
 *
 * Every difference is in KNOWN below with its reason, or fails the test.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { KubeApiServer } from "../helpers/kube-apiserver.ts";
import { type ControlPlane, kubeReleases, startControlPlane } from "../helpers/kube-control-plane.ts";
import { waitFor } from "../helpers/webhook.ts";
import { call, type Endpoint, shape, shapeDifference, watch } from "./wire.ts";

/** A server under comparison, and the faults each plays its own way. */
interface Side {
  readonly name: string;
  readonly endpoint: Endpoint;
  /** Runs `send` as a user with no rights at all. */
  asNobody<T>(send: (e: Endpoint) => Promise<T>): Promise<T>;
  /** Sends (test server) or awaits (real server, before timeoutSeconds) a BOOKMARK. */
  bookmark(): void;
  /** Makes what came before `rv` older than a compaction; resolves when it is. */
  compactPast(probe: () => Promise<boolean>): Promise<void>;
}

/**
 * Paths (`label path: type`) that differ and why; each entry's pattern is matched against the
 * difference line. Object contents are the test's own: the test server stores what a test puts.
 */
const KNOWN: readonly { readonly label?: RegExp; readonly pattern: RegExp; readonly reason: string }[] = [
  {
    pattern: /(^| |\.)managedFields(\[\]|\.|:)/,
    reason:
      "the real server records server-side-apply field ownership (managedFields) on every write; celgate never reads it and the test server does not keep it",
  },
  {
    label: /^sar (allowed|denied)$/,
    pattern: /^invented metadata: \{\}$/,
    reason:
      "a SubjectAccessReview's metadata holds only managedFields on the real server (above): without them it is empty",
  },
  {
    pattern: /(^| |\.)metadata\.(creationTimestamp: string|generation: number)$/,
    reason:
      "the real server stamps creationTimestamp (and generation where the kind has one); objects in the test server are what the test put, and celgate's cluster code reads neither",
  },
  {
    label: /podtemplate/,
    pattern: /^missing (items\[\]\.)?template\./,
    reason:
      "the real server applies a kind's defaults (SetObjectDefaults_PodTemplate); the test server stores what the test put, so a test gives the fields its policies read",
  },
];

const CM = (name: string, value: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "wire" },
  data: { k: value },
});
const TEMPLATE = (name: string) => ({
  apiVersion: "v1",
  kind: "PodTemplate",
  metadata: { name, namespace: "wire" },
  template: { spec: { containers: [{ name: "c", image: "x:1" }] } },
});
const SAR = (spec: Record<string, unknown>) => ({
  apiVersion: "authorization.k8s.io/v1",
  kind: "SubjectAccessReview",
  spec,
});
const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const CMS = "/api/v1/namespaces/wire/configmaps";
const TEMPLATES = "/api/v1/namespaces/wire/podtemplates";
/** Bound on a watch's events arriving, a bookmark, a compaction. */
const WAIT_MS = 30_000;

/**
 * Every answer of the scenario by label, whose shapes are compared; and `values`, what must be
 * equal: the watch's event types, its end at timeoutSeconds, how a watch from before a compaction
 * is refused.
 */
async function scenario(side: Side): Promise<{ shapes: Map<string, unknown>; values: Map<string, unknown> }> {
  const e = side.endpoint;
  const out = new Map<string, unknown>();
  const values = new Map<string, unknown>();
  const must = async (label: string, status: number, r: Promise<{ status: number; body: unknown }>) => {
    const got = await r;
    assert.equal(got.status, status, `${side.name} ${label}: ${JSON.stringify(got.body)}`);
    out.set(label, got.body);
    return got.body as { metadata?: unknown };
  };
  await must(
    "create namespace",
    201,
    call(e, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "wire" },
    }),
  );
  for (const n of ["a", "b", "c"]) await call(e, "POST", CMS, CM(n, n));
  for (const n of ["t1", "t2"])
    await must(`create podtemplate ${n}`, 201, call(e, "POST", TEMPLATES, TEMPLATE(n)));

  const first = await must("list limit=1", 200, call(e, "GET", `${CMS}?limit=1`));
  const token = (first.metadata as { continue: string }).continue;
  await must("list continue", 200, call(e, "GET", `${CMS}?limit=1&continue=${encodeURIComponent(token)}`));
  const all = await must("list", 200, call(e, "GET", CMS));
  await must("list cluster-scoped", 200, call(e, "GET", "/api/v1/namespaces?limit=500"));
  const rv = (all.metadata as { resourceVersion: string }).resourceVersion;

  // A watch from the list's resourceVersion: the write after it, then a bookmark, then its end.
  const w = watch(e, `${CMS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=4`);
  assert.equal(await w.status, 200);
  const a = (await call(e, "GET", `${CMS}/a`)).body as { metadata: Record<string, unknown> };
  await must(
    "update",
    200,
    call(e, "PUT", `${CMS}/a`, { ...CM("a", "changed"), metadata: { ...a.metadata } }),
  );
  await waitFor(
    `${side.name}: the MODIFIED event`,
    () => (w.events.some((x) => x.type === "MODIFIED") ? true : undefined),
    WAIT_MS,
  );
  side.bookmark();
  await waitFor(
    `${side.name}: a BOOKMARK`,
    () => (w.events.some((x) => x.type === "BOOKMARK") ? true : undefined),
    WAIT_MS,
  );
  for (const ev of w.events) out.set(`watch ${String(ev.type)}`, ev);
  values.set(
    "watch event types",
    w.events.map((x) => x.type),
  );
  // The stream ends at timeoutSeconds, as a reflector expects, and is opened again by it.
  await Promise.race([w.ended, new Promise((r) => setTimeout(r, WAIT_MS))]);
  const ended = await Promise.race([w.ended.then(() => true), Promise.resolve(false)]);
  w.close();
  values.set("watch ends at timeoutSeconds", ended);

  await must("get missing", 404, call(e, "GET", `${CMS}/nope`));
  await must("unknown resource", 404, call(e, "GET", "/api/v1/namespaces/wire/nothings"));
  await must(
    "forbidden list",
    403,
    side.asNobody((n) => call(n, "GET", CMS)),
  );
  await must(
    "forbidden get",
    403,
    side.asNobody((n) => call(n, "GET", `${CMS}/a`)),
  );
  await must("already exists", 409, call(e, "POST", CMS, CM("a", "x")));
  await must(
    "conflict",
    409,
    call(e, "PUT", `${CMS}/b`, {
      ...CM("b", "x"),
      metadata: { name: "b", namespace: "wire", resourceVersion: "1" },
    }),
  );
  await must("delete", 200, call(e, "DELETE", `${CMS}/c`));
  await must("bad continue", 400, call(e, "GET", `${CMS}?limit=1&continue=not-a-token`));
  const attrs = { resourceAttributes: { verb: "get", resource: "pods", namespace: "wire" } };
  await must(
    "sar allowed",
    201,
    call(e, "POST", SAR_PATH, SAR({ user: "someone", groups: ["system:masters"], ...attrs })),
  );
  await must(
    "sar denied",
    201,
    call(e, "POST", SAR_PATH, SAR({ user: "someone", groups: ["nobody"], ...attrs })),
  );
  await must("sar invalid", 422, call(e, "POST", SAR_PATH, SAR({})));

  // 410: a continue token and a watch from before a compaction.
  const page = await must("podtemplates limit=1", 200, call(e, "GET", `${TEMPLATES}?limit=1`));
  const old = page.metadata as { continue: string; resourceVersion: string };
  await call(e, "POST", TEMPLATES, TEMPLATE("t3"));
  const stale = `${TEMPLATES}?limit=1&continue=${encodeURIComponent(old.continue)}`;
  await side.compactPast(async () => (await call(e, "GET", stale)).status === 410);
  await must("continue after compaction", 410, call(e, "GET", stale));
  const gone = watch(
    e,
    `${TEMPLATES}?watch=true&resourceVersion=${old.resourceVersion}&allowWatchBookmarks=true`,
  );
  values.set("watch after compaction: HTTP status", await gone.status);
  await Promise.race([gone.ended, new Promise((r) => setTimeout(r, WAIT_MS))]);
  gone.close();
  out.set("watch after compaction", gone.events);
  values.set(
    "watch after compaction: the event",
    gone.events.map((x) => [
      x.type,
      (x.object as { code?: number; reason?: string }).code,
      (x.object as { reason?: string }).reason,
    ]),
  );
  return { shapes: out, values };
}

function realSide(plane: ControlPlane): Side {
  const nobody = plane.issueUser("nobody");
  return {
    name: plane.release.version,
    endpoint: { url: plane.url, ca: plane.ca, cert: plane.admin.cert, key: plane.admin.key },
    asNobody: (send) => send({ url: plane.url, ca: plane.ca, cert: nobody.cert, key: nobody.key }),
    // The watch cache sends one 2 s before the watch's timeoutSeconds (cacher/cache_watcher.go nextBookmarkTime).
    bookmark: () => {},
    compactPast: async (probe) => {
      await waitFor(
        "etcd compacted past the token",
        async () => ((await probe()) ? true : undefined),
        WAIT_MS,
        500,
      );
    },
  };
}

function testSide(api: KubeApiServer): Side {
  api.addType({
    group: "",
    version: "v1",
    kind: "PodTemplate",
    plural: "podtemplates",
    namespaced: true,
    builtIn: true,
  });
  api.authorize = (a) => ({ allowed: a.groups.includes("system:masters") });
  const endpoint = { url: api.url, ca: api.ca, token: api.token };
  return {
    name: "the test API server",
    endpoint,
    // Refused as RBAC refuses, in the test server's terms: `forbid` for every verb meanwhile.
    asNobody: async (send) => {
      api.forbid = () => true;
      try {
        return await send(endpoint);
      } finally {
        api.forbid = () => false;
      }
    },
    bookmark: () => api.bookmark(),
    compactPast: async (probe) => {
      api.compact();
      assert.ok(await probe(), "compact() expires the token");
    },
  };
}

for (const release of kubeReleases().filter((r) => r.built)) {
  void test(`the test API server answers in the wire format of kube-apiserver ${release.version}`, async (t) => {
    const plane = await startControlPlane({
      release,
      apiserverArgs: ["--watch-cache-sizes=podtemplates#0", "--etcd-compaction-interval=2s"],
    });
    t.after(() => plane.stop());
    const api = new KubeApiServer();
    await api.start();
    t.after(() => api.stop());
    const { shapes: real, values: realValues } = await scenario(realSide(plane));
    const { shapes: mine, values: mineValues } = await scenario(testSide(api));
    assert.deepEqual(mineValues, realValues, "the same watch events, end and refusal");
    const differences: string[] = [];
    const known = new Map<string, number>();
    for (const [label, body] of real) {
      assert.ok(mine.has(label), `the test server gave no answer for ${label}`);
      const d = shapeDifference(shape(body), shape(mine.get(label)));
      for (const line of [
        ...d.missing.map((p) => `missing ${p}`),
        ...d.invented.map((p) => `invented ${p}`),
      ]) {
        const k = KNOWN.find((x) => x.pattern.test(line) && (x.label?.test(label) ?? true));
        if (k) known.set(k.reason, (known.get(k.reason) ?? 0) + 1);
        else differences.push(`${label}: ${line}`);
      }
    }
    for (const label of mine.keys())
      assert.ok(real.has(label), `the real server gave no answer for ${label}`);
    for (const [reason, n] of known) t.diagnostic(`known (${n} field paths): ${reason}`);
    t.diagnostic(
      `${release.version}: ${real.size} answers compared; ${[...known.values()].reduce((a, b) => a + b, 0)} known differences`,
    );
    assert.deepEqual(differences, [], "the test API server's answers have the real server's shape");
  });
}
