/**
 * The webhook path against a real kube-apiserver: `celgate serve` (the CLI, real TLS from a test CA,
 * connected to the API server with --kubeconfig as a Deployment is) registered with the
 * ValidatingWebhookConfiguration and MutatingWebhookConfiguration that `celgate manifests` prints
 * (caBundle the test CA), and the API server's own calls compared with the same policies installed
 * natively, on the same requests: dry-run creates and updates as two users, in two namespaces.
 * Compared per request: the HTTP status, allowed or not, the status code, reason and message, the
 * warnings, and the object the API server would store (mutations included). The one expected
 * difference of the message is the API server's own prefix for a webhook's denial,
 * `admission webhook "NAME" denied the request: ` (k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go
 * ToStatusErr), which the comparison removes.
 *
 * Then what only the webhook path has: requests the webhooks must never send to celgate (kube-system,
 * a namespace the namespaceSelector leaves out, a matchCondition that is false) counted on celgate's
 * own metrics; and failurePolicy when celgate is paused past timeoutSeconds (SIGSTOP: the process
 * accepts no TLS handshake, nothing of the engine is replaced) and when it is stopped: a Fail
 * webhook's requests are refused, an Ignore webhook's are let through
 * (k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go, callHook's error handling).
 *
 * CELGATE_KUBE_REPORT=FILE writes each release's differences to FILE.webhook.<version>.json.
 *
 * Simulated, because the test bed has no kube-proxy: the Service the webhooks name is an ExternalName
 * Service to 127.0.0.1 (webhook-harness.ts says why that routes as a ClusterIP Service would).
 */
import assert from "node:assert/strict";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { NEWEST_RELEASE, RELEASES } from "../../src/cel/index.ts";
import { createTestAuthority, type TestCertificate } from "../helpers/certs.ts";
import {
  type ControlPlane,
  type KubeResponse,
  kubeReleases,
  startControlPlane,
} from "../helpers/kube-control-plane.ts";
import { deleteObject, type KubeManifest } from "../helpers/kube-objects.ts";
import { sleep } from "../helpers/webhook.ts";
import { cli } from "../unit/cli/fake-io.ts";
import {
  apply,
  loopbackService,
  namespaceManifest,
  Resources,
  reviewsAnswered,
  type ServeProcess,
  spawnServe,
} from "./webhook-harness.ts";
import {
  collectionOf,
  createdObjects,
  ENFORCED_LABEL,
  LIBRARY_FILES,
  nameOf,
  storedObjects,
  updated,
  WEBHOOK_POLICIES,
  type WebhookRequest,
} from "./webhook-policies.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SERVICE = "celgate";
const SERVICE_NS = "celgate";
const NAMESPACES = ["wh-a", "wh-b"] as const;
const USERS = ["alice", "mallory"] as const;
const USER_GROUP = "celgate-test";
/**
 * Who denied, as the API server words it: for a webhook `admission webhook "NAME" denied the
 * request: ` (k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go ToStatusErr), for
 * a policy it runs itself `RESOURCE "NAME" is forbidden: ` (admission.NewForbidden, called by
 * k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go). What follows is compared.
 */
const WEBHOOK_PREFIX = /^admission webhook "[^"]+" denied the request: /;
const NATIVE_PREFIX = /^[a-z0-9.-]+ "[^"]*" is forbidden: /;
/** Requests sent at once: enough to keep the API server busy, few enough for a shared machine. */
const CONCURRENCY = 8;

/** What one request came to, as compared. */
interface Outcome {
  readonly status: number;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly warnings: readonly string[];
  readonly object?: unknown;
}

/** The object as stored, without what the API server generates anew for each request. */
function storedForm(body: unknown): unknown {
  const o = structuredClone(body) as { metadata?: Record<string, unknown> };
  if (o.metadata)
    for (const k of ["uid", "creationTimestamp", "managedFields", "resourceVersion"]) delete o.metadata[k];
  return o;
}

function outcomeOf(r: KubeResponse): Outcome {
  const warnings = [...r.warnings];
  if (r.status === 200 || r.status === 201) return { status: r.status, warnings, object: storedForm(r.body) };
  const s = r.body as { code?: number; reason?: string; message?: string };
  return {
    status: r.status,
    ...(s.code !== undefined ? { code: s.code } : {}),
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    ...(s.message !== undefined
      ? { message: s.message.replace(WEBHOOK_PREFIX, "").replace(NATIVE_PREFIX, "") }
      : {}),
    warnings,
  };
}

interface Bed {
  plane: ControlPlane;
  resources: Resources;
  users: Map<string, TestCertificate>;
  dir: string;
  policiesDir: string;
  ca: string;
  tls: { cert: string; key: string };
  /** The library's and purpose-written policy objects: admission policies and bindings only. */
  policyObjects: KubeManifest[];
}

async function setUp(plane: ControlPlane): Promise<Bed> {
  const resources = new Resources(plane);
  const dir = await mkdtemp(join(tmpdir(), "celgate-kube-webhook-"));
  const policiesDir = join(dir, "policies");
  await mkdir(policiesDir);
  for (const f of LIBRARY_FILES) await copyFile(join(ROOT, "policies", f), join(policiesDir, f));
  await writeFile(join(policiesDir, "webhook.yaml"), WEBHOOK_POLICIES);
  const policyObjects: KubeManifest[] = [];
  const params: KubeManifest[] = [];
  for (const f of [...LIBRARY_FILES, "webhook.yaml"])
    for (const doc of parseAllDocuments(await readFile(join(policiesDir, f), "utf8"))) {
      const o = doc.toJS() as KubeManifest;
      (o.kind === "ConfigMap" ? params : policyObjects).push(o);
    }

  await apply(plane, resources, namespaceManifest(SERVICE_NS));
  await apply(
    plane,
    resources,
    namespaceManifest("wh-a", { [ENFORCED_LABEL]: "true", "platform.example.com/team": "payments" }),
  );
  await apply(plane, resources, namespaceManifest("wh-b", { "platform.example.com/cost-center": "cc-7" }));
  for (const ns of [...NAMESPACES, "kube-system"])
    await apply(plane, resources, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: ns },
    });
  for (const p of params) await apply(plane, resources, p);
  await apply(plane, resources, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "wh-writer" },
    rules: [
      {
        apiGroups: [""],
        resources: ["pods", "configmaps", "secrets", "services"],
        verbs: ["create", "update", "get"],
      },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["create", "update", "get"] },
    ],
  });
  await apply(plane, resources, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "wh-writer" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "wh-writer" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: USER_GROUP }],
  });
  for (const ns of NAMESPACES) for (const o of storedObjects(ns)) await apply(plane, resources, o);

  const authority = createTestAuthority("celgate webhook test CA");
  const tls = authority.issueServer([
    `${SERVICE}.${SERVICE_NS}.svc`,
    `${SERVICE}.${SERVICE_NS}.svc.cluster.local`,
    "127.0.0.1",
  ]);
  await writeFile(join(dir, "ca.crt"), authority.cert);
  await writeFile(join(dir, "tls.crt"), tls.cert);
  await writeFile(join(dir, "tls.key"), tls.key);
  const users = new Map(USERS.map((u) => [u, plane.issueUser(u, USER_GROUP)]));
  return { plane, resources, users, dir, policiesDir, ca: authority.cert, tls, policyObjects };
}

/** Every request of the comparison: the objects created in each namespace and the stored ones updated, as each user. */
async function comparedRequests(bed: Bed): Promise<WebhookRequest[]> {
  const out: WebhookRequest[] = [];
  for (const ns of NAMESPACES)
    for (const user of USERS) {
      for (const o of createdObjects(ns))
        out.push({
          what: `${user} creates ${String(o.kind)} ${ns}/${nameOf(o)}`,
          method: "POST",
          path: collectionOf(String(o.kind), ns),
          user,
          body: o,
        });
      for (const o of storedObjects(ns)) {
        const current = await bed.plane.request("GET", `${collectionOf(String(o.kind), ns)}/${nameOf(o)}`);
        assert.equal(current.status, 200);
        out.push({
          what: `${user} updates ${String(o.kind)} ${ns}/${nameOf(o)}`,
          method: "PUT",
          path: `${collectionOf(String(o.kind), ns)}/${nameOf(o)}`,
          user,
          body: updated(current.body as Record<string, unknown>),
        });
      }
    }
  return out;
}

async function send(bed: Bed, r: WebhookRequest): Promise<KubeResponse> {
  return bed.plane.request(r.method, `${r.path}?dryRun=All`, r.body, bed.users.get(r.user));
}

async function runAll(bed: Bed, requests: readonly WebhookRequest[]): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (let i = 0; i < requests.length; i += CONCURRENCY)
    out.push(
      ...(await Promise.all(
        requests.slice(i, i + CONCURRENCY).map(async (r) => outcomeOf(await send(bed, r))),
      )),
    );
  return out;
}

const same = (a: readonly Outcome[], b: readonly Outcome[]) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The outcomes once what was installed has taken effect: different from `baseline` (when given), and
 * the same twice in a row. The API server's policy and webhook informers apply a change within
 * moments; the bound is generous for a shared machine.
 */
async function settled(
  bed: Bed,
  requests: readonly WebhookRequest[],
  until: (o: readonly Outcome[]) => boolean,
  what: string,
): Promise<Outcome[]> {
  const deadline = Date.now() + 60_000;
  let last: Outcome[] | undefined;
  for (;;) {
    const now = await runAll(bed, requests);
    if (until(now) && last !== undefined && same(now, last)) return now;
    if (Date.now() > deadline) throw new Error(`${what}: the outcomes did not settle in 60 s`);
    last = until(now) ? now : undefined;
    await sleep(500);
  }
}

function describeOutcome(o: Outcome): string {
  return o.status < 300 ? `allowed (${o.status})` : `${o.status} ${o.reason ?? ""}: ${o.message ?? ""}`;
}

for (const release of kubeReleases().filter((r) => r.built)) {
  void describe(`the webhook path against ${release.version}`, () => {
    const celgateRelease = RELEASES.includes(release.minor) ? release.minor : NEWEST_RELEASE;
    let plane: ControlPlane;
    let bed: Bed;
    let serve: ServeProcess | undefined;
    let ports: { admission: number; metrics: number };

    /** `celgate manifests` for the policies, applied; `extra` adds options (a shorter timeout). */
    async function register(extra: readonly string[] = []): Promise<Record<string, unknown>[]> {
      const m = await cli([
        "manifests",
        "--policies",
        bed.policiesDir,
        "--service",
        SERVICE,
        "--namespace",
        SERVICE_NS,
        "--port",
        String(ports.admission),
        "--ca-bundle",
        join(bed.dir, "ca.crt"),
        ...extra,
      ]);
      assert.equal(m.code, 0, m.stderr);
      const docs = parseAllDocuments(m.stdout).map((d) => d.toJS() as Record<string, unknown>);
      for (const d of docs) await apply(plane, bed.resources, d as KubeManifest);
      return docs;
    }

    before(async () => {
      plane = await startControlPlane({ release });
      bed = await setUp(plane);
    });
    after(async () => {
      await serve?.stop();
      await plane?.stop();
      if (bed) await rm(bed.dir, { recursive: true, force: true });
    });

    void test("the API server's calls to celgate decide as the same policies installed natively", async () => {
      const requests = await comparedRequests(bed);
      const baseline = await runAll(bed, requests);
      const notAllowed = baseline.flatMap((o, i) =>
        o.status >= 300 ? [`${requests[i]!.what}: ${describeOutcome(o)}`] : [],
      );
      assert.deepEqual(notAllowed, [], "with no policy every request is allowed");

      // Natively: the policies and bindings created as they are (their params already are).
      for (const o of bed.policyObjects) await apply(plane, bed.resources, o);
      const native = await settled(bed, requests, (o) => !same(o, baseline), "natively installed policies");
      for (const o of [...bed.policyObjects].reverse()) await deleteObject(plane, bed.resources, o);
      await settled(bed, requests, (o) => same(o, baseline), "the native policies removed");

      // Through celgate: serve connected as a Deployment runs it, the Service, the manifests.
      serve = spawnServe([
        "--policies",
        bed.policiesDir,
        "--tls-cert",
        join(bed.dir, "tls.crt"),
        "--tls-key",
        join(bed.dir, "tls.key"),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--metrics-port",
        "0",
        "--drain-seconds",
        "0",
        "--kubeconfig",
        plane.kubeconfig,
        "--kubernetes-version",
        celgateRelease,
      ]);
      ports = await serve.ports();
      await apply(plane, bed.resources, loopbackService(SERVICE_NS, SERVICE));
      const docs = await register();
      assert.deepEqual(
        docs.map((d) => d.kind),
        ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"],
      );
      const answeredBefore = await reviewsAnswered(ports.metrics);
      const webhook = await settled(bed, requests, (o) => !same(o, baseline), "celgate's webhooks");
      assert.ok((await reviewsAnswered(ports.metrics)) > answeredBefore, "the API server called celgate");

      const differences: string[] = [];
      requests.forEach((r, i) => {
        const n = native[i]!;
        const w = webhook[i]!;
        if (JSON.stringify(n) !== JSON.stringify(w))
          differences.push(`${r.what}:\n  native:  ${JSON.stringify(n)}\n  webhook: ${JSON.stringify(w)}`);
      });
      const report = process.env.CELGATE_KUBE_REPORT;
      if (report !== undefined)
        await writeFile(
          `${report}.webhook.${release.version}.json`,
          `${JSON.stringify(differences, null, 2)}\n`,
        );
      const denied = native.filter((o) => o.status >= 300).length;
      const warned = native.filter((o) => o.warnings.length > 0).length;
      const mutated = native.filter(
        (o, i) => o.status < 300 && JSON.stringify(o.object) !== JSON.stringify(baseline[i]!.object),
      ).length;
      process.stdout.write(
        `webhook path ${release.version}: ${requests.length} requests compared (${denied} denied, ${warned} with warnings, ${mutated} mutated natively); ${differences.length} differences\n`,
      );
      assert.ok(
        denied > 0 && warned > 0 && mutated > 0,
        "the requests exercise denials, warnings and mutations",
      );
      assert.deepEqual(differences, []);
    });

    void test("requests the webhook configurations leave out never reach celgate", async () => {
      assert.ok(serve, "celgate is serving");
      const leftOut: WebhookRequest[] = [
        {
          what: "a Pod with a latest image in kube-system",
          method: "POST",
          path: collectionOf("Pod", "kube-system"),
          user: "alice",
          body: createdObjects("kube-system").find((o) => nameOf(o) === "latest")!,
        },
        {
          what: "a ConfigMap whose label makes the matchCondition false",
          method: "POST",
          path: collectionOf("ConfigMap", "wh-a"),
          user: "alice",
          body: createdObjects("wh-a").find((o) => nameOf(o) === "forbidden-skipped")!,
        },
        {
          what: "a Secret in a namespace the namespaceSelector leaves out",
          method: "POST",
          path: collectionOf("Secret", "wh-b"),
          user: "alice",
          body: createdObjects("wh-b").find((o) => nameOf(o) === "bad-secret")!,
        },
        {
          what: "a ConfigMap in celgate's own namespace",
          method: "POST",
          path: collectionOf("ConfigMap", SERVICE_NS),
          user: "alice",
          body: createdObjects(SERVICE_NS).find((o) => nameOf(o) === "forbidden")!,
        },
      ];
      for (const r of leftOut) {
        const before = await reviewsAnswered(ports.metrics);
        const res = await send(bed, r);
        assert.equal(res.status, 201, `${r.what}: allowed (${JSON.stringify(res.body)})`);
        assert.equal(await reviewsAnswered(ports.metrics), before, `${r.what}: celgate was not called`);
      }
      // And the count does move for a request that is sent: the check above can fail.
      const before = await reviewsAnswered(ports.metrics);
      const sent = createdObjects("wh-a").find((o) => nameOf(o) === "forbidden")!;
      const res = await send(bed, {
        what: "sent",
        method: "POST",
        path: collectionOf("ConfigMap", "wh-a"),
        user: "alice",
        body: sent,
      });
      assert.equal(res.status, 422);
      assert.ok((await reviewsAnswered(ports.metrics)) > before);
    });

    /** A request of a Fail webhook (a ConfigMap celgate denies) and of an Ignore one (a Service it denies). */
    const failRoute = (): WebhookRequest => ({
      what: "a ConfigMap (Fail)",
      method: "POST",
      path: collectionOf("ConfigMap", "wh-a"),
      user: "alice",
      body: createdObjects("wh-a").find((o) => nameOf(o) === "forbidden")!,
    });
    const ignoreRoute = (): WebhookRequest => ({
      what: "a Service (Ignore)",
      method: "POST",
      path: collectionOf("Service", "wh-a"),
      user: "alice",
      body: createdObjects("wh-a").find((o) => nameOf(o) === "bad-svc")!,
    });

    void test("celgate paused past timeoutSeconds: Fail webhooks refuse, Ignore webhooks let through", async () => {
      assert.ok(serve, "celgate is serving");
      const docs = await register(["--timeout-seconds", "2"]);
      for (const d of docs)
        for (const h of d.webhooks as { timeoutSeconds: number }[]) assert.equal(h.timeoutSeconds, 2);
      // The API server names the timeout it waits in the call (`?timeout=2s`); until its informer has
      // the new configuration it may still wait the old one, so a try that shows it is made again.
      let fail: KubeResponse | undefined;
      let ignore: KubeResponse | undefined;
      for (let attempt = 0; attempt < 3; attempt++) {
        serve.child.kill("SIGSTOP");
        try {
          fail = await send(bed, failRoute());
          ignore = await send(bed, ignoreRoute());
        } finally {
          serve.child.kill("SIGCONT");
        }
        if (/\?timeout=2s"/.test((fail.body as { message?: string }).message ?? "")) break;
      }
      assert.ok(fail && ignore);
      assert.equal(fail.status, 500, JSON.stringify(fail.body));
      assert.match(
        (fail.body as { message: string }).message,
        /failed calling webhook "celgate\.celgate\.fail(-\d+)?\.validate\.celgate\.dev": .*\?timeout=2s": context deadline exceeded/,
      );
      assert.equal(ignore.status, 201, `the Ignore webhook lets it through: ${JSON.stringify(ignore.body)}`);
      // Answering again, it decides again.
      const back = await send(bed, failRoute());
      assert.equal(back.status, 422, JSON.stringify(back.body));
    });

    void test("celgate stopped: Fail webhooks refuse, Ignore webhooks let through", async () => {
      assert.ok(serve, "celgate is serving");
      await serve.stop();
      const fail = await send(bed, failRoute());
      const ignore = await send(bed, ignoreRoute());
      assert.equal(fail.status, 500, JSON.stringify(fail.body));
      assert.match(
        (fail.body as { message: string }).message,
        /failed calling webhook "celgate\.celgate\.fail(-\d+)?\.validate\.celgate\.dev": .*connection refused/,
      );
      assert.equal(ignore.status, 201, `the Ignore webhook lets it through: ${JSON.stringify(ignore.body)}`);
      // Outside the webhooks' reach nothing is refused even now: the cluster can heal itself.
      const system = await send(bed, {
        what: "kube-system",
        method: "POST",
        path: collectionOf("ConfigMap", "kube-system"),
        user: "alice",
        body: createdObjects("kube-system").find((o) => nameOf(o) === "fine")!,
      });
      assert.equal(system.status, 201);
    });
  });
}
