/**
 * Reloads that never fail open (issue 28 items 1-2), end to end: the real server over TLS on
 * 127.0.0.1, AdmissionReviews on keep-alive connections, and policy files truncated, rewritten and
 * swapped underneath. A Deployment that the policy denies must be denied by every answer, whatever
 * state the files are caught in; the new content must be picked up; the log says what happened.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { ConfigMapVolume, type VolumeStep } from "../helpers/configmap-volume.ts";
import {
  CapturedLog,
  deployment,
  deploymentReview,
  keepAliveAgent,
  type LoadRecord,
  postReview,
  runLoad,
  sampleValue,
  scrape,
  sleep,
  startTestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

function capPolicy(limit: number): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cap
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= ${limit}"
    message: "replicas must be at most ${limit}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cap-binding
spec:
  policyName: cap
  validationActions: [Deny]
`;
}

const denial = (limit: number) =>
  `ValidatingAdmissionPolicy 'cap' with binding 'cap-binding' denied request: replicas must be at most ${limit}`;

/** What one review of a 6-replica Deployment was answered with: the limit of the denial, or why not. */
type Answer = { readonly limit: number } | { readonly wrong: string };

interface DenialLoad {
  /** Stops the load and resolves with every answer. */
  stop(): Promise<LoadRecord<Answer>[]>;
  /** Sends one review now and says which limit denied it (undefined: not a denial we know). */
  probe(): Promise<number | undefined>;
}

/** Four keep-alive connections sending a Deployment with 6 replicas, which every cap here denies. */
function denialLoad(t: TestContext, port: number, ca: string): DenialLoad {
  const agents = Array.from({ length: 4 }, () => keepAliveAgent(ca));
  t.after(() => {
    for (const a of agents) a.destroy();
  });
  const ask = async (uid: string, worker: number): Promise<Answer> => {
    const reply = await postReview(
      port,
      ca,
      "/validate",
      deploymentReview({ uid, object: deployment("web", 6) }),
      { agent: agents[worker % agents.length] as NonNullable<(typeof agents)[number]> },
    );
    const r = reply.response;
    const m = /replicas must be at most (\d+)$/.exec(r.status?.message ?? "");
    if (r.allowed || r.status?.code !== 422 || m === null || r.status.message !== denial(Number(m[1])))
      return { wrong: JSON.stringify(r) };
    return { limit: Number(m[1]) };
  };
  let done = false;
  const records = runLoad<Answer>({
    workers: 4,
    maxRequests: 20_000,
    maxMs: 40_000,
    pauseMs: 2,
    shouldStop: () => done,
    request: (index, worker) => ask(`load-${index}`, worker),
  });
  let probes = 0;
  return {
    stop: async () => {
      done = true;
      return records;
    },
    probe: async () => {
      const a = await ask(`probe-${probes++}`, 0);
      return "limit" in a ? a.limit : undefined;
    },
  };
}

/** Every answer a denial of one of `limits`; no request failed. */
function assertAlwaysDenied(records: readonly LoadRecord<Answer>[], limits: readonly number[]): void {
  assert.deepEqual(
    records.filter((r) => r.error !== undefined).map((r) => r.error?.message),
    [],
    "requests failed",
  );
  const wrong = records.filter(
    (r) => r.result === undefined || !("limit" in r.result) || !limits.includes(r.result.limit),
  );
  assert.deepEqual(
    wrong.map((r) => r.result),
    [],
    "an answer that was not a denial by a loaded cap",
  );
}

async function suspects(metricsUrl: string): Promise<number> {
  return sampleValue(await scrape(metricsUrl), "celgate_policy_reload_suspect_total") ?? 0;
}

void test("a policy file truncated and rewritten in place: the denial stays a denial throughout", {
  timeout: 90_000,
}, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "cap.yaml");
  await writeFile(file, capPolicy(5));
  const log = new CapturedLog();
  // A long settle time, so that this test's own pauses can never let the empty file settle.
  const { webhook, port, ca } = await startTestWebhook(t, {
    policies: [dir],
    logLevel: "warn",
    logStream: log,
    pollMs: 200,
    settleMs: 20_000,
  });
  const load = denialLoad(t, port, ca);
  await waitFor("the load to run", async () => ((await load.probe()) === 5 ? true : undefined));

  // An editor or `kubectl cp`: the file is truncated, and only later written again.
  await writeFile(file, "");
  await waitFor("the empty file to be seen and held back", async () =>
    (await suspects(webhook.metricsUrl)) >= 1 ? true : undefined,
  );
  assert.equal(await load.probe(), 5, "the emptied file took the policy away");
  await writeFile(file, capPolicy(4));
  await waitFor("the rewritten file to be served", async () =>
    (await load.probe()) === 4 ? true : undefined,
  );

  // Two writes 170 ms apart (the fault trial's lost update): the second is what ends up served.
  await writeFile(file, capPolicy(3));
  await sleep(170);
  await writeFile(file, capPolicy(2));
  await waitFor("the second of two quick writes to be served", async () =>
    (await load.probe()) === 2 ? true : undefined,
  );
  assertAlwaysDenied(await load.stop(), [5, 4, 3, 2]);
  assert.equal(await load.probe(), 2);

  const text = await scrape(webhook.metricsUrl);
  assert.equal(sampleValue(text, "celgate_policy_last_reload_success"), 1);
  assert.equal(sampleValue(text, "celgate_policy_reloads_total", { result: "failure" }) ?? 0, 0);
  const held = log.reloads().filter((e) => e.result === "held_back");
  assert.ok(held.length >= 1, `no held-back warning in the log:\n${log.lines.join("\n")}`);
  for (const e of held) {
    assert.equal(e.level, 40);
    assert.deepEqual(e.removed, [
      "ValidatingAdmissionPolicy/cap",
      "ValidatingAdmissionPolicyBinding/cap-binding",
    ]);
    assert.deepEqual(e.files, [file]);
  }
});

void test("a ConfigMap volume updated as kubelet does, and swapped half-written: the denial stays a denial; a removed key is applied once settled", {
  timeout: 90_000,
}, async (t) => {
  const dir = await tempDir(t);
  const volume = new ConfigMapVolume(dir);
  await volume.publish({ "cap.yaml": capPolicy(5) });
  const log = new CapturedLog();
  const { webhook, port, ca } = await startTestWebhook(t, {
    policies: [dir],
    logLevel: "info",
    logStream: log,
    pollMs: 200,
    settleMs: 20_000,
  });
  const load = denialLoad(t, port, ca);
  await waitFor("the load to run", async () => ((await load.probe()) === 5 ? true : undefined));
  // Give the watcher a look at each step of the update, as a slow kubelet would.
  const pause = async (_step: VolumeStep) => {
    await sleep(300);
  };

  await volume.publish(
    { "cap.yaml": capPolicy(4), "extra.yaml": capPolicy(4).replaceAll("cap", "extra") },
    {
      between: pause,
    },
  );
  await waitFor("the new ConfigMap content to be served", async () =>
    (await load.probe()) === 4 ? true : undefined,
  );

  // A swap onto a directory whose file is still empty, completed two seconds later.
  const half = volume.publish(
    { "cap.yaml": capPolicy(3), "extra.yaml": capPolicy(4).replaceAll("cap", "extra") },
    {
      halfWritten: ["cap.yaml"],
      between: async (step) => {
        if (step !== "swapped") return;
        await waitFor("the half-written swap to be held back", async () =>
          (await suspects(webhook.metricsUrl)) >= 1 ? true : undefined,
        );
        await sleep(2000);
        assert.equal(await load.probe(), 4, "the half-written swap took the policy away");
      },
    },
  );
  await half;
  await waitFor("the completed file to be served", async () =>
    (await load.probe()) === 3 ? true : undefined,
  );
  assertAlwaysDenied(await load.stop(), [5, 4, 3]);
  assert.equal(
    log.reloads().filter((e) => e.result === "failure").length,
    0,
    "a kubelet update must not look like a broken file",
  );
  for (const e of log.reloads().filter((e) => e.result === "success"))
    assert.ok(
      !(e.removed as string[]).includes("ValidatingAdmissionPolicy/cap"),
      `a reload removed the policy: ${JSON.stringify(e)}`,
    );
});

void test("a policy removed on purpose is applied once the files have settled", {
  timeout: 60_000,
}, async (t) => {
  const dir = await tempDir(t);
  const volume = new ConfigMapVolume(dir);
  await volume.publish({ "cap.yaml": capPolicy(5), "other.yaml": capPolicy(9).replaceAll("cap", "other") });
  const log = new CapturedLog();
  const { webhook, port, ca } = await startTestWebhook(t, {
    policies: [dir],
    logLevel: "info",
    logStream: log,
    pollMs: 200,
    settleMs: 500,
  });
  const review = async () =>
    (await postReview(port, ca, "/validate", deploymentReview({ object: deployment("web", 6) }))).response;
  assert.equal((await review()).allowed, false);
  await volume.publish({ "other.yaml": capPolicy(9).replaceAll("cap", "other") });
  await waitFor(
    "the removal to be applied",
    async () => ((await review()).allowed ? true : undefined),
    20_000,
  );
  const reloads = log.reloads();
  const held = reloads.findIndex((e) => e.result === "held_back");
  const applied = reloads.findIndex((e) => e.result === "success" && (e.removed as string[]).length > 0);
  assert.ok(held >= 0 && applied > held, `expected a hold, then the removal:\n${log.lines.join("\n")}`);
  assert.deepEqual(reloads[applied]?.removed, [
    "ValidatingAdmissionPolicy/cap",
    "ValidatingAdmissionPolicyBinding/cap-binding",
  ]);
  assert.equal(reloads[applied]?.policies, 1);
  const text = await scrape(webhook.metricsUrl);
  assert.equal(sampleValue(text, "celgate_policy_last_reload_success"), 1);
  assert.equal(sampleValue(text, "celgate_policy_reload_suspect_total"), 1);
});

/** Nine levels of ten aliases each: a dozen lines that stand for a billion nodes. */
const ALIAS_BOMB = [
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata:",
  "  name: bomb",
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...["b", "c", "d", "e", "f", "g", "h", "i"].map(
    (n, i) => `${n}: &${n} [${Array(10).fill(`*${"abcdefghi"[i]}`).join(",")}]`,
  ),
  "",
].join("\n");

void test("an alias bomb and a file just over the size limit on reload: each is one error line and a metric, the last good content of that file serves, a fix in another file is applied (issue 37 item 6, issue 36 items 3 and 5)", {
  timeout: 90_000,
}, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "cap.yaml");
  const other = join(dir, "other.yaml");
  await writeFile(file, capPolicy(5));
  await writeFile(other, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  a: b\n");
  const log = new CapturedLog();
  const maxFileBytes = 64 * 1024;
  const { webhook, port, ca } = await startTestWebhook(t, {
    policies: [dir],
    logLevel: "info",
    logStream: log,
    pollMs: 200,
    readLimits: { maxFileBytes, maxSetBytes: 1024 * 1024 },
  });
  const load = denialLoad(t, port, ca);
  await waitFor("the load to run", async () => ((await load.probe()) === 5 ? true : undefined));

  // The bomb lands in the other file; the cap is lowered meanwhile.
  await writeFile(other, ALIAS_BOMB);
  await writeFile(file, capPolicy(4));
  await waitFor("the cap's change to be served", async () => ((await load.probe()) === 4 ? true : undefined));
  const partial = await waitFor("the partial reload's line", async () =>
    log.reloads().find((e) => e.result === "partial"),
  );
  assert.equal(partial.level, 50);
  assert.deepEqual(partial.failedFiles, [other]);
  const codes = (partial.diagnostics as { code: string; file: string; line: number }[]).map((d) => [
    d.code,
    d.file,
    d.line,
  ]);
  assert.deepEqual(codes, [["PE_YAML_ALIASES", other, 8]]);

  // Now the cap's own file grows just over the limit (one large value): it keeps its last good content.
  await writeFile(file, `${capPolicy(3)}# ${"x".repeat(maxFileBytes)}\n`);
  await waitFor("the oversized file's line", async () =>
    log
      .reloads()
      .find(
        (e) =>
          e.result === "partial" &&
          (e.diagnostics as { code: string }[]).some((d) => d.code === "PE_TOO_LARGE"),
      ),
  );
  assert.equal(await load.probe(), 4, "the oversized file's last good content must keep serving");
  assertAlwaysDenied(await load.stop(), [5, 4]);
  const text = await scrape(webhook.metricsUrl);
  assert.ok((sampleValue(text, "celgate_policy_reloads_total", { result: "partial" }) ?? 0) >= 2);
  assert.equal(sampleValue(text, "celgate_policy_last_reload_success"), 0);
  // Not retried on every poll: the same files are reported once each.
  await sleep(600);
  assert.equal(log.reloads().filter((e) => e.result === "partial").length, 2, log.lines.join("\n"));
});
