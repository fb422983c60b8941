/**
 * Installing deploy/ as a user would, against the test API server (test/helpers/kube-apiserver.ts;
 * test/kube/deploy-install.test.ts installs it with kubectl against a real kube-apiserver, where
 * celgate's first list cannot be held back as here): the webhook configurations deploy/ applies
 * route nothing, celgate (a process started with the Deployment's own serve arguments, its volumes
 * as files) fills them only once ready, and then no request of an unrelated workload is denied or
 * fails: cert-manager's Pods (celgate's TLS depends on them), kube-system's, a plain Deployment in a
 * new namespace, a new Namespace. The policies are the deploy's actual content: the base, plus every
 * component of deploy/library enabled as shipped (audit first), composed as kustomize composes the
 * ConfigMap (each component merges its files, later keys replace earlier ones). Each request is sent
 * to every path the written webhooks call, a superset of what the API server would send.
 *
 * And the test can fail: with allowed-registries' enforce component, cert-manager's Pods are denied,
 * which is what the default install used to do.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { generateCertificate } from "../../src/adapters/server/tls.ts";
import { type KubeApiServer, type KubeObject, startKubeApiServer } from "../helpers/kube-apiserver.ts";
import { send } from "../helpers/https.ts";
import { postReview, replaceFile, sleep, tempDir, waitFor } from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DEPLOY = join(ROOT, "deploy");
const LIBRARY = join(DEPLOY, "library");

interface Container {
  args: string[];
  volumeMounts: { name: string; mountPath: string }[];
}

async function deploymentContainer(): Promise<Container> {
  const d = parseYaml(await readFile(join(DEPLOY, "deployment.yaml"), "utf8")) as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  return d.spec.template.spec.containers[0]!;
}

/** key → source file of the celgate-policies ConfigMap for the base plus `components`, in order. */
async function configMap(components: readonly string[]): Promise<Map<string, string>> {
  const base = parseYaml(await readFile(join(DEPLOY, "kustomization.yaml"), "utf8")) as {
    configMapGenerator: { name: string; files?: string[] }[];
  };
  const data = new Map<string, string>();
  const add = (dir: string, files: readonly string[] = []) => {
    for (const f of files) data.set(f.split("/").pop()!, join(dir, f));
  };
  add(DEPLOY, base.configMapGenerator.find((g) => g.name === "celgate-policies")?.files);
  for (const c of components) {
    const dir = join(DEPLOY, c);
    const k = parseYaml(await readFile(join(dir, "kustomization.yaml"), "utf8")) as {
      configMapGenerator: { name: string; behavior: string; files: string[] }[];
    };
    for (const g of k.configMapGenerator) {
      assert.equal(g.name, "celgate-policies");
      assert.equal(g.behavior, "merge");
      add(dir, g.files);
    }
  }
  return data;
}

/** Writes a ConfigMap volume: one file per key. */
async function mountConfigMap(dir: string, data: Map<string, string>): Promise<void> {
  for (const [key, source] of data) await replaceFile(join(dir, key), await readFile(source, "utf8"));
}

/** cert-manager's Secret celgate-tls: a CA and a serving certificate for the Service. */
function tlsSecret(): Record<string, string> {
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
    hosts: ["celgate.celgate.svc", "celgate.celgate.svc.cluster.local", "127.0.0.1"],
    issuer: ca,
  });
  return { "ca.crt": ca.cert, "tls.crt": serving.cert, "tls.key": serving.key };
}

function namespace(name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
  };
}

interface Installed {
  readonly api: KubeApiServer;
  readonly policies: string;
  readonly ca: string;
  readonly child: ChildProcessWithoutNullStreams;
  port(): Promise<number>;
}

/** kubectl apply of deploy/'s cluster-scoped configurations, then the Pod: serve with the Deployment's args. */
async function install(t: TestContext, components: readonly string[]): Promise<Installed> {
  const api = await startKubeApiServer(t);
  for (const ns of ["kube-system", "kube-node-lease", "default", "cert-manager", "celgate", "team-a"])
    api.put(namespace(ns));
  for (const doc of parseAllDocuments(await readFile(join(DEPLOY, "webhook-registration.yaml"), "utf8")))
    api.put(doc.toJS() as KubeObject);
  const dir = await tempDir(t);
  const container = await deploymentContainer();
  // The volumes, as files: the policies ConfigMap and cert-manager's Secret.
  const mounts = new Map(container.volumeMounts.map((m) => [m.mountPath, join(dir, m.name)]));
  for (const path of mounts.values()) await mkdir(path, { recursive: true });
  const policies = mounts.get(container.volumeMounts.find((m) => m.name === "policies")!.mountPath)!;
  await mountConfigMap(policies, await configMap(components));
  const tls = mounts.get(container.volumeMounts.find((m) => m.name === "tls")!.mountPath)!;
  const secret = tlsSecret();
  for (const [k, v] of Object.entries(secret)) await writeFile(join(tls, k), v);
  await writeFile(join(dir, "kubeconfig"), api.kubeconfig());
  // The Deployment's args, with the mount paths pointing at the files, and loopback ports.
  const args = container.args.map((a) => {
    for (const [mountPath, local] of mounts)
      if (a.startsWith(mountPath)) return local + a.slice(mountPath.length);
    return a;
  });
  for (const flag of ["--port", "--metrics-port"]) args[args.indexOf(flag) + 1] = "0";
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/adapters/cli/bin.ts",
      "serve",
      ...args,
      "--host",
      "127.0.0.1",
      "--kubeconfig",
      join(dir, "kubeconfig"),
    ],
    { cwd: ROOT, timeout: 60_000, killSignal: "SIGKILL" },
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdout.resume();
  const port = async () =>
    Number(
      (
        await waitFor(
          "the serving line",
          () => /on https:\/\/127\.0\.0\.1:(\d+);/.exec(stderr) ?? undefined,
          30_000,
        )
      )[1],
    );
  return { api, policies, ca: secret["ca.crt"]!, child, port };
}

const CONFIGS = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] as const;

interface Hook {
  name: string;
  clientConfig: { service: { path: string } };
}

function hooks(api: KubeApiServer): Hook[] {
  return CONFIGS.flatMap((kind) => {
    const o = api.get("admissionregistration.k8s.io/v1", kind, undefined, "celgate.celgate.celgate.dev");
    return (o?.webhooks as Hook[] | undefined) ?? [];
  });
}

const CERT_MANAGER_SECURITY = {
  runAsNonRoot: true,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
};

function pod(ns: string, name: string, image: string, security: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      serviceAccountName: name,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name,
          image,
          imagePullPolicy: "IfNotPresent",
          securityContext: security,
          resources: { requests: { cpu: "10m", memory: "32Mi" } },
        },
      ],
    },
  };
}

/** The unrelated workload of a cluster: what must never be denied by installing celgate. */
const REQUESTS: readonly { what: string; review: Record<string, unknown> }[] = [
  ...[
    ["cert-manager", "quay.io/jetstack/cert-manager-controller:v1.16.2"],
    ["cert-manager-cainjector", "quay.io/jetstack/cert-manager-cainjector:v1.16.2"],
    ["cert-manager-webhook", "quay.io/jetstack/cert-manager-webhook:v1.16.2"],
  ].map(([name, image]) => ({
    what: `cert-manager's Pod ${name}`,
    review: podReview(
      pod("cert-manager", name!, image!, CERT_MANAGER_SECURITY),
      "system:serviceaccount:kube-system:replicaset-controller",
    ),
  })),
  {
    what: "kube-system's coredns Pod",
    review: podReview(
      pod("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3"),
      "system:serviceaccount:kube-system:replicaset-controller",
    ),
  },
  {
    what: "a plain Deployment in a new namespace",
    review: review(
      { group: "apps", version: "v1", kind: "Deployment" },
      { group: "apps", version: "v1", resource: "deployments" },
      "team-a",
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "team-a" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "web", image: "nginx:1.27.3" }] },
          },
        },
      },
      "alice",
    ),
  },
  {
    what: "a new Namespace",
    review: review(
      { group: "", version: "v1", kind: "Namespace" },
      { group: "", version: "v1", resource: "namespaces" },
      "team-b",
      namespace("team-b"),
      "alice",
    ),
  },
];

function podReview(object: KubeObject, user: string): Record<string, unknown> {
  return review(
    { group: "", version: "v1", kind: "Pod" },
    { group: "", version: "v1", resource: "pods" },
    object.metadata.namespace!,
    object,
    user,
  );
}

function review(
  kind: Record<string, string>,
  resource: Record<string, string>,
  ns: string,
  object: KubeObject,
  user: string,
): Record<string, unknown> {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `uid-${object.metadata.name}`,
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      name: object.metadata.name,
      namespace: ns,
      operation: "CREATE",
      userInfo: { username: user, groups: ["system:authenticated"] },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    },
  };
}

/** Every request through every path the written webhooks call: the denials and warnings, as `what: message`. */
async function answers(installed: Installed): Promise<{ denied: string[]; warned: string[] }> {
  const port = await installed.port();
  const paths = [...new Set(hooks(installed.api).map((h) => h.clientConfig.service.path))];
  assert.ok(paths.length > 0, "webhooks were written");
  const denied: string[] = [];
  const warned: string[] = [];
  for (const { what, review: body } of REQUESTS)
    for (const path of paths) {
      const reply = await postReview(port, installed.ca, path, body);
      assert.equal(reply.http.status, 200, `${what} ${path}: answered`);
      if (!reply.response.allowed) denied.push(`${what} ${path}: ${reply.response.status?.message}`);
      for (const w of reply.response.warnings ?? []) warned.push(`${what} ${path}: ${w}`);
    }
  return { denied, warned };
}

const LIBRARY_COMPONENTS = async () => (await readdir(LIBRARY)).sort().map((c) => `library/${c}`);

void test("deploy/ alone: celgate starts with the empty policies ConfigMap, ready, and routes nothing", async (t) => {
  const installed = await install(t, []);
  const port = await installed.port();
  await waitFor(
    "ready",
    async () => {
      const res = await send({ port, path: "/readyz", ca: installed.ca });
      return res.status === 200 ? true : undefined;
    },
    30_000,
  );
  // Ready, registration done or under way: the configurations still hold no webhook.
  await sleep(500);
  assert.deepEqual(hooks(installed.api), []);
  assert.equal(installed.child.exitCode, null, "serving");
  installed.child.kill("SIGTERM");
});

void test("deploy/ with every library component as shipped: nothing routed before ready, nothing unrelated denied after", async (t) => {
  const components = await LIBRARY_COMPONENTS();
  assert.ok(components.length >= 20);
  const installed = await install(t, components);
  // The library's params are ConfigMaps: their first list is held, so celgate is not ready yet.
  const release = installed.api.hold("configmaps");
  assert.deepEqual(hooks(installed.api), [], "applying deploy/ routes nothing to celgate");
  await installed.port();
  await sleep(500);
  assert.deepEqual(hooks(installed.api), [], "nothing routed while celgate is not ready");
  release();
  await waitFor("the webhooks written", () => (hooks(installed.api).length > 0 ? true : undefined), 30_000);
  const { denied, warned } = await answers(installed);
  assert.deepEqual(denied, []);
  // The policies did run: what enforce would deny is a warning now.
  assert.ok(
    warned.some((w) => w.startsWith("cert-manager's Pod cert-manager ") && /registr/i.test(w)),
    warned.join("\n"),
  );
  installed.child.kill("SIGTERM");
});

void test("the same install with allowed-registries enforced denies cert-manager's Pods: the test can fail", async (t) => {
  const installed = await install(t, ["library/allowed-registries", "library/allowed-registries/enforce"]);
  await waitFor("the webhooks written", () => (hooks(installed.api).length > 0 ? true : undefined), 30_000);
  const { denied } = await answers(installed);
  assert.ok(
    denied.some((d) => d.startsWith("cert-manager's Pod cert-manager ")),
    denied.join("\n") || "nothing denied",
  );
  installed.child.kill("SIGTERM");
});
