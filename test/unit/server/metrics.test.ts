import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { createWebhookMetrics, outcomeOf } from "../../../src/adapters/server/metrics.ts";
import { buildMetricsServer } from "../../../src/adapters/server/metrics-server.ts";
import type { PolicyResult } from "../../../src/engine/types.ts";
import { send } from "../../helpers/https.ts";
import {
  admissionReview,
  decision,
  FixedAdmitter,
  serverCert,
  startServer,
  ThrowingAdmitter,
} from "./fakes.ts";

const ca = serverCert.cert;

function result(policy: string, outcome: PolicyResult["outcome"], binding?: string): PolicyResult {
  return {
    policy,
    policyKind: "ValidatingAdmissionPolicy",
    ...(binding !== undefined ? { binding } : {}),
    outcome,
    violations: [],
    warnings: [],
    auditAnnotations: {},
    trace: [],
    cost: 1,
    durationMs: 0.3,
  };
}

/** The value of one sample line, e.g. `name{a="b"} 3`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

void test("the metrics endpoint reports reviews, policy evaluations and process metrics", async (t) => {
  let admitter: FixedAdmitter | ThrowingAdmitter = new FixedAdmitter(
    decision({
      results: [result("require-labels", "pass", "require-labels-binding"), result("no-latest", "skip")],
    }),
  );
  const { port, registry } = await startServer(t, { admitter: () => admitter });
  const metricsServer = await buildMetricsServer(registry);
  t.after(() => metricsServer.close());
  const started = await metricsServer.start({ host: "127.0.0.1", port: 0 });
  assert.ok(started.ok);
  const metricsAddress = started.value;

  await send({ port, ca, path: "/validate", body: admissionReview({ name: "secret-name-1" }) });
  await send({ port, ca, path: "/validate", body: admissionReview({ operation: "UPDATE" }) });
  admitter = new FixedAdmitter(
    decision({
      allowed: false,
      status: { code: 403, reason: "Forbidden", message: "no" },
      results: [result("require-labels", "fail", "require-labels-binding")],
    }),
  );
  await send({ port, ca, path: "/validate/fail", body: admissionReview() });
  admitter = new FixedAdmitter(decision({ patch: [{ op: "add", path: "/metadata/labels/a", value: "b" }] }));
  await send({ port, ca, path: "/mutate", body: admissionReview() });
  admitter = new ThrowingAdmitter();
  await send({ port, ca, path: "/mutate/ignore", body: admissionReview() });
  await send({
    port,
    ca,
    path: "/validate",
    body: "{not json",
    headers: { "content-type": "application/json" },
  });
  await send({ port, ca, path: "/validate?uid=abc", body: "x", headers: { "content-type": "text/plain" } });

  const res = await send({ scheme: "http", port: metricsAddress.port, path: "/metrics" });
  assert.equal(res.status, 200);
  assert.match(String(res.headers["content-type"]), /^text\/plain/);
  const text = res.body;
  const requests = "celgate_admission_requests_total";
  const cases: [string, number][] = [
    [`${requests}{path="/validate",operation="CREATE",outcome="allowed"}`, 1],
    [`${requests}{path="/validate",operation="UPDATE",outcome="allowed"}`, 1],
    [`${requests}{path="/validate/fail",operation="CREATE",outcome="denied"}`, 1],
    [`${requests}{path="/mutate",operation="CREATE",outcome="patched"}`, 1],
    [`${requests}{path="/mutate/ignore",operation="CREATE",outcome="error"}`, 1],
    [`${requests}{path="/validate",operation="unknown",outcome="invalid"}`, 2],
    [`celgate_admission_review_duration_seconds_count{path="/validate",operation="CREATE"}`, 1],
    [
      `celgate_policy_evaluations_total{policy="require-labels",binding="require-labels-binding",outcome="pass"}`,
      2,
    ],
    [
      `celgate_policy_evaluations_total{policy="require-labels",binding="require-labels-binding",outcome="fail"}`,
      1,
    ],
    [`celgate_policy_evaluations_total{policy="no-latest",binding="",outcome="skip"}`, 2],
    [`celgate_policy_evaluation_duration_seconds_count{policy="require-labels"}`, 3],
  ];
  for (const [series, value] of cases) assert.equal(sample(text, series), value, series);
  // Histograms are built at scrape time: cumulative buckets ending in +Inf = count, as prom-client's.
  for (const [name, labels] of [
    ["celgate_admission_review_duration_seconds", 'path="/validate",operation="CREATE"'],
    ["celgate_policy_evaluation_duration_seconds", 'policy="require-labels"'],
  ] as const) {
    const buckets = [
      ...text.matchAll(new RegExp(`^${name}_bucket\\{${labels},le="([^"]+)"\\} (\\S+)$`, "gm")),
    ];
    assert.ok(buckets.length > 2, `${name}: buckets for ${labels}`);
    const values = buckets.map((m) => Number(m[2]));
    assert.deepEqual(
      values,
      [...values].sort((a, b) => a - b),
      `${name}: cumulative`,
    );
    assert.equal(buckets.at(-1)?.[1], "+Inf");
    assert.equal(values.at(-1), sample(text, `${name}_count{${labels}}`));
    assert.ok((sample(text, `${name}_sum{${labels}}`) ?? -1) >= 0);
  }
  assert.ok((sample(text, "celgate_certificate_expiry_timestamp_seconds") ?? 0) > Date.now() / 1000);
  assert.match(text, /^process_cpu_user_seconds_total /m, "default Node metrics are on the registry");
  assert.match(text, /^nodejs_eventloop_lag_seconds /m);
  // Bounded labels: no resource names, uids or raw URLs.
  assert.ok(!text.includes("secret-name-1"));
  assert.ok(!text.includes("705ab4f5"));
  assert.ok(!text.includes("uid=abc"));

  const missing = await send({ scheme: "http", port: metricsAddress.port, path: "/other" });
  assert.equal(missing.status, 404);
});

void test("reload, compile-error and loaded-policy gauges", async () => {
  const registry = new Registry();
  const metrics = createWebhookMetrics(registry);
  metrics.recordReload("success", new Date(1_700_000_000_000));
  metrics.recordReload("failure", new Date(1_700_000_100_000));
  metrics.setCompileErrors(3);
  metrics.setPoliciesLoaded([
    { kind: "ValidatingAdmissionPolicy", enforced: true, count: 4 },
    { kind: "ValidatingAdmissionPolicy", enforced: false, count: 1 },
  ]);
  metrics.setPoliciesLoaded([{ kind: "MutatingAdmissionPolicy", enforced: true, count: 2 }]);
  const text = await registry.metrics();
  const cases: [string, number][] = [
    ['celgate_policy_reloads_total{result="success"}', 1],
    ['celgate_policy_reloads_total{result="failure"}', 1],
    ["celgate_policy_last_reload_timestamp_seconds", 1_700_000_100],
    ["celgate_policy_last_reload_success", 0],
    ["celgate_policy_compile_errors", 3],
    ['celgate_policies_loaded{kind="MutatingAdmissionPolicy",enforced="true"}', 2],
    // A later load without validating policies resets their count rather than leaving it stale.
    ['celgate_policies_loaded{kind="ValidatingAdmissionPolicy",enforced="true"}', 0],
  ];
  for (const [series, value] of cases) assert.equal(sample(text, series), value, series);
});

void test("a held-back reload is counted as suspect, never as a success, and the last-success gauge reads 0", async () => {
  const registry = new Registry();
  const metrics = createWebhookMetrics(registry);
  metrics.recordReload("success", new Date(1_700_000_000_000));
  let text = await registry.metrics();
  assert.equal(sample(text, "celgate_policy_reload_suspect_total"), 0);
  metrics.recordReload("held_back", new Date(1_700_000_200_000));
  text = await registry.metrics();
  const held: [string, number | undefined][] = [
    ["celgate_policy_reload_suspect_total", 1],
    ['celgate_policy_reloads_total{result="success"}', 1],
    ['celgate_policy_reloads_total{result="failure"}', undefined],
    ["celgate_policy_last_reload_timestamp_seconds", 1_700_000_200],
    ["celgate_policy_last_reload_success", 0],
  ];
  for (const [series, value] of held) assert.equal(sample(text, series), value, series);
  // Applied once the files have settled: success again.
  metrics.recordReload("success", new Date(1_700_000_201_000));
  text = await registry.metrics();
  assert.equal(sample(text, 'celgate_policy_reloads_total{result="success"}'), 2);
  assert.equal(sample(text, "celgate_policy_last_reload_success"), 1);
  assert.equal(sample(text, "celgate_policy_reload_suspect_total"), 1);
});

void test("metrics live on the registry passed in, so two can coexist", () => {
  const a = new Registry();
  const b = new Registry();
  createWebhookMetrics(a);
  createWebhookMetrics(b);
  assert.ok(a.getSingleMetric("celgate_admission_requests_total"));
  assert.ok(b.getSingleMetric("celgate_admission_requests_total"));
});

void test("outcomeOf: denied, patched only when mutating with a patch, else allowed", () => {
  const patch = [{ op: "add", path: "/a", value: 1 }] as const;
  const cases = [
    { d: decision({ allowed: false }), mutating: true, want: "denied" },
    { d: decision({ patch }), mutating: true, want: "patched" },
    { d: decision({ patch }), mutating: false, want: "allowed" },
    { d: decision({ patch: [] }), mutating: true, want: "allowed" },
    { d: decision(), mutating: true, want: "allowed" },
  ];
  for (const c of cases) assert.equal(outcomeOf(c.d, c.mutating), c.want);
});
