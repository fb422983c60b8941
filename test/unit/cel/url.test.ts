import assert from "node:assert/strict";
import { test } from "node:test";
import { celEquals } from "../../../src/cel/runtime/equality.ts";
import { quote as goQuote } from "../../../src/cel/go/quote.ts";
import { type URLValue, urlLibrary } from "../../../src/cel/library/url.ts";
import { CelMap, type CelValue, mapEntries } from "../../../src/cel/runtime/values.ts";
import { errorOf, evaluate, libraryHarness } from "../../helpers/library.ts";

const { overload, call, cost } = libraryHarness(urlLibrary);

const url = (s: string): URLValue => call("url", "string_to_url", s) as URLValue;

interface Parts {
  scheme: string;
  host: string;
  hostname: string;
  port: string;
  path: string;
}

const components: readonly [input: string, parts: Parts][] = [
  [
    "https://user:pass@example.com:80/path?query=val#fragment",
    { scheme: "https", host: "example.com:80", hostname: "example.com", port: "80", path: "/path" },
  ],
  ["/absolute-path", { scheme: "", host: "", hostname: "", port: "", path: "/absolute-path" }],
  ["/path", { scheme: "", host: "", hostname: "", port: "", path: "/path" }],
  [
    "https://example.com/",
    { scheme: "https", host: "example.com", hostname: "example.com", port: "", path: "/" },
  ],
  [
    "https://example.com:80/",
    { scheme: "https", host: "example.com:80", hostname: "example.com", port: "80", path: "/" },
  ],
  [
    "https://127.0.0.1:80/",
    { scheme: "https", host: "127.0.0.1:80", hostname: "127.0.0.1", port: "80", path: "/" },
  ],
  ["https://[::1]:80/", { scheme: "https", host: "[::1]:80", hostname: "::1", port: "80", path: "/" }],
  ["https://[::1]/", { scheme: "https", host: "[::1]", hostname: "::1", port: "", path: "/" }],
  [
    "https://[fe80::1%25en0]:8080/x",
    { scheme: "https", host: "[fe80::1%en0]:8080", hostname: "fe80::1%en0", port: "8080", path: "/x" },
  ],
  [
    "https://example.com/path",
    { scheme: "https", host: "example.com", hostname: "example.com", port: "", path: "/path" },
  ],
  [
    "https://example.com/path with spaces/",
    {
      scheme: "https",
      host: "example.com",
      hostname: "example.com",
      port: "",
      path: "/path%20with%20spaces/",
    },
  ],
  [
    "https://example.com",
    { scheme: "https", host: "example.com", hostname: "example.com", port: "", path: "" },
  ],
  // No normalization: scheme is lower-cased (as Go does), host case and dot segments stay.
  [
    "HTTP://Example.COM/a/../b",
    { scheme: "http", host: "Example.COM", hostname: "Example.COM", port: "", path: "/a/../b" },
  ],
  // An escaped slash stays escaped in the path.
  ["https://h/a%2Fb", { scheme: "https", host: "h", hostname: "h", port: "", path: "/a%2Fb" }],
  ["https://h:/p", { scheme: "https", host: "h:", hostname: "h", port: "", path: "/p" }],
  ["mailto:someone@example.com", { scheme: "mailto", host: "", hostname: "", port: "", path: "" }],
  [
    "https://münchen.example/ä",
    { scheme: "https", host: "münchen.example", hostname: "münchen.example", port: "", path: "/%C3%A4" },
  ],
];

test("url() splits a URL into its components", () => {
  for (const [input, want] of components) {
    const u = url(input);
    assert.equal(u.celType, "kubernetes.URL");
    const got: Parts = {
      scheme: call("getScheme", "url_get_scheme", u) as string,
      host: call("getHost", "url_get_host", u) as string,
      hostname: call("getHostname", "url_get_hostname", u) as string,
      port: call("getPort", "url_get_port", u) as string,
      path: call("getEscapedPath", "url_get_escaped_path", u) as string,
    };
    assert.deepEqual(got, want, input);
  }
});

function queryOf(s: string): Record<string, readonly string[]> {
  const m = call("getQuery", "url_get_query", url(s));
  assert.ok(m instanceof CelMap);
  const out: Record<string, readonly string[]> = {};
  for (const [k, v] of mapEntries(m)) out[k as string] = v as readonly string[];
  return out;
}

test("getQuery() returns every value of every key, unescaped", () => {
  assert.deepEqual(queryOf("https://example.com/path?k1=a&k2=b&k2=c"), { k1: ["a"], k2: ["b", "c"] });
  assert.deepEqual(queryOf("https://example.com/path?key with spaces=value with spaces"), {
    "key with spaces": ["value with spaces"],
  });
  assert.deepEqual(queryOf("https://example.com/path?a=1+2&b=%2F&c"), { a: ["1 2"], b: ["/"], c: [""] });
  assert.deepEqual(queryOf("https://example.com/path?"), {});
  assert.deepEqual(queryOf("https://example.com/path"), {});
  // Pairs with a semicolon or a bad escape are dropped, as Go's URL.Query() does.
  assert.deepEqual(queryOf("https://example.com/?a=1;b=2&c=%zz&d=4"), { d: ["4"] });
  // The fragment is not part of the query.
  assert.deepEqual(queryOf("https://example.com/?a=1#b=2"), { a: ["1"] });
});

const PREFIX = "URL parse error during conversion from string: ";

const invalid: readonly [input: string, message: string][] = [
  ["../relative-path", 'parse "../relative-path": invalid URI for request'],
  ["example.com", 'parse "example.com": invalid URI for request'],
  ["", 'parse "": empty url'],
  ["https://a:b:c/", 'parse "https://a:b:c/": invalid port ":c" after host'],
  ["https://example.com:abc/x", 'parse "https://example.com:abc/x": invalid port ":abc" after host'],
  ["://x", 'parse "://x": missing protocol scheme'],
  ["https://example.com/%zz", 'parse "https://example.com/%zz": invalid URL escape "%zz"'],
  ["https://example.com/%", 'parse "https://example.com/%": invalid URL escape "%"'],
  ["https://a{b}/", 'parse "https://a{b}/": invalid character "{" in host name'],
  ["https://a%41/", 'parse "https://a%41/": invalid URL escape "%41"'],
  ["https://ü@example.com/", 'parse "https://ü@example.com/": net/url: invalid userinfo'],
  ["https://[::1/", `parse "https://[::1/": missing ']' in host`],
  ["http://x/\n", 'parse "http://x/\\n": net/url: invalid control character in URL'],
  ["http://x/\u007f", 'parse "http://x/\\x7f": net/url: invalid control character in URL'],
  // Only an IPv6 address may stand in brackets (Go's fix for CVE-2025-47912).
  ["https://[1.2.3.4]/", 'parse "https://[1.2.3.4]/": invalid IP-literal'],
  ["https://a[::1]/", 'parse "https://a[::1]/": invalid IP-literal'],
  [
    "https://[v1.x]/",
    'parse "https://[v1.x]/": invalid host: ParseAddr("v1.x"): unexpected character (at "v1.x")',
  ],
  [
    "https://[::1::2]/",
    'parse "https://[::1::2]/": invalid host: ParseAddr("::1::2"): multiple :: in address (at ":2")',
  ],
];

test("url() accepts only absolute URIs and absolute paths, with Go's errors", () => {
  for (const [input, message] of invalid) {
    assert.equal(
      errorOf(() => url(input)),
      PREFIX + message,
      JSON.stringify(input),
    );
  }
});

test("isURL() is true exactly when url() succeeds", () => {
  const isURL = (s: string) => call("isURL", "is_url_string", s);
  for (const [input] of components) assert.equal(isURL(input), true, input);
  for (const [input] of invalid) assert.equal(isURL(input), false, input);
  assert.equal(isURL("*"), true);
  assert.equal(isURL("https://example.com/#%zz"), false);
});

test("URLs are equal when they print the same", () => {
  assert.ok(celEquals(url("https://example.com/a?b=c#d"), url("https://example.com/a?b=c#d")));
  assert.ok(celEquals(url("HTTPS://example.com/"), url("https://example.com/")));
  assert.ok(celEquals(url("https://h/a b"), url("https://h/a%20b")));
  assert.equal(celEquals(url("https://example.com/"), url("https://example.com")), false);
  assert.equal(celEquals(url("https://Example.com/"), url("https://example.com/")), false);
  assert.equal(celEquals(url("https://example.com/"), "https://example.com/"), false);
});

test("a URL prints back as Go's URL.String()", () => {
  const cases: [string, string][] = [
    [
      "https://user:pass@example.com:80/path?query=val#fragment",
      "https://user:pass@example.com:80/path?query=val#fragment",
    ],
    ["HTTPS://example.com/a b?x=1 2", "https://example.com/a%20b?x=1 2"],
    ["https://example.com/path?", "https://example.com/path?"],
    ["file:///etc/hosts", "file:///etc/hosts"],
    ["https://h/a%2Fb", "https://h/a%2Fb"],
    ["https://h/#a b", "https://h/#a%20b"],
  ];
  for (const [input, printed] of cases) {
    assert.equal(url(input).toString(), printed, input);
    assert.equal(url(input).toJSON(), printed, input);
  }
});

test("goQuote quotes as Go's %q", () => {
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote("\u0001\t\u00a0é😀"), '"\\x01\\t\\u00a0é😀"');
});

test("url() costs one traversal of its argument; the accessors nothing extra", () => {
  const c = (s: string) => cost("url", "string_to_url", s);
  assert.equal(c("https://example.com/"), 1);
  assert.equal(c("/"), 0);
  assert.equal(overload("getHost", "url_get_host").cost, undefined);
});

test("URL expressions evaluate end to end", () => {
  const cases: [string, CelValue][] = [
    [`url('https://example.com:80/').getHost()`, "example.com:80"],
    [`url('https://[::1]:80/').getHostname()`, "::1"],
    [`url('/path').getScheme()`, ""],
    [`url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()['k2']`, ["b", "c"]],
    [`url('https://example.com/path?').getQuery().size()`, 0n],
    [`isURL('../relative-path')`, false],
    [`url('https://example.com/') == url('https://example.com/')`, true],
  ];
  for (const [expr, want] of cases) {
    const r = evaluate(expr);
    assert.ok(r.ok, `${expr}: ${r.ok ? "" : r.error}`);
    assert.deepEqual(r.value, want, expr);
  }
  const bad = evaluate(`url('../relative-path')`);
  assert.ok(!bad.ok && bad.error === `${PREFIX}parse "../relative-path": invalid URI for request`);
});
