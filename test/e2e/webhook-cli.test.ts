/**
 * `celgate serve` as a process: `node --import tsx src/adapters/cli/bin.ts serve ...`, its stderr
 * read for the listening URLs, real signals. Shutdown is checked the way Kubernetes shuts a pod
 * down: SIGTERM under load, clients that stop sending once /readyz fails (an endpoints controller
 * taking the pod out of the Service), and no request among those sent getting anything but an answer.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import type { X509Certificate } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { Agent } from "node:https";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import type { TLSSocket } from "node:tls";
import { fileURLToPath } from "node:url";
import { generateSelfSignedCertificate } from "../../src/adapters/server/tls.ts";
import { send } from "../helpers/https.ts";
import {
  deployment,
  deploymentReview,
  keepAliveAgent,
  postReview,
  runLoad,
  sleep,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const POLICIES = fileURLToPath(new URL("../fixtures/webhook/policies", import.meta.url));
const BIN = "src/adapters/cli/bin.ts";
/** Starting node with tsx takes a second or two; the whole process is killed past this. */
const PROCESS_TIMEOUT_MS = 45_000;

interface Served {
  readonly child: ChildProcessWithoutNullStreams;
  readonly port: number;
  readonly metricsPort: number;
  stderr(): string;
  /** The request log so far (pino's JSON lines). */
  stdout(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

type Spawned = Omit<Served, "port" | "metricsPort">;

/** Spawns `celgate serve` with `args`, reading its output; killed when the test ends. */
function spawnServe(t: TestContext, args: readonly string[]): Spawned {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "serve", ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    timeout: PROCESS_TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  // Request logs go to stdout; reading it also keeps the pipe from filling.
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => resolve({ code, signal, at: performance.now() }));
    },
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, stderr: () => stderr, stdout: () => stdout, exited };
}

/** Spawns `celgate serve` and waits for the line that names the URLs. */
async function serve(t: TestContext, args: readonly string[]): Promise<Served> {
  const spawned = spawnServe(t, args);
  const urls = await Promise.race([
    waitFor(
      "the serving line on stderr",
      () =>
        /celgate serving .* on https:\/\/127\.0\.0\.1:(\d+); metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(
          spawned.stderr(),
        ) ?? undefined,
      30_000,
    ),
    spawned.exited.then((e) => {
      throw new Error(`serve exited early (${e.code ?? e.signal}):\n${spawned.stderr()}`);
    }),
  ]);
  return { ...spawned, port: Number(urls[1]), metricsPort: Number(urls[2]) };
}

void test("serve with no certificate: warns it is for development, serves /readyz, answers reviews", {
  timeout: 60_000,
}, async (t) => {
  const served = await serve(t, [
    "--policies",
    POLICIES,
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--metrics-port",
    "0",
    "--drain-seconds",
    "0",
  ]);
  assert.match(
    served.stderr(),
    /^WARNING: no --tls-cert\/--tls-key given: serving a self-signed certificate for localhost\. For development only\.$/m,
  );
  assert.match(served.stderr(), /celgate serving 6 policies \(6 bindings\)/);
  // A ready-to-paste request: the line, run as it stands (its JSON sent to its URL), is answered.
  const curl = await waitFor(
    "the curl line, after the serving line",
    () =>
      /^try it: curl -sk (https:\/\/\S+) -H 'content-type: application\/json' -d '(.*)'$/m.exec(
        served.stderr(),
      ) ?? undefined,
  );
  const tried = await send({
    port: Number(new URL(curl[1] as string).port),
    path: new URL(curl[1] as string).pathname,
    agent: new Agent({ rejectUnauthorized: false }),
    body: JSON.parse(curl[2] as string) as unknown,
  });
  assert.equal(tried.status, 200, tried.body);
  assert.equal((JSON.parse(tried.body) as { response: { uid: string } }).response.uid, "1");
  // We cannot know the generated certificate in advance: accept it, then look at what it is.
  const agent = new Agent({ rejectUnauthorized: false, keepAlive: false });
  t.after(() => agent.destroy());
  const readyz = await send({ port: served.port, path: "/readyz", agent });
  assert.equal(readyz.status, 200);
  assert.deepEqual(JSON.parse(readyz.body), { status: "ready" });
  const peer = await new Promise<X509Certificate>((resolve, reject) => {
    import("node:tls").then(({ connect }) => {
      const socket: TLSSocket = connect(
        { host: "127.0.0.1", port: served.port, rejectUnauthorized: false },
        () => {
          const raw = socket.getPeerX509Certificate();
          socket.destroy();
          if (raw === undefined) reject(new Error("no peer certificate"));
          else resolve(raw);
        },
      );
      socket.on("error", reject);
    }, reject);
  });
  assert.equal(peer.checkHost("localhost"), "localhost");
  assert.equal(peer.checkIP("127.0.0.1"), "127.0.0.1");

  const review = await send({
    port: served.port,
    path: "/validate",
    agent,
    body: deploymentReview({ uid: "smoke", object: deployment("web", 9) }),
  });
  assert.equal(review.status, 200);
  const response = (JSON.parse(review.body) as { response: { uid: string; allowed: boolean } }).response;
  assert.equal(response.uid, "smoke");
  assert.equal(response.allowed, false);

  const metrics = await send({ scheme: "http", port: served.metricsPort, path: "/metrics" });
  assert.equal(metrics.status, 200);
  assert.match(
    metrics.body,
    /^celgate_admission_requests_total\{path="\/validate",operation="CREATE",outcome="denied"\} 1$/m,
  );

  served.child.kill("SIGTERM");
  const exit = await served.exited;
  assert.equal(exit.code, 0, served.stderr());
  assert.match(served.stderr(), /celgate stopped\n$/);
  // The info line of the review was held in memory (the log is written in batches) and must have
  // been written by the time the process is gone.
  const reviews = served
    .stdout()
    .split("\n")
    .filter((l) => l.includes('"admission review"') && l.includes('"uid":"smoke"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    reviews.map((r) => [r.level, r.uid, r.path, r.kind, r.operation, r.allowed, r.outcome]),
    [[30, "smoke", "/validate", "Deployment", "CREATE", false, "denied"]],
  );
});

void test("SIGTERM under load: every request sent gets its answer, the process exits 0 after the drain", {
  timeout: 90_000,
}, async (t) => {
  const dir = await tempDir(t);
  const pair = generateSelfSignedCertificate({ hosts: ["localhost", "127.0.0.1"], days: 1 });
  await writeFile(join(dir, "tls.crt"), pair.cert);
  await writeFile(join(dir, "tls.key"), pair.key);
  const ca = pair.cert;
  const drainSeconds = 2;
  const served = await serve(t, [
    "--policies",
    POLICIES,
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--metrics-port",
    "0",
    "--tls-cert",
    join(dir, "tls.crt"),
    "--tls-key",
    join(dir, "tls.key"),
    "--drain-seconds",
    String(drainSeconds),
    "--log-level",
    "warn",
  ]);
  assert.doesNotMatch(served.stderr(), /WARNING: no --tls-cert/);
  const { port } = served;

  // The endpoints controller: polls readiness and takes the pod out at the first failure, which
  // clients notice some time later (endpoint propagation); 0.5 s here, well inside the drain.
  const PROPAGATION_MS = 500;
  let inService = true;
  let unreadyAt: number | undefined;
  let readyPolls = 0;
  const poller = (async () => {
    for (let i = 0; i < 2000 && unreadyAt === undefined; i++) {
      let ready = false;
      try {
        ready = (await send({ port, ca, path: "/readyz", timeoutMs: 2000 })).status === 200;
        readyPolls++;
      } catch {
        ready = false;
      }
      if (!ready) unreadyAt = performance.now();
      else await sleep(20);
    }
    await sleep(PROPAGATION_MS);
    inService = false;
  })();

  const workers = 8;
  const agents = Array.from({ length: workers }, () => keepAliveAgent(ca));
  t.after(() => {
    for (const a of agents) a.destroy();
  });
  let signalledAt: number | undefined;
  const records = await runLoad<{ right: boolean; close: boolean }>({
    workers,
    maxRequests: 20_000,
    maxMs: 30_000,
    shouldStop: () => !inService,
    request: async (index, worker) => {
      if (index === 300) {
        signalledAt = performance.now();
        served.child.kill("SIGTERM");
      }
      const replicas = index % 3 === 0 ? 9 : 1;
      const reply = await postReview(
        port,
        ca,
        "/validate",
        deploymentReview({
          uid: `s-${index}`,
          object: deployment("web", replicas, { labels: { team: "a" } }),
        }),
        { agent: agents[worker] as NonNullable<(typeof agents)[number]> },
      );
      return {
        right: reply.response.allowed === replicas <= 5,
        close: reply.http.headers.connection === "close",
      };
    },
  });
  await poller;
  assert.ok(signalledAt !== undefined, `the load ended before the signal (${records.length} requests)`);
  const sentAfterSignal = records.filter((r) => r.sentAt > (signalledAt ?? 0)).length;
  t.diagnostic(
    `${records.length} requests, ${sentAfterSignal} sent after SIGTERM, ${readyPolls} readiness polls`,
  );

  assert.deepEqual(
    records.filter((r) => r.error).map((r) => `${r.index}: ${r.error?.message}`),
    [],
    "requests failed during the drain",
  );
  assert.ok(
    records.every((r) => r.result?.right === true),
    "a request got the wrong answer",
  );
  assert.ok(sentAfterSignal > 0, "no request was sent during the drain");
  assert.ok(unreadyAt !== undefined && unreadyAt > (signalledAt ?? 0), "/readyz did not turn unready");
  // During the drain answers ask clients to reconnect, so keep-alive connections move elsewhere.
  const closing = records.filter((r) => r.result?.close);
  assert.ok(closing.length > 0, "no answer during the drain said connection: close");
  assert.ok(
    closing.every((r) => r.doneAt > (signalledAt ?? 0)),
    "connection: close before the drain began",
  );

  // It exits by itself once the drain is over, and cleanly; when, is the machine's business.
  const exit = await served.exited;
  assert.equal(exit.signal, null, served.stderr());
  assert.equal(exit.code, 0, served.stderr());
  assert.match(served.stderr(), /celgate stopped\n$/);
  await assert.rejects(send({ port, ca, path: "/readyz", timeoutMs: 2000 }), /ECONNREFUSED/);
});

/** A TCP port held by another listener on 127.0.0.1, released when the test ends. */
async function heldPort(t: TestContext): Promise<number> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  t.after(() => holder.close());
  return (holder.address() as AddressInfo).port;
}

for (const which of ["admission", "metrics"] as const) {
  void test(`${which} port in use: one line on stderr and exit 2, nothing left serving`, {
    timeout: 60_000,
  }, async (t) => {
    const held = await heldPort(t);
    const served = spawnServe(t, [
      "--policies",
      POLICIES,
      "--host",
      "127.0.0.1",
      "--port",
      which === "admission" ? String(held) : "0",
      "--metrics-port",
      which === "metrics" ? String(held) : "0",
    ]);
    const exit = await served.exited;
    assert.equal(exit.code, 2, served.stderr());
    const lines = served.stderr().trimEnd().split("\n");
    assert.equal(lines.at(-1), `celgate serve: ${which} port 127.0.0.1:${held} is already in use`);
    assert.doesNotMatch(served.stderr(), /^\s+at /m, "a stack trace");
    assert.doesNotMatch(served.stderr(), /celgate serving/, "it said it was serving");
  });
}

void test("a second SIGTERM during the drain exits at once", { timeout: 60_000 }, async (t) => {
  // A drain far longer than the test may run: only a second signal can end it in time.
  const served = await serve(t, [
    "--policies",
    POLICIES,
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--metrics-port",
    "0",
    "--drain-seconds",
    "3600",
  ]);
  served.child.kill("SIGTERM");
  await waitFor("readiness to turn off", async () => {
    const res = await send({ scheme: "http", port: served.metricsPort, path: "/readyz" }).catch(
      () => undefined,
    );
    return res?.status === 503 ? true : undefined;
  });
  served.child.kill("SIGTERM");
  const exit = await served.exited;
  assert.equal(exit.code, 1, served.stderr());
  assert.match(
    served.stderr(),
    /celgate stopped at once on a second signal; requests in flight were dropped\n$/,
  );
});

void test("--dry-run: check's report and exit status, and no port is opened", {
  timeout: 60_000,
}, async (t) => {
  const held = await heldPort(t);
  const good = spawnServe(t, [
    "--policies",
    POLICIES,
    "--port",
    String(held),
    "--metrics-port",
    String(held),
    "--dry-run",
  ]);
  const goodExit = await good.exited;
  assert.equal(goodExit.code, 0, good.stderr());
  assert.match(good.stdout(), /6 policies, 6 bindings, 0 problems/);

  const dir = await tempDir(t);
  await writeFile(
    join(dir, "broken.yaml"),
    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec:\n  validations:\n  - expression: 'object.spec.replicas <'\n",
  );
  const bad = spawnServe(t, ["--policies", dir, "--dry-run"]);
  const badExit = await bad.exited;
  assert.equal(badExit.code, 1, bad.stdout() + bad.stderr());
  assert.match(bad.stdout(), /broken\.yaml:\d+:\d+: error: /);
});
