import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { connect } from "node:tls";
import {
  certificateExpiry,
  generateSelfSignedCertificate,
  ipBytes,
  loadTlsMaterial,
} from "../../../src/adapters/server/tls.ts";

const HOSTS = ["localhost", "127.0.0.1", "::1"];
const ec = generateSelfSignedCertificate({ hosts: HOSTS, days: 30 });
const rsa = generateSelfSignedCertificate({ hosts: HOSTS, days: 30, keyType: "rsa" });

const dir = mkdtempSync(join(tmpdir(), "celgate-tls-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

for (const [label, pair] of [
  ["ec", ec],
  ["rsa", rsa],
] as const) {
  test(`${label}: the certificate parses, is self-signed and names the hosts`, () => {
    const x509 = new X509Certificate(pair.cert);
    assert.equal(x509.subject, "O=celgate\nCN=localhost");
    assert.equal(x509.issuer, x509.subject);
    assert.equal(x509.subjectAltName, "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1");
    assert.ok(x509.verify(createPublicKey(pair.key)), "signature verifies with its own key");
    assert.ok(x509.checkPrivateKey(createPrivateKey(pair.key)));
    assert.equal(x509.ca, true);
    assert.deepEqual(x509.keyUsage, ["1.3.6.1.5.5.7.3.1"]);
    assert.equal(x509.checkHost("localhost"), "localhost");
    assert.equal(x509.checkIP("127.0.0.1"), "127.0.0.1");
    assert.equal(x509.checkIP("::1"), "::1");
    assert.equal(x509.checkHost("example.com"), undefined);
  });
}

test("validity runs from just before now for the requested days", () => {
  const now = new Date("2030-06-01T12:00:00.750Z");
  const { cert } = generateSelfSignedCertificate({ hosts: ["svc.ns.svc"], days: 10, now });
  const x509 = new X509Certificate(cert);
  const from = new Date(x509.validFrom).getTime();
  assert.ok(from <= now.getTime() && from >= now.getTime() - 60 * 60 * 1000, x509.validFrom);
  assert.equal(certificateExpiry(cert).toISOString(), "2030-06-11T12:00:00.000Z");
});

test("dates from 2050 on are encoded as GeneralizedTime and still read back", () => {
  const { cert } = generateSelfSignedCertificate({
    hosts: ["a.example"],
    days: 1,
    now: new Date("2055-01-01T00:00:00Z"),
  });
  assert.equal(certificateExpiry(cert).toISOString(), "2055-01-02T00:00:00.000Z");
});

test("every certificate gets a fresh key and serial", () => {
  const a = new X509Certificate(generateSelfSignedCertificate({ hosts: ["x"], days: 1 }).cert);
  const b = new X509Certificate(generateSelfSignedCertificate({ hosts: ["x"], days: 1 }).cert);
  assert.notEqual(a.serialNumber, b.serialNumber);
  assert.notEqual(a.fingerprint256, b.fingerprint256);
});

test("bad options are refused", () => {
  assert.throws(() => generateSelfSignedCertificate({ hosts: [], days: 1 }), /at least one host/);
  assert.throws(
    () => generateSelfSignedCertificate({ hosts: ["x"], days: 0 }),
    /days must be a positive number/,
  );
  assert.throws(
    () => generateSelfSignedCertificate({ hosts: ["bad host"], days: 1 }),
    /not a DNS name or IP/,
  );
});

test("IPv6 text becomes the right 16 bytes", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["::1", "00000000000000000000000000000001"],
    ["::", "00000000000000000000000000000000"],
    ["fe80::1:2", "fe800000000000000000000000010002"],
    ["1:2:3:4:5:6:7:8", "00010002000300040005000600070008"],
    ["::ffff:10.0.0.1", "00000000000000000000ffff0a000001"],
    ["10.1.2.3", "0a010203"],
  ];
  for (const [text, hex] of cases) assert.equal(ipBytes(text).toString("hex"), hex, text);
});

interface HandshakeOptions {
  /** What the client trusts; the server's own certificate unless given. */
  readonly ca?: string;
  /** SNI and identity name; without it the client checks the certificate against 127.0.0.1. */
  readonly servername?: string;
}

/** Serves `pair` on 127.0.0.1, makes one HTTPS request with a verifying client, and shuts down. */
async function handshake(
  pair: { cert: string; key: string },
  options: HandshakeOptions,
): Promise<{ authorized: boolean; body: string }> {
  const server = createServer({ cert: pair.cert, key: pair.key }, (_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve, reject) => {
      const socket = connect(
        {
          host: "127.0.0.1",
          port,
          ca: options.ca ?? pair.cert,
          ...(options.servername !== undefined ? { servername: options.servername } : {}),
        },
        () => {
          const authorized = socket.authorized;
          socket.write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
          let data = "";
          socket.on("data", (chunk: Buffer) => {
            data += chunk.toString();
          });
          socket.on("end", () => resolve({ authorized, body: data.split("\r\n\r\n")[1] ?? "" }));
        },
      );
      socket.setTimeout(5000, () => socket.destroy(new Error("TLS exchange timed out")));
      socket.on("error", reject);
    });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

for (const [label, pair] of [
  ["ec", ec],
  ["rsa", rsa],
] as const) {
  for (const servername of ["localhost", undefined]) {
    test(`${label}: a real TLS handshake on 127.0.0.1 verifies (identity ${servername ?? "127.0.0.1"})`, {
      timeout: 10_000,
    }, async () => {
      const result = await handshake(pair, servername !== undefined ? { servername } : {});
      assert.equal(result.authorized, true);
      assert.equal(result.body, "ok");
    });
  }
}

test("the handshake fails for a host the certificate does not name", { timeout: 10_000 }, async () => {
  await assert.rejects(handshake(ec, { servername: "example.com" }), {
    code: "ERR_TLS_CERT_ALTNAME_INVALID",
  });
});

test("the handshake fails when the client trusts another certificate", { timeout: 10_000 }, async () => {
  const other = generateSelfSignedCertificate({ hosts: HOSTS, days: 1 });
  await assert.rejects(handshake(ec, { ca: other.cert, servername: "localhost" }), {
    code: "DEPTH_ZERO_SELF_SIGNED_CERT",
  });
});

test("openssl, when installed, accepts the certificates under -x509_strict", (t) => {
  let version: string;
  try {
    version = execFileSync("openssl", ["version"], { timeout: 5000 }).toString();
  } catch {
    t.skip("openssl is not installed");
    return;
  }
  for (const [label, pair] of [
    ["ec", ec],
    ["rsa", rsa],
  ] as const) {
    const path = file(`strict-${label}.crt`, pair.cert);
    const out = execFileSync(
      "openssl",
      ["verify", "-x509_strict", "-purpose", "sslserver", "-CAfile", path, path],
      { timeout: 5000 },
    ).toString();
    assert.equal(out.trim(), `${path}: OK`, `${label} with ${version}`);
  }
});

test("loadTlsMaterial reads a matching pair", () => {
  const result = loadTlsMaterial(file("ok.crt", ec.cert), file("ok.key", ec.key));
  assert.ok(result.ok, result.ok ? "" : result.error.message);
  assert.equal(result.value.cert, ec.cert);
  assert.equal(result.value.key, ec.key);
  assert.equal(
    result.value.subjectAltName,
    "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1",
  );
  assert.equal(result.value.notAfter.getTime(), certificateExpiry(ec.cert).getTime());
});

test("loadTlsMaterial explains what is wrong", () => {
  const cert = file("c.crt", ec.cert);
  const key = file("c.key", ec.key);
  const cases: ReadonlyArray<readonly [string, string, string, RegExp]> = [
    ["missing", join(dir, "nope.crt"), key, /certificate file .*nope\.crt does not exist/],
    ["missing", cert, join(dir, "nope.key"), /private key file .*nope\.key does not exist/],
    ["not-pem", file("text.crt", "hello"), key, /holds no PEM CERTIFICATE block/],
    ["not-pem", cert, file("text.key", "hello"), /holds no PEM PRIVATE KEY block/],
    ["not-pem", key, cert, /holds no PEM CERTIFICATE block/],
    [
      "invalid",
      file("garbage.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
      key,
      /is not a valid certificate/,
    ],
    ["mismatch", cert, file("rsa.key", rsa.key), /does not match the certificate/],
    [
      "encrypted",
      cert,
      file("enc.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"),
      /is encrypted/,
    ],
  ];
  for (const [kind, certFile, keyFile, message] of cases) {
    const result = loadTlsMaterial(certFile, keyFile);
    assert.equal(result.ok, false, `${certFile} ${keyFile}`);
    if (result.ok) continue;
    assert.equal(result.error.kind, kind, result.error.message);
    assert.match(result.error.message, message);
  }
});
