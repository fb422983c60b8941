/**
 * A test certificate authority and the client certificates it signs, for mutual-TLS tests.
 * src/adapters/server/tls.ts only makes self-signed *server* certificates (serverAuth), and a TLS
 * server checks a client certificate for the clientAuth purpose, so the tests build their own:
 * a few DER structures (RFC 5280) signed with node:crypto, ECDSA P-256 only.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const seq = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bits = (b: Buffer, unused = 0): Buffer => tlv(0x03, Buffer.from([unused]), b);
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, "utf8"));
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);

function int(magnitude: Buffer): Buffer {
  const pad = ((magnitude[0] ?? 0) & 0x80) !== 0;
  return tlv(0x02, pad ? Buffer.from([0]) : Buffer.alloc(0), magnitude);
}

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a + b];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function utcTime(d: Date): Buffer {
  const s = d.toISOString();
  const text = `${s.slice(2, 4)}${s.slice(5, 7)}${s.slice(8, 10)}${s.slice(11, 13)}${s.slice(14, 16)}${s.slice(17, 19)}Z`;
  return tlv(0x17, Buffer.from(text, "ascii"));
}

const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));

function ext(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

function name(cn: string): Buffer {
  return seq(set(seq(oid("2.5.4.10"), utf8("celgate-test"))), set(seq(oid("2.5.4.3"), utf8(cn))));
}

function keyId(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: "jwk" });
  const point = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x ?? "", "base64url"),
    Buffer.from(jwk.y ?? "", "base64url"),
  ]);
  return createHash("sha1").update(point).digest();
}

function pem(der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

export interface TestAuthority extends TestCertificate {
  /** A client certificate (clientAuth) for `commonName`, signed by this authority. */
  issueClient(commonName: string): TestCertificate;
}

function certificate(options: {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signer: KeyObject;
  extensions: Buffer[];
}): string {
  const serial = randomBytes(12);
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
  const now = Date.now();
  const tbs = seq(
    explicit(0, int(Buffer.from([2]))),
    int(serial),
    ECDSA_SHA256,
    options.issuer,
    seq(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + 86_400_000))),
    options.subject,
    options.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, seq(...options.extensions)),
  );
  return pem(seq(tbs, ECDSA_SHA256, bits(sign("sha256", tbs, options.signer))));
}

/** A fresh CA, valid for a day, that can issue client certificates. */
export function createTestAuthority(commonName = "celgate test CA"): TestAuthority {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const caName = name(commonName);
  const caKeyId = keyId(publicKey);
  const cert = certificate({
    subject: caName,
    issuer: caName,
    publicKey,
    signer: privateKey,
    extensions: [
      ext("2.5.29.19", true, seq(bool(true))), // basicConstraints CA:TRUE
      ext("2.5.29.15", true, bits(Buffer.from([0x06]), 1)), // keyUsage keyCertSign, cRLSign
      ext("2.5.29.14", false, octets(caKeyId)),
    ],
  });
  return {
    cert,
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    issueClient(clientName) {
      const pair = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      const clientCert = certificate({
        subject: name(clientName),
        issuer: caName,
        publicKey: pair.publicKey,
        signer: privateKey,
        extensions: [
          ext("2.5.29.19", true, seq()), // basicConstraints CA:FALSE
          ext("2.5.29.15", true, bits(Buffer.from([0x80]), 7)), // keyUsage digitalSignature
          ext("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.2"))), // extKeyUsage clientAuth
          ext("2.5.29.35", false, seq(tlv(0x80, caKeyId))), // authorityKeyIdentifier
        ],
      });
      return { cert: clientCert, key: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
    },
  };
}
