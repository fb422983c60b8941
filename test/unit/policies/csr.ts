/**
 * For the certificate-subject-restrictions policy: PKCS#10 certificate signing requests (RFC 2986),
 * DER written by hand and signed with an ECDSA P-256 key by node:crypto, and their PEM as Go's
 * pem.Encode and openssl write it. `openssl req -verify` accepts what this writes.
 */
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";

export const MASTERS = "system:masters";

// --- DER -------------------------------------------------------------------------------------

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const sequence = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);
function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const chunk: number[] = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** ASN.1 string types Go's x509 parser reads into a Name's values. */
export const STRING_TAGS = { utf8: 0x0c, printable: 0x13, ia5: 0x16, bmp: 0x1e } as const;
export type StringType = keyof typeof STRING_TAGS;

function asn1String(type: StringType, value: string): Buffer {
  if (type === "bmp") {
    const b = Buffer.alloc(value.length * 2);
    for (let i = 0; i < value.length; i++) b.writeUInt16BE(value.charCodeAt(i), i * 2);
    return tlv(STRING_TAGS.bmp, b);
  }
  return tlv(STRING_TAGS[type], Buffer.from(value, "latin1"));
}

export interface Subject {
  readonly commonName: string;
  readonly organizations: readonly { readonly value: string; readonly type: StringType }[];
}

let keys: { readonly privateKey: KeyObject; readonly spki: Buffer } | undefined;
function signingKey(): { readonly privateKey: KeyObject; readonly spki: Buffer } {
  if (!keys) {
    const pair = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    keys = { privateKey: pair.privateKey, spki: pair.publicKey.export({ format: "der", type: "spki" }) };
  }
  return keys;
}

/** A signed PKCS#10 request, DER. */
export function csrDer(subject: Subject): Buffer {
  const { privateKey, spki } = signingKey();
  const rdns = [
    ...subject.organizations.map((o) => set(sequence(oid("2.5.4.10"), asn1String(o.type, o.value)))),
    set(sequence(oid("2.5.4.3"), asn1String("utf8", subject.commonName))),
  ];
  const info = sequence(tlv(0x02, Buffer.from([0])), sequence(...rdns), spki, tlv(0xa0));
  const signature = sign("sha256", info, privateKey);
  return sequence(info, sequence(oid("1.2.840.10045.4.3.2")), tlv(0x03, Buffer.from([0]), signature));
}

/** PEM as Go's pem.Encode and openssl write it: 64-character lines, `\n` or `\r\n`. */
export function pem(der: Buffer, eol = "\n"): string {
  const body = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE REQUEST-----${eol}${body.join(eol)}${eol}-----END CERTIFICATE REQUEST-----${eol}`;
}
