/**
 * What the admission port accepts of TLS (issue 28 item 9): TLS 1.2 only with ECDHE and an AEAD
 * cipher (no CBC suites with SHA-1 MACs), no client-initiated renegotiation (Go's server refuses it
 * too: crypto/tls conn.go), and failed handshakes — a client certificate refused above all — logged
 * at most once per reason per interval and counted.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, type TLSSocket } from "node:tls";
import { handshakeFailure, logHandshakeFailures } from "../../../src/adapters/server/handshake-log.ts";
import { serverLog } from "../../../src/adapters/server/server-log.ts";
import { createTestAuthority } from "../../helpers/certs.ts";
import { FixedAdmitter, logLines, serverCert, startServer } from "./fakes.ts";

function handshake(port: number, options: Record<string, unknown>): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca: serverCert.cert, ...options });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("handshake timed out"));
    }, 5000);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

void test("TLS 1.2: ECDHE with AES-GCM is served, a CBC suite with a SHA-1 MAC is not offered", async (t) => {
  const { port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const gcm = await handshake(port, { maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256" });
  assert.equal(gcm.getCipher().name, "ECDHE-ECDSA-AES128-GCM-SHA256");
  gcm.destroy();
  for (const cbc of ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA"])
    await assert.rejects(
      handshake(port, { maxVersion: "TLSv1.2", ciphers: cbc }),
      /handshake failure|no shared cipher|alert/,
    );
});

void test("a client's renegotiation is refused", async (t) => {
  const { port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const socket = await handshake(port, { maxVersion: "TLSv1.2" });
  t.after(() => socket.destroy());
  const refused = await new Promise<Error | undefined>((resolve) => {
    socket.on("error", (e) => resolve(e));
    const started = socket.renegotiate({ rejectUnauthorized: false }, (e) => resolve(e ?? undefined));
    if (!started) resolve(new Error("renegotiate() refused to start"));
  });
  assert.ok(refused instanceof Error, "renegotiation was accepted");
  assert.match(refused.message, /no renegotiation|handshake failure|alert/);
});

void test("client certificates turned away are logged once per interval with a reason, and all counted", async (t) => {
  const authority = createTestAuthority();
  const { lines, stream } = logLines();
  const { port, registry } = await startServer(t, {
    admitter: () => new FixedAdmitter(),
    tls: { cert: serverCert.cert, key: serverCert.key, ca: authority.cert },
    logger: { level: "info", stream },
  });
  const stranger = createTestAuthority("someone else").issueClient("kube-apiserver");
  for (let i = 0; i < 3; i++) {
    const s = await handshake(port, {}).catch(() => undefined);
    // TLS 1.3 tells the client after its side of the handshake: wait for the server's refusal.
    if (s) await new Promise((r) => s.once("close", r).once("error", r).resume());
  }
  for (let i = 0; i < 2; i++) {
    const s = await handshake(port, { cert: stranger.cert, key: stranger.key }).catch(() => undefined);
    if (s) await new Promise((r) => s.once("close", r).once("error", r).resume());
  }
  const warnings = lines.map((l) => JSON.parse(l)).filter((e) => e.event === "tls-handshake-failed");
  assert.deepEqual(
    warnings.map((w) => [w.level, w.reason]),
    [
      [40, "no_client_certificate"],
      [40, "untrusted_client_certificate"],
    ],
  );
  assert.equal(warnings[0]?.peer, "127.0.0.1");
  const text = await registry.metrics();
  assert.match(text, /^celgate_tls_handshake_failures_total\{reason="no_client_certificate"\} 3$/m);
  assert.match(text, /^celgate_tls_handshake_failures_total\{reason="untrusted_client_certificate"\} 2$/m);
});

void test("the rate limit: a reason logs again after the interval, with how many it held back", () => {
  let now = 0;
  const seen: Record<string, unknown>[] = [];
  const log = { ...serverLog(false), warn: (fields: Record<string, unknown>) => seen.push(fields) };
  const listeners: ((e: Error, s: { remoteAddress: string }) => void)[] = [];
  const server = { on: (_: string, f: (typeof listeners)[number]) => listeners.push(f) };
  logHandshakeFailures(server as never, log as never, { everyMs: 10_000, now: () => now });
  const fire = (): void => {
    for (const f of listeners)
      f(new Error("peer did not return a certificate"), { remoteAddress: "10.0.0.1" });
  };
  fire();
  now = 5000;
  fire();
  fire();
  now = 10_001;
  fire();
  assert.deepEqual(
    seen.map((s) => [s.reason, s.suppressed]),
    [
      ["no_client_certificate", undefined],
      ["no_client_certificate", 2],
    ],
  );
});

void test("failure reasons come from a fixed set", () => {
  const cases: [Error & { code?: string }, string][] = [
    [new Error("peer did not return a certificate"), "no_client_certificate"],
    [
      Object.assign(new Error("x"), { code: "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED" }),
      "no_client_certificate",
    ],
    [new Error("certificate verify failed"), "untrusted_client_certificate"],
    [new Error("tlsv1 alert unknown ca"), "untrusted_client_certificate"],
    [new Error("TLS handshake timeout"), "timeout"],
    [Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), "reset"],
    [new Error("wrong version number (SSL routines)"), "protocol"],
    [new Error("something else"), "other"],
  ];
  for (const [error, reason] of cases) assert.equal(handshakeFailure(error), reason, error.message);
});
