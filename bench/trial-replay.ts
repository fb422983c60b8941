/**
 * `celgate replay`'s memory bound and throughput (issue 35): recordings of 10,000 and 100,000
 * reviews, written as `serve --record` writes them (recording.ts's recordLine, with the answers of
 * the set that "served" them), replayed in this process by the command itself against a candidate
 * that changes most of the answers, every review from its own user (so the groups by user hit
 * their cap). Reports, for each size: reviews/s, and the largest heap in use after a full garbage
 * collection, sampled while the replay runs. A bounded replay has the same peak at both sizes.
 *
 * Run: node --expose-gc --import tsx bench/trial-replay.ts
 */
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { main } from "../src/adapters/cli/main.ts";
import { type Admitter, serveAdmitter } from "../src/adapters/server/admitter.ts";
import { recordLine } from "../src/adapters/server/recording.ts";
import { REVIEW_ROUTES, type ReviewRoute, replyFor, reviewOptions } from "../src/adapters/server/review.ts";
import { compilePolicySet } from "../src/compile/policy.ts";
import { loadPolicyPaths } from "../src/sources/files.ts";
import type { AdmissionRequest } from "../src/request/types.ts";

const policy = (limit: number) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replicas }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] }
  validations:
  - expression: "object.spec.replicas <= ${limit}"
    messageExpression: "'at most ${limit} replicas, got ' + string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replicas }
spec: { policyName: replicas, validationActions: [Deny] }
`;

function request(i: number): AdmissionRequest {
  const gvk = { group: "apps", version: "v1", kind: "Deployment" };
  const gvr = { group: "apps", version: "v1", resource: "deployments" };
  const name = `web-${i}`;
  const namespace = `team-${i % 50}`;
  return {
    uid: `uid-${i}`,
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name,
    namespace,
    operation: "CREATE",
    userInfo: { username: `user-${i}`, groups: ["system:authenticated"] },
    object: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace, labels: { app: name } },
      spec: {
        replicas: i % 10,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: "app", image: `registry.example.com/app:${i % 7}` }] },
        },
      },
    },
    oldObject: null,
    dryRun: false,
    options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
  } as AdmissionRequest;
}

async function setOf(dir: string) {
  const loaded = await loadPolicyPaths([dir]);
  return compilePolicySet(loaded.set, {});
}

/** A recording as serve writes it: each review answered on /validate by the served set. */
async function writeRecording(dir: string, n: number, served: Admitter): Promise<void> {
  const out = createWriteStream(join(dir, "reviews-20261208T000000000Z-000001.jsonl"));
  const route = REVIEW_ROUTES[0] as ReviewRoute;
  const at = new Date();
  for (let i = 0; i < n; i++) {
    const r = request(i);
    const decision = served.review(r, reviewOptions(route, performance.now() + 10_000, false));
    const reply = replyFor(route, { apiVersion: "admission.k8s.io/v1", request: r }, decision).body;
    if (!out.write(`${recordLine(at, route.path, "admission.k8s.io/v1", r, reply.response)}\n`))
      await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc");

/** One replay of `dir` by the command, in this process; its report and wall time. */
async function replayOnce(dir: string, candidate: string) {
  let stdout = "";
  const started = performance.now();
  const code = await main(["replay", dir, "-p", candidate, "-o", "json"], {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => process.stderr.write(t),
    stdin: async () => "",
    cwd: process.cwd(),
    env: {},
    isTTY: false,
  });
  const seconds = (performance.now() - started) / 1000;
  const report = JSON.parse(stdout) as { reviews: number; changed: number; byUser: unknown[] };
  return { code, seconds, report };
}

/**
 * Two replays of a recording of `n` reviews: one timed alone (throughput), one with the heap
 * sampled after a full collection every SAMPLE_MS (a collection per sample slows it down).
 */
async function trial(n: number, root: string, served: Admitter, candidate: string): Promise<void> {
  const dir = join(root, `rec-${n}`);
  await mkdir(dir);
  await writeRecording(dir, n, served);
  const timed = await replayOnce(dir, candidate);
  gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  let samples = 0;
  const sampler = setInterval(() => {
    gc?.();
    samples++;
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, SAMPLE_MS);
  const sampled = await replayOnce(dir, candidate);
  clearInterval(sampler);
  const mib = (b: number) => (b / 1048576).toFixed(1);
  const r = timed.report;
  console.log(
    `${n} reviews: exit ${timed.code}, ${r.reviews} replayed, ${r.changed} changed, ${r.byUser.length} user groups kept; ` +
      `${Math.round(r.reviews / timed.seconds)} reviews/s (${timed.seconds.toFixed(1)} s); ` +
      `heap after GC: ${mib(base)} MiB before, peak ${mib(peak)} MiB (+${mib(peak - base)}) over ${samples} samples in ${sampled.seconds.toFixed(1)} s`,
  );
  await rm(dir, { recursive: true, force: true });
}

const SAMPLE_MS = 250;

const root = await mkdtemp(join(tmpdir(), "celgate-replay-trial-"));
try {
  await mkdir(join(root, "cur"));
  await mkdir(join(root, "cand"));
  await writeFile(join(root, "cur", "p.yaml"), policy(5));
  await writeFile(join(root, "cand", "p.yaml"), policy(2));
  const served = serveAdmitter(await setOf(join(root, "cur")));
  for (const n of [10_000, 100_000]) await trial(n, root, served, join(root, "cand"));
} finally {
  await rm(root, { recursive: true, force: true });
}
