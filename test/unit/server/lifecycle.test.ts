import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { EventEmitter } from "node:events";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { installSignalHandlers, type TlsReloadEvent } from "../../../src/adapters/server/lifecycle.ts";
import { generateSelfSignedCertificate } from "../../../src/adapters/server/tls.ts";
import { createTestAuthority } from "../../helpers/certs.ts";
import { json, send } from "../../helpers/https.ts";
import { admissionReview, FixedAdmitter, serverCert, startServer } from "./fakes.ts";

const ca = serverCert.cert;
const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber.toUpperCase();

/** Resolves when `predicate` holds, polling; fails after `timeoutMs`. */
async function until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

void test("drain: readiness turns off at once, reviews still get real answers, then the port closes", async (t) => {
  const admitter = new FixedAdmitter();
  const { server, port } = await startServer(t, { admitter: () => admitter, drainMs: 400 });
  assert.equal((await send({ port, ca, path: "/readyz" })).status, 200);

  const drained = server.drain();
  assert.equal(server.draining, true);
  assert.equal(server.drain(), drained, "drain() is idempotent");
  const ready = await send({ port, ca, path: "/readyz" });
  assert.equal(ready.status, 503);
  assert.match(String(json(ready).message), /draining/);
  assert.equal((await send({ port, ca, path: "/healthz" })).status, 200);

  const res = await send({
    port,
    ca,
    path: "/validate/fail",
    body: admissionReview({ uid: "during-drain" }),
  });
  assert.equal(res.status, 200);
  assert.equal((json(res).response as Record<string, unknown>).uid, "during-drain");
  // Clients are told to reconnect, so their next request goes through the Service to another pod.
  assert.equal(res.headers.connection, "close");

  await drained;
  await assert.rejects(send({ port, ca, path: "/healthz", timeoutMs: 2000 }), /ECONNREFUSED/);
});

void test("close waits for a request whose body is still arriving", async (t) => {
  const admitter = new FixedAdmitter();
  const { server, port } = await startServer(t, { admitter: () => admitter });
  const body = Buffer.from(JSON.stringify(admissionReview({ uid: "slow" })));
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/validate",
        method: "POST",
        ca,
        agent: false,
        headers: { "content-type": "application/json", "content-length": body.length },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString("utf8");
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.write(body.subarray(0, 20));
    // Once the server has the first bytes, start closing, then send the rest.
    setTimeout(() => {
      closed = server.close();
      setTimeout(() => req.end(body.subarray(20)), 100);
    }, 100);
  });
  let closed: Promise<void> | undefined;
  const res = await response;
  assert.equal(res.status, 200);
  assert.equal((JSON.parse(res.text) as { response: { uid: string } }).response.uid, "slow");
  await closed;
});

/**
 * Shutdown under load, as a cluster sees it: clients send back to back, each on its own kept-alive
 * connection, and move on (to another pod, through the Service) once an answer says
 * `Connection: close`. The drain begins mid-load and closes at once: whatever each client had in
 * flight, and the request it sends on a connection kept alive before the drain, must get a real
 * answer. Nothing here depends on how fast the machine is: no request needs to arrive within a
 * drain window (the quiet period, which would close a connection whose client stopped sending, is
 * longer than the test).
 */
void test("graceful shutdown under load: 10 clients until each is told to reconnect; none fails", {
  timeout: 60_000,
}, async (t) => {
  const admitter = new FixedAdmitter();
  const { server, port } = await startServer(t, { admitter: () => admitter, drainMs: 0, quietMs: 60_000 });
  const body = admissionReview();
  let answered = 0;
  let drained: Promise<void> | undefined;
  const client = async (): Promise<{ sent: number; failures: string[]; lastSaidClose: boolean }> => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const failures: string[] = [];
    let sent = 0;
    let lastSaidClose = false;
    try {
      // Bounded: a client stops after 200 requests whatever happens.
      while (sent < 200 && !lastSaidClose) {
        sent++;
        try {
          const res = await send({
            port,
            ca,
            agent,
            path: "/validate/fail?timeout=5s",
            body,
            timeoutMs: 20_000,
          });
          const allowed = (json(res).response as { allowed?: boolean }).allowed;
          if (res.status !== 200 || allowed !== true) failures.push(`HTTP ${res.status}: ${res.body}`);
          lastSaidClose = res.headers.connection === "close";
        } catch (e) {
          failures.push(String(e));
          break;
        }
        // SIGTERM arrives once the load is running.
        if (++answered === 30) drained = server.drain();
      }
    } finally {
      agent.destroy();
    }
    return { sent, failures, lastSaidClose };
  };
  const clients = await Promise.all(Array.from({ length: 10 }, client));
  await drained;
  assert.deepEqual(
    clients.flatMap((c) => c.failures),
    [],
  );
  assert.ok(
    clients.every((c) => c.lastSaidClose),
    "a client stopped without being told to reconnect",
  );
  const sent = clients.reduce((n, c) => n + c.sent, 0);
  assert.equal(admitter.calls.length, sent, "every request sent reached the engine");
});

void test("with a ca, clients must present a certificate it signed", async (t) => {
  const authority = createTestAuthority();
  const client = authority.issueClient("kube-apiserver");
  const stranger = createTestAuthority("someone else").issueClient("kube-apiserver");
  const { port } = await startServer(t, {
    admitter: () => new FixedAdmitter(),
    tls: { cert: serverCert.cert, key: serverCert.key, ca: authority.cert },
  });
  const withCert = await send({
    port,
    ca,
    path: "/validate",
    body: admissionReview(),
    cert: client.cert,
    key: client.key,
  });
  assert.equal(withCert.status, 200);
  // Refused once the handshake is done, before any request is read (handshake-log.ts): a client
  // sees its connection closed.
  await assert.rejects(
    send({ port, ca, path: "/validate", body: admissionReview(), timeoutMs: 3000 }),
    /ECONNRESET|socket hang up|certificate required/,
  );
  await assert.rejects(
    send({ port, ca, path: "/healthz", cert: stranger.cert, key: stranger.key, timeoutMs: 3000 }),
    /ECONNRESET|socket hang up|alert/,
  );
});

void test("without a ca, no client certificate is asked for", async (t) => {
  const { port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  assert.equal((await send({ port, ca, path: "/healthz" })).status, 200);
});

void test("reloadTls: new connections see the new certificate; a bad pair keeps the old one", async (t) => {
  // A different subject: with two trusted certificates of one subject name, OpenSSL may pick the wrong one.
  const next = generateSelfSignedCertificate({ hosts: ["127.0.0.1", "localhost"], days: 2 });
  const other = generateSelfSignedCertificate({ hosts: ["localhost"], days: 1 });
  const { server, port, registry } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const trust = [serverCert.cert, next.cert];

  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: trust });
  t.after(() => agent.destroy());
  const before = await send({ port, agent, path: "/healthz" });
  assert.equal(before.peerSerial, serialOf(serverCert.cert));

  const swapped = server.reloadTls(next.cert, next.key);
  assert.equal(swapped.ok, true);
  // The open connection is not dropped; it keeps the certificate it negotiated.
  const reused = await send({ port, agent, path: "/validate", body: admissionReview() });
  assert.equal(reused.status, 200);
  assert.equal(reused.peerSerial, serialOf(serverCert.cert));
  const after = await send({ port, ca: trust, path: "/healthz" });
  assert.equal(after.peerSerial, serialOf(next.cert));
  const expiry = await registry.getSingleMetricAsString("celgate_certificate_expiry_timestamp_seconds");
  assert.match(
    expiry,
    new RegExp(` ${new Date(new X509Certificate(next.cert).validTo).getTime() / 1000}$`, "m"),
  );

  const bad = server.reloadTls(next.cert, other.key);
  assert.equal(bad.ok, false);
  assert.match(bad.ok ? "" : bad.error, /does not match/);
  const still = await send({ port, ca: trust, path: "/healthz" });
  assert.equal(still.peerSerial, serialOf(next.cert));
});

void test("watchTlsFiles follows a rotated pair and keeps serving the old one through a bad one", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "celgate-tls-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const certFile = join(dir, "tls.crt");
  const keyFile = join(dir, "tls.key");
  writeFileSync(certFile, serverCert.cert);
  writeFileSync(keyFile, serverCert.key);
  const { server, port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const events: TlsReloadEvent[] = [];
  const watcher = server.watchTlsFiles(certFile, keyFile, (e) => events.push(e), {
    debounceMs: 20,
    pollMs: 100,
  });
  t.after(() => watcher.close());

  const next = generateSelfSignedCertificate({ hosts: ["127.0.0.1"], days: 3 });
  const trust = [serverCert.cert, next.cert];
  // Replace as Kubernetes does: new files renamed into place.
  writeFileSync(join(dir, "new.crt"), next.cert);
  writeFileSync(join(dir, "new.key"), next.key);
  renameSync(join(dir, "new.key"), keyFile);
  renameSync(join(dir, "new.crt"), certFile);
  await until(() => events.some((e) => e.ok), 5000, "the reload");
  assert.equal((await send({ port, ca: trust, path: "/healthz" })).peerSerial, serialOf(next.cert));
  const reloaded = events.find((e) => e.ok);
  assert.equal(reloaded?.ok && reloaded.certificate.serialNumber.toUpperCase(), serialOf(next.cert));

  // A key that does not match: reported once, old pair kept.
  writeFileSync(keyFile, serverCert.key);
  await until(() => events.some((e) => !e.ok), 5000, "the error report");
  await new Promise((r) => setTimeout(r, 300)); // several polls
  assert.equal(events.filter((e) => !e.ok).length, 1, JSON.stringify(events));
  assert.equal((await send({ port, ca: trust, path: "/healthz" })).peerSerial, serialOf(next.cert));
});

void test("signals: the first drains then exits 0, a second exits 1 at once; uninstall removes them", async () => {
  const target = new EventEmitter();
  const exits: number[] = [];
  let release: () => void = () => {};
  let drains = 0;
  const drain = (): Promise<void> => {
    drains++;
    return new Promise<void>((resolve) => {
      release = resolve;
    });
  };
  const uninstall = installSignalHandlers(drain, { target, exit: (code) => exits.push(code) });
  assert.equal(target.listenerCount("SIGTERM"), 1);
  assert.equal(target.listenerCount("SIGINT"), 1);

  target.emit("SIGTERM");
  assert.equal(drains, 1);
  assert.deepEqual(exits, [], "no exit before the drain finishes");
  release();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(exits, [0]);
  assert.equal(target.listenerCount("SIGTERM"), 0);

  // Impatient operator: the second signal aborts what the drain waits for, then exits.
  const exits2: number[] = [];
  let aborts = 0;
  installSignalHandlers(drain, {
    target,
    exit: (code) => exits2.push(code),
    abort: () => {
      aborts++;
      assert.deepEqual(exits2, [], "abort before exit");
    },
  });
  target.emit("SIGINT");
  assert.equal(aborts, 0);
  target.emit("SIGTERM");
  assert.deepEqual(exits2, [1]);
  assert.equal(aborts, 1);
  assert.equal(drains, 2);

  const target3 = new EventEmitter();
  const remove = installSignalHandlers(drain, { target: target3, exit: () => assert.fail("no exit") });
  remove();
  assert.equal(target3.listenerCount("SIGTERM") + target3.listenerCount("SIGINT"), 0);
  uninstall();
});

void test("a failed close exits 1", async () => {
  const target = new EventEmitter();
  const exits: number[] = [];
  installSignalHandlers(() => Promise.reject(new Error("stuck")), {
    target,
    exit: (code) => exits.push(code),
  });
  target.emit("SIGTERM");
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(exits, [1]);
});
