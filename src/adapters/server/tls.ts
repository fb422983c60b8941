/**
 * TLS material for the webhook server: a self-signed certificate for local use and the loading of
 * a certificate/key pair from files. No X.509 package is installed, so certificates are built
 * here as DER (RFC 5280) and signed with node:crypto; it is small because a server certificate
 * (or a test CA and its client certificates) needs only a handful of fixed structures.
 */
import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { err, ok, type Result } from "../../result.ts";

// ---------------------------------------------------------------------------------------------
// DER

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

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
const octetString = (b: Buffer): Buffer => tlv(0x04, b);
const bitString = (b: Buffer, unusedBits = 0): Buffer => tlv(0x03, Buffer.from([unusedBits]), b);
const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, "utf8"));
const booleanTrue = (): Buffer => tlv(0x01, Buffer.from([0xff]));
const derNull = (): Buffer => tlv(0x05);
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);

/** A non-negative INTEGER from big-endian magnitude bytes, minimally encoded. */
function integer(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const m = magnitude.subarray(start);
  const needsPad = ((m[0] ?? 0) & 0x80) !== 0;
  return tlv(0x02, needsPad ? Buffer.from([0]) : Buffer.alloc(0), m.length === 0 ? Buffer.from([0]) : m);
}

function smallInteger(n: number): Buffer {
  const hex = n.toString(16);
  return integer(Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, "hex"));
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split(".").map(Number);
  const [a = 0, b = 0, ...rest] = arcs;
  const bytes = [40 * a + b];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime after, both to the second in UTC (RFC 5280 §4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(0x17, Buffer.from(digits.slice(2), "ascii"));
  return tlv(0x18, Buffer.from(digits, "ascii"));
}

// ---------------------------------------------------------------------------------------------
// Certificate

const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  sha256WithRsa: "1.2.840.113549.1.1.11",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

/** Upper bound on a commonName (RFC 5280 ub-common-name). */
const MAX_COMMON_NAME = 64;

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical
    ? sequence(oid(id), booleanTrue(), octetString(value))
    : sequence(oid(id), octetString(value));
}

/** IPv4 or IPv6 text to its 4 or 16 address bytes. */
export function ipBytes(address: string): Buffer {
  const family = isIP(address);
  if (family === 4) return Buffer.from(address.split(".").map(Number));
  if (family !== 6) throw new Error(`not an IP address: ${address}`);
  let text = address;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = text
      .slice(lastColon + 1)
      .split(".")
      .map(Number);
    tail = [((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0)];
    text = `${text.slice(0, lastColon + 1)}0:0`; // placeholder groups, replaced below
  }
  const [head = "", rest] = text.split("::");
  const parse = (s: string): number[] => (s === "" ? [] : s.split(":").map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  if (tail.length === 2) groups.splice(6, 2, ...tail);
  const out = Buffer.alloc(16);
  for (const [i, g] of groups.entries()) out.writeUInt16BE(g, i * 2);
  return out;
}

const DNS_NAME =
  /^(\*\.)?([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*$/;

function subjectAltName(hosts: readonly string[]): Buffer {
  const names = hosts.map((host) => {
    if (isIP(host) !== 0) return tlv(0x87, ipBytes(host)); // [7] iPAddress
    if (!DNS_NAME.test(host) || host.length > 253)
      throw new Error(`not a DNS name or IP address: ${JSON.stringify(host)}`);
    return tlv(0x82, Buffer.from(host.toLowerCase(), "ascii")); // [2] dNSName
  });
  return sequence(...names);
}

/** The subjectPublicKey bit string's contents, hashed for the subject key identifier (RFC 5280 §4.2.1.2). */
function keyIdentifier(publicKey: KeyObject): Buffer {
  let raw: Buffer;
  if (publicKey.asymmetricKeyType === "ec") {
    const jwk = publicKey.export({ format: "jwk" });
    raw = Buffer.concat([
      Buffer.from([0x04]),
      Buffer.from(jwk.x ?? "", "base64url"),
      Buffer.from(jwk.y ?? "", "base64url"),
    ]);
  } else {
    raw = publicKey.export({ type: "pkcs1", format: "der" });
  }
  return createHash("sha1").update(raw).digest();
}

function toPem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

export interface SelfSignedOptions {
  /** DNS names and IP addresses the certificate is for; the first is also the subject CN. */
  readonly hosts: readonly string[];
  /** Validity in days from now. */
  readonly days: number;
  /** ECDSA P-256 (default) or RSA 2048. */
  readonly keyType?: "ec" | "rsa";
  /** The clock, for tests. */
  readonly now?: Date;
}

export interface CertificateAndKey {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
}

/** Clients trusting it must accept a small clock skew between us and them. */
const BACKDATE_MS = 5 * 60 * 1000;

/** The bit numbers of RFC 5280's KeyUsage (§4.2.1.3) that celgate's certificates use. */
const KEY_USAGE_BITS = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

export type KeyUsage = keyof typeof KEY_USAGE_BITS;

/** A named bit list as DER wants it: trailing zero bits dropped (X.690 §11.2.2). */
function keyUsageBits(usages: readonly KeyUsage[]): Buffer {
  const bits = usages.map((u) => KEY_USAGE_BITS[u]);
  const highest = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const b of bits) bytes[b >> 3] = (bytes[b >> 3] ?? 0) | (0x80 >> (b & 7));
  return bitString(bytes, 7 - (highest % 8));
}

/** A subject or issuer name: O=organization, CN=commonName. */
export interface CertificateName {
  readonly organization: string;
  /** Cut to 64 characters, the most RFC 5280 allows. */
  readonly commonName: string;
}

function encodeName(name: CertificateName): Buffer {
  const cn = name.commonName.slice(0, MAX_COMMON_NAME);
  return sequence(
    set(sequence(oid(OID.organization), utf8String(name.organization))),
    set(sequence(oid(OID.commonName), utf8String(cn))),
  );
}

export interface CertificateOptions {
  readonly subject: CertificateName;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** basicConstraints: a CA (at most `pathLength` CAs below it, when given) or an end entity. */
  readonly isCA: boolean;
  readonly pathLength?: number;
  readonly keyUsage: readonly KeyUsage[];
  readonly extKeyUsage?: readonly ("serverAuth" | "clientAuth")[];
  /** DNS names and IP addresses, as subjectAltName entries. */
  readonly hosts?: readonly string[];
  /** The new key: ECDSA P-256 (default) or RSA 2048. */
  readonly keyType?: "ec" | "rsa";
  /** The certificate whose key signs this one; without it the certificate is self-signed. */
  readonly issuer?: GeneratedCertificate;
}

export interface GeneratedCertificate extends CertificateAndKey {
  readonly subject: CertificateName;
  readonly publicKey: KeyObject;
  readonly privateKey: KeyObject;
}

/** A v3 certificate with a fresh key pair and serial, signed by `issuer` or by itself. */
export function generateCertificate(options: CertificateOptions): GeneratedCertificate {
  const { publicKey, privateKey } =
    (options.keyType ?? "ec") === "ec"
      ? generateKeyPairSync("ec", { namedCurve: "prime256v1" })
      : generateKeyPairSync("rsa", { modulusLength: 2048 });
  const issuer = options.issuer ?? { subject: options.subject, publicKey, privateKey };
  const signatureAlgorithm =
    issuer.privateKey.asymmetricKeyType === "ec"
      ? sequence(oid(OID.ecdsaWithSha256))
      : sequence(oid(OID.sha256WithRsa), derNull());

  // Top bits 01: a positive 16-byte serial whose encoding is already minimal.
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;

  const basicConstraints = options.isCA
    ? sequence(booleanTrue(), ...(options.pathLength === undefined ? [] : [smallInteger(options.pathLength)]))
    : sequence();
  const extKeyUsage = options.extKeyUsage ?? [];
  const hosts = options.hosts ?? [];
  const issuerKeyId = options.issuer && keyIdentifier(options.issuer.publicKey);
  const extensions = sequence(
    extension(OID.basicConstraints, true, basicConstraints),
    ...(options.keyUsage.length > 0 ? [extension(OID.keyUsage, true, keyUsageBits(options.keyUsage))] : []),
    ...(extKeyUsage.length > 0
      ? [extension(OID.extKeyUsage, false, sequence(...extKeyUsage.map((u) => oid(OID[u]))))]
      : []),
    extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(publicKey))),
    // [0] keyIdentifier of AuthorityKeyIdentifier (§4.2.1.1); a self-signed certificate may omit it.
    ...(issuerKeyId ? [extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, issuerKeyId)))] : []),
    ...(hosts.length > 0 ? [extension(OID.subjectAltName, false, subjectAltName(hosts))] : []),
  );

  const tbs = sequence(
    explicit(0, smallInteger(2)), // v3
    integer(serial),
    signatureAlgorithm,
    encodeName(issuer.subject),
    sequence(time(options.notBefore), time(options.notAfter)),
    encodeName(options.subject),
    publicKey.export({ type: "spki", format: "der" }),
    explicit(3, extensions),
  );
  const signature = sign("sha256", tbs, issuer.privateKey);
  const certificate = sequence(tbs, signatureAlgorithm, bitString(signature));

  return {
    cert: toPem("CERTIFICATE", certificate),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    subject: options.subject,
    publicKey,
    privateKey,
  };
}

/**
 * A self-signed v3 server certificate valid for `hosts`. It is marked as a CA (pathLen 0) so that
 * it can be its own trust anchor in a webhook's caBundle or a client's `ca`, and carries
 * serverAuth extended key usage and the hosts as subjectAltName entries, which is what TLS
 * clients check (the CN is only informative).
 */
export function generateSelfSignedCertificate(options: SelfSignedOptions): CertificateAndKey {
  const hosts = [...new Set(options.hosts.map((h) => h.trim()).filter((h) => h !== ""))];
  const first = hosts[0];
  if (first === undefined) throw new Error("generateSelfSignedCertificate: at least one host is required");
  if (!Number.isFinite(options.days) || options.days <= 0) {
    throw new Error(`generateSelfSignedCertificate: days must be a positive number, got ${options.days}`);
  }
  const keyType = options.keyType ?? "ec";
  const nowMs = Math.floor((options.now ?? new Date()).getTime() / 1000) * 1000;
  const { cert, key } = generateCertificate({
    subject: { organization: "celgate", commonName: first },
    notBefore: new Date(nowMs - BACKDATE_MS),
    notAfter: new Date(nowMs + Math.round(options.days * 86_400) * 1000),
    isCA: true,
    pathLength: 0,
    // keyEncipherment only for RSA key exchange.
    keyUsage:
      keyType === "ec"
        ? ["digitalSignature", "keyCertSign"]
        : ["digitalSignature", "keyEncipherment", "keyCertSign"],
    extKeyUsage: ["serverAuth"],
    hosts,
    keyType,
  });
  return { cert, key };
}

/** When the (first) certificate in a PEM stops being valid. */
export function certificateExpiry(certPem: string): Date {
  const validTo = new X509Certificate(certPem).validTo;
  const date = new Date(validTo);
  if (Number.isNaN(date.getTime())) throw new Error(`certificate has an unreadable expiry: ${validTo}`);
  return date;
}

// ---------------------------------------------------------------------------------------------
// Loading

export interface TlsMaterial {
  /** The certificate file's PEM, chain included, as `https.createServer` takes it. */
  readonly cert: string;
  readonly key: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly subject: string;
  /** As X509Certificate reports it, e.g. `DNS:localhost, IP Address:127.0.0.1`. */
  readonly subjectAltName?: string;
}

export type TlsErrorKind = "missing" | "unreadable" | "not-pem" | "invalid" | "encrypted" | "mismatch";

export interface TlsError {
  readonly kind: TlsErrorKind;
  readonly file: string;
  readonly message: string;
}

function readPemFile(file: string, what: string): Result<string, TlsError> {
  try {
    return ok(readFileSync(file, "utf8"));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT")
      return err({ kind: "missing", file, message: `${what} file ${file} does not exist` });
    const detail = e instanceof Error ? e.message : String(e);
    return err({ kind: "unreadable", file, message: `${what} file ${file} cannot be read: ${detail}` });
  }
}

/**
 * Reads a certificate and private key (PEM) and checks that they belong together, so a bad pair
 * fails at startup with a sentence instead of at the first handshake with an OpenSSL code.
 */
export function loadTlsMaterial(certFile: string, keyFile: string): Result<TlsMaterial, TlsError> {
  const certText = readPemFile(certFile, "certificate");
  if (!certText.ok) return certText;
  const keyText = readPemFile(keyFile, "private key");
  if (!keyText.ok) return keyText;
  const cert = certText.value;
  const key = keyText.value;

  if (!cert.includes("-----BEGIN CERTIFICATE-----")) {
    return err({
      kind: "not-pem",
      file: certFile,
      message: `certificate file ${certFile} holds no PEM CERTIFICATE block`,
    });
  }
  if (!/-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY-----/.test(key)) {
    return err({
      kind: "not-pem",
      file: keyFile,
      message: `private key file ${keyFile} holds no PEM PRIVATE KEY block`,
    });
  }
  if (key.includes("-----BEGIN ENCRYPTED PRIVATE KEY-----") || /Proc-Type:\s*4,ENCRYPTED/.test(key)) {
    return err({
      kind: "encrypted",
      file: keyFile,
      message: `private key file ${keyFile} is encrypted; celgate needs an unencrypted key`,
    });
  }

  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    return err({
      kind: "invalid",
      file: certFile,
      message: `certificate file ${certFile} is not a valid certificate: ${detail}`,
    });
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    return err({
      kind: "invalid",
      file: keyFile,
      message: `private key file ${keyFile} is not a valid private key: ${detail}`,
    });
  }
  if (!x509.checkPrivateKey(privateKey)) {
    return err({
      kind: "mismatch",
      file: keyFile,
      message: `private key file ${keyFile} does not match the certificate in ${certFile}`,
    });
  }
  return ok({
    cert,
    key,
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    subject: x509.subject,
    ...(x509.subjectAltName !== undefined ? { subjectAltName: x509.subjectAltName } : {}),
  });
}
