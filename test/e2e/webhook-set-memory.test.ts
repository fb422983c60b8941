/**
 * A policy set too large for the heap (issue 37 item 5): `celgate serve` with a small V8 heap
 * (--max-old-space-size, as deploy/deployment.yaml caps it) refuses a set whose estimated memory is
 * over its share of the heap, before compiling it: at start it exits with the located diagnostic;
 * on a reload it logs one JSON line with the diagnostic (file:line:col), counts it in a metric, and
 * keeps serving the last good set, whose decisions do not change. A set that fits is then loaded.
 * Before, a 5,000-validation file was compiled until V8 aborted the process ("heap out of memory").
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { deployment, deploymentReview, sampleValue, scrape, tempDir, waitFor } from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/**
 * A heap whose limit (about 144 MiB with the young generation) leaves a set a 16 MiB share. The
 * young generation is pinned too: V8 sizes it from the old generation's limit differently across
 * Node releases (Node 24 gives three 64 MiB semi-spaces where Node 20 gives 16 MiB ones), and the
 * heap limit the budget is taken from includes it.
 */
const SMALL_HEAP = ["--max-old-space-size=96", "--max-semi-space-size=16"];

/** A policy denying Deployments with `replicas` in `denied`, and `extra` more validations that pass. */
function policy(name: string, denied: readonly number[], extra: number): string {
  const checks = [
    ...denied.map((n) => `object.spec.replicas != ${n}`),
    ...Array.from(
      { length: extra },
      (_, i) =>
        `object.spec.template.spec.containers.all(c, !c.image.startsWith('blocked-${name}-${i}.invalid/'))`,
    ),
  ];
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments] }
  validations:
${checks.map((c) => `    - expression: ${JSON.stringify(c)}`).join("\n")}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${name}
  validationActions: [Deny]
`;
}

/** `count` policies of `per` validations each; the first also denies replicas 3. */
function largeSet(prefix: string, count: number, per: number): string {
  return Array.from({ length: count }, (_, p) => policy(`${prefix}-${p}`, p === 0 ? [3] : [], per)).join(
    "---\n",
  );
}

function serve(args: readonly string[]) {
  const child = spawn(
    process.execPath,
    [...SMALL_HEAP, "--import", "tsx", "src/adapters/cli/bin.ts", "serve", ...args],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out.stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    out.stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, out, exited };
}

/** Whether a Deployment with `replicas` is allowed. */
function allowed(port: number, replicas: number): Promise<boolean> {
  const body = JSON.stringify(deploymentReview({ object: deployment("web", replicas) }));
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: "127.0.0.1",
        port,
        path: "/validate",
        method: "POST",
        rejectUnauthorized: false,
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: 30_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${text}`));
          else resolve((JSON.parse(text) as { response: { allowed: boolean } }).response.allowed);
        });
      },
    );
    r.on("timeout", () => r.destroy(new Error("timed out")));
    r.on("error", reject);
    r.end(body);
  });
}

/** The log's policy-reload lines. */
function reloadLines(stdout: string): { result: string; diagnostics?: { code: string; text: string }[] }[] {
  return stdout
    .split("\n")
    .filter((l) => l.includes('"event":"policy-reload"'))
    .map((l) => JSON.parse(l) as { result: string; diagnostics?: { code: string; text: string }[] });
}

void test("serve refuses a policy set too large for its heap at start, with the located diagnostic", {
  timeout: 120_000,
}, async (t) => {
  const dir = await tempDir(t);
  writeFileSync(join(dir, "large.yaml"), largeSet("large", 40, 50));
  const s = serve(["--policies", dir, "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0"]);
  t.after(() => {
    if (s.child.exitCode === null) s.child.kill("SIGKILL");
  });
  const code = await s.exited;
  assert.equal(code, 2, s.out.stderr);
  // Located at the policy where the running estimate passes the set's share, in the file.
  assert.match(s.out.stderr, /large\.yaml:\d+:\d+: error: metadata\.name: the policy set would keep about/);
  assert.match(s.out.stderr, /\[PE_SET_MEMORY\]/);
  assert.doesNotMatch(s.out.stderr, /heap out of memory|internal error/i);
});

void test("on a reload, a set too large for the heap is refused and the last good set keeps serving; one that fits loads", {
  timeout: 300_000,
}, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "policies.yaml");
  writeFileSync(file, policy("small", [5], 0));
  const s = serve([
    "--policies",
    dir,
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--metrics-port",
    "0",
    "--drain-seconds",
    "0",
  ]);
  t.after(() => {
    if (s.child.exitCode === null) s.child.kill("SIGKILL");
  });
  const ports = await waitFor(
    "the serving line",
    () =>
      /on https:\/\/127\.0\.0\.1:(\d+); metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(s.out.stderr) ??
      undefined,
    60_000,
  );
  const port = Number(ports[1]);
  const metrics = `http://127.0.0.1:${Number(ports[2])}`;
  assert.equal(await allowed(port, 5), false);
  assert.equal(await allowed(port, 3), true);
  const budget = sampleValue(await scrape(metrics), "celgate_policy_set_memory_budget_bytes") ?? 0;
  assert.ok(budget > 0 && budget < 64 * 2 ** 20, `budget ${budget}`);

  // 2,000 more validations: over the share this heap leaves a set. It would deny replicas 3.
  writeFileSync(file, `${policy("small", [5], 0)}---\n${largeSet("large", 40, 50)}`);
  const refused = await waitFor(
    "the refused reload",
    () => reloadLines(s.out.stdout).find((l) => l.result === "failure"),
    60_000,
    100,
  );
  const diagnostic = refused.diagnostics?.find((d) => d.code === "PE_SET_MEMORY");
  assert.ok(diagnostic, JSON.stringify(refused));
  assert.match(diagnostic.text, /policies\.yaml:\d+:\d+: error: metadata\.name: the policy set would keep/);
  const text = await scrape(metrics);
  assert.equal(sampleValue(text, "celgate_policy_sets_refused_memory_total"), 1);
  assert.equal(sampleValue(text, "celgate_policy_last_reload_success"), 0);
  // The last good set serves, unchanged.
  assert.equal(await allowed(port, 5), false);
  assert.equal(await allowed(port, 3), true);
  assert.equal(s.child.exitCode, null);

  // A set that fits (the same rule, 100 validations) is loaded.
  writeFileSync(file, `${policy("small", [5], 0)}---\n${largeSet("large", 2, 50)}`);
  await waitFor(
    "the applied reload",
    () => reloadLines(s.out.stdout).find((l) => l.result === "success"),
    60_000,
    100,
  );
  assert.equal(await allowed(port, 3), false);
  assert.equal(await allowed(port, 5), false);
  assert.equal(await allowed(port, 4), true);
  assert.equal(sampleValue(await scrape(metrics), "celgate_policy_sets_refused_memory_total"), 1);
  assert.doesNotMatch(`${s.out.stderr}${s.out.stdout}`, /heap out of memory|internal error/i);
});
