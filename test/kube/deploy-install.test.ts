/**
 * Installing deploy/ as docs/deploy.md says, against a real kube-apiserver: `kubectl apply -k` of an
 * overlay, the overlay being docs/deploy.md's own (read from the page, so the page and the test cannot
 * drift), then the same with every component of deploy/library as shipped, and no request of an
 * unrelated workload is denied or fails before, during or after: cert-manager's Pods and Secrets in
 * its namespace, kube-system's coredns Pod and a Lease, a new Namespace and a plain Deployment in it.
 * And the test can fail: with allowed-registries' enforce component, cert-manager's Pods are denied
 * (what the default install used to do).
 *
 * The test bed has no kubelet, no kube-proxy and no cert-manager, so these are simulated, and only
 * these:
 * - cert-manager: its CRDs (Certificate, Issuer; schemas that keep every field) so deploy/'s objects
 *   of those kinds apply, and the Secret its Certificate asks for (ca.crt, tls.crt, tls.key for the
 *   Certificate's dnsNames), written as cert-manager would write it.
 * - the Pod: celgate's CLI run here from source (not the image) with the Deployment's args, env
 *   and serviceAccountName as the API server stores them; its volumes are files written from the
 *   ConfigMap and Secret the Deployment names (as the kubelet writes them) and a kubeconfig holding a
 *   token of the Deployment's ServiceAccount (a TokenRequest, as the kubelet's projected token), so
 *   the RBAC of deploy/ is what celgate runs with. Its ports are loopback ports.
 * - the Service: an ExternalName Service to 127.0.0.1 in place of deploy/'s ClusterIP one, and
 *   `--webhook-port` set to the port celgate listens on (kube-proxy would map the Service's 443 to the
 *   Pod's 8443); webhook-harness.ts says why the API server routes it as it would the real one.
 * - a rollout: the new "Pod" is started and ready before the old one stops, as the Deployment's
 *   rolling update does.
 * kubectl is the one `npm run kube:build` builds from tools/kubectl (as CI machines have Go, not
 * kubectl), else the one on PATH; without either the test is skipped with one line saying so.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createTestAuthority } from "../helpers/certs.ts";
import {
  builtKubectl,
  type ControlPlane,
  kubeReleases,
  startControlPlane,
} from "../helpers/kube-control-plane.ts";
import { waitFor } from "../helpers/webhook.ts";
import { send as sendHttp } from "../helpers/https.ts";
import {
  apply,
  loopbackService,
  namespaceManifest,
  Resources,
  type ServeProcess,
  spawnServe,
} from "./webhook-harness.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NS = "celgate";
const CONFIG = "celgate.celgate.celgate.dev";

/** The kubectl to install with: the built one, else the one on PATH, else none. */
async function findKubectl(): Promise<string | undefined> {
  const candidate = builtKubectl() ?? "kubectl";
  try {
    await run(candidate, ["version", "--client"], { timeout: 60_000 });
    return candidate;
  } catch {
    return undefined;
  }
}

/** The overlay docs/deploy.md tells the user to write (its `my-celgate/kustomization.yaml` heredoc). */
async function documentedOverlay(): Promise<string> {
  const page = await readFile(join(ROOT, "docs", "deploy.md"), "utf8");
  const m = /cat > my-celgate\/kustomization\.yaml <<'YAML'\n([\s\S]*?)\nYAML\n/.exec(page);
  assert.ok(m, "docs/deploy.md writes my-celgate/kustomization.yaml");
  return `${m[1]}\n`;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function crd(kind: string, plural: string): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.cert-manager.io` },
    spec: {
      group: "cert-manager.io",
      scope: "Namespaced",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

const CERT_MANAGER_PODS = [
  ["cert-manager", "quay.io/jetstack/cert-manager-controller:v1.16.2"],
  ["cert-manager-cainjector", "quay.io/jetstack/cert-manager-cainjector:v1.16.2"],
  ["cert-manager-webhook", "quay.io/jetstack/cert-manager-webhook:v1.16.2"],
] as const;

function pod(ns: string, name: string, image: string): Record<string, unknown> {
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
          securityContext: {
            runAsNonRoot: true,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
          },
          resources: { requests: { cpu: "10m", memory: "32Mi" } },
        },
      ],
    },
  };
}

interface Installed {
  plane: ControlPlane;
  resources: Resources;
  dir: string;
  rounds: number;
}

/**
 * The unrelated workload, once: each request as the controller that makes it would (the admin's
 * credentials; what matters is what admission does). Pods are dry-run (no kubelet would run them);
 * the Lease, the Namespace and the Deployment are created. Returns each failure, `what: status message`.
 */
async function workload(bed: Installed): Promise<{ failed: string[]; warned: string[] }> {
  const round = ++bed.rounds;
  const { plane } = bed;
  const requests: [string, string, Record<string, unknown>][] = [
    ...CERT_MANAGER_PODS.map(
      ([name, image]) =>
        [
          `cert-manager's Pod ${name}`,
          "/api/v1/namespaces/cert-manager/pods?dryRun=All",
          pod("cert-manager", name, image),
        ] as [string, string, Record<string, unknown>],
    ),
    [
      "cert-manager's Secret",
      "/api/v1/namespaces/cert-manager/secrets?dryRun=All",
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "issued", namespace: "cert-manager" },
        stringData: { a: "b" },
      },
    ],
    [
      "kube-system's coredns Pod",
      "/api/v1/namespaces/kube-system/pods?dryRun=All",
      pod("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3"),
    ],
    [
      "a Lease in kube-system",
      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: `lease-${round}`, namespace: "kube-system" },
      },
    ],
    ["a new Namespace", "/api/v1/namespaces", namespaceManifest(`team-${round}`) as Record<string, unknown>],
  ];
  const failed: string[] = [];
  const warned: string[] = [];
  const check = async (what: string, path: string, body: Record<string, unknown>) => {
    const r = await plane.request("POST", path, body);
    if (r.status !== 201 && r.status !== 200)
      failed.push(
        `${what}: ${r.status} ${(r.body as { message?: string }).message ?? JSON.stringify(r.body)}`,
      );
    for (const w of r.warnings) warned.push(`${what}: ${w}`);
  };
  for (const [what, path, body] of requests) await check(what, path, body);
  await check(
    "a plain Deployment in the new namespace",
    `/apis/apps/v1/namespaces/team-${round}/deployments`,
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: `team-${round}` },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "web", image: "nginx:1.27.3" }] },
        },
      },
    },
  );
  return { failed, warned };
}

async function kubectlApply(bed: Installed, overlay: string, name: string): Promise<void> {
  const dir = join(bed.dir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "kustomization.yaml"), overlay);
  await run(kubectl as string, ["--kubeconfig", bed.plane.kubeconfig, "apply", "-k", dir], {
    timeout: 120_000,
  });
  // kube-proxy's part: the Service, which every apply puts back as deploy/ has it, as the test bed can route it.
  const svc = await bed.plane.request("DELETE", `/api/v1/namespaces/${NS}/services/celgate`);
  assert.equal(svc.status, 200, "deploy/ applied the Service");
  await apply(bed.plane, bed.resources, loopbackService(NS, "celgate"));
}

interface Container {
  args: string[];
  env?: { name: string; value?: string }[];
  volumeMounts: { name: string; mountPath: string }[];
}

interface PodSpec {
  serviceAccountName: string;
  containers: Container[];
  volumes: { name: string; configMap?: { name: string }; secret?: { secretName: string } }[];
}

/** The Deployment's Pod, run here: its volumes as files, its ServiceAccount's token, its args. */
async function startPod(bed: Installed, name: string): Promise<ServeProcess> {
  const { plane } = bed;
  const d = await plane.request("GET", `/apis/apps/v1/namespaces/${NS}/deployments/celgate`);
  assert.equal(d.status, 200);
  const spec = (d.body as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
  const container = spec.containers[0]!;
  const podDir = join(bed.dir, name);
  const local = new Map<string, string>();
  for (const mount of container.volumeMounts) {
    const volume = spec.volumes.find((v) => v.name === mount.name)!;
    const dir = join(podDir, mount.name);
    await mkdir(dir, { recursive: true });
    local.set(mount.mountPath, dir);
    if (volume.configMap) {
      const cm = await plane.request("GET", `/api/v1/namespaces/${NS}/configmaps/${volume.configMap.name}`);
      assert.equal(cm.status, 200, `the ConfigMap ${volume.configMap.name} the Deployment mounts exists`);
      for (const [k, v] of Object.entries((cm.body as { data?: Record<string, string> }).data ?? {}))
        await writeFile(join(dir, k), v);
    }
    if (volume.secret) {
      const s = await plane.request("GET", `/api/v1/namespaces/${NS}/secrets/${volume.secret.secretName}`);
      assert.equal(s.status, 200, `the Secret ${volume.secret.secretName} the Deployment mounts exists`);
      for (const [k, v] of Object.entries((s.body as { data: Record<string, string> }).data))
        await writeFile(join(dir, k), Buffer.from(v, "base64"));
    }
  }
  const token = await plane.request(
    "POST",
    `/api/v1/namespaces/${NS}/serviceaccounts/${spec.serviceAccountName}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  );
  assert.equal(token.status, 201, JSON.stringify(token.body));
  const kubeconfig = join(podDir, "kubeconfig");
  await writeFile(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${plane.url}", certificate-authority-data: ${Buffer.from(plane.ca).toString("base64")} } }]
users: [{ name: sa, user: { token: ${(token.body as { status: { token: string } }).status.token} } }]
contexts: [{ name: c, context: { cluster: c, user: sa } }]
current-context: c
`,
  );
  const port = await freePort();
  const args = container.args.map((a) => {
    for (const [mountPath, dir] of local) if (a.startsWith(mountPath)) return dir + a.slice(mountPath.length);
    return a;
  });
  args[args.indexOf("--port") + 1] = String(port);
  args[args.indexOf("--metrics-port") + 1] = "0";
  const serve = spawnServe(
    [...args, "--host", "127.0.0.1", "--kubeconfig", kubeconfig, "--webhook-port", String(port)],
    Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? ""])),
  );
  return serve;
}

async function ready(serve: ServeProcess): Promise<void> {
  const { metrics } = await serve.ports();
  await waitFor(
    "celgate ready",
    async () =>
      (await sendHttp({ scheme: "http", port: metrics, path: "/readyz" })).status === 200 ? true : undefined,
    90_000,
    200,
  );
}

interface Hook {
  name: string;
  failurePolicy: string;
  clientConfig: { service: { port: number } };
}

async function hooks(plane: ControlPlane): Promise<Hook[]> {
  const out: Hook[] = [];
  for (const plural of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
    const r = await plane.request("GET", `/apis/admissionregistration.k8s.io/v1/${plural}/${CONFIG}`);
    assert.equal(r.status, 200, `${plural}/${CONFIG} is applied`);
    out.push(...(((r.body as { webhooks?: Hook[] }).webhooks ?? []) as Hook[]));
  }
  return out;
}

const kubectl = await findKubectl();
if (kubectl === undefined)
  process.stdout.write(
    "deploy-install (real API server): skipped, no kubectl built (npm run kube:build) nor on PATH (docs/deploy.md installs with kubectl apply -k)\n",
  );

for (const release of kubeReleases().filter((r) => r.built && kubectl !== undefined)) {
  void describe(`installing deploy/ as docs/deploy.md says, against ${release.version}`, () => {
    let bed: Installed;
    const pods: ServeProcess[] = [];
    before(async () => {
      const plane = await startControlPlane({ release });
      const dir = await mkdtemp(join(tmpdir(), "celgate-kube-deploy-"));
      // The overlay sits beside a `deploy` that is the repository's, so its `../deploy` is literal.
      await symlink(join(ROOT, "deploy"), join(dir, "deploy"));
      bed = { plane, resources: new Resources(plane), dir, rounds: 0 };
      // The cluster before celgate: cert-manager's namespace, CRDs and ServiceAccounts, kube-system's.
      await apply(plane, bed.resources, namespaceManifest("cert-manager"));
      for (const [kind, plural] of [
        ["Certificate", "certificates"],
        ["Issuer", "issuers"],
      ] as const)
        await apply(plane, bed.resources, crd(kind, plural));
      for (const [name] of CERT_MANAGER_PODS)
        await apply(plane, bed.resources, {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name, namespace: "cert-manager" },
        });
      await apply(plane, bed.resources, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "coredns", namespace: "kube-system" },
      });
      await waitFor(
        "cert-manager's CRDs served",
        async () =>
          (await plane.request("GET", "/apis/cert-manager.io/v1")).status === 200 ? true : undefined,
        30_000,
        200,
      );
    });
    after(async () => {
      for (const p of pods) await p.stop();
      await bed?.plane.stop();
      if (bed) await rm(bed.dir, { recursive: true, force: true });
    });

    void test("the cluster's workload is admitted before celgate is installed", async () => {
      assert.deepEqual((await workload(bed)).failed, []);
    });

    void test("docs/deploy.md's overlay: nothing fails while it is applied, before celgate is ready, and after", async () => {
      const overlay = await documentedOverlay();
      assert.match(overlay, /resources: \[\.\.\/deploy\]/);
      await kubectlApply(bed, overlay, "my-celgate");
      assert.deepEqual(await hooks(bed.plane), [], "applying deploy/ routes nothing to celgate");
      assert.deepEqual((await workload(bed)).failed, [], "applied, celgate not running");
      // cert-manager issues the Certificate deploy/ asks for.
      const cert = await bed.plane.request(
        "GET",
        `/apis/cert-manager.io/v1/namespaces/${NS}/certificates/celgate-tls`,
      );
      assert.equal(cert.status, 200);
      const certSpec = (cert.body as { spec: { secretName: string; dnsNames: string[] } }).spec;
      const authority = createTestAuthority("cert-manager test CA");
      const issued = authority.issueServer(certSpec.dnsNames);
      await apply(bed.plane, bed.resources, {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/tls",
        metadata: { name: certSpec.secretName, namespace: NS },
        stringData: { "ca.crt": authority.cert, "tls.crt": issued.cert, "tls.key": issued.key },
      });

      const first = await startPod(bed, "pod-1");
      pods.push(first);
      assert.deepEqual((await workload(bed)).failed, [], "celgate starting");
      await ready(first);
      const written = await waitFor(
        "the webhooks written",
        async () => {
          const h = await hooks(bed.plane);
          return h.length > 0 ? h : undefined;
        },
        60_000,
        250,
      );
      // The documented overlay enables two validating policies, audit first: Ignore webhooks only.
      assert.deepEqual([...new Set(written.map((h) => h.failurePolicy))], ["Ignore"]);
      assert.deepEqual((await workload(bed)).failed, [], "celgate ready and registered");
    });

    void test("every library component as shipped, rolled out: nothing unrelated is denied during or after", async () => {
      const names = (await readdir(join(ROOT, "deploy", "library"))).sort();
      assert.ok(names.length >= 20);
      await kubectlApply(
        bed,
        `resources: [../deploy]\ncomponents:\n${names.map((n) => `  - ../deploy/library/${n}\n`).join("")}`,
        "all-components",
      );
      assert.deepEqual((await workload(bed)).failed, [], "applied, the new Pod not started");
      const second = await startPod(bed, "pod-2");
      pods.push(second);
      await ready(second);
      await waitFor(
        "the library's webhooks written",
        async () => ((await hooks(bed.plane)).some((h) => h.name.includes(".mutate.")) ? true : undefined),
        60_000,
        250,
      );
      assert.deepEqual((await workload(bed)).failed, [], "both Pods running");
      await pods[0]!.stop();
      const after = await workload(bed);
      assert.deepEqual(after.failed, [], "rolled out");
      assert.ok(
        after.warned.some((w) => w.startsWith("cert-manager's Pod cert-manager:") && /registr/i.test(w)),
        `allowed-registries warns about cert-manager's images: ${after.warned.join("\n")}`,
      );
    });

    void test("with allowed-registries enforced, cert-manager's Pods are denied: the test can fail", async () => {
      await kubectlApply(
        bed,
        "resources: [../deploy]\ncomponents:\n  - ../deploy/library/allowed-registries\n  - ../deploy/library/allowed-registries/enforce\n",
        "enforced",
      );
      const third = await startPod(bed, "pod-3");
      pods.push(third);
      await ready(third);
      await pods[1]!.stop();
      await waitFor(
        "the enforcing webhook written",
        async () => ((await hooks(bed.plane)).some((h) => h.failurePolicy === "Fail") ? true : undefined),
        60_000,
        250,
      );
      const { failed } = await workload(bed);
      assert.ok(
        failed.some((f) => f.startsWith("cert-manager's Pod cert-manager:") && /allowed-registries/.test(f)),
        failed.join("\n") || "nothing denied",
      );
    });
  });
}
