/**
 * Certificate rotation with --tls-cert/--tls-key files, as cert-manager or a Secret volume does it:
 * both files are renamed into place while requests run on keep-alive connections. New
 * connections get the new certificate; connections already open keep working.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { generateSelfSignedCertificate } from "../../src/adapters/server/tls.ts";
import { send } from "../helpers/https.ts";
import {
  deployment,
  deploymentReview,
  keepAliveAgent,
  postReview,
  replaceFile,
  runLoad,
  sampleValue,
  scrape,
  sleep,
  startTestWebhook,
  tempDir,
  waitFor,
} from "../helpers/webhook.ts";

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-cap
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-cap-binding
spec:
  policyName: replica-cap
  validationActions: [Deny]
`;

const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber.toUpperCase();

void test("rotating the certificate files: new connections see the new serial, open ones keep working", {
  timeout: 60_000,
}, async (t) => {
  const dir = await tempDir(t);
  const certFile = join(dir, "tls.crt");
  const keyFile = join(dir, "tls.key");
  // Distinct subjects (the first host is the CN): OpenSSL looks trust anchors up by subject and
  // does not try a second self-signed certificate with the same name.
  const issue = (n: number, days: number) =>
    generateSelfSignedCertificate({ hosts: [`webhook-${n}.celgate.test`, "localhost", "127.0.0.1"], days });
  const first = issue(1, 10);
  const second = issue(2, 20);
  const third = issue(3, 30);
  const trusted = [first.cert, second.cert, third.cert];
  await writeFile(certFile, first.cert);
  await writeFile(keyFile, first.key);
  await writeFile(join(dir, "policy.yaml"), POLICY);

  const { webhook, port, logs } = await startTestWebhook(t, {
    policies: [join(dir, "policy.yaml")],
    tlsCert: certFile,
    tlsKey: keyFile,
    ca: first.cert,
  });
  assert.equal(webhook.generatedCert, undefined);
  const fresh = async () => (await send({ port, ca: trusted, path: "/healthz" })).peerSerial;
  assert.equal(await fresh(), serialOf(first.cert));

  const workers = 4;
  const agents = Array.from({ length: workers }, () => keepAliveAgent(trusted));
  t.after(() => {
    for (const a of agents) a.destroy();
  });
  let stop = false;
  const review = (uid: string) => deploymentReview({ uid, object: deployment("web", 7) });
  const load = runLoad<string | undefined>({
    workers,
    maxRequests: 5000,
    maxMs: 20_000,
    pauseMs: 5,
    shouldStop: () => stop,
    request: async (index, worker) => {
      const agent = agents[worker] as NonNullable<(typeof agents)[number]>;
      const reply = await postReview(port, trusted, "/validate", review(`l-${index}`), { agent });
      assert.equal(reply.response.allowed, false);
      return reply.http.peerSerial;
    },
  });
  await sleep(200);

  // The key goes first: for a moment the files do not match, which must not be served.
  await replaceFile(keyFile, second.key);
  await replaceFile(certFile, second.cert);
  await waitFor("a new connection to see the new certificate", async () =>
    (await fresh()) === serialOf(second.cert) ? true : undefined,
  );
  await sleep(200);
  stop = true;
  const records = await load;

  assert.deepEqual(
    records.filter((r) => r.error).map((r) => r.error?.message),
    [],
    "requests failed during the rotation",
  );
  assert.ok(records.length >= workers * 5, `only ${records.length} requests ran`);
  // Keep-alive connections opened before the rotation keep the certificate they negotiated.
  assert.ok(
    records.every((r) => r.result === serialOf(first.cert)),
    "a keep-alive connection changed certificate, so it was dropped and reopened",
  );
  const keptAlive = await postReview(port, trusted, "/validate", review("after"), {
    agent: agents[0] as NonNullable<(typeof agents)[number]>,
  });
  assert.equal(keptAlive.http.peerSerial, serialOf(first.cert));
  assert.equal(await fresh(), serialOf(second.cert));

  const notAfter = new Date(new X509Certificate(second.cert).validTo).getTime() / 1000;
  let text = await scrape(webhook.metricsUrl);
  assert.equal(sampleValue(text, "celgate_certificate_expiry_timestamp_seconds"), notAfter);
  assert.ok(logs.includes("TLS certificate reloaded"), logs.join("\n"));

  // A certificate without its key: rejected, and the current pair keeps serving.
  await replaceFile(certFile, third.cert);
  await waitFor("the mismatched pair to be rejected", () =>
    logs.some((l) => l.startsWith("TLS certificate reload rejected")) ? true : undefined,
  );
  assert.equal(await fresh(), serialOf(second.cert));
  text = await scrape(webhook.metricsUrl);
  assert.equal(sampleValue(text, "celgate_certificate_expiry_timestamp_seconds"), notAfter);

  // Its key arrives: now it is served.
  await replaceFile(keyFile, third.key);
  await waitFor("the third certificate", async () =>
    (await fresh()) === serialOf(third.cert) ? true : undefined,
  );
});
