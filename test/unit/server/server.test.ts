import assert from "node:assert/strict";
import { test } from "node:test";
import { type ConnectionOptions, connect as tlsConnect } from "node:tls";
import { Registry } from "prom-client";
import { createWebhookMetrics } from "../../../src/adapters/server/metrics.ts";
import { INTERNAL_ERROR_MESSAGE } from "../../../src/adapters/server/http.ts";
import { buildServer } from "../../../src/adapters/server/server.ts";
import type { Admitter } from "../../../src/adapters/server/admitter.ts";
import { json, send } from "../../helpers/https.ts";
import {
  admissionReview,
  BrokenAdmitter,
  decision,
  FixedAdmitter,
  logLines,
  serverCert,
  startServer,
  ThrowingAdmitter,
} from "./fakes.ts";

const ca = serverCert.cert;

void test("v1 and v1beta1 reviews are answered in the version received, with the uid echoed", async (t) => {
  const admitter = new FixedAdmitter();
  const { port } = await startServer(t, { admitter: () => admitter });
  for (const apiVersion of ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]) {
    const uid = `uid-${apiVersion}`;
    const res = await send({ port, ca, path: "/validate", body: admissionReview({ apiVersion, uid }) });
    assert.equal(res.status, 200, res.body);
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    const body = json(res);
    assert.equal(body.apiVersion, apiVersion);
    assert.equal(body.kind, "AdmissionReview");
    assert.deepEqual(body.response, { uid, allowed: true });
  }
  assert.equal(admitter.calls.length, 2);
  const first = admitter.calls[0];
  assert.equal(first?.request.name, "web");
  assert.equal(first?.request.operation, "CREATE");
  assert.equal(first?.options.phase, "validate");
  assert.equal(first?.options.failurePolicy, undefined);
});

void test("each path runs its phase and failure policy", async (t) => {
  const admitter = new FixedAdmitter();
  const { port } = await startServer(t, { admitter: () => admitter });
  const cases = [
    { path: "/validate", phase: "validate", failurePolicy: undefined },
    { path: "/validate/fail", phase: "validate", failurePolicy: "Fail" },
    { path: "/validate/ignore", phase: "validate", failurePolicy: "Ignore" },
    { path: "/mutate", phase: "mutate", failurePolicy: undefined },
    { path: "/mutate/fail", phase: "mutate", failurePolicy: "Fail" },
    { path: "/mutate/ignore", phase: "mutate", failurePolicy: "Ignore" },
  ] as const;
  for (const c of cases) {
    const res = await send({ port, ca, path: c.path, body: admissionReview() });
    assert.equal(res.status, 200, `${c.path}: ${res.body}`);
    const call = admitter.calls.at(-1);
    assert.equal(call?.options.phase, c.phase, c.path);
    assert.equal(call?.options.failurePolicy, c.failurePolicy, c.path);
  }
});

void test("a denial carries its status code, reason and message", async (t) => {
  const denied = decision({
    allowed: false,
    status: { code: 422, reason: "Invalid", message: "[require-labels] team label is required" },
    warnings: ["[warn-policy] replicas above 2"],
  });
  const admitter = new FixedAdmitter(denied);
  const { port } = await startServer(t, { admitter: () => admitter });
  const res = await send({ port, ca, path: "/validate/fail", body: admissionReview({ uid: "d-1" }) });
  assert.equal(res.status, 200);
  assert.deepEqual(json(res).response, {
    uid: "d-1",
    allowed: false,
    status: { code: 422, reason: "Invalid", message: "[require-labels] team label is required" },
    warnings: ["[warn-policy] replicas above 2"],
  });
});

void test("a patch goes out on mutate paths only", async (t) => {
  const ops = [{ op: "add", path: "/metadata/labels", value: { team: "a" } }] as const;
  const admitter = new FixedAdmitter(decision({ patch: ops }));
  const { port } = await startServer(t, { admitter: () => admitter });

  const mutate = json(await send({ port, ca, path: "/mutate", body: admissionReview() }));
  const response = mutate.response as Record<string, unknown>;
  assert.equal(response.patchType, "JSONPatch");
  assert.deepEqual(JSON.parse(Buffer.from(String(response.patch), "base64").toString("utf8")), ops);

  const validate = json(await send({ port, ca, path: "/validate", body: admissionReview() }));
  const vresponse = validate.response as Record<string, unknown>;
  assert.equal(vresponse.allowed, true);
  assert.equal("patch" in vresponse, false);
  assert.equal("patchType" in vresponse, false);
});

void test("unusable bodies get 400 with a reason, and never reach the admitter", async (t) => {
  const admitter = new FixedAdmitter();
  const { port } = await startServer(t, { admitter: () => admitter });
  const noUid = admissionReview();
  (noUid.request as Record<string, unknown>).uid = undefined;
  const cases = [
    {
      name: "malformed JSON",
      body: '{"apiVersion": "admission.k8s.io/v1", ',
      reason: /^request body is not valid JSON$/,
    },
    // Valid JSON (JSON.parse makes `__proto__` an own member), but not a review: it is refused for that.
    { name: "only a __proto__ member", body: '{"__proto__": {"kind": "AdmissionReview"}}', reason: /kind/ },
    { name: "empty body", body: "", reason: /empty/ },
    {
      name: "missing request",
      body: { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" },
      reason: /request/,
    },
    { name: "missing uid", body: noUid, reason: /request\.uid/ },
    { name: "wrong kind", body: { ...admissionReview(), kind: "Pod" }, reason: /kind/ },
    { name: "a JSON array", body: "[]", reason: /object/ },
  ];
  for (const c of cases) {
    const res = await send({
      port,
      ca,
      path: "/validate",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof c.body === "string" ? c.body : JSON.stringify(c.body),
    });
    assert.equal(res.status, 400, `${c.name}: ${res.body}`);
    const body = json(res);
    assert.equal(body.statusCode, 400, c.name);
    assert.match(String(body.message), c.reason, c.name);
  }
  assert.equal(admitter.calls.length, 0);
});

void test("a body that is not application/json gets 415 with a reason", async (t) => {
  const admitter = new FixedAdmitter();
  const { port } = await startServer(t, { admitter: () => admitter });
  const text = JSON.stringify(admissionReview());
  const cases = [
    { headers: { "content-type": "text/plain" }, got: /text\/plain/ },
    { headers: { "content-type": "application/x-www-form-urlencoded" }, got: /x-www-form-urlencoded/ },
    { headers: {}, got: /none/ },
  ];
  for (const c of cases) {
    const res = await send({ port, ca, path: "/validate", method: "POST", headers: c.headers, body: text });
    assert.equal(res.status, 415, res.body);
    assert.match(String(json(res).message), /application\/json/);
    assert.match(String(json(res).message), c.got);
  }
  // Parameters after the media type are fine.
  const ok = await send({
    port,
    ca,
    path: "/validate",
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8" },
    body: text,
  });
  assert.equal(ok.status, 200, ok.body);
  assert.equal(admitter.calls.length, 1);
});

void test("unknown paths get 404 and known paths with the wrong method 405", async (t) => {
  const { port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const notFound = await send({ port, ca, path: "/nope" });
  assert.equal(notFound.status, 404);
  assert.equal(json(notFound).statusCode, 404);

  const cases = [
    { method: "GET", path: "/validate", allow: "POST" },
    { method: "PUT", path: "/mutate/fail?timeout=10s", allow: "POST" },
    { method: "POST", path: "/healthz", allow: "GET, HEAD" },
    { method: "DELETE", path: "/readyz", allow: "GET, HEAD" },
  ];
  for (const c of cases) {
    const res = await send({ port, ca, path: c.path, method: c.method });
    assert.equal(res.status, 405, `${c.method} ${c.path}: ${res.body}`);
    assert.equal(res.headers.allow, c.allow);
    assert.match(String(json(res).message), new RegExp(c.method));
  }
});

void test("an 8 MiB body is refused with 413 without being read first", async (t) => {
  const admitter = new FixedAdmitter();
  const { port } = await startServer(t, { admitter: () => admitter });
  const big = Buffer.alloc(8 * 1024 * 1024, 0x20);
  const res = await send({
    port,
    ca,
    path: "/validate",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: big,
    timeoutMs: 10_000,
  });
  assert.equal(res.status, 413, res.body);
  assert.match(String(json(res).message), /larger than/);
  assert.equal(admitter.calls.length, 0);
  // The connection-level handling left the server healthy.
  assert.equal((await send({ port, ca, path: "/validate", body: admissionReview() })).status, 200);
});

void test("an admitter that throws is answered by the path's failure policy", async (t) => {
  const { lines, stream } = logLines();
  const { port } = await startServer(t, {
    admitter: () => new ThrowingAdmitter(),
    logger: { level: "info", stream },
  });

  for (const path of ["/validate/fail", "/mutate/fail"]) {
    const res = await send({ port, ca, path, body: admissionReview({ uid: "x" }) });
    assert.equal(res.status, 200, res.body);
    const response = json(res).response as Record<string, unknown>;
    assert.equal(response.uid, "x");
    assert.equal(response.allowed, false, path);
    assert.deepEqual(response.status, {
      code: 500,
      reason: "InternalError",
      message: INTERNAL_ERROR_MESSAGE,
    });
  }
  for (const path of ["/validate/ignore", "/mutate/ignore"]) {
    const res = await send({ port, ca, path, body: admissionReview({ uid: "y" }) });
    assert.equal(res.status, 200, res.body);
    const response = json(res).response as Record<string, unknown>;
    assert.equal(response.allowed, true, path);
    assert.equal("patch" in response, false);
    assert.match(String((response.warnings as string[])[0]), /celgate internal error/);
  }
  // No policy of our own on the unsplit paths: a failed call hands the choice to the API server.
  for (const path of ["/validate", "/mutate"]) {
    const res = await send({ port, ca, path, body: admissionReview() });
    assert.equal(res.status, 500, path);
    assert.equal(json(res).message, INTERNAL_ERROR_MESSAGE);
  }
  assert.equal((await send({ port, ca, path: "/healthz" })).status, 200);
  // Each failure is logged at error level with the review's uid and the cause, pino's format.
  const failed = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === "admission review failed");
  const unsplit = (admissionReview().request as { uid: string }).uid;
  assert.deepEqual(
    failed.map((l) => l.uid),
    ["x", "x", "y", "y", unsplit, unsplit],
  );
  for (const l of failed) {
    assert.equal(l.level, 50);
    assert.equal(typeof (l.err as { message?: unknown }).message, "string");
    assert.equal(typeof l.pid, "number");
  }
});

void test("an admitter that returns garbage is an internal error too, never an accidental allow", async (t) => {
  const { port } = await startServer(t, { admitter: () => new BrokenAdmitter() });
  const fail = json(await send({ port, ca, path: "/validate/fail", body: admissionReview() }));
  assert.equal((fail.response as Record<string, unknown>).allowed, false);
  const ignore = json(await send({ port, ca, path: "/validate/ignore", body: admissionReview() }));
  assert.equal((ignore.response as Record<string, unknown>).allowed, true);
});

void test("the ?timeout= deadline reaches the admitter, a little before the API server gives up", async (t) => {
  const admitter = new FixedAdmitter();
  const { port } = await startServer(t, { admitter: () => admitter, defaultTimeoutMs: 10_000 });
  const cases = [
    { query: "?timeout=2s", expected: 2000 - 200 },
    { query: "?timeout=1m30s", expected: 30_000 - 1000 }, // capped at the API server's maximum
    { query: "?timeout=500ms", expected: 500 - 50 },
    { query: "", expected: 10_000 - 1000 },
    { query: "?timeout=bogus", expected: 10_000 - 1000 },
    { query: "?timeout=0s", expected: 10_000 - 1000 },
  ];
  for (const c of cases) {
    const before = performance.now();
    const res = await send({ port, ca, path: `/validate${c.query}`, body: admissionReview() });
    const after = performance.now();
    assert.equal(res.status, 200);
    const deadline = admitter.calls.at(-1)?.options.deadline ?? Number.NaN;
    assert.ok(
      deadline >= before + c.expected - 1 && deadline <= after + c.expected,
      `${c.query}: deadline ${deadline - before} ms after sending, expected about ${c.expected}`,
    );
  }
});

void test("the admitter getter is called once per request, so a swap applies to the next request", async (t) => {
  let current: Admitter = new FixedAdmitter(decision({ allowed: true }));
  let calls = 0;
  const { port } = await startServer(t, {
    admitter: () => {
      calls++;
      return current;
    },
  });
  const a = json(await send({ port, ca, path: "/validate/fail", body: admissionReview() }));
  current = new FixedAdmitter(
    decision({ allowed: false, status: { code: 403, reason: "Forbidden", message: "no" } }),
  );
  const b = json(await send({ port, ca, path: "/validate/fail", body: admissionReview() }));
  assert.equal((a.response as Record<string, unknown>).allowed, true);
  assert.equal((b.response as Record<string, unknown>).allowed, false);
  assert.equal(calls, 2);
});

void test("healthz is always 200; readyz follows readiness", async (t) => {
  let ready = false;
  const { port } = await startServer(t, { admitter: () => new FixedAdmitter(), readiness: () => ready });
  assert.equal((await send({ port, ca, path: "/healthz" })).status, 200);
  const notReady = await send({ port, ca, path: "/readyz" });
  assert.equal(notReady.status, 503);
  assert.match(String(json(notReady).message), /not loaded/);
  ready = true;
  assert.equal((await send({ port, ca, path: "/readyz" })).status, 200);
});

void test("one info line per review, with identifiers but no object contents", async (t) => {
  const { lines, stream } = logLines();
  const admitter = new FixedAdmitter(
    decision({ allowed: false, status: { code: 403, reason: "Forbidden", message: "denied" } }),
  );
  const { port } = await startServer(t, { admitter: () => admitter, logger: { level: "info", stream } });
  await send({ port, ca, path: "/validate/fail", body: admissionReview({ uid: "log-1", name: "web-7" }) });
  const reviews = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.uid === "log-1");
  assert.equal(reviews.length, 1);
  const line = reviews[0] ?? {};
  assert.equal(line.kind, "Deployment");
  assert.equal(line.namespace, "team-a");
  assert.equal(line.name, "web-7");
  assert.equal(line.operation, "CREATE");
  assert.equal(line.allowed, false);
  assert.equal(typeof line.durationMs, "number");
  assert.ok(!lines.join("\n").includes("s3cr3t-value"), "object contents must not be logged");
});

void test("a review's duration, in its log line and its metric, covers the review", async (t) => {
  const { lines, stream } = logLines();
  // An admitter that takes 25 ms (by the monotonic clock): the duration must count at least 20.
  const slow: Admitter = {
    review: () => {
      const until = performance.now() + 25;
      while (performance.now() < until) {
        // busy: the review's own time
      }
      return decision();
    },
  };
  const { port, registry } = await startServer(t, {
    admitter: () => slow,
    logger: { level: "info", stream },
  });
  await send({ port, ca, path: "/validate", body: admissionReview({ uid: "slow-1" }) });
  const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.uid === "slow-1");
  assert.ok(line, "the review was logged");
  assert.ok(Number(line.durationMs) >= 20, `durationMs ${String(line.durationMs)}`);
  const text = await registry.metrics();
  const sum = /^celgate_admission_review_duration_seconds_sum\{[^}]*path="\/validate"[^}]*\} (\S+)$/m.exec(
    text,
  );
  assert.ok(sum, text);
  assert.ok(Number(sum[1]) >= 0.02, `duration sum ${sum[1]}`);
});

void test("buildServer refuses a certificate and key that do not belong together", async () => {
  const other = (await import("../../../src/adapters/server/tls.ts")).generateSelfSignedCertificate({
    hosts: ["localhost"],
    days: 1,
  });
  await assert.rejects(
    buildServer({
      admitter: () => new FixedAdmitter(),
      tls: { cert: serverCert.cert, key: other.key },
      logger: false,
      metrics: createWebhookMetrics(new Registry()),
      readiness: () => true,
    }),
    /does not match/,
  );
});

void test("transport: ALPN picks http/1.1 over h2, TLS below 1.2 is refused, timeouts are set", async (t) => {
  const { server, port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const handshake = (options: ConnectionOptions): Promise<string | false> =>
    new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port, ca, ...options }, () => {
        const protocol = socket.alpnProtocol ?? false;
        socket.end();
        resolve(protocol);
      });
      socket.setTimeout(3000, () => socket.destroy(new Error("handshake timed out")));
      socket.on("error", reject);
    });
  assert.equal(await handshake({ ALPNProtocols: ["h2", "http/1.1"] }), "http/1.1");
  await assert.rejects(
    handshake({ minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0" }),
  );

  const http = server.app.server;
  assert.ok(http.keepAliveTimeout > 90_000, "outlives the API server's 90 s idle timeout");
  assert.ok(http.headersTimeout > 0 && http.headersTimeout <= http.requestTimeout);
  assert.ok(http.requestTimeout >= 30_000, "a 30 s admission timeout plus upload fits");
});

void test("at debug level the engine explains and the trace is logged; at info it is not asked for", async (t) => {
  const { lines, stream } = logLines();
  const seen: (boolean | undefined)[] = [];
  const traced: Admitter = {
    review: (_request, options) => {
      seen.push(options.explain);
      return decision({
        results: [
          {
            policy: "p",
            policyKind: "ValidatingAdmissionPolicy",
            binding: "b",
            outcome: "fail",
            violations: [],
            warnings: [],
            auditAnnotations: {},
            trace: [{ stage: "validation", name: "0", expression: "false", value: false, cost: 1 }],
            cost: 1,
            durationMs: 0,
          },
        ],
      });
    },
  };
  const debug = await startServer(t, { admitter: () => traced, logger: { level: "debug", stream } });
  await send({ port: debug.port, ca, path: "/validate", body: admissionReview({ uid: "dbg-1" }) });
  const trace = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.uid === "dbg-1" && l.msg === "admission review trace");
  assert.ok(trace, "a trace line at debug level");
  assert.deepEqual((trace.results as { trace: unknown[] }[])[0]?.trace, [
    { stage: "validation", name: "0", expression: "false", value: false, cost: 1 },
  ]);
  const info = await startServer(t, { admitter: () => traced, logger: { level: "info", stream } });
  await send({ port: info.port, ca, path: "/validate", body: admissionReview({ uid: "inf-1" }) });
  assert.deepEqual(seen, [true, undefined]);
  assert.ok(!lines.some((l) => l.includes('"inf-1"') && l.includes("admission review trace")));
});
