/**
 * `celgate audit`, end to end: from files (a `kubectl get -A -o yaml` List) and from the test API
 * server through a kubeconfig, the real executable where memory is measured. The report format is
 * wgpolicyk8s.io/v1alpha2 PolicyReport / ClusterPolicyReport (kubernetes-sigs/wg-policy-prototypes
 * policy-report CRDs: results with policy, rule, result, resources, properties; a summary of
 * pass/fail/warn/error/skip), and its OpenReports twin (openreports.io/v1alpha1 Report).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify as yamlStringify } from "yaml";
import { run } from "../../src/adapters/cli/commands/audit.ts";
import type { CliIO } from "../../src/adapters/cli/io.ts";
import { type KubeApiServer, type KubeObject, startKubeApiServer } from "../helpers/kube-apiserver.ts";
import { tempDir } from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const POLICIES = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: no-latest }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"] }
  validations:
    - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
      message: "an image is :latest"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: no-latest }
spec:
  policyName: no-latest
  validationActions: [Deny]
  matchResources:
    namespaceSelector: { matchLabels: { env: prod } }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: max-containers }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }
  validations:
    - expression: "size(object.spec.containers) <= int(params.data.max)"
      message: "too many containers"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: max-containers }
spec:
  policyName: max-containers
  validationActions: [Warn]
  paramRef: { name: limits, namespace: config, parameterNotFoundAction: Deny }
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: add-team-label }
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: "has(object.metadata.labels) && 'team' in object.metadata.labels ? [] : [JSONPatch{op: 'add', path: '/metadata/labels', value: {'team': 'unknown'}}]"
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: add-team-label }
spec: { policyName: add-team-label }
`;

function pod(name: string, namespace: string, images: string[], labels?: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) },
  };
}

const NAMESPACES: KubeObject[] = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "prod", labels: { env: "prod" } } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "dev", labels: { env: "dev" } } },
];
const LIMITS: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "limits", namespace: "config" },
  data: { max: "1" },
};

function io(cwd: string, out: { stdout: string; stderr: string }): CliIO {
  return {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => "",
    cwd,
    env: {},
    isTTY: false,
  };
}

async function setup(t: TestContext): Promise<string> {
  const dir = await tempDir(t, "celgate-audit-");
  await mkdir(join(dir, "policies"));
  await writeFile(join(dir, "policies", "policies.yaml"), POLICIES);
  return dir;
}

void test("audit of a `kubectl get -A -o yaml` List: per-policy counts, Namespaces and params from the same List", async (t) => {
  const dir = await setup(t);
  const list = {
    apiVersion: "v1",
    kind: "List",
    items: [
      ...NAMESPACES,
      LIMITS,
      pod("a", "prod", ["nginx:latest"], { team: "x" }),
      pod("b", "prod", ["nginx:1.27", "sidecar:1"]),
      pod("c", "dev", ["nginx:latest"]),
    ],
  };
  await writeFile(join(dir, "all.yaml"), yamlStringify(list));
  const out = { stdout: "", stderr: "" };
  const code = await run(["-p", "policies", "-r", "all.yaml", "-o", "json"], io(dir, out));
  assert.equal(code, 1, `a fail: exit 1\n${out.stderr}`);
  const data = JSON.parse(out.stdout) as {
    objects: number;
    summary: { policy: string; counts: Record<string, number> }[];
    findings: { resource: { name: string }; policy: string; result: string; patch?: unknown }[];
  };
  assert.equal(data.objects, 6);
  const counts = Object.fromEntries(data.summary.map((s) => [s.policy, s.counts]));
  // no-latest: a fails (prod), b passes, c is skipped (dev); the rest are not Pods.
  assert.deepEqual(counts["no-latest"], { pass: 1, fail: 1, warn: 0, error: 0, skip: 4 });
  // max-containers binds with [Warn]: b's two containers are a warn, not a fail.
  assert.deepEqual(counts["max-containers"], { pass: 2, fail: 0, warn: 1, error: 0, skip: 3 });
  // The mutation would change b and c (no team label): warn, with the patch.
  assert.deepEqual(counts["add-team-label"], { pass: 1, fail: 0, warn: 2, error: 0, skip: 3 });
  const patchFor = data.findings.find((f) => f.policy === "add-team-label" && f.resource.name === "b");
  assert.deepEqual(patchFor?.patch, [{ op: "add", path: "/metadata/labels", value: { team: "unknown" } }]);
});

void test("audit -o policyreport: a PolicyReport per namespace, a ClusterPolicyReport for cluster-scoped objects", async (t) => {
  const dir = await setup(t);
  const list = {
    apiVersion: "v1",
    kind: "List",
    items: [...NAMESPACES, LIMITS, pod("a", "prod", ["x:latest"])],
  };
  await writeFile(join(dir, "all.json"), JSON.stringify(list));
  const extra = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ns-owner }
spec:
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["namespaces"] }
  validations:
    - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
      message: "no owner"
`;
  await writeFile(join(dir, "policies", "ns.yaml"), extra);
  for (const [format, api, kinds] of [
    ["policyreport", "wgpolicyk8s.io/v1alpha2", ["ClusterPolicyReport", "PolicyReport"]],
    ["openreports", "openreports.io/v1alpha1", ["ClusterReport", "Report"]],
  ] as const) {
    const out = { stdout: "", stderr: "" };
    // ns-owner has no binding: audited only on request, as if bound with [Deny].
    const args = ["-p", "policies", "-r", "all.json", "-o", format, "--include-unbound"];
    assert.equal(await run(args, io(dir, out)), 1, out.stderr);
    const reports = (JSON.parse(out.stdout) as { items: Record<string, unknown>[] }).items;
    assert.deepEqual(
      reports.map(
        (r) => `${r.apiVersion} ${r.kind} ${(r.metadata as { namespace?: string }).namespace ?? ""}`,
      ),
      // The ConfigMap in `config` only has skips: no report for that namespace.
      [`${api} ${kinds[0]} `, `${api} ${kinds[1]} prod`],
    );
    const prod = reports[1] as {
      summary: Record<string, number>;
      results: { policy: string; result: string; resources: { name: string }[]; message: string }[];
    };
    const fail = prod.results.find((r) => r.policy === "no-latest");
    assert.equal(fail?.result, "fail");
    assert.equal(fail?.message, "an image is :latest");
    assert.deepEqual(
      fail?.resources.map((r) => r.name),
      ["a"],
    );
    assert.equal(prod.summary.fail, 1);
    const cluster = reports[0] as { results: { policy: string; result: string }[] };
    // The ns-owner policy has no binding: with --include-unbound, audited as if bound with [Deny].
    assert.deepEqual(
      cluster.results.filter((r) => r.policy === "ns-owner").map((r) => r.result),
      ["fail", "fail"],
    );
  }
});

void test("audit usage errors: no input, both inputs, a bad format", async (t) => {
  const dir = await setup(t);
  for (const argv of [
    ["-p", "policies"],
    ["-p", "policies", "-r", "x.yaml", "--kubeconfig", "k"],
    ["-p", "policies", "-r", "x.yaml", "-o", "html"],
    ["-p", "policies", "-r", "x.yaml", "--page-size", "0"],
  ]) {
    const out = { stdout: "", stderr: "" };
    assert.equal(await run(argv, io(dir, out)), 2, argv.join(" "));
  }
});

async function kubeconfigFor(dir: string, api: KubeApiServer): Promise<string> {
  const file = join(dir, "kubeconfig");
  await writeFile(file, api.kubeconfig());
  return file;
}

void test("audit --kubeconfig: objects, Namespaces and params from the cluster, listed in pages", async (t) => {
  const dir = await setup(t);
  const api = await startKubeApiServer(t);
  for (const o of [...NAMESPACES, LIMITS]) api.put(o);
  api.put(pod("a", "prod", ["nginx:latest"], { team: "x" }));
  api.put(pod("b", "prod", ["nginx:1", "s:1"], { team: "x" }));
  api.put(pod("c", "dev", ["nginx:latest"], { team: "x" }));
  const out = { stdout: "", stderr: "" };
  const code = await run(
    ["-p", "policies", "--kubeconfig", await kubeconfigFor(dir, api), "--page-size", "2", "-o", "json"],
    io(dir, out),
  );
  assert.equal(code, 1, out.stderr);
  const data = JSON.parse(out.stdout) as {
    objects: number;
    summary: { policy: string; counts: Record<string, number> }[];
  };
  assert.equal(data.objects, 3, "only pods: the resource every policy selects");
  const counts = Object.fromEntries(data.summary.map((s) => [s.policy, s.counts]));
  assert.deepEqual(counts["no-latest"], { pass: 1, fail: 1, warn: 0, error: 0, skip: 1 });
  assert.deepEqual(counts["max-containers"], { pass: 2, fail: 0, warn: 1, error: 0, skip: 0 });
  const podLists = api.requests.filter((r) => r.startsWith("GET /api/v1/pods?limit=2"));
  assert.equal(podLists.length, 2, "3 pods in pages of 2");
});

const AUTHORIZER_POLICY = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: may-delete-pods }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }
  validations:
    - expression: "authorizer.group('').resource('pods').namespace(object.metadata.namespace).check('delete').allowed()"
      message: "the user may not delete pods here"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: may-delete-pods }
spec: { policyName: may-delete-pods, validationActions: [Deny] }
`;

void test("audit --kubeconfig with authorizer checks: each object is counted once, on the SubjectAccessReview's answer", async (t) => {
  const dir = await tempDir(t, "celgate-audit-");
  await mkdir(join(dir, "policies"));
  await writeFile(join(dir, "policies", "policies.yaml"), AUTHORIZER_POLICY);
  const api = await startKubeApiServer(t);
  api.authorize = (a) => ({ allowed: a.user === "auditor" && a.resourceAttributes?.namespace === "prod" });
  for (const o of NAMESPACES) api.put(o);
  api.put(pod("a", "prod", ["nginx:1"]));
  api.put(pod("b", "prod", ["nginx:1"]));
  api.put(pod("c", "dev", ["nginx:1"]));
  const out = { stdout: "", stderr: "" };
  const code = await run(
    ["-p", "policies", "--kubeconfig", await kubeconfigFor(dir, api), "--user", "auditor", "-o", "json"],
    io(dir, out),
  );
  assert.equal(code, 1, `c fails: exit 1\n${out.stderr}`);
  const data = JSON.parse(out.stdout) as {
    objects: number;
    summary: { policy: string; counts: Record<string, number> }[];
    findings: { resource: { name: string }; result: string; message: string }[];
  };
  // The first object of each namespace waits for a SubjectAccessReview and is evaluated again with
  // the answer; only that last evaluation counts (the provisional one saw "authorization pending").
  assert.equal(data.objects, 3);
  assert.deepEqual(data.summary.find((s) => s.policy === "may-delete-pods")?.counts, {
    pass: 2,
    fail: 1,
    warn: 0,
    error: 0,
    skip: 0,
  });
  assert.deepEqual(
    data.findings.map((f) => [f.resource.name, f.result, f.message]),
    [["c", "fail", "the user may not delete pods here"]],
  );
  assert.ok(api.sarCalls >= 2, "prod and dev were asked about");
});

/** Runs the real executable; resolves with its exit code and output. Bounded by `timeoutMs`. */
function cli(
  nodeFlags: string[],
  args: string[],
  timeoutMs = 120_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...nodeFlags, "--import", "tsx", join(ROOT, "src/adapters/cli/bin.ts"), ...args],
      {
        // tsx is resolved from the working directory: the repository's; paths are absolute.
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`audit did not finish within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** A Pod carrying `bytes` of annotation: 10,000 of them outweigh the heap the audit is given. */
function bulkyPod(i: number, filler: string): KubeObject {
  const p = pod(`p${i}`, i % 2 === 0 ? "prod" : "dev", [`app:${i % 10 === 0 ? "latest" : "1"}`], {
    team: "x",
  });
  return { ...p, metadata: { ...p.metadata, annotations: { filler } } };
}

void test("audit --kubeconfig over 10,000 objects streams them: it runs in a heap smaller than the objects", async (t) => {
  const dir = await setup(t);
  const api = await startKubeApiServer(t);
  for (const o of [...NAMESPACES, LIMITS]) api.put(o);
  // 10,000 objects of 20 KB: 200 MB of JSON, and more as parsed objects. The audit gets a 128 MB
  // heap: it runs out unless objects are let go page by page (a cache of them, such as a paramKind
  // of Pod would need, does run out here).
  const filler = "x".repeat(20_000);
  api.putMany(Array.from({ length: 10_000 }, (_, i) => bulkyPod(i, filler)));
  const result = await cli(
    ["--max-old-space-size=128"],
    [
      "audit",
      "-p",
      join(dir, "policies"),
      "--kubeconfig",
      await kubeconfigFor(dir, api),
      "--page-size",
      "100",
      "--stats",
    ],
  );
  assert.equal(result.code, 1, result.stderr);
  const stats = /(\d+) objects in ([\d.]+) s \((\d+) objects\/s\), peak RSS (\d+) MB/.exec(result.stderr);
  assert.ok(stats, result.stderr);
  assert.equal(Number(stats[1]), 10_000);
  t.diagnostic(`audit --kubeconfig, 10,000 objects of 20 KB, 128 MB heap: ${stats[0]}`);
  const noLatest = result.stdout.split("\n").find((l) => l.startsWith("no-latest"));
  // Even pods are in prod (5,000); of those, every fifth has a :latest image (i % 10 === 0).
  assert.match(noLatest ?? "", /^no-latest\s+no-latest\s+4000\s+1000\s+0\s+0\s+5000$/);
});

void test("on a terminal, audit shows its progress on stderr and clears the line; piped, it does not", async (t) => {
  const dir = await setup(t);
  const api = await startKubeApiServer(t);
  for (const o of [...NAMESPACES, LIMITS]) api.put(o);
  for (let i = 0; i < 5; i++) api.put(pod(`p${i}`, "prod", ["a:1"], { team: "x" }));
  const kubeconfig = await kubeconfigFor(dir, api);
  const tty = { stdout: "", stderr: "" };
  const ttyIo = { ...io(dir, tty), isTTY: true };
  await run(["-p", "policies", "--kubeconfig", kubeconfig, "--page-size", "2"], ttyIo);
  const ERASE = "\r\x1b[K";
  assert.ok(tty.stderr.includes(`${ERASE}celgate audit: 2 objects (pods)`), tty.stderr);
  assert.ok(tty.stderr.includes(`${ERASE}celgate audit: 5 objects (pods)`), tty.stderr);
  assert.ok(tty.stderr.endsWith(ERASE), "the progress line is cleared");
  const piped = { stdout: "", stderr: "" };
  await run(["-p", "policies", "--kubeconfig", kubeconfig, "--page-size", "2"], io(dir, piped));
  // Piped, only the one line that says what it waits for (issue 36), and no progress.
  assert.match(
    piped.stderr,
    /^celgate audit: waiting for https?:\/\/127\.0\.0\.1:\d+ to list Namespaces and params \(up to 30 s; --timeout\)\n$/,
  );
});
