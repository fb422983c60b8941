/**
 * Probes with `--client-ca` (issue 28 item 9): the admission port asks every client for a
 * certificate signed by the CA, which the kubelet's HTTP probes do not have, so `/healthz` and
 * `/readyz` are also served on the metrics port, in plain HTTP, where deploy/deployment.yaml points
 * the probes. Readiness is the same on both ports, draining included.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { generateSelfSignedCertificate } from "../../src/adapters/server/tls.ts";
import { createTestAuthority } from "../helpers/certs.ts";
import { send } from "../helpers/https.ts";
import { startTestWebhook, tempDir } from "../helpers/webhook.ts";

const POLICIES = fileURLToPath(new URL("../fixtures/webhook/policies", import.meta.url));

void test("with --client-ca the probes answer on the metrics port without a certificate", async (t) => {
  const dir = await tempDir(t);
  const pair = generateSelfSignedCertificate({ hosts: ["localhost", "127.0.0.1"], days: 1 });
  const authority = createTestAuthority();
  const client = authority.issueClient("kube-apiserver");
  await writeFile(join(dir, "tls.crt"), pair.cert);
  await writeFile(join(dir, "tls.key"), pair.key);
  await writeFile(join(dir, "ca.crt"), authority.cert);
  const { webhook, port, ca } = await startTestWebhook(t, {
    policies: [POLICIES],
    tlsCert: join(dir, "tls.crt"),
    tlsKey: join(dir, "tls.key"),
    clientCa: join(dir, "ca.crt"),
    ca: pair.cert,
    drainMs: 60_000,
  });
  const metricsPort = Number(new URL(webhook.metricsUrl).port);
  const probe = (path: string) => send({ scheme: "http", port: metricsPort, path });

  assert.equal((await probe("/healthz")).status, 200);
  const ready = await probe("/readyz");
  assert.equal(ready.status, 200);
  assert.deepEqual(JSON.parse(ready.body), { status: "ready" });
  // The admission port: a kubelet without a certificate is refused; the API server's is served.
  await assert.rejects(send({ port, ca, path: "/readyz", timeoutMs: 3000 }), /ECONNRESET|socket hang up/);
  assert.equal((await send({ port, ca, path: "/readyz", cert: client.cert, key: client.key })).status, 200);

  // Draining: readiness turns false on the metrics port too; liveness stays.
  void webhook.server.drain();
  const draining = await probe("/readyz");
  assert.equal(draining.status, 503);
  assert.match(JSON.parse(draining.body).message, /draining/);
  assert.equal((await probe("/healthz")).status, 200);
  webhook.server.abort();
});
