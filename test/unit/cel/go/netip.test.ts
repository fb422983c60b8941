/**
 * src/cel/go/netip.ts against Go's net/netip/netip_test.go: TestParseAddr's valid addresses and
 * their String(), its invalidIPs list, TestIPProperties, and ParsePrefix's messages (netip.go).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  addrString,
  isGlobalUnicast,
  isLinkLocalMulticast,
  isLinkLocalUnicast,
  isLoopback,
  isMulticast,
  isUnspecified,
  isV4Mapped,
  leadingBitsEqual,
  maskedBytes,
  type ParsedAddr,
  parseAddr,
  parsePrefix,
} from "../../../../src/cel/go/netip.ts";
import { quoteBytes } from "../../../../src/cel/go/quote.ts";
import { toByteString } from "../../../../src/cel/go/utf8.ts";

function addr(s: string): ParsedAddr {
  const a = parseAddr(s);
  if (!a.ok) assert.fail(`${s}: ${a.error}`);
  return a;
}

void test("ParseAddr and String follow TestParseAddr's validIPs", () => {
  const cases: readonly [string, string, 4 | 6, string][] = [
    ["0.0.0.0", "0.0.0.0", 4, ""],
    ["192.168.140.255", "192.168.140.255", 4, ""],
    ["::", "::", 6, ""],
    ["::1", "::1", 6, ""],
    ["fd7a:115c:a1e0:ab12:4843:cd96:626b:430b", "fd7a:115c:a1e0:ab12:4843:cd96:626b:430b", 6, ""],
    ["fd7a:115c::626b:430b", "fd7a:115c::626b:430b", 6, ""],
    ["fd7a:115c:a1e0:ab12:4843:cd96::", "fd7a:115c:a1e0:ab12:4843:cd96::", 6, ""],
    ["fd7a:115c:a1e0:ab12:4843:cd96:626b::", "fd7a:115c:a1e0:ab12:4843:cd96:626b:0", 6, ""],
    ["fd7a:115c:a1e0::4843:cd96:626b:430b", "fd7a:115c:a1e0:0:4843:cd96:626b:430b", 6, ""],
    ["fd7a:115c:a1e0:ab12:4843:cd96:626b:430b%eth0", "fd7a:115c:a1e0:ab12:4843:cd96:626b:430b", 6, "eth0"],
    ["1:2::ffff:192.168.140.255%eth1", "1:2::ffff:c0a8:8cff", 6, "eth1"],
    ["FD9E:1A04:F01D::1", "fd9e:1a04:f01d::1", 6, ""],
  ];
  for (const [input, text, family, zone] of cases) {
    const a = addr(input);
    assert.equal(a.family, family, input);
    assert.equal(a.zone, zone, input);
    // String() without the zone, which Kubernetes never keeps.
    assert.equal(addrString(a.bytes, a.family), text, input);
  }
  // The IPv4-mapped form parses as IPv6 and is recognised as such (Addr.Is4In6).
  assert.equal(isV4Mapped(addr("::ffff:192.168.140.255")), true);
  assert.equal(isV4Mapped(addr("192.168.140.255")), false);
});

void test("ParseAddr rejects TestParseAddr's invalidIPs", () => {
  const invalid = [
    "",
    "bad",
    "1234",
    "1.2.3.4%eth0",
    ".1.2.3",
    "1.2.3.",
    "1..2.3",
    "1.2.3.4.5",
    "0300.0250.0214.0377",
    "0xc0.0xa8.0x8c.0xff",
    "192.168.12345",
    "127.0.1",
    "192.1234567",
    "127.1",
    "192.168.300.1",
    "192.168.0.1.5.6",
    "1:2:3:4:5:6:7",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4::5:6:7:8",
    "fe801::1",
    "fe80:tail:scal:e::",
    "fe80::1%",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:192.168.140.255",
    "ffff::ffff:ffff:ffff:ffff:ffff:ffff:192.168.140.255",
    "::ffff:192.168.140.bad",
    "fe80::1::1",
    "fe80:1?:1",
    "fe80:",
  ];
  for (const s of invalid) assert.equal(parseAddr(s).ok, false, JSON.stringify(s));
});

void test("ParseAddr's messages name the input and where it stopped, quoted as %q", () => {
  const cases: readonly [string, string][] = [
    ["", 'ParseAddr(""): unable to parse IP'],
    ["%eth0", 'ParseAddr("%eth0"): missing IPv6 address'],
    ["010.000.015.001", 'ParseAddr("010.000.015.001"): IPv4 field has octet with leading zero'],
    ["fe80::1%", 'ParseAddr("fe80::1%"): zone must be a non-empty string'],
    ["fe80::1::1", 'ParseAddr("fe80::1::1"): multiple :: in address (at ":1")'],
    ["fe80:", 'ParseAddr("fe80:"): colon must be followed by more characters (at ":")'],
    ["1:2:3:4::5:6:7:8", 'ParseAddr("1:2:3:4::5:6:7:8"): the :: must expand to at least one field of zeros'],
  ];
  for (const [input, want] of cases) {
    const a = parseAddr(input);
    assert.equal(a.ok ? "parsed" : a.error, want, input);
  }
  // A byte string (net/url's host) is quoted byte by byte.
  const host = toByteString("\u00e9::1");
  const a = parseAddr(host, quoteBytes);
  assert.equal(
    a.ok ? "parsed" : a.error,
    'ParseAddr("é::1"): each colon-separated field must have at least one digit (at "é::1")',
  );
});

void test("ParsePrefix: netip's messages, and no masking (that is Masked's job)", () => {
  const cases: readonly [string, string][] = [
    ["1.2.3.4", "netip.ParsePrefix(\"1.2.3.4\"): no '/'"],
    ["1.2.3.4/33", 'netip.ParsePrefix("1.2.3.4/33"): prefix length out of range'],
    ["1.2.3.4/08", 'netip.ParsePrefix("1.2.3.4/08"): bad bits after slash: "08"'],
    ["fe80::1%eth0/64", 'netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix'],
    ["1.2.3/8", 'netip.ParsePrefix("1.2.3/8"): ParseAddr("1.2.3"): IPv4 address too short'],
  ];
  for (const [input, want] of cases) {
    const p = parsePrefix(input);
    assert.equal(p.ok ? "parsed" : p.error, want, input);
  }
  const p = parsePrefix("10.1.2.3/8");
  assert.ok(p.ok);
  assert.equal(p.bits, 8);
  assert.equal(addrString(p.addr.bytes, 4), "10.1.2.3");
  assert.equal(addrString(maskedBytes(p.addr.bytes, 4, 8), 4), "10.0.0.0");
  assert.equal(addrString(maskedBytes(addr("2001:db8::1").bytes, 6, 32), 6), "2001:db8::");
});

void test("the address classes follow TestIPProperties", () => {
  const classes = (s: string) => {
    const { bytes, family } = addr(s);
    return {
      unspecified: isUnspecified(bytes, family),
      loopback: isLoopback(bytes, family),
      multicast: isMulticast(bytes, family),
      llm: isLinkLocalMulticast(bytes, family),
      llu: isLinkLocalUnicast(bytes, family),
      global: isGlobalUnicast(bytes, family),
    };
  };
  const none = {
    unspecified: false,
    loopback: false,
    multicast: false,
    llm: false,
    llu: false,
    global: false,
  };
  assert.deepEqual(classes("192.0.2.1"), { ...none, global: true });
  assert.deepEqual(classes("2001:db8::1"), { ...none, global: true });
  assert.deepEqual(classes("4000::1"), { ...none, global: true });
  assert.deepEqual(classes("224.0.0.1"), { ...none, multicast: true, llm: true });
  assert.deepEqual(classes("ff02::1"), { ...none, multicast: true, llm: true });
  assert.deepEqual(classes("169.254.0.1"), { ...none, llu: true });
  assert.deepEqual(classes("fe80::1"), { ...none, llu: true });
  assert.deepEqual(classes("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), { ...none, llu: true });
  assert.deepEqual(classes("127.0.0.1"), { ...none, loopback: true });
  assert.deepEqual(classes("::1"), { ...none, loopback: true });
  assert.deepEqual(classes("ff01::1"), { ...none, multicast: true });
  assert.deepEqual(classes("10.0.0.1"), { ...none, global: true });
  assert.deepEqual(classes("fd00::1"), { ...none, global: true });
  assert.deepEqual(classes("0.0.0.0"), { ...none, unspecified: true });
  assert.deepEqual(classes("::"), { ...none, unspecified: true });
  assert.deepEqual(classes("255.255.255.255"), none);
});

void test("leadingBitsEqual compares a family's own bits (Prefix.Contains)", () => {
  const a = addr("10.1.2.3").bytes;
  const b = addr("10.1.255.0").bytes;
  assert.equal(leadingBitsEqual(a, b, 4, 16), true);
  assert.equal(leadingBitsEqual(a, b, 4, 17), false);
  assert.equal(leadingBitsEqual(a, b, 4, 0), true);
});
