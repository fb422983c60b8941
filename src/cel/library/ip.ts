/**
 * The Kubernetes IP and CIDR libraries (`ip`, `isIP`, `ip.isCanonical`, `cidr`, `isCIDR` and the
 * `net.IP` / `net.CIDR` members), as k8s.io/apiserver/pkg/cel/library/ip.go and cidr.go define them.
 *
 * Kubernetes parses with Go's net/netip, and its error messages embed netip's own texts, so the
 * parsers below reproduce netip's grammar and its messages (quoted the way Go's strconv.Quote does).
 * IPv4-mapped IPv6 addresses and zones parse in netip but Kubernetes rejects them afterwards.
 */
import { CelError, CelObject, type CelValue, INT64_MAX } from "../runtime/values.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Go-compatible quoting, so that messages match the API server's byte for byte.

const GO_ESCAPES: Readonly<Record<string, string>> = {
  "\u0007": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
};

const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's strconv.Quote: printable characters kept, everything else escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '"' || ch === "\\") {
      out += "\\" + ch;
    } else if (cp >= 0x20 && cp < 0x7f) {
      out += ch;
    } else if (cp >= 0xd800 && cp <= 0xdfff) {
      // A lone surrogate cannot reach Go as UTF-8; its JSON decoder turns it into U+FFFD.
      out += "\ufffd";
    } else if (cp >= 0x80 && GO_PRINTABLE.test(ch)) {
      out += ch;
    } else if (GO_ESCAPES[ch] !== undefined) {
      out += GO_ESCAPES[ch];
    } else if (cp < 0x20 || cp === 0x7f) {
      out += "\\x" + cp.toString(16).padStart(2, "0");
    } else if (cp < 0x10000) {
      out += "\\u" + cp.toString(16).padStart(4, "0");
    } else {
      out += "\\U" + cp.toString(16).padStart(8, "0");
    }
  }
  return out + '"';
}

// ---------------------------------------------------------------------------------------------
// Address parsing with net/netip's grammar and messages.

interface ParsedAddr {
  readonly ok: true;
  /** 16 bytes; IPv4 addresses are held in their IPv4-mapped form, as netip does. */
  readonly bytes: Uint8Array;
  readonly family: 4 | 6;
  readonly zone: string;
}

interface ParseFailure {
  readonly ok: false;
  readonly error: string;
}

function addrError(input: string, msg: string, at = ""): ParseFailure {
  const where = at === "" ? "" : ` (at ${goQuote(at)})`;
  return { ok: false, error: `ParseAddr(${goQuote(input)}): ${msg}${where}` };
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
      if (digits === 1 && value === 0) return addrError(input, "IPv4 field has octet with leading zero");
      value = value * 10 + (c - 0x30);
      digits++;
      if (value > 255) return addrError(input, "IPv4 field has value >255");
    } else if (c === 0x2e) {
      if (i === 0 || i === s.length - 1 || s.charCodeAt(i - 1) === 0x2e) {
        return addrError(input, "IPv4 field must have at least one digit", s.slice(i));
      }
      if (field === 3) return addrError(input, "IPv4 address too long");
      out[outAt + field] = value;
      field++;
      value = 0;
      digits = 0;
    } else {
      return addrError(input, "unexpected character", s.slice(i));
    }
  }
  if (field < 3) return addrError(input, "IPv4 address too short");
  out[outAt + 3] = value;
  return undefined;
}

function parseV4(input: string): ParsedAddr | ParseFailure {
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  const failure = parseV4Fields(input, 0, input.length, bytes, 12);
  return failure ?? { ok: true, bytes, family: 4, zone: "" };
}

function parseV6(input: string): ParsedAddr | ParseFailure {
  let s = input;
  let zone = "";
  const pct = s.indexOf("%");
  if (pct !== -1) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === "") return addrError(input, "zone must be a non-empty string");
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
      if (off > 3) return addrError(input, "each group must have 4 or less digits", s);
      if (acc > 0xffff) return addrError(input, "IPv6 field has value >=2^16", s);
    }
    if (off === 0) return addrError(input, "each colon-separated field must have at least one digit", s);

    if (off < s.length && s.charCodeAt(off) === 0x2e) {
      if (ellipsis < 0 && i !== 12) {
        return addrError(input, "embedded IPv4 address must replace the final 2 fields of the address", s);
      }
      if (i + 4 > 16) {
        return addrError(input, "too many hex fields to fit an embedded IPv4 at the end of the address", s);
      }
      const end = input.length - (zone === "" ? 0 : zone.length + 1);
      const failure = parseV4Fields(input, end - s.length, end, bytes, i);
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
    if (s.charCodeAt(0) !== 0x3a) return addrError(input, "unexpected character, want colon", s);
    if (s.length === 1) return addrError(input, "colon must be followed by more characters", s);
    s = s.slice(1);
    if (s.charCodeAt(0) === 0x3a) {
      if (ellipsis >= 0) return addrError(input, "multiple :: in address", s);
      ellipsis = i;
      s = s.slice(1);
      if (s === "") break;
    }
  }

  if (s !== "") return addrError(input, "trailing garbage after address", s);

  if (i < 16) {
    if (ellipsis < 0) return addrError(input, "address string too short");
    // Slide the groups after "::" to the end and fill the gap with zeros.
    const gap = 16 - i;
    bytes.copyWithin(ellipsis + gap, ellipsis, i);
    bytes.fill(0, ellipsis, ellipsis + gap);
  } else if (ellipsis >= 0) {
    return addrError(input, "the :: must expand to at least one field of zeros");
  }
  return { ok: true, bytes, family: 6, zone };
}

/** netip.ParseAddr. */
function parseAddr(s: string): ParsedAddr | ParseFailure {
  // The first separator decides the family, as in netip.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) return parseV4(s);
    if (c === 0x3a) return parseV6(s);
    if (c === 0x25) return addrError(s, "missing IPv6 address");
  }
  return addrError(s, "unable to parse IP");
}

interface ParsedPrefix {
  readonly ok: true;
  readonly addr: ParsedAddr;
  readonly bits: number;
}

/** netip.ParsePrefix (without masking, which netip leaves to Masked()). */
function parsePrefix(s: string): ParsedPrefix | ParseFailure {
  const fail = (msg: string): ParseFailure => ({
    ok: false,
    error: `netip.ParsePrefix(${goQuote(s)}): ${msg}`,
  });
  const slash = s.lastIndexOf("/");
  if (slash < 0) return fail("no '/'");
  const addr = parseAddr(s.slice(0, slash));
  if (!addr.ok) return fail(addr.error);
  if (addr.family === 6 && addr.zone !== "") return fail("IPv6 zones cannot be present in a prefix");

  const bitsText = s.slice(slash + 1);
  // Go refuses signs and leading zeros here, and strconv.Atoi fails beyond int64.
  if (!/^(?:0|[1-9][0-9]*)$/.test(bitsText) || BigInt(bitsText) > INT64_MAX) {
    return fail(`bad bits after slash: ${goQuote(bitsText)}`);
  }
  const bits = Number(bitsText);
  if (bits > (addr.family === 4 ? 32 : 128)) return fail("prefix length out of range");
  return { ok: true, addr, bits };
}

function isV4Mapped(a: ParsedAddr): boolean {
  return a.family === 6 && isV4MappedBytes(a.bytes);
}

function isV4MappedBytes(bytes: Uint8Array): boolean {
  return isZeroRange(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
}

function isZeroRange(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Kubernetes' checks on top of netip (library/ip.go parseIPAddr, library/cidr.go parseCIDR).

function k8sParseIP(raw: string): ParsedAddr | ParseFailure {
  const a = parseAddr(raw);
  if (!a.ok) {
    return {
      ok: false,
      error: `IP Address ${goQuote(raw)} parse error during conversion from string: ${a.error}`,
    };
  }
  if (a.zone !== "") return { ok: false, error: `IP address ${goQuote(raw)} with zone value is not allowed` };
  if (isV4Mapped(a)) return { ok: false, error: `IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed` };
  return a;
}

const CIDR_PARSE_PREFIX = "network address parse error during conversion from string: ";

function k8sParseCIDR(raw: string): ParsedPrefix | ParseFailure {
  const p = parsePrefix(raw);
  if (!p.ok) return { ok: false, error: CIDR_PARSE_PREFIX + p.error };
  if (isV4Mapped(p.addr))
    return { ok: false, error: `IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed` };
  return p;
}

// ---------------------------------------------------------------------------------------------
// Values.

/** Offset in bits of an address's own bits within the 16-byte form. */
function bitOffset(family: 4 | 6): number {
  return family === 4 ? 96 : 0;
}

/** Whether the `bits` leading bits of two same-family addresses agree. */
function leadingBitsEqual(a: Uint8Array, b: Uint8Array, family: 4 | 6, bits: number): boolean {
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

/** RFC 5952 text as Go prints it: lowercase, no leading zeros, `::` for the first longest run of 2+ zero groups. */
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

/** A `net.IP` value: an IPv4 or IPv6 address without zone. */
export class IPValue extends CelObject {
  readonly celType = "net.IP";
  /** The 16-byte form, IPv4 addresses in their IPv4-mapped form as netip holds them; read-only. */
  readonly bytes: Uint8Array;
  private readonly text: string;

  /** `bytes` (16 of them) is copied. IPv4-mapped IPv6 addresses are refused, as Kubernetes never makes them. */
  constructor(
    bytes: Uint8Array,
    readonly family: 4 | 6,
  ) {
    super();
    if (bytes.length !== 16) throw new RangeError("an IP address is held in 16 bytes");
    if (family === 6 && isV4MappedBytes(bytes))
      throw new RangeError("IPv4-mapped IPv6 addresses are not IP values");
    this.bytes = Uint8Array.from(bytes);
    this.text = family === 4 ? formatV4(this.bytes) : formatV6(this.bytes);
  }

  /** Parses with Kubernetes' rules; throws a CelError with the API server's message. */
  static parse(s: string): IPValue {
    const a = k8sParseIP(s);
    if (!a.ok) throw new CelError(a.error);
    return new IPValue(a.bytes, a.family);
  }

  static isValid(s: string): boolean {
    return k8sParseIP(s).ok;
  }

  get isUnspecified(): boolean {
    return isZeroRange(this.bytes, this.family === 4 ? 12 : 0, 16);
  }

  get isLoopback(): boolean {
    if (this.family === 4) return this.bytes[12] === 127;
    return isZeroRange(this.bytes, 0, 15) && this.bytes[15] === 1;
  }

  get isMulticast(): boolean {
    if (this.family === 4) return ((this.bytes[12] as number) & 0xf0) === 0xe0;
    return this.bytes[0] === 0xff;
  }

  get isLinkLocalMulticast(): boolean {
    if (this.family === 4) return this.bytes[12] === 224 && this.bytes[13] === 0 && this.bytes[14] === 0;
    // ff02::/16 with any flag bits (ff12::, ff32:: ...), as netip checks it.
    return this.bytes[0] === 0xff && ((this.bytes[1] as number) & 0x0f) === 0x02;
  }

  get isLinkLocalUnicast(): boolean {
    if (this.family === 4) return this.bytes[12] === 169 && this.bytes[13] === 254;
    return this.bytes[0] === 0xfe && ((this.bytes[1] as number) & 0xc0) === 0x80;
  }

  /** netip's IsGlobalUnicast: private and ULA ranges count as global. */
  get isGlobalUnicast(): boolean {
    if (this.family === 4) {
      const allOnes = this.bytes.subarray(12).every((b) => b === 0xff);
      if (this.isUnspecified || allOnes) return false;
    } else if (this.isUnspecified) {
      return false;
    }
    return !this.isLoopback && !this.isMulticast && !this.isLinkLocalUnicast;
  }

  equals(other: CelValue): boolean {
    return (
      other instanceof IPValue &&
      other.family === this.family &&
      this.bytes.every((b, i) => other.bytes[i] === b)
    );
  }

  override toString(): string {
    return this.text;
  }

  toJSON(): string {
    return this.text;
  }
}

/** A `net.CIDR` value: an address and a prefix length; host bits are kept (see masked()). */
export class CIDRValue extends CelObject {
  readonly celType = "net.CIDR";

  constructor(
    readonly ip: IPValue,
    readonly prefixLength: number,
  ) {
    super();
    const max = ip.family === 4 ? 32 : 128;
    if (!Number.isInteger(prefixLength) || prefixLength < 0 || prefixLength > max) {
      throw new RangeError(`prefix length ${prefixLength} out of range for IPv${ip.family}`);
    }
  }

  /** Parses with Kubernetes' rules; throws a CelError with the API server's message. */
  static parse(s: string): CIDRValue {
    const p = k8sParseCIDR(s);
    if (!p.ok) throw new CelError(CIDR_PARSE_PREFIX + p.error);
    return new CIDRValue(new IPValue(p.addr.bytes, p.addr.family), p.bits);
  }

  static isValid(s: string): boolean {
    return k8sParseCIDR(s).ok;
  }

  /** The network: host bits cleared. */
  masked(): CIDRValue {
    const bytes = Uint8Array.from(this.ip.bytes);
    const firstHostBit = bitOffset(this.ip.family) + this.prefixLength;
    for (let bit = firstHostBit; bit < 128; bit++) {
      bytes[bit >> 3] = (bytes[bit >> 3] as number) & ~(0x80 >> (bit & 7));
    }
    return new CIDRValue(new IPValue(bytes, this.ip.family), this.prefixLength);
  }

  /** Addresses of the other family are never contained. */
  containsIP(ip: IPValue): boolean {
    return (
      ip.family === this.ip.family && leadingBitsEqual(this.ip.bytes, ip.bytes, ip.family, this.prefixLength)
    );
  }

  /**
   * Whether `other` lies within this network. Kubernetes before 1.33 compared `other`'s unmasked
   * address (kubernetes#130441); this follows the fixed behaviour.
   */
  containsCIDR(other: CIDRValue): boolean {
    return (
      other.ip.family === this.ip.family &&
      this.prefixLength <= other.prefixLength &&
      leadingBitsEqual(this.ip.bytes, other.ip.bytes, this.ip.family, this.prefixLength)
    );
  }

  equals(other: CelValue): boolean {
    return other instanceof CIDRValue && other.prefixLength === this.prefixLength && other.ip.equals(this.ip);
  }

  override toString(): string {
    return `${this.ip.toString()}/${this.prefixLength}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

// ---------------------------------------------------------------------------------------------
// The library. Costs follow Kubernetes' library/cost.go (CallCost), minus the base cost of 1.

const TRAVERSAL = 0.1;

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** cel-go sizes a string by its code points. */
function traversal(s: string, factor = 1): number {
  return Math.ceil(runeCount(s) * factor * TRAVERSAL);
}

/** Kubernetes sizes a CIDR by its prefix length in bytes. */
function cidrSize(c: CIDRValue): number {
  return Math.ceil(c.prefixLength / 8);
}

/** Extra units over the evaluator's base cost of 1 (Kubernetes replaces the base, it does not add to it). */
function beyondBase(total: number): number {
  return Math.max(0, total - 1);
}

const containsBase = (c: CIDRValue): number => Math.ceil((cidrSize(c) + cidrSize(c)) * TRAVERSAL);
const containsCIDRBase = (c: CIDRValue): number => containsBase(c) + Math.ceil(cidrSize(c) * TRAVERSAL) + 1;

export const ipLibrary: Library = {
  name: "kubernetes.net",
  availability: "kubernetes",
  functions: [
    fn(
      "ip",
      globalFn(
        "string_to_ip",
        ["string"],
        "net.IP",
        (s: string) => IPValue.parse(s),
        (s: string) => beyondBase(traversal(s)),
      ),
      memberFn("cidr_ip", ["net.CIDR"], "net.IP", (c: CIDRValue) => c.ip),
    ),
    fn(
      "isIP",
      globalFn(
        "is_ip",
        ["string"],
        "bool",
        (s: string) => IPValue.isValid(s),
        (s: string) => beyondBase(traversal(s)),
      ),
    ),
    fn(
      "ip.isCanonical",
      globalFn(
        "ip_is_canonical",
        ["string"],
        "bool",
        // Parse errors are errors here, not false, as in Kubernetes.
        (s: string) => IPValue.parse(s).toString() === s,
        (s: string) => beyondBase(traversal(s, 2)),
      ),
    ),
    fn(
      "family",
      memberFn("ip_family", ["net.IP"], "int", (ip: IPValue) => BigInt(ip.family)),
    ),
    fn(
      "isUnspecified",
      memberFn("ip_is_unspecified", ["net.IP"], "bool", (ip: IPValue) => ip.isUnspecified),
    ),
    fn(
      "isLoopback",
      memberFn("ip_is_loopback", ["net.IP"], "bool", (ip: IPValue) => ip.isLoopback),
    ),
    fn(
      "isLinkLocalMulticast",
      memberFn("ip_is_link_local_multicast", ["net.IP"], "bool", (ip: IPValue) => ip.isLinkLocalMulticast),
    ),
    fn(
      "isLinkLocalUnicast",
      memberFn("ip_is_link_local_unicast", ["net.IP"], "bool", (ip: IPValue) => ip.isLinkLocalUnicast),
    ),
    fn(
      "isGlobalUnicast",
      memberFn("ip_is_global_unicast", ["net.IP"], "bool", (ip: IPValue) => ip.isGlobalUnicast),
    ),
    fn(
      "string",
      globalFn("ip_to_string", ["net.IP"], "string", (ip: IPValue) => ip.toString()),
      globalFn("cidr_to_string", ["net.CIDR"], "string", (c: CIDRValue) => c.toString()),
    ),
    fn(
      "cidr",
      globalFn(
        "string_to_cidr",
        ["string"],
        "net.CIDR",
        (s: string) => CIDRValue.parse(s),
        (s: string) => beyondBase(traversal(s)),
      ),
    ),
    fn(
      "isCIDR",
      globalFn(
        "is_cidr",
        ["string"],
        "bool",
        (s: string) => CIDRValue.isValid(s),
        (s: string) => beyondBase(traversal(s)),
      ),
    ),
    fn(
      "containsIP",
      memberFn(
        "cidr_contains_ip_ip",
        ["net.CIDR", "net.IP"],
        "bool",
        (c: CIDRValue, ip: IPValue) => c.containsIP(ip),
        (c: CIDRValue) => beyondBase(containsBase(c)),
      ),
      memberFn(
        "cidr_contains_ip_string",
        ["net.CIDR", "string"],
        "bool",
        (c: CIDRValue, s: string) => {
          // Kubernetes drops the parse error here and reports a bare "no such overload"
          // (cidrContainsIP gets an error value where it expects an IP).
          const a = k8sParseIP(s);
          if (!a.ok) throw new CelError("no such overload");
          return c.containsIP(new IPValue(a.bytes, a.family));
        },
        (c: CIDRValue, s: string) => beyondBase(containsBase(c) + traversal(s)),
      ),
    ),
    fn(
      "containsCIDR",
      memberFn(
        "cidr_contains_cidr",
        ["net.CIDR", "net.CIDR"],
        "bool",
        (c: CIDRValue, other: CIDRValue) => c.containsCIDR(other),
        (c: CIDRValue) => beyondBase(containsCIDRBase(c)),
      ),
      memberFn(
        "cidr_contains_cidr_string",
        ["net.CIDR", "string"],
        "bool",
        // Unlike containsIP, the parse error of the argument comes through.
        (c: CIDRValue, s: string) => c.containsCIDR(CIDRValue.parse(s)),
        (c: CIDRValue, s: string) => beyondBase(containsCIDRBase(c) + traversal(s)),
      ),
    ),
    fn(
      "masked",
      memberFn("cidr_masked", ["net.CIDR"], "net.CIDR", (c: CIDRValue) => c.masked()),
    ),
    fn(
      "prefixLength",
      memberFn("cidr_prefix_length", ["net.CIDR"], "int", (c: CIDRValue) => BigInt(c.prefixLength)),
    ),
  ],
};
