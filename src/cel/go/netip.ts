/**
 * Go's net/netip (net/netip/netip.go) as far as Kubernetes' IP and CIDR libraries and net/url's
 * host check use it: ParseAddr and ParsePrefix with netip's grammar and error texts, Addr.String
 * (RFC 5952), the address-class predicates, Prefix.Contains and Prefix.Masked.
 *
 * An address is held as netip holds it: 16 bytes, an IPv4 address in its IPv4-mapped form, with
 * the family beside it. Parsers work on any string of code units; errors quote the input with the
 * caller's Go quoting (strconv.Quote of text, or of a byte string for net/url).
 */
import { quote } from "./quote.ts";

const INT64_MAX = 2n ** 63n - 1n;

/** How an error message quotes the input: `quote` for text, `quoteBytes` for a byte string. */
export type Quote = (s: string) => string;

/** An address as netip.ParseAddr returns it. */
export interface ParsedAddr {
  readonly ok: true;
  /** 16 bytes; IPv4 addresses are held in their IPv4-mapped form, as netip does. */
  readonly bytes: Uint8Array;
  readonly family: 4 | 6;
  readonly zone: string;
}

/** A parse error, with netip's message. */
export interface ParseFailure {
  readonly ok: false;
  readonly error: string;
}

function addrError(q: Quote, input: string, msg: string, at = ""): ParseFailure {
  const where = at === "" ? "" : ` (at ${q(at)})`;
  return { ok: false, error: `ParseAddr(${q(input)}): ${msg}${where}` };
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/**
 * Dotted-quad fields of `input[start, end)`, written to `out` from `outAt`. Errors name the whole
 * `input`, as netip does for an IPv4 tail inside an IPv6 address.
 */
function parseV4Fields(
  q: Quote,
  input: string,
  start: number,
  end: number,
  out: Uint8Array,
  outAt: number,
): ParseFailure | undefined {
  const s = input.slice(start, end);
  let value = 0;
  let field = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) {
      // Leading zeros are refused because other parsers read them as octal.
      if (digits === 1 && value === 0) return addrError(q, input, "IPv4 field has octet with leading zero");
      value = value * 10 + (c - 0x30);
      digits++;
      if (value > 255) return addrError(q, input, "IPv4 field has value >255");
    } else if (c === 0x2e) {
      if (i === 0 || i === s.length - 1 || s.charCodeAt(i - 1) === 0x2e) {
        return addrError(q, input, "IPv4 field must have at least one digit", s.slice(i));
      }
      if (field === 3) return addrError(q, input, "IPv4 address too long");
      out[outAt + field] = value;
      field++;
      value = 0;
      digits = 0;
    } else {
      return addrError(q, input, "unexpected character", s.slice(i));
    }
  }
  if (field < 3) return addrError(q, input, "IPv4 address too short");
  out[outAt + 3] = value;
  return undefined;
}

function parseV4(q: Quote, input: string): ParsedAddr | ParseFailure {
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  const failure = parseV4Fields(q, input, 0, input.length, bytes, 12);
  return failure ?? { ok: true, bytes, family: 4, zone: "" };
}

/**
 * netip's parseIPv6. It follows Go's function step by step (zone, leading "::", groups, an IPv4
 * tail, the expansion of "::"), so that each error comes from the same place as Go's; hence one
 * function a little over the usual length.
 */
function parseV6(q: Quote, input: string): ParsedAddr | ParseFailure {
  let s = input;
  let zone = "";
  const pct = s.indexOf("%");
  if (pct !== -1) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === "") return addrError(q, input, "zone must be a non-empty string");
  }

  const bytes = new Uint8Array(16);
  let ellipsis = -1; // byte offset where "::" stands
  if (s.startsWith("::")) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === "") return { ok: true, bytes, family: 6, zone };
  }

  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const d = hexValue(s.charCodeAt(off));
      if (d < 0) break;
      acc = acc * 16 + d;
      if (off > 3) return addrError(q, input, "each group must have 4 or less digits", s);
      if (acc > 0xffff) return addrError(q, input, "IPv6 field has value >=2^16", s);
    }
    if (off === 0) return addrError(q, input, "each colon-separated field must have at least one digit", s);

    if (off < s.length && s.charCodeAt(off) === 0x2e) {
      if (ellipsis < 0 && i !== 12) {
        return addrError(q, input, "embedded IPv4 address must replace the final 2 fields of the address", s);
      }
      if (i + 4 > 16) {
        return addrError(
          q,
          input,
          "too many hex fields to fit an embedded IPv4 at the end of the address",
          s,
        );
      }
      const end = input.length - (zone === "" ? 0 : zone.length + 1);
      const failure = parseV4Fields(q, input, end - s.length, end, bytes, i);
      if (failure) return failure;
      s = "";
      i += 4;
      break;
    }

    bytes[i] = acc >> 8;
    bytes[i + 1] = acc & 0xff;
    i += 2;

    s = s.slice(off);
    if (s === "") break;
    if (s.charCodeAt(0) !== 0x3a) return addrError(q, input, "unexpected character, want colon", s);
    if (s.length === 1) return addrError(q, input, "colon must be followed by more characters", s);
    s = s.slice(1);
    if (s.charCodeAt(0) === 0x3a) {
      if (ellipsis >= 0) return addrError(q, input, "multiple :: in address", s);
      ellipsis = i;
      s = s.slice(1);
      if (s === "") break;
    }
  }

  if (s !== "") return addrError(q, input, "trailing garbage after address", s);

  if (i < 16) {
    if (ellipsis < 0) return addrError(q, input, "address string too short");
    // Slide the groups after "::" to the end and fill the gap with zeros.
    const gap = 16 - i;
    bytes.copyWithin(ellipsis + gap, ellipsis, i);
    bytes.fill(0, ellipsis, ellipsis + gap);
  } else if (ellipsis >= 0) {
    return addrError(q, input, "the :: must expand to at least one field of zeros");
  }
  return { ok: true, bytes, family: 6, zone };
}

/** netip.ParseAddr; `q` quotes the input in messages (a byte string needs quoteBytes). */
export function parseAddr(s: string, q: Quote = quote): ParsedAddr | ParseFailure {
  // The first separator decides the family, as in netip.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) return parseV4(q, s);
    if (c === 0x3a) return parseV6(q, s);
    if (c === 0x25) return addrError(q, s, "missing IPv6 address");
  }
  return addrError(q, s, "unable to parse IP");
}

/** A prefix as netip.ParsePrefix returns it. */
export interface ParsedPrefix {
  readonly ok: true;
  readonly addr: ParsedAddr;
  readonly bits: number;
}

/** netip.ParsePrefix (without masking, which netip leaves to Masked()). */
export function parsePrefix(s: string, q: Quote = quote): ParsedPrefix | ParseFailure {
  const fail = (msg: string): ParseFailure => ({
    ok: false,
    error: `netip.ParsePrefix(${q(s)}): ${msg}`,
  });
  const slash = s.lastIndexOf("/");
  if (slash < 0) return fail("no '/'");
  const addr = parseAddr(s.slice(0, slash), q);
  if (!addr.ok) return fail(addr.error);
  if (addr.family === 6 && addr.zone !== "") return fail("IPv6 zones cannot be present in a prefix");

  const bitsText = s.slice(slash + 1);
  // Go refuses signs and leading zeros here, and strconv.Atoi fails beyond int64.
  if (!/^(?:0|[1-9][0-9]*)$/.test(bitsText) || BigInt(bitsText) > INT64_MAX) {
    return fail(`bad bits after slash: ${q(bitsText)}`);
  }
  const bits = Number(bitsText);
  if (bits > (addr.family === 4 ? 32 : 128)) return fail("prefix length out of range");
  return { ok: true, addr, bits };
}

/** Addr.Is4In6. */
export function isV4Mapped(a: ParsedAddr): boolean {
  return a.family === 6 && isV4MappedBytes(a.bytes);
}

/** Whether 16 bytes hold an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
export function isV4MappedBytes(bytes: Uint8Array): boolean {
  return isZeroRange(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
}

function isZeroRange(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Addresses and prefixes: netip.Addr's String and predicates, netip.Prefix's Contains and Masked.

/** Offset in bits of an address's own bits within the 16-byte form. */
function bitOffset(family: 4 | 6): number {
  return family === 4 ? 96 : 0;
}

/** Whether the `bits` leading bits of two same-family addresses agree. */
export function leadingBitsEqual(a: Uint8Array, b: Uint8Array, family: 4 | 6, bits: number): boolean {
  let from = bitOffset(family);
  const to = from + bits;
  for (; from + 8 <= to; from += 8) if (a[from >> 3] !== b[from >> 3]) return false;
  if (from < to) {
    const mask = (0xff << (8 - (to - from))) & 0xff;
    return (((a[from >> 3] as number) ^ (b[from >> 3] as number)) & mask) === 0;
  }
  return true;
}

function formatV4(bytes: Uint8Array): string {
  return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
}

/** Addr.String(): RFC 5952 text as Go prints it: lowercase, no leading zeros, `::` for the first longest run of 2+ zero groups. */
function formatV6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  let runStart = -1;
  let runLength = 1; // a single zero group is never compressed
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > runLength) {
      runStart = i;
      runLength = j - i;
    }
    i = j;
  }
  if (runStart < 0) return groups.map((g) => g.toString(16)).join(":");
  const head = groups.slice(0, runStart).map((g) => g.toString(16));
  const tail = groups.slice(runStart + runLength).map((g) => g.toString(16));
  return `${head.join(":")}::${tail.join(":")}`;
}

/** Addr.String() of a 16-byte address of the given family. */
export function addrString(bytes: Uint8Array, family: 4 | 6): string {
  return family === 4 ? formatV4(bytes) : formatV6(bytes);
}

/** Addr.IsUnspecified: 0.0.0.0 or ::. */
export function isUnspecified(bytes: Uint8Array, family: 4 | 6): boolean {
  return isZeroRange(bytes, family === 4 ? 12 : 0, 16);
}

/** Addr.IsLoopback: 127.0.0.0/8 or ::1. */
export function isLoopback(bytes: Uint8Array, family: 4 | 6): boolean {
  if (family === 4) return bytes[12] === 127;
  return isZeroRange(bytes, 0, 15) && bytes[15] === 1;
}

/** Addr.IsMulticast: 224.0.0.0/4 or ff00::/8. */
export function isMulticast(bytes: Uint8Array, family: 4 | 6): boolean {
  if (family === 4) return ((bytes[12] as number) & 0xf0) === 0xe0;
  return bytes[0] === 0xff;
}

/** Addr.IsLinkLocalMulticast: 224.0.0.0/24, or ff02::/16 with any flag bits (ff12::, ff32:: ...). */
export function isLinkLocalMulticast(bytes: Uint8Array, family: 4 | 6): boolean {
  if (family === 4) return bytes[12] === 224 && bytes[13] === 0 && bytes[14] === 0;
  return bytes[0] === 0xff && ((bytes[1] as number) & 0x0f) === 0x02;
}

/** Addr.IsLinkLocalUnicast: 169.254.0.0/16 or fe80::/10. */
export function isLinkLocalUnicast(bytes: Uint8Array, family: 4 | 6): boolean {
  if (family === 4) return bytes[12] === 169 && bytes[13] === 254;
  return bytes[0] === 0xfe && ((bytes[1] as number) & 0xc0) === 0x80;
}

/** Addr.IsGlobalUnicast: private and ULA ranges count as global. */
export function isGlobalUnicast(bytes: Uint8Array, family: 4 | 6): boolean {
  if (isUnspecified(bytes, family)) return false;
  if (family === 4 && bytes.subarray(12).every((b) => b === 0xff)) return false;
  return !isLoopback(bytes, family) && !isMulticast(bytes, family) && !isLinkLocalUnicast(bytes, family);
}

/** Prefix.Masked's address: the bits after the first `bits` of the family's own bits cleared. */
export function maskedBytes(bytes: Uint8Array, family: 4 | 6, bits: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  for (let bit = bitOffset(family) + bits; bit < 128; bit++) {
    out[bit >> 3] = (out[bit >> 3] as number) & ~(0x80 >> (bit & 7));
  }
  return out;
}
