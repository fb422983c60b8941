/**
 * `serve --register-webhooks`: celgate writes its own webhook configurations to the (test) API
 * server, and only once it is ready. Real serve over TLS on 127.0.0.1, connected by kubeconfig to
 * test/helpers/kube-apiserver.ts, which stores the configurations as the API server does (get,
 * create, update with resourceVersion preconditions, delete; RBAC refusals as 403).
 *
 * What is pinned: nothing is written before /readyz is 200 (caches synced); the content is exactly
 * what `celgate manifests` generates with the CA as caBundle; a policy reload rewrites it; a refused
 * write is logged, counted and retried; an existing configuration (deploy/'s empty one) is updated
 * keeping its other metadata; on SIGTERM the configurations are left in place (registration.ts says
 * why, following Gatekeeper).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { generateCertificate } from "../../src/adapters/server/tls.ts";
import { loadSnapshot } from "../../src/sources/store.ts";
import { configurationName, webhookManifests } from "../../src/manifests/webhooks.ts";
import { send } from "../helpers/https.ts";
import { type KubeApiServer, startKubeApiServer } from "../helpers/kube-apiserver.ts";
import {
  replaceFile,
  sampleValue,
  scrape,
  startTestWebhook,
  type TestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NAME = configurationName("celgate", "celgate");
const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

/** A CA and a serving certificate for the Service celgate.celgate (and loopback, for the test's client). */
function certificates(): { ca: string; cert: string; key: string } {
  const now = Date.now();
  const validity = { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + 86_400_000) };
  const ca = generateCertificate({
    subject: { organization: "celgate-test", commonName: "celgate-ca" },
    ...validity,
    isCA: true,
    keyUsage: ["keyCertSign", "cRLSign"],
  });
  const serving = generateCertificate({
    subject: { organization: "celgate-test", commonName: "celgate.celgate.svc" },
    ...validity,
    isCA: false,
    keyUsage: ["digitalSignature"],
    extKeyUsage: ["serverAuth"],
    hosts: ["celgate.celgate.svc", "celgate.celgate.svc.cluster.local", "127.0.0.1", "localhost"],
    issuer: ca,
  });
  return { ca: ca.cert, cert: serving.cert, key: serving.key };
}

const PODS_WITH_PARAMS = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: pod-limit }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }
  validations:
    - expression: "size(object.spec.containers) <= int(params.data.max)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: pod-limit }
spec:
  policyName: pod-limit
  validationActions: [Deny]
  paramRef: { name: pod-limit, namespace: kube-system, parameterNotFoundAction: Allow }
`;

const DEPLOYMENTS_ONLY = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replicas }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
  matchConstraints:
    resourceRules:
      - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments] }
  validations:
    - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replicas }
spec:
  policyName: replicas
  validationActions: [Deny]
  paramRef: { name: replicas, namespace: kube-system, parameterNotFoundAction: Allow }
`;

interface Setup {
  readonly api: KubeApiServer;
  readonly dir: string;
  readonly files: { ca: string; cert: string; key: string; kubeconfig: string };
  readonly errors: string[];
}

async function setUp(t: TestContext, policy: string): Promise<Setup> {
  const api = await startKubeApiServer(t);
  const dir = await tempDir(t);
  const pem = certificates();
  const files = {
    ca: join(dir, "ca.crt"),
    cert: join(dir, "tls.crt"),
    key: join(dir, "tls.key"),
    kubeconfig: join(dir, "kubeconfig"),
  };
  await writeFile(files.ca, pem.ca);
  await writeFile(files.cert, pem.cert);
  await writeFile(files.key, pem.key);
  await writeFile(files.kubeconfig, api.kubeconfig());
  await import("node:fs/promises").then((fs) => fs.mkdir(join(dir, "policies")));
  await writeFile(join(dir, "policies", "policy.yaml"), policy);
  return { api, dir, files, errors: [] };
}

async function serve(t: TestContext, s: Setup, port?: number): Promise<TestWebhook> {
  const quiet = () => {};
  return startTestWebhook(t, {
    policies: [join(s.dir, "policies")],
    pollMs: 100,
    tlsCert: s.files.cert,
    tlsKey: s.files.key,
    ca: await import("node:fs/promises").then((fs) => fs.readFile(s.files.ca, "utf8")),
    cluster: {
      kubeconfig: s.files.kubeconfig,
      log: { info: quiet, warn: quiet, error: (_f, m) => s.errors.push(m) },
      reflector: { backoffInitialMs: 20, backoffMaxMs: 100 },
    },
    registerWebhooks: {
      namespace: "celgate",
      service: "celgate",
      caFile: s.files.ca,
      ...(port !== undefined ? { port } : {}),
      pollMs: 20,
      retryMs: 50,
    },
  });
}

/** What `celgate manifests --service celgate --namespace celgate --ca-bundle CA` prints for `dir`. */
async function generated(dir: string, caFile: string): Promise<readonly Record<string, unknown>[]> {
  const loaded = await loadSnapshot([join(dir, "policies")]);
  assert.ok(loaded.ok);
  const ca = await import("node:fs/promises").then((fs) => fs.readFile(caFile, "utf8"));
  return webhookManifests(loaded.snapshot.set, {
    service: "celgate",
    namespace: "celgate",
    caBundle: Buffer.from(`${ca.trim()}\n`, "utf8").toString("base64"),
  }).documents;
}

async function live(api: KubeApiServer, path: string): Promise<Record<string, unknown> | undefined> {
  const res = await send({
    port: Number(new URL(api.url).port),
    path: `${path}/${NAME}`,
    headers: { authorization: `Bearer ${api.token}` },
    ca: api.ca,
  });
  return res.status === 200 ? (JSON.parse(res.body) as Record<string, unknown>) : undefined;
}

async function readyz(metricsUrl: string): Promise<number> {
  const res = await send({ scheme: "http", port: Number(new URL(metricsUrl).port), path: "/readyz" });
  return res.status;
}

const writes = (api: KubeApiServer) =>
  api.requests.filter((r) => /^(POST|PUT|DELETE) .*webhookconfigurations/.test(r));

void test("the configurations are written only once serve is ready, with celgate manifests' content", async (t) => {
  const s = await setUp(t, PODS_WITH_PARAMS);
  // The ConfigMap cache's first list is held: serve is not ready until it answers.
  const release = s.api.hold("configmaps");
  const w = await serve(t, s);
  await waitFor("the Namespace cache to sync", () =>
    w.webhook.cluster!.status().some((c) => c.synced) ? true : undefined,
  );
  const metrics = w.webhook.metricsUrl;
  assert.equal(await readyz(metrics), 503, "not ready while a cache has not synced");
  // Long enough for many readiness polls (every 20 ms): still nothing written.
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(writes(s.api), [], "nothing written before readiness");
  assert.equal(await live(s.api, VWC), undefined);
  release();
  const vwc = await waitFor("the ValidatingWebhookConfiguration", () => live(s.api, VWC));
  assert.equal(await readyz(metrics), 200);
  const wanted = (await generated(s.dir, s.files.ca)).find(
    (d) => d.kind === "ValidatingWebhookConfiguration",
  );
  assert.ok(wanted);
  assert.deepEqual(vwc.webhooks, wanted.webhooks, "exactly what celgate manifests generates");
  assert.deepEqual(
    (vwc.metadata as { labels: unknown }).labels,
    (wanted.metadata as { labels: unknown }).labels,
  );
  // No mutating policy: the MutatingWebhookConfiguration is there, with no webhooks.
  const mwc = await waitFor("the MutatingWebhookConfiguration", () => live(s.api, MWC));
  assert.deepEqual(mwc.webhooks, []);
  await waitFor("registration to settle", () => (w.webhook.registration?.current ? true : undefined));
  const before = writes(s.api).length;
  assert.equal(before, 2, "one create of each kind");
  assert.equal(
    sampleValue(await scrape(metrics), "celgate_webhook_registrations_total", {
      kind: "ValidatingWebhookConfiguration",
      action: "created",
    }),
    1,
  );
});

void test("--webhook-port: the configurations name that Service port instead of 443", async (t) => {
  const s = await setUp(t, PODS_WITH_PARAMS);
  await serve(t, s, 8443);
  const vwc = await waitFor("the ValidatingWebhookConfiguration", () => live(s.api, VWC));
  const ports = (vwc.webhooks as { clientConfig: { service: { port: number } } }[]).map(
    (h) => h.clientConfig.service.port,
  );
  assert.ok(ports.length > 0);
  assert.deepEqual([...new Set(ports)], [8443]);
});

void test("a policy reload rewrites the configurations; an unchanged set writes nothing", async (t) => {
  const s = await setUp(t, PODS_WITH_PARAMS);
  const w = await serve(t, s);
  await waitFor("registered", () => (w.webhook.registration?.current ? true : undefined));
  const first = (await live(s.api, VWC))!;
  const count = writes(s.api).length;
  // The same content again: no write.
  await w.webhook.registration!.changed();
  assert.equal(writes(s.api).length, count);
  await replaceFile(join(s.dir, "policies", "policy.yaml"), DEPLOYMENTS_ONLY);
  const updated = await waitFor("the rules for deployments", async () => {
    const v = await live(s.api, VWC);
    return JSON.stringify(v?.webhooks).includes("deployments") ? v : undefined;
  });
  assert.notEqual(
    (updated.metadata as { resourceVersion: string }).resourceVersion,
    (first.metadata as { resourceVersion: string }).resourceVersion,
  );
  const wanted = (await generated(s.dir, s.files.ca)).find(
    (d) => d.kind === "ValidatingWebhookConfiguration",
  );
  assert.deepEqual(updated.webhooks, wanted?.webhooks);
  assert.ok(!JSON.stringify(updated.webhooks).includes('"pods"'), "the pods rule is gone");
});

void test("an existing configuration (deploy/'s empty one) is updated, its other metadata kept", async (t) => {
  const s = await setUp(t, PODS_WITH_PARAMS);
  for (const kind of ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"])
    s.api.put({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind,
      metadata: {
        name: NAME,
        labels: {
          "app.kubernetes.io/name": "celgate",
          "app.kubernetes.io/instance": "celgate",
          team: "platform",
        },
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}" },
      },
      webhooks: [],
    });
  const w = await serve(t, s);
  await waitFor("registered", () => (w.webhook.registration?.current ? true : undefined));
  const vwc = (await live(s.api, VWC))!;
  const meta = vwc.metadata as { labels: Record<string, string>; annotations: Record<string, string> };
  assert.equal(meta.labels.team, "platform");
  assert.equal(meta.annotations["kubectl.kubernetes.io/last-applied-configuration"], "{}");
  assert.equal((vwc.webhooks as unknown[]).length, 1);
  assert.deepEqual(
    writes(s.api).map((r) => r.split(" ")[0]),
    ["PUT"],
    "the validating one updated; the empty mutating one already as wanted",
  );
});

void test("a refused write is logged, counted and retried until it goes through", async (t) => {
  const s = await setUp(t, PODS_WITH_PARAMS);
  let refuse = true;
  s.api.forbid = (verb, plural) =>
    refuse && verb === "create" && plural === "validatingwebhookconfigurations";
  const w = await serve(t, s);
  await waitFor("a logged refusal", () => (s.errors.some((e) => e.includes("HTTP 403")) ? true : undefined));
  assert.ok(
    s.errors.some((e) => e.includes("could not create ValidatingWebhookConfiguration")),
    s.errors.join("\n"),
  );
  assert.ok(
    (sampleValue(await scrape(w.webhook.metricsUrl), "celgate_webhook_registrations_total", {
      kind: "ValidatingWebhookConfiguration",
      action: "failed",
    }) ?? 0) >= 1,
  );
  assert.equal(w.webhook.registration?.current, false);
  refuse = false;
  await waitFor("the retry", () => (w.webhook.registration?.current ? true : undefined));
  assert.ok(await live(s.api, VWC));
});

void test("the CA must verify the served certificate for the Service, or nothing is written", async (t) => {
  const s = await setUp(t, PODS_WITH_PARAMS);
  // A CA that did not sign the certificate served.
  await writeFile(s.files.ca, certificates().ca);
  const w = await serve(t, s);
  await waitFor("a logged refusal", () =>
    s.errors.some((e) => e.includes("not signed by the CA")) ? true : undefined,
  );
  assert.equal(await readyz(w.webhook.metricsUrl), 200, "serving, but not registered");
  assert.deepEqual(writes(s.api), []);
});

void test("on SIGTERM the process leaves the configurations in place", async (t) => {
  const s = await setUp(t, PODS_WITH_PARAMS);
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/adapters/cli/bin.ts",
      "serve",
      "--policies",
      join(s.dir, "policies"),
      "--kubeconfig",
      s.files.kubeconfig,
      "--tls-cert",
      s.files.cert,
      "--tls-key",
      s.files.key,
      "--register-webhooks",
      "celgate/celgate",
      "--webhook-ca",
      s.files.ca,
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--metrics-port",
      "0",
      "--drain-seconds",
      "0",
    ],
    { cwd: ROOT, timeout: 45_000, killSignal: "SIGKILL" },
  );
  t.after(() => child.kill("SIGKILL"));
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.resume();
  await waitFor("the configurations", async () => ((await live(s.api, MWC)) ? true : undefined), 30_000);
  const before = await live(s.api, VWC);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  assert.equal(await exited, 0, "a clean shutdown");
  assert.ok(stdout.includes('"event":"webhook-registration"'), "the writes are logged");
  assert.deepEqual(await live(s.api, VWC), before, "left as it was");
  assert.ok(await live(s.api, MWC));
  assert.ok(!s.api.requests.some((r) => r.startsWith("DELETE")), "nothing deleted");
});
