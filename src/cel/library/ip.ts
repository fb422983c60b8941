/**
 * The Kubernetes IP and CIDR libraries (`ip`, `isIP`, `ip.isCanonical`, `cidr`, `isCIDR` and the
 * `net.IP` / `net.CIDR` members), as k8s.io/apiserver/pkg/cel/library/ip.go and cidr.go define them.
 *
 * Kubernetes parses with Go's net/netip (ported in ../go/netip.ts), and its error messages embed
 * netip's own texts.
 * IPv4-mapped IPv6 addresses and zones parse in netip but Kubernetes rejects them afterwards.
 */
import { CelError, CelObject, type CelValue } from "../runtime/values.ts";
import {
  addrString,
  isGlobalUnicast,
  isLinkLocalMulticast,
  isLinkLocalUnicast,
  isLoopback,
  isMulticast,
  isUnspecified,
  isV4Mapped,
  isV4MappedBytes,
  leadingBitsEqual,
  maskedBytes,
  type ParsedAddr,
  type ParsedPrefix,
  type ParseFailure,
  parseAddr,
  parsePrefix,
} from "../go/netip.ts";
import { quote } from "../go/quote.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Kubernetes' checks on top of netip (library/ip.go parseIPAddr, library/cidr.go parseCIDR).

function k8sParseIP(raw: string): ParsedAddr | ParseFailure {
  const a = parseAddr(raw);
  if (!a.ok) {
    return {
      ok: false,
      error: `IP Address ${quote(raw)} parse error during conversion from string: ${a.error}`,
    };
  }
  if (a.zone !== "") return { ok: false, error: `IP address ${quote(raw)} with zone value is not allowed` };
  if (isV4Mapped(a)) return { ok: false, error: `IPv4-mapped IPv6 address ${quote(raw)} is not allowed` };
  return a;
}

const CIDR_PARSE_PREFIX = "network address parse error during conversion from string: ";

function k8sParseCIDR(raw: string): ParsedPrefix | ParseFailure {
  const p = parsePrefix(raw);
  if (!p.ok) return { ok: false, error: CIDR_PARSE_PREFIX + p.error };
  if (isV4Mapped(p.addr))
    return { ok: false, error: `IPv4-mapped IPv6 address ${quote(raw)} is not allowed` };
  return p;
}

// ---------------------------------------------------------------------------------------------
// Values.

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
    this.text = addrString(this.bytes, family);
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
    return isUnspecified(this.bytes, this.family);
  }

  get isLoopback(): boolean {
    return isLoopback(this.bytes, this.family);
  }

  get isMulticast(): boolean {
    return isMulticast(this.bytes, this.family);
  }

  get isLinkLocalMulticast(): boolean {
    return isLinkLocalMulticast(this.bytes, this.family);
  }

  get isLinkLocalUnicast(): boolean {
    return isLinkLocalUnicast(this.bytes, this.family);
  }

  /** netip's IsGlobalUnicast: private and ULA ranges count as global. */
  get isGlobalUnicast(): boolean {
    return isGlobalUnicast(this.bytes, this.family);
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
    const bytes = maskedBytes(this.ip.bytes, this.ip.family, this.prefixLength);
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
