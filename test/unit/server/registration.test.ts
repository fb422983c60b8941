/**
 * What `serve --register-webhooks` checks before it writes a caBundle (src/adapters/server/registration.ts):
 * the CA must have signed the served certificate, and the certificate must name the Service's DNS
 * names (what the API server verifies: webhook/config's client for a service reference dials
 * SERVICE.NAMESPACE.svc, apiserver/pkg/util/webhook). And the flags' usage errors.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { verifiedCaBundle } from "../../../src/adapters/server/registration.ts";
import { generateCertificate } from "../../../src/adapters/server/tls.ts";
import { cli } from "../cli/fake-io.ts";

const now = Date.now();
const validity = { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + 86_400_000) };

function authority(name: string) {
  return generateCertificate({
    subject: { organization: "celgate-test", commonName: name },
    ...validity,
    isCA: true,
    keyUsage: ["keyCertSign", "cRLSign"],
  });
}

function serving(issuer: ReturnType<typeof authority>, hosts: string[]) {
  return generateCertificate({
    subject: { organization: "celgate-test", commonName: hosts[0] ?? "x" },
    ...validity,
    isCA: false,
    keyUsage: ["digitalSignature"],
    extKeyUsage: ["serverAuth"],
    hosts,
    issuer,
  });
}

void test("the caBundle is the CA, base64, only when it signed a certificate for the Service's names", () => {
  const ca = authority("ca");
  const good = serving(ca, ["svc.ns.svc", "svc.ns.svc.cluster.local"]);
  const bundle = verifiedCaBundle(ca.cert, good.cert, "svc", "ns");
  assert.ok(bundle.ok);
  assert.equal(Buffer.from(bundle.value, "base64").toString("utf8").trim(), ca.cert.trim());
  // A bundle of two CAs (a rotation) verifies through either.
  assert.ok(verifiedCaBundle(`${authority("old").cert}\n${ca.cert}`, good.cert, "svc", "ns").ok);
  const other = verifiedCaBundle(authority("other").cert, good.cert, "svc", "ns");
  assert.ok(!other.ok && /not signed by the CA given/.test(other.error));
  const wrongNames = verifiedCaBundle(ca.cert, serving(ca, ["localhost"]).cert, "svc", "ns");
  assert.ok(!wrongNames.ok && /does not name svc\.ns\.svc/.test(wrongNames.error));
  const empty = verifiedCaBundle("", good.cert, "svc", "ns");
  assert.ok(!empty.ok && /no PEM certificate/.test(empty.error));
});

void test("serve's --register-webhooks and --webhook-ca: usage errors say what is expected", async () => {
  const bad = await cli(["serve", "--policies", "policies", "--register-webhooks", "celgate"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--register-webhooks must be NAMESPACE\/SERVICE/);
  const alone = await cli(["serve", "--policies", "policies", "--webhook-ca", "ca.crt"]);
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /--webhook-ca goes with --register-webhooks/);
  const portAlone = await cli(["serve", "--policies", "policies", "--webhook-port", "8443"]);
  assert.equal(portAlone.code, 2);
  assert.match(portAlone.stderr, /--webhook-port goes with --register-webhooks/);
  for (const port of ["0", "65536", "8443x"]) {
    const r = await cli([
      "serve",
      "--policies",
      "policies",
      "--register-webhooks",
      "celgate/celgate",
      "--webhook-port",
      port,
    ]);
    assert.equal(r.code, 2, port);
    assert.match(r.stderr, new RegExp(`--webhook-port must be a port number from 1 to 65535, got '${port}'`));
  }
  const noCert = await cli([
    "serve",
    "--policies",
    "policies",
    "--register-webhooks",
    "celgate/celgate",
    "--no-cluster",
  ]);
  assert.equal(noCert.code, 2);
  assert.match(noCert.stderr, /--register-webhooks needs a cluster/);
});
