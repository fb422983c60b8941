import assert from "node:assert/strict";
import { test } from "node:test";
import { celEquals } from "../../../src/cel/runtime/equality.ts";
import { quote as goQuote } from "../../../src/cel/go/quote.ts";
import { CIDRValue, IPValue, ipLibrary } from "../../../src/cel/library/ip.ts";
import { type CelValue, typeName } from "../../../src/cel/runtime/values.ts";
import { errorOf, libraryHarness } from "../../helpers/library.ts";

const { call, cost } = libraryHarness(ipLibrary);

const ip = (s: string): IPValue => call("ip", "string_to_ip", s) as IPValue;
const cidr = (s: string): CIDRValue => call("cidr", "string_to_cidr", s) as CIDRValue;

// --- ip() ------------------------------------------------------------------------------------

const validIPs: readonly { input: string; text: string; family: bigint }[] = [
  { input: "192.168.0.1", text: "192.168.0.1", family: 4n },
  { input: "0.0.0.0", text: "0.0.0.0", family: 4n },
  { input: "255.255.255.255", text: "255.255.255.255", family: 4n },
  { input: "2001:db8::68", text: "2001:db8::68", family: 6n },
  { input: "::", text: "::", family: 6n },
  { input: "::1", text: "::1", family: 6n },
  { input: "2001:DB8::68", text: "2001:db8::68", family: 6n },
  { input: "2001:0db8:0000:0000:0000:0000:0000:0068", text: "2001:db8::68", family: 6n },
  { input: "0:0:0:0:0:0:0:0", text: "::", family: 6n },
  // The first of two equally long zero runs is compressed; a lone zero group never is.
  { input: "1:0:0:1:0:0:1:1", text: "1::1:0:0:1:1", family: 6n },
  { input: "1:0:0:1:0:0:0:1", text: "1:0:0:1::1", family: 6n },
  { input: "1:0:2:3:4:5:6:7", text: "1:0:2:3:4:5:6:7", family: 6n },
  { input: "1::2:3:4:5:6:7", text: "1:0:2:3:4:5:6:7", family: 6n },
  { input: "1:2:3:4:5:6:7::", text: "1:2:3:4:5:6:7:0", family: 6n },
  { input: "fe80::", text: "fe80::", family: 6n },
  // An embedded dotted quad is accepted but printed as hex groups, as Go does.
  { input: "::1.2.3.4", text: "::102:304", family: 6n },
  { input: "1:2:3:4:5:6:1.2.3.4", text: "1:2:3:4:5:6:102:304", family: 6n },
  { input: "64:ff9b::192.0.2.33", text: "64:ff9b::c000:221", family: 6n },
];

test("ip() parses IPv4 and IPv6 addresses and prints them canonically", () => {
  for (const c of validIPs) {
    const v = ip(c.input);
    assert.ok(v instanceof IPValue, c.input);
    assert.equal(typeName(v), "net.IP");
    assert.equal(call("string", "ip_to_string", v), c.text, c.input);
    assert.equal(call("family", "ip_family", v), c.family, c.input);
    assert.equal(v.toJSON(), c.text);
  }
});

const parseError = (input: string, detail: string): string =>
  `IP Address ${goQuote(input)} parse error during conversion from string: ParseAddr(${goQuote(input)}): ${detail}`;

const invalidIPs: readonly { input: string; error: string }[] = [
  { input: "192.168.0.1.0", error: parseError("192.168.0.1.0", "IPv4 address too long") },
  { input: "127.0.0.256", error: parseError("127.0.0.256", "IPv4 field has value >255") },
  { input: "1.2.3", error: parseError("1.2.3", "IPv4 address too short") },
  { input: "01.2.3.4", error: parseError("01.2.3.4", "IPv4 field has octet with leading zero") },
  { input: "1.2.3.00", error: parseError("1.2.3.00", "IPv4 field has octet with leading zero") },
  { input: "1..2.3", error: parseError("1..2.3", 'IPv4 field must have at least one digit (at ".2.3")') },
  { input: ".1.2.3", error: parseError(".1.2.3", 'IPv4 field must have at least one digit (at ".1.2.3")') },
  { input: "1.2.3.", error: parseError("1.2.3.", 'IPv4 field must have at least one digit (at ".")') },
  { input: "1.2.3.x", error: parseError("1.2.3.x", 'unexpected character (at "x")') },
  { input: "1.2.3.4%eth0", error: parseError("1.2.3.4%eth0", 'unexpected character (at "%eth0")') },
  { input: "", error: parseError("", "unable to parse IP") },
  { input: "localhost", error: parseError("localhost", "unable to parse IP") },
  { input: "%eth0", error: parseError("%eth0", "missing IPv6 address") },
  {
    input: "2001:db8:::68",
    error: parseError("2001:db8:::68", 'each colon-separated field must have at least one digit (at ":68")'),
  },
  {
    input: ":::1",
    error: parseError(":::1", 'each colon-separated field must have at least one digit (at ":1")'),
  },
  { input: "::12345", error: parseError("::12345", 'each group must have 4 or less digits (at "12345")') },
  { input: "1::2::3", error: parseError("1::2::3", 'multiple :: in address (at ":3")') },
  { input: "1:2", error: parseError("1:2", "address string too short") },
  { input: "1:", error: parseError("1:", 'colon must be followed by more characters (at ":")') },
  {
    input: "1:2:3:4:5:6:7:8:9",
    error: parseError("1:2:3:4:5:6:7:8:9", 'trailing garbage after address (at "9")'),
  },
  {
    input: "1:2:3:4:5:6:7:8::",
    error: parseError("1:2:3:4:5:6:7:8::", "the :: must expand to at least one field of zeros"),
  },
  { input: "1:2g::", error: parseError("1:2g::", 'unexpected character, want colon (at "g::")') },
  {
    input: "1:2:3:4:5:6:7:1.2.3.4",
    error: parseError(
      "1:2:3:4:5:6:7:1.2.3.4",
      'embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")',
    ),
  },
  {
    input: "1:2:1.2.3.4",
    error: parseError(
      "1:2:1.2.3.4",
      'embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")',
    ),
  },
  {
    input: "1:2:3:4:5:6:7::1.2.3.4",
    error: parseError(
      "1:2:3:4:5:6:7::1.2.3.4",
      'too many hex fields to fit an embedded IPv4 at the end of the address (at "1.2.3.4")',
    ),
  },
  // Errors in an embedded dotted quad name the whole input.
  { input: "::1.2.3.04", error: parseError("::1.2.3.04", "IPv4 field has octet with leading zero") },
  { input: "fe80::1%", error: parseError("fe80::1%", "zone must be a non-empty string") },
  // Kubernetes' own refusals, after netip accepted the text.
  { input: "fe80::1%eth0", error: 'IP address "fe80::1%eth0" with zone value is not allowed' },
  { input: "::ffff:1.2.3.4", error: 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed' },
  { input: "::ffff:102:304", error: 'IPv4-mapped IPv6 address "::ffff:102:304" is not allowed' },
  { input: "::ffff:1.2.3.4%eth0", error: 'IP address "::ffff:1.2.3.4%eth0" with zone value is not allowed' },
  // Quoting follows Go: control characters escaped, printable Unicode kept.
  { input: "1.2.3.\n", error: parseError("1.2.3.\n", 'unexpected character (at "\\n")') },
  { input: "1.2.3.é", error: parseError("1.2.3.é", 'unexpected character (at "é")') },
];

test("ip() rejects invalid addresses with Kubernetes' messages", () => {
  for (const c of invalidIPs) {
    assert.equal(
      errorOf(() => ip(c.input)),
      c.error,
      c.input,
    );
  }
});

test("the helper quoting matches Go's strconv.Quote", () => {
  const cases: readonly [string, string][] = [
    ["abc", '"abc"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ["\t\u0000\u007f", '"\\t\\x00\\x7f"'],
    ["\u00a0\u00ad", '"\\u00a0\\u00ad"'],
    ["日本", '"日本"'],
    ["\u{1f600}", '"\u{1f600}"'],
    ["\u{e0001}", '"\\U000e0001"'],
  ];
  for (const [input, quoted] of cases) assert.equal(goQuote(input), quoted, JSON.stringify(input));
});

test("isIP() is true exactly when ip() succeeds", () => {
  for (const c of validIPs) assert.equal(call("isIP", "is_ip", c.input), true, c.input);
  for (const c of invalidIPs) assert.equal(call("isIP", "is_ip", c.input), false, c.input);
});

test("ip.isCanonical() compares the text with its canonical form and fails on invalid input", () => {
  const cases: readonly [string, boolean][] = [
    ["127.0.0.1", true],
    ["0.0.0.0", true],
    ["2001:db8::68", true],
    ["2001:db8::abcd", true],
    ["::", true],
    ["2001:DB8::68", false],
    ["2001:db8::0:0:0:abcd", false],
    ["2001:0db8::68", false],
    ["0:0:0:0:0:0:0:1", false],
    ["::1.2.3.4", false],
    ["1:0:0:1:0:0:1:1", false],
    ["1::1:0:0:1:1", true],
  ];
  for (const [input, expected] of cases) {
    assert.equal(call("ip.isCanonical", "ip_is_canonical", input), expected, input);
  }
  assert.equal(
    errorOf(() => call("ip.isCanonical", "ip_is_canonical", "127.0.0.1.0")),
    parseError("127.0.0.1.0", "IPv4 address too long"),
  );
  assert.equal(
    errorOf(() => call("ip.isCanonical", "ip_is_canonical", "2001:db8:::68")),
    parseError("2001:db8:::68", 'each colon-separated field must have at least one digit (at ":68")'),
  );
  assert.equal(
    errorOf(() => call("ip.isCanonical", "ip_is_canonical", "fe80::1%eth0")),
    'IP address "fe80::1%eth0" with zone value is not allowed',
  );
});

test("address class predicates follow Go's netip", () => {
  // [address, unspecified, loopback, link-local multicast, link-local unicast, global unicast]
  const cases: readonly [string, boolean, boolean, boolean, boolean, boolean][] = [
    ["0.0.0.0", true, false, false, false, false],
    ["127.0.0.1", false, true, false, false, false],
    ["127.255.0.9", false, true, false, false, false],
    ["1.2.3.4", false, false, false, false, true],
    ["192.168.0.1", false, false, false, false, true],
    ["10.0.0.1", false, false, false, false, true],
    ["224.0.0.1", false, false, true, false, false],
    ["224.0.1.1", false, false, false, false, false],
    ["239.1.1.1", false, false, false, false, false],
    ["169.254.169.254", false, false, false, true, false],
    ["169.253.0.1", false, false, false, false, true],
    ["255.255.255.255", false, false, false, false, false],
    ["255.255.255.254", false, false, false, false, true],
    ["::", true, false, false, false, false],
    ["::1", false, true, false, false, false],
    ["::2", false, false, false, false, true],
    ["2001:db8::abcd", false, false, false, false, true],
    ["2001:db8::68", false, false, false, false, true],
    ["fd00::1", false, false, false, false, true],
    ["ff02::1", false, false, true, false, false],
    ["ff12::1", false, false, true, false, false],
    ["ff01::1", false, false, false, false, false],
    ["ff00::1", false, false, false, false, false],
    ["fe80::1", false, false, false, true, false],
    ["febf::1", false, false, false, true, false],
    ["fec0::1", false, false, false, false, true],
    ["fd80::1", false, false, false, false, true],
  ];
  for (const [input, unspecified, loopback, llMulticast, llUnicast, global] of cases) {
    const v = ip(input);
    assert.deepEqual(
      [
        call("isUnspecified", "ip_is_unspecified", v),
        call("isLoopback", "ip_is_loopback", v),
        call("isLinkLocalMulticast", "ip_is_link_local_multicast", v),
        call("isLinkLocalUnicast", "ip_is_link_local_unicast", v),
        call("isGlobalUnicast", "ip_is_global_unicast", v),
      ],
      [unspecified, loopback, llMulticast, llUnicast, global],
      input,
    );
  }
});

// --- cidr() ----------------------------------------------------------------------------------

const validCIDRs: readonly { input: string; text: string; ip: string; bits: bigint; masked: string }[] = [
  { input: "192.168.0.0/24", text: "192.168.0.0/24", ip: "192.168.0.0", bits: 24n, masked: "192.168.0.0/24" },
  { input: "192.168.0.1/24", text: "192.168.0.1/24", ip: "192.168.0.1", bits: 24n, masked: "192.168.0.0/24" },
  { input: "192.168.0.0/16", text: "192.168.0.0/16", ip: "192.168.0.0", bits: 16n, masked: "192.168.0.0/16" },
  { input: "10.1.2.3/0", text: "10.1.2.3/0", ip: "10.1.2.3", bits: 0n, masked: "0.0.0.0/0" },
  { input: "10.1.2.3/32", text: "10.1.2.3/32", ip: "10.1.2.3", bits: 32n, masked: "10.1.2.3/32" },
  {
    input: "10.255.255.255/13",
    text: "10.255.255.255/13",
    ip: "10.255.255.255",
    bits: 13n,
    masked: "10.248.0.0/13",
  },
  { input: "2001:db8::/32", text: "2001:db8::/32", ip: "2001:db8::", bits: 32n, masked: "2001:db8::/32" },
  {
    input: "2001:db8:1::/32",
    text: "2001:db8:1::/32",
    ip: "2001:db8:1::",
    bits: 32n,
    masked: "2001:db8::/32",
  },
  { input: "2001:DB8::1/64", text: "2001:db8::1/64", ip: "2001:db8::1", bits: 64n, masked: "2001:db8::/64" },
  { input: "::1/128", text: "::1/128", ip: "::1", bits: 128n, masked: "::1/128" },
  { input: "ffff::ffff/0", text: "ffff::ffff/0", ip: "ffff::ffff", bits: 0n, masked: "::/0" },
  {
    input: "2001:db8:ffff::/35",
    text: "2001:db8:ffff::/35",
    ip: "2001:db8:ffff::",
    bits: 35n,
    masked: "2001:db8:e000::/35",
  },
];

test("cidr() parses networks; ip(), prefixLength() and masked() read them", () => {
  for (const c of validCIDRs) {
    const v = cidr(c.input);
    assert.ok(v instanceof CIDRValue, c.input);
    assert.equal(typeName(v), "net.CIDR");
    assert.equal(call("string", "cidr_to_string", v), c.text, c.input);
    assert.equal(v.toJSON(), c.text);
    const addr = call("ip", "cidr_ip", v);
    assert.ok(addr instanceof IPValue);
    assert.equal(addr.toString(), c.ip, c.input);
    assert.equal(call("prefixLength", "cidr_prefix_length", v), c.bits, c.input);
    const m = call("masked", "cidr_masked", v);
    assert.ok(m instanceof CIDRValue);
    assert.equal(m.toString(), c.masked, c.input);
    // The receiver is left alone.
    assert.equal(v.toString(), c.text);
  }
  assert.equal(call("family", "ip_family", call("ip", "cidr_ip", cidr("192.168.0.1/24"))), 4n);
  assert.equal(call("family", "ip_family", call("ip", "cidr_ip", cidr("::1/128"))), 6n);
});

const cidrError = (input: string, detail: string): string =>
  "network address parse error during conversion from string: network address parse error during conversion from string: " +
  `netip.ParsePrefix(${goQuote(input)}): ${detail}`;

const invalidCIDRs: readonly { input: string; error: string }[] = [
  { input: "192.168.0.0/", error: cidrError("192.168.0.0/", 'bad bits after slash: ""') },
  { input: "2001:db8::/", error: cidrError("2001:db8::/", 'bad bits after slash: ""') },
  { input: "192.168.0.0/33", error: cidrError("192.168.0.0/33", "prefix length out of range") },
  { input: "::1/129", error: cidrError("::1/129", "prefix length out of range") },
  { input: "10.0.0.0/08", error: cidrError("10.0.0.0/08", 'bad bits after slash: "08"') },
  { input: "10.0.0.0/+8", error: cidrError("10.0.0.0/+8", 'bad bits after slash: "+8"') },
  { input: "10.0.0.0/-1", error: cidrError("10.0.0.0/-1", 'bad bits after slash: "-1"') },
  { input: "10.0.0.0/8a", error: cidrError("10.0.0.0/8a", 'bad bits after slash: "8a"') },
  { input: "10.0.0.0/ 8", error: cidrError("10.0.0.0/ 8", 'bad bits after slash: " 8"') },
  {
    input: "10.0.0.0/99999999999999999999",
    error: cidrError("10.0.0.0/99999999999999999999", 'bad bits after slash: "99999999999999999999"'),
  },
  {
    input: "10.0.0.0/9223372036854775807",
    error: cidrError("10.0.0.0/9223372036854775807", "prefix length out of range"),
  },
  { input: "10.0.0.0", error: cidrError("10.0.0.0", "no '/'") },
  { input: "", error: cidrError("", "no '/'") },
  {
    input: "192.168.0.1.0/24",
    error: cidrError("192.168.0.1.0/24", 'ParseAddr("192.168.0.1.0"): IPv4 address too long'),
  },
  {
    input: "010.0.0.0/8",
    error: cidrError("010.0.0.0/8", 'ParseAddr("010.0.0.0"): IPv4 field has octet with leading zero'),
  },
  {
    input: "2001:db8:::/32",
    error: cidrError(
      "2001:db8:::/32",
      'ParseAddr("2001:db8:::"): each colon-separated field must have at least one digit (at ":")',
    ),
  },
  { input: "/24", error: cidrError("/24", 'ParseAddr(""): unable to parse IP') },
  {
    input: "1.2.3.4/8/8",
    error: cidrError("1.2.3.4/8/8", 'ParseAddr("1.2.3.4/8"): unexpected character (at "/8")'),
  },
  {
    input: "fe80::1%eth0/64",
    error: cidrError("fe80::1%eth0/64", "IPv6 zones cannot be present in a prefix"),
  },
  {
    input: "::ffff:1.2.3.0/120",
    error:
      'network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:1.2.3.0/120" is not allowed',
  },
];

test("cidr() rejects invalid networks with Kubernetes' messages", () => {
  for (const c of invalidCIDRs) {
    assert.equal(
      errorOf(() => cidr(c.input)),
      c.error,
      c.input,
    );
  }
});

test("isCIDR() is true exactly when cidr() succeeds", () => {
  for (const c of validCIDRs) assert.equal(call("isCIDR", "is_cidr", c.input), true, c.input);
  for (const c of invalidCIDRs) assert.equal(call("isCIDR", "is_cidr", c.input), false, c.input);
  assert.equal(call("isCIDR", "is_cidr", "192.168.0.1"), false);
});

// --- containment -----------------------------------------------------------------------------

test("containsIP() accepts an IP or a string; other families are not contained", () => {
  const cases: readonly [string, string, boolean][] = [
    ["192.168.0.0/24", "192.168.0.1", true],
    ["192.168.0.0/24", "192.168.0.255", true],
    ["192.168.0.0/24", "192.168.1.1", false],
    ["192.168.0.1/24", "192.168.0.200", true],
    ["10.0.0.0/8", "10.255.255.255", true],
    ["10.0.0.0/8", "11.0.0.0", false],
    ["0.0.0.0/0", "203.0.113.9", true],
    ["10.1.2.3/32", "10.1.2.3", true],
    ["10.1.2.3/32", "10.1.2.4", false],
    ["192.168.0.0/23", "192.168.1.7", true],
    ["192.168.0.0/23", "192.168.2.7", false],
    ["2001:db8::/32", "2001:db8::1", true],
    ["2001:db8::/32", "2001:dc8::1", false],
    ["2001:db8::/33", "2001:db8:7fff::1", true],
    ["2001:db8::/33", "2001:db8:8000::1", false],
    ["::/0", "2001:db8::1", true],
    ["::1/128", "::1", true],
    // Across families: false, never an error.
    ["0.0.0.0/0", "::1", false],
    ["::/0", "127.0.0.1", false],
    ["::/96", "1.2.3.4", false],
  ];
  for (const [net, addr, expected] of cases) {
    const n = cidr(net);
    assert.equal(call("containsIP", "cidr_contains_ip_ip", n, ip(addr)), expected, `${net} ∋ ip(${addr})`);
    assert.equal(call("containsIP", "cidr_contains_ip_string", n, addr), expected, `${net} ∋ '${addr}'`);
  }
});

test("containsIP(string) with an invalid address fails with a bare 'no such overload', as in Kubernetes", () => {
  assert.equal(
    errorOf(() => call("containsIP", "cidr_contains_ip_string", cidr("10.0.0.0/8"), "10.0.0.256")),
    "no such overload",
  );
  assert.equal(
    errorOf(() => call("containsIP", "cidr_contains_ip_string", cidr("::/0"), "fe80::1%eth0")),
    "no such overload",
  );
});

test("containsCIDR() accepts a CIDR or a string; other families are not contained", () => {
  const cases: readonly [string, string, boolean][] = [
    ["192.168.0.0/24", "192.168.0.0/25", true],
    ["192.168.0.0/24", "192.168.0.0/23", false],
    ["192.168.0.0/24", "192.168.0.0/24", true],
    ["192.168.0.0/24", "192.168.0.128/25", true],
    ["192.168.1.0/24", "192.168.2.0/24", false],
    // Subnets that do not start at the network address (fixed in Kubernetes 1.33).
    ["192.168.0.0/16", "192.168.10.0/24", true],
    ["192.168.0.0/16", "192.168.0.1/32", true],
    ["10.0.0.0/8", "10.1.0.0/16", true],
    ["10.0.0.0/8", "11.1.0.0/16", false],
    // The receiver's host bits do not matter, the argument's beyond its own prefix neither.
    ["192.168.0.1/24", "192.168.0.0/25", true],
    ["192.168.0.0/24", "192.168.0.77/25", true],
    ["0.0.0.0/0", "1.2.3.4/32", true],
    ["2001:db8::/32", "2001:db8::/33", true],
    ["2001:db8::/32", "2001:db8::/31", false],
    ["2001:db8::/32", "2001:db8:abcd::/48", true],
    ["2001:db8::/32", "2001:db9::/48", false],
    ["::/0", "::1/128", true],
    // Across families: false, never an error.
    ["0.0.0.0/0", "::/0", false],
    ["::/0", "0.0.0.0/0", false],
    ["::/64", "10.0.0.0/8", false],
    ["10.0.0.0/8", "::/128", false],
  ];
  for (const [net, other, expected] of cases) {
    const n = cidr(net);
    assert.equal(
      call("containsCIDR", "cidr_contains_cidr", n, cidr(other)),
      expected,
      `${net} ⊇ cidr(${other})`,
    );
    assert.equal(
      call("containsCIDR", "cidr_contains_cidr_string", n, other),
      expected,
      `${net} ⊇ '${other}'`,
    );
  }
});

test("containsCIDR(string) with an invalid network reports the parse error", () => {
  assert.equal(
    errorOf(() => call("containsCIDR", "cidr_contains_cidr_string", cidr("10.0.0.0/8"), "10.0.0.0/33")),
    cidrError("10.0.0.0/33", "prefix length out of range"),
  );
});

// --- equality and JSON -----------------------------------------------------------------------

test("IP equality compares address and family", () => {
  const cases: readonly [CelValue, CelValue, boolean][] = [
    [ip("127.0.0.1"), ip("127.0.0.1"), true],
    [ip("2001:db8::68"), ip("2001:DB8:0::68"), true],
    [ip("::1.2.3.4"), ip("::102:304"), true],
    [ip("127.0.0.1"), ip("127.0.0.2"), false],
    [ip("0.0.0.0"), ip("::"), false],
    [ip("127.0.0.1"), "127.0.0.1", false],
    [ip("192.168.0.0"), cidr("192.168.0.0/32"), false],
    [call("ip", "cidr_ip", cidr("192.168.0.1/24")), ip("192.168.0.1"), true],
  ];
  for (const [a, b, expected] of cases) {
    assert.equal(celEquals(a, b), expected, `${String(a)} == ${String(b)}`);
    assert.equal(celEquals(b, a), expected, `${String(b)} == ${String(a)}`);
  }
});

test("CIDR equality compares address (unmasked) and prefix length", () => {
  const cases: readonly [CelValue, CelValue, boolean][] = [
    [cidr("192.168.0.0/24"), cidr("192.168.0.0/24"), true],
    [cidr("192.168.0.0/24"), call("masked", "cidr_masked", cidr("192.168.0.0/24")), true],
    [cidr("192.168.0.1/24"), call("masked", "cidr_masked", cidr("192.168.0.1/24")), false],
    [cidr("192.168.0.0/24"), call("masked", "cidr_masked", cidr("192.168.0.1/24")), true],
    [cidr("192.168.0.0/24"), cidr("192.168.0.0/25"), false],
    [cidr("2001:db8::/32"), cidr("2001:DB8:0::/32"), true],
    [cidr("0.0.0.0/0"), cidr("::/0"), false],
    [cidr("10.0.0.0/8"), "10.0.0.0/8", false],
  ];
  for (const [a, b, expected] of cases) {
    assert.equal(celEquals(a, b), expected, `${String(a)} == ${String(b)}`);
    assert.equal(celEquals(b, a), expected, `${String(b)} == ${String(a)}`);
  }
});

test("JSON renders IPs and CIDRs as their canonical strings", () => {
  assert.equal(
    JSON.stringify({ a: ip("2001:0DB8::0:1"), b: cidr("10.0.0.1/8") }),
    '{"a":"2001:db8::1","b":"10.0.0.1/8"}',
  );
});

test("constructors keep the value invariants", () => {
  assert.throws(() => new IPValue(new Uint8Array(4), 4), RangeError);
  const mapped = new Uint8Array(16);
  mapped[10] = 0xff;
  mapped[11] = 0xff;
  assert.throws(() => new IPValue(mapped, 6), RangeError);
  assert.equal(new IPValue(mapped, 4).toString(), "0.0.0.0");
  assert.throws(() => new CIDRValue(ip("10.0.0.0"), 33), RangeError);
  assert.throws(() => new CIDRValue(ip("::"), -1), RangeError);
  assert.equal(new CIDRValue(ip("::"), 128).toString(), "::/128");
  // The value does not share the caller's buffer.
  const bytes = new Uint8Array(16);
  const v = new IPValue(bytes, 6);
  bytes[15] = 1;
  assert.equal(v.toString(), "::");
});

// --- declarations and costs ------------------------------------------------------------------

test("the library declares every Kubernetes IP/CIDR function with the right shapes", () => {
  assert.equal(ipLibrary.availability, "kubernetes");
  const shapes = ipLibrary.functions.flatMap((f) =>
    f.overloads.map((o) => `${o.member ? "member " : ""}${f.name}(${o.args.join(", ")}) -> ${o.result}`),
  );
  const expected = [
    "cidr(string) -> net.CIDR",
    "ip(string) -> net.IP",
    "ip.isCanonical(string) -> bool",
    "isCIDR(string) -> bool",
    "isIP(string) -> bool",
    "member containsCIDR(net.CIDR, net.CIDR) -> bool",
    "member containsCIDR(net.CIDR, string) -> bool",
    "member containsIP(net.CIDR, net.IP) -> bool",
    "member containsIP(net.CIDR, string) -> bool",
    "member family(net.IP) -> int",
    "member ip(net.CIDR) -> net.IP",
    "member isGlobalUnicast(net.IP) -> bool",
    "member isLinkLocalMulticast(net.IP) -> bool",
    "member isLinkLocalUnicast(net.IP) -> bool",
    "member isLoopback(net.IP) -> bool",
    "member isUnspecified(net.IP) -> bool",
    "member masked(net.CIDR) -> net.CIDR",
    "member prefixLength(net.CIDR) -> int",
    "string(net.CIDR) -> string",
    "string(net.IP) -> string",
  ];
  assert.deepEqual([...shapes].sort(), expected);
  const ids = ipLibrary.functions.flatMap((f) => f.overloads.map((o) => o.id));
  assert.equal(new Set(ids).size, ids.length, "overload ids are unique");
});

test("costs follow Kubernetes' CallCost (minus the base of 1)", () => {
  const twenty = "2001:db8:0:0:0:0:0:1"; // 20 characters
  // [name, id, args, Kubernetes total]
  const cases: readonly [string, string, CelValue[], number][] = [
    ["ip", "string_to_ip", [twenty], 2],
    ["ip", "string_to_ip", ["10.0.0.1"], 1],
    ["isIP", "is_ip", [twenty], 2],
    ["ip.isCanonical", "ip_is_canonical", [twenty], 4],
    ["ip.isCanonical", "ip_is_canonical", ["1.2.3.4"], 2],
    ["cidr", "string_to_cidr", ["192.168.100.0/24"], 2],
    ["isCIDR", "is_cidr", ["192.168.100.0/24"], 2],
    ["ip", "cidr_ip", [cidr("::/0")], 1],
    ["masked", "cidr_masked", [cidr("::/0")], 1],
    // containsIP: ceil(2 * ceil(bits/8) * 0.1) [+ ceil(len * 0.1) for a string]
    ["containsIP", "cidr_contains_ip_ip", [cidr("10.0.0.0/8"), ip("10.0.0.1")], 1],
    ["containsIP", "cidr_contains_ip_ip", [cidr("2001:db8::/128"), ip("2001:db8::")], 4],
    ["containsIP", "cidr_contains_ip_string", [cidr("10.0.0.0/8"), "10.100.100.100"], 3],
    // containsCIDR: that plus ceil(ceil(bits/8) * 0.1) + 1
    ["containsCIDR", "cidr_contains_cidr", [cidr("10.0.0.0/8"), cidr("10.0.0.0/16")], 3],
    ["containsCIDR", "cidr_contains_cidr", [cidr("2001:db8::/128"), cidr("2001:db8::/128")], 7],
    ["containsCIDR", "cidr_contains_cidr_string", [cidr("10.0.0.0/0"), "10.0.0.0/16"], 3],
  ];
  for (const [name, id, args, total] of cases) {
    assert.equal(1 + cost(name, id, ...args), total, `${id}(${args.map(String).join(", ")})`);
  }
});
