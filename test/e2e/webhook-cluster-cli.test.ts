/**
 * `celgate serve --kubeconfig` as a process (`node --import tsx src/adapters/cli/bin.ts serve`),
 * connected to the test API server: its JSON log on stdout says when the caches synced, /readyz
 * follows them, a review is decided by a Namespace read from the cluster, and credentials the API
 * server refuses keep the pod unready with a log line that says what to do.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type KubeApiServer, startKubeApiServer } from "../helpers/kube-apiserver.ts";
import { deployment, deploymentReview, tempDir, waitFor } from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PROCESS_TIMEOUT_MS = 45_000;

const POLICY = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: prod-replicas }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] }
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
    namespaceSelector: { matchLabels: { env: prod } }
`;

interface Served {
  readonly child: ChildProcessWithoutNullStreams;
  readonly port: number;
  stdout(): string;
}

async function serve(t: TestContext, api: KubeApiServer, token?: string): Promise<Served> {
  const dir = await tempDir(t);
  await mkdir(join(dir, "policies"));
  await writeFile(join(dir, "policies", "p.yaml"), POLICY);
  await writeFile(join(dir, "kubeconfig"), api.kubeconfig(token));
  const args = ["--policies", join(dir, "policies"), "--kubeconfig", join(dir, "kubeconfig")];
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
      "--port",
      "0",
      "--metrics-port",
      "0",
      "--drain-seconds",
      "0",
    ],
    { cwd: ROOT, timeout: PROCESS_TIMEOUT_MS, killSignal: "SIGKILL" },
  );
  let stderr = "";
  let stdout = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const m = await waitFor(
    "the serving line",
    () => /on https:\/\/127\.0\.0\.1:(\d+);/.exec(stderr) ?? undefined,
    30_000,
  );
  return { child, port: Number(m[1]), stdout: () => stdout };
}

void test("serve --kubeconfig: ready after the first sync, logged as JSON; a Namespace from the cluster decides", async (t) => {
  const api = await startKubeApiServer(t);
  api.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a", labels: { env: "prod" } } });
  const s = await serve(t, api);
  await waitFor("ready", async () => ((await readyzInsecure(s)) === 200 ? true : undefined), 20_000);
  await waitFor(
    "the sync in the JSON log",
    () => (/"msg":"cache synced"/.test(s.stdout()) ? true : undefined),
    10_000,
  );
  const line = s
    .stdout()
    .split("\n")
    .find((l) => l.includes('"msg":"cache synced"'));
  assert.equal((JSON.parse(line ?? "{}") as { resource?: string }).resource, "namespaces");
  const reply = await postInsecure(s, deploymentReview({ object: deployment("web", 5) }));
  assert.equal(reply.allowed, false);
  assert.match(reply.status?.message ?? "", /production runs at most 2 replicas/);
  s.child.kill("SIGTERM");
});

void test("serve --kubeconfig with refused credentials stays unready and says how to fix it", async (t) => {
  const api = await startKubeApiServer(t);
  const s = await serve(t, api, "not-the-token");
  await waitFor(
    "the hint in the log",
    () => (/"hint":"the credentials may not/.test(s.stdout()) ? true : undefined),
    20_000,
  );
  assert.equal(await readyzInsecure(s), 503);
  s.child.kill("SIGTERM");
});

// The generated certificate is not printed; these requests skip verification (loopback only).
async function readyzInsecure(s: Served): Promise<number> {
  const { request } = await import("node:https");
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port: s.port, path: "/readyz", rejectUnauthorized: false, timeout: 5000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", () => resolve(0));
    req.end();
  });
}

async function postInsecure(
  s: Served,
  body: unknown,
): Promise<{ allowed: boolean; status?: { message?: string } }> {
  const { request } = await import("node:https");
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: s.port,
        path: "/validate",
        method: "POST",
        rejectUnauthorized: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) },
        timeout: 10_000,
      },
      (res) => {
        let data = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          data += d;
        });
        res.on("end", () => resolve((JSON.parse(data) as { response: { allowed: boolean } }).response));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}
