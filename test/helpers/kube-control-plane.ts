/**
 * A real Kubernetes control plane for differential tests: etcd and kube-apiserver (and, when asked,
 * kube-controller-manager) of a release built by `npm run kube:build` from the published Go modules
 * (tools/kube/<release>/), run as child processes on 127.0.0.1 with ephemeral ports and a temp dir.
 *
 * What the API server is given, and why:
 * - Certificates from a fresh test CA (certs.ts): a serving certificate for 127.0.0.1, the CA as
 *   `--client-ca-file`, and an admin client certificate in `system:masters`, written into an admin
 *   kubeconfig too. `issueUser` makes client certificates for other users and groups.
 * - `--authorization-mode=Node,RBAC`, as a cluster runs; service-account signing and verification
 *   keys and an issuer, so ServiceAccount tokens and the ServiceAccount admission plugin work.
 * - An audit policy (Metadata for everything, RequestResponse for admission-policy objects and for
 *   the requests of users in the AUDIT_BODIES_GROUP group) and `--audit-log-path`, which
 *   `readAudit` reads back, blocking mode so an event is written before the response.
 * - `--runtime-config` for admissionregistration.k8s.io v1beta1 and v1alpha1: from 1.36 the
 *   MutatingAdmissionPolicy feature is GA and served in admissionregistration/v1 with its gate on by
 *   default (pkg/features/kube_features.go, MutatingAdmissionPolicy: GA 1.36), but the beta and alpha
 *   versions stay off by default (pkg/controlplane/instance.go genericBetaAPIGroupVersionsDisabledByDefault,
 *   genericAlphaAPIGroupVersionsDisabledByDefault), and fixtures are written in all three.
 * - kube-controller-manager, if asked, runs only validatingadmissionpolicy-status-controller: the
 *   API server never writes a ValidatingAdmissionPolicy's `status.typeChecking`, that controller does
 *   (cmd/kube-controller-manager/app/validatingadmissionpolicystatus.go).
 *
 * Start once per test file (it takes seconds); `stop()` sends SIGTERM, SIGKILL after a bounded wait,
 * and deletes the temp dir. A start that does not reach /readyz in time fails with the last lines of
 * the API server's log.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { createWriteStream, existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { kubeCacheDir } from "../../tools/kube-cache.mjs";
import { createTestAuthority, type TestCertificate } from "./certs.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MODULES = join(ROOT, "tools", "kube");
const CACHE = kubeCacheDir();

/** A release that tools/kube/ builds, and where its binaries are (present or not). */
export interface KubeRelease {
  /** The module directory's name, `v1.37`. */
  readonly module: string;
  /** The exact version built, `v1.37.2`. */
  readonly version: string;
  /** `1.37`, as `--kubernetes-version` takes it. */
  readonly minor: string;
  readonly binDir: string;
  readonly built: boolean;
}

/** Every release under tools/kube/, oldest first. */
export function kubeReleases(): KubeRelease[] {
  if (!existsSync(MODULES)) return [];
  return readdirSync(MODULES)
    .filter((d) => existsSync(join(MODULES, d, "go.mod")))
    .sort((a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]))
    .map((module) => {
      const goMod = readFileSync(join(MODULES, module, "go.mod"), "utf8");
      const version = /^\s*k8s\.io\/kubernetes (v1\.\d+\.\d+)\s*$/m.exec(goMod)?.[1];
      if (version === undefined) throw new Error(`tools/kube/${module}/go.mod requires no k8s.io/kubernetes`);
      const binDir = join(CACHE, version);
      const built = ["kube-apiserver", "etcd", "kube-controller-manager", "stamp"].every((b) =>
        existsSync(join(binDir, b)),
      );
      return { module, version, minor: version.slice(1).split(".").slice(0, 2).join("."), binDir, built };
    });
}

/**
 * The kubectl tools/kube-build.mjs builds from tools/kubectl (the cache's `kubectl-<version>`), or
 * undefined when it is not built. One kubectl serves every release tested: its module is the newest
 * release's, and kubectl supports a server one minor older.
 */
export function builtKubectl(): string | undefined {
  if (!existsSync(CACHE)) return undefined;
  const dirs = readdirSync(CACHE)
    .filter((d) => /^kubectl-v\d+\.\d+\.\d+$/.test(d) && existsSync(join(CACHE, d, "kubectl")))
    .sort((a, b) => Number(b.split(".")[1]) - Number(a.split(".")[1]));
  return dirs[0] === undefined ? undefined : join(CACHE, dirs[0], "kubectl");
}

export interface ControlPlaneOptions {
  readonly release: KubeRelease;
  /** Also run kube-controller-manager's ValidatingAdmissionPolicy status controller. */
  readonly controllerManager?: boolean;
  /** Bound on reaching /readyz; default 180 s (the machines are shared). */
  readonly startTimeoutMs?: number;
  /** More kube-apiserver flags, after the defaults (a later flag wins). */
  readonly apiserverArgs?: readonly string[];
}

export interface KubeResponse {
  readonly status: number;
  /** The body parsed as JSON, or the text when it is not JSON. */
  readonly body: unknown;
  /** `Warning` headers, their text only. */
  readonly warnings: readonly string[];
}

export interface ControlPlane {
  readonly release: KubeRelease;
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  readonly ca: string;
  /** The admin's client certificate (CN celgate-admin, O system:masters). */
  readonly admin: TestCertificate;
  readonly kubeconfig: string;
  readonly auditLog: string;
  readonly dir: string;
  /** The process ids of etcd, kube-apiserver and (when asked) kube-controller-manager. */
  readonly pids: readonly number[];
  /** A client certificate for another user; the API server reads O as the groups. */
  issueUser(name: string, group?: string): TestCertificate;
  /** A request as the admin (or `as`), over a keep-alive connection pool; never rejects on a status. */
  request(method: string, path: string, body?: unknown, as?: TestCertificate): Promise<KubeResponse>;
  /** The audit events written so far, parsed. */
  readAudit(): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

/** The group whose users' requests the audit policy logs at RequestResponse (`issueUser(name, AUDIT_BODIES_GROUP)`). */
export const AUDIT_BODIES_GROUP = "celgate:audit-bodies";

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: RequestResponse
    userGroups: ["${AUDIT_BODIES_GROUP}"]
  - level: RequestResponse
    resources:
      - group: admissionregistration.k8s.io
  - level: Metadata
`;

const STOP_GRACE_MS = 10_000;
const LOG_TAIL_LINES = 40;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly log: string;
  readonly exited: Promise<number | null>;
}

function startChild(name: string, binary: string, args: readonly string[], log: string): Child {
  if (!existsSync(binary))
    throw new Error(`${binary} is missing: run \`npm run kube:build\` (it needs Go) before the kube tests`);
  const out = createWriteStream(log);
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", () => resolve(-1));
  });
  return { name, process: child, log, exited };
}

async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill("SIGTERM");
  const timer = setTimeout(() => child.process.kill("SIGKILL"), STOP_GRACE_MS);
  await child.exited;
  clearTimeout(timer);
}

function tail(path: string): string {
  if (!existsSync(path)) return "(no log)";
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  return lines.slice(-LOG_TAIL_LINES).join("\n");
}

function kubeconfigOf(url: string, ca: string, user: TestCertificate): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return `apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: ${url}
      certificate-authority-data: ${b64(ca)}
users:
  - name: admin
    user:
      client-certificate-data: ${b64(user.cert)}
      client-key-data: ${b64(user.key)}
contexts:
  - name: test
    context: { cluster: test, user: admin }
current-context: test
`;
}

function warningsOf(header: string | string[] | undefined): string[] {
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header];
  // RFC 7234 warn-value: 299 - "text"; several may share one header, comma-separated.
  return all.flatMap((h) =>
    [...h.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? "").replace(/\\(.)/g, "$1")),
  );
}

function clientRequest(
  agent: Agent,
  ca: string,
  url: URL,
  method: string,
  path: string,
  body: unknown,
  as: TestCertificate | undefined,
): Promise<KubeResponse> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        // A per-user client certificate needs its own connection; the admin's reuse the pool.
        ...(as === undefined ? { agent } : { agent: false, ca, cert: as.cert, key: as.key }),
        headers: {
          accept: "application/json",
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": payload.length }),
        },
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON (/readyz answers "ok"): the text is the body.
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, warnings: warningsOf(res.headers.warning) });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
    req.on("error", reject);
    req.end(payload);
  });
}

async function waitReady(
  request: ControlPlane["request"],
  apiserver: Child,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (apiserver.process.exitCode !== null)
      throw new Error(
        `kube-apiserver exited (${apiserver.process.exitCode}) while starting:\n${tail(apiserver.log)}`,
      );
    try {
      const r = await request("GET", "/readyz");
      if (r.status === 200) return;
      last = `/readyz ${r.status}: ${String(r.body).slice(0, 500)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(
    `kube-apiserver not ready in ${timeoutMs / 1000} s (${last}); its log ends:\n${tail(apiserver.log)}`,
  );
}

/** Starts etcd and kube-apiserver (and kube-controller-manager if asked) and waits for /readyz. */
export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { release } = options;
  const dir = await mkdtemp(join(tmpdir(), `celgate-kube-${release.version}-`));
  const children: Child[] = [];
  const stopAll = async () => {
    for (const c of [...children].reverse()) await stopChild(c);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const authority = createTestAuthority("celgate kube test CA");
    const serving = authority.issueServer(["127.0.0.1", "localhost", "kubernetes.default.svc"]);
    const admin = authority.issueClient("celgate-admin", "system:masters");
    const sa = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const file = (name: string) => join(dir, name);
    await mkdir(file("etcd"));
    await Promise.all([
      writeFile(file("ca.crt"), authority.cert),
      writeFile(file("serving.crt"), serving.cert),
      writeFile(file("serving.key"), serving.key),
      writeFile(file("sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" })),
      writeFile(file("sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" })),
      writeFile(file("audit-policy.yaml"), AUDIT_POLICY),
    ]);

    const [etcdClient, etcdPeer, securePort] = [await freePort(), await freePort(), await freePort()];
    const etcd = startChild(
      "etcd",
      join(release.binDir, "etcd"),
      [
        "--name=default",
        `--data-dir=${file("etcd")}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
        // A test cluster loses nothing worth an fsync; the machines are shared.
        "--unsafe-no-fsync",
        "--log-level=warn",
      ],
      file("etcd.log"),
    );
    children.push(etcd);

    const url = `https://127.0.0.1:${securePort}`;
    const auditLog = file("audit.log");
    const apiserver = startChild(
      "kube-apiserver",
      join(release.binDir, "kube-apiserver"),
      [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        // The lease reconciler refuses a loopback address for the kubernetes Service's endpoints.
        "--endpoint-reconciler-type=none",
        `--secure-port=${securePort}`,
        `--cert-dir=${file("certs")}`,
        `--tls-cert-file=${file("serving.crt")}`,
        `--tls-private-key-file=${file("serving.key")}`,
        `--client-ca-file=${file("ca.crt")}`,
        "--authorization-mode=Node,RBAC",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${file("sa.pub")}`,
        `--service-account-signing-key-file=${file("sa.key")}`,
        "--service-cluster-ip-range=10.96.0.0/24",
        `--audit-policy-file=${file("audit-policy.yaml")}`,
        `--audit-log-path=${auditLog}`,
        "--audit-log-mode=blocking",
        "--audit-log-format=json",
        "--runtime-config=admissionregistration.k8s.io/v1beta1=true,admissionregistration.k8s.io/v1alpha1=true",
        "--allow-privileged=true",
        "--profiling=false",
        ...(options.apiserverArgs ?? []),
      ],
      file("kube-apiserver.log"),
    );
    children.push(apiserver);

    const agent = new Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: authority.cert,
      cert: admin.cert,
      key: admin.key,
    });
    const base = new URL(url);
    const request: ControlPlane["request"] = (method, path, body, as) =>
      clientRequest(agent, authority.cert, base, method, path, body, as);
    await waitReady(request, apiserver, options.startTimeoutMs ?? 180_000);

    const kubeconfig = file("admin.kubeconfig");
    await writeFile(kubeconfig, kubeconfigOf(url, authority.cert, admin));
    if (options.controllerManager)
      children.push(
        startChild(
          "kube-controller-manager",
          join(release.binDir, "kube-controller-manager"),
          [
            `--kubeconfig=${kubeconfig}`,
            "--controllers=validatingadmissionpolicy-status-controller",
            "--leader-elect=false",
            // No serving endpoint: nothing here scrapes it.
            "--secure-port=0",
          ],
          file("kube-controller-manager.log"),
        ),
      );

    return {
      release,
      url,
      ca: authority.cert,
      admin,
      kubeconfig,
      auditLog,
      dir,
      pids: children.map((c) => c.process.pid ?? -1),
      issueUser: (name, group) => authority.issueClient(name, group ?? "celgate-test"),
      request,
      async readAudit() {
        if (!existsSync(auditLog)) return [];
        const text = await readFile(auditLog, "utf8");
        return text
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      },
      async stop() {
        agent.destroy();
        await stopAll();
      },
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
