/**
 * A test certificate authority and the client certificates it signs, for mutual-TLS tests.
 * The server only makes self-signed *server* certificates (serverAuth), and a TLS server checks a
 * client certificate for the clientAuth purpose, so the tests issue their own with the same
 * certificate builder, ECDSA P-256 only.
 */
import { generateCertificate } from "../../src/adapters/server/tls.ts";

export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

export interface TestAuthority extends TestCertificate {
  /**
   * A client certificate (clientAuth) for `commonName`, signed by this authority. `organization`
   * is the user's group to a Kubernetes API server (`system:masters` for an administrator).
   */
  issueClient(commonName: string, organization?: string): TestCertificate;
  /** A server certificate (serverAuth) for `hosts` (DNS names and IP addresses), signed by this authority. */
  issueServer(hosts: readonly string[]): TestCertificate;
}

const ORGANIZATION = "celgate-test";

/** From an hour ago to a day from now, so a slow test run stays inside it. */
function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - 3_600_000), notAfter: new Date(now + 86_400_000) };
}

/** A fresh CA, valid for a day, that can issue client certificates. */
export function createTestAuthority(commonName = "celgate test CA"): TestAuthority {
  const ca = generateCertificate({
    subject: { organization: ORGANIZATION, commonName },
    ...validity(),
    isCA: true,
    keyUsage: ["keyCertSign", "cRLSign"],
  });
  return {
    cert: ca.cert,
    key: ca.key,
    issueClient(clientName, organization = ORGANIZATION) {
      const { cert, key } = generateCertificate({
        subject: { organization, commonName: clientName },
        ...validity(),
        isCA: false,
        keyUsage: ["digitalSignature"],
        extKeyUsage: ["clientAuth"],
        issuer: ca,
      });
      return { cert, key };
    },
    issueServer(hosts) {
      const { cert, key } = generateCertificate({
        subject: { organization: ORGANIZATION, commonName: hosts[0] ?? "server" },
        ...validity(),
        isCA: false,
        keyUsage: ["digitalSignature", "keyEncipherment"],
        extKeyUsage: ["serverAuth"],
        hosts,
        issuer: ca,
      });
      return { cert, key };
    },
  };
}
