/**
 * src/cel/go/url.ts against Go's net/url/url_test.go: parseRequestURLTests, urltests round trips
 * through URL.String, TestURLHostnameAndPort, TestParseQuery, and the error texts of url.go
 * (including parseHost's bracketed-literal check added for CVE-2025-47912).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  escapedPath,
  parseQuery,
  parseRequestURI,
  parseURL,
  requestURIError,
  splitHostPort,
  urlString,
} from "../../../../src/cel/go/url.ts";
import { toByteString } from "../../../../src/cel/go/utf8.ts";

void test("ParseRequestURI accepts and refuses what parseRequestURLTests say", () => {
  const valid = [
    "http://foo.com",
    "http://foo.com/",
    "http://foo.com/path",
    "/",
    "//not.a.user@not.a.host/just/a/path",
    "//not.a.user@%66%6f%6f.com/just/a/path/also",
    "*",
    "http://192.168.0.1/",
    "http://192.168.0.1:8080/",
    "http://[fe80::1]/",
    "http://[fe80::1]:8080/",
    "http://[fe80::1%25en0]/",
    "http://[fe80::1%25en0]:8080/",
    "http://[fe80::1%25%65%6e%301-._~]/",
    "http://[fe80::1%25%65%6e%301-._~]:8080/",
  ];
  for (const s of valid) assert.equal(requestURIError(s), undefined, s);
  const invalid = [
    "foo.html",
    "../dir/",
    " http://foo.com",
    "http://192.168.0.%31/",
    "http://192.168.0.%31:8080/",
    "http://[fe80::%31]/",
    "http://[fe80::%31]:8080/",
    "http://[fe80::%31%25en0]/",
    "http://[fe80::%31%25en0]:8080/",
    "http://[fe80::1%en0]/",
    "http://[fe80::1%en0]:8080/",
  ];
  for (const s of invalid) assert.notEqual(requestURIError(s), undefined, s);
  // The path that looks scheme-relative stays a path.
  assert.equal(
    parseRequestURI("//not.a.user@not.a.host/just/a/path").path,
    "//not.a.user@not.a.host/just/a/path",
  );
});

void test("url.Error texts: the operation, the quoted input and the cause", () => {
  const cases: readonly [string, string][] = [
    ["foo.html", 'parse "foo.html": invalid URI for request'],
    ["", 'parse "": empty url'],
    [":foo", 'parse ":foo": missing protocol scheme'],
    ["http://a b.com/", 'parse "http://a b.com/": invalid character " " in host name'],
    ["http://foo.com:80a/", 'parse "http://foo.com:80a/": invalid port ":80a" after host'],
    ["http://[1.2.3.4]/", 'parse "http://[1.2.3.4]/": invalid IP-literal'],
    ["http://%zz/", 'parse "http://%zz/": invalid URL escape "%zz"'],
    ["http://a\u007f/", 'parse "http://a\\x7f/": net/url: invalid control character in URL'],
  ];
  for (const [input, want] of cases) assert.equal(requestURIError(input), want, JSON.stringify(input));
});

void test("Parse then String round-trips as urltests expect", () => {
  const cases: readonly [string, string][] = [
    ["http://www.google.com", "http://www.google.com"],
    ["http://www.google.com/", "http://www.google.com/"],
    ["http://www.google.com/file%20one%26two", "http://www.google.com/file%20one%26two"],
    ["http://www.google.com/#file%20one%26two", "http://www.google.com/#file%20one%26two"],
    ["ftp://webmaster@www.google.com/", "ftp://webmaster@www.google.com/"],
    ["ftp://john%20doe@www.google.com/", "ftp://john%20doe@www.google.com/"],
    ["http://www.google.com/?", "http://www.google.com/?"],
    ["http://www.google.com/?foo=bar?", "http://www.google.com/?foo=bar?"],
    ["http://www.google.com/?q=go+language", "http://www.google.com/?q=go+language"],
    ["http://www.google.com/a%20b?q=c+d", "http://www.google.com/a%20b?q=c+d"],
    ["http:www.google.com/?q=go+language", "http:www.google.com/?q=go+language"],
    // OmitHost keeps the single slash.
    ["mailto:/webmaster@golang.org", "mailto:/webmaster@golang.org"],
    ["mailto:webmaster@golang.org", "mailto:webmaster@golang.org"],
    ["http://user:password@google.com", "http://user:password@google.com"],
    ["http://j@ne:password@google.com", "http://j%40ne:password@google.com"],
    ["http://[fe80::1%25en0]/", "http://[fe80::1%25en0]/"],
    ["http://host/%7Ehello", "http://host/%7Ehello"],
    ["file:///home/adg/rabbits", "file:///home/adg/rabbits"],
    ["http://[::1]:8080/a/b", "http://[::1]:8080/a/b"],
  ];
  for (const [input, want] of cases) assert.equal(urlString(parseURL(input)), want, input);
  assert.equal(escapedPath(parseURL("http://host/a%2Fb")), "/a%2Fb");
  assert.equal(escapedPath(parseURL("http://host/a b")), "/a%20b");
});

void test("the host splits into hostname and port as TestURLHostnameAndPort says", () => {
  const cases: readonly [string, string, string][] = [
    ["foo.com:80", "foo.com", "80"],
    ["foo.com", "foo.com", ""],
    ["foo.com:", "foo.com", ""],
    ["FOO.COM", "FOO.COM", ""],
    ["1.2.3.4", "1.2.3.4", ""],
    ["1.2.3.4:80", "1.2.3.4", "80"],
    ["[1:2:3:4]", "1:2:3:4", ""],
    ["[1:2:3:4]:80", "1:2:3:4", "80"],
    ["[::1]:80", "::1", "80"],
    ["[::1]", "::1", ""],
    ["[::1]:", "::1", ""],
    ["localhost", "localhost", ""],
    ["localhost:443", "localhost", "443"],
    ["some.super.long.domain.example.org:8080", "some.super.long.domain.example.org", "8080"],
    ["[2001:0db8:85a3:0000:0000:8a2e:0370:7334]:17000", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "17000"],
    ["[2001:0db8:85a3:0000:0000:8a2e:0370:7334]", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", ""],
    // Ensure that even when not valid, Host is one of "Hostname", "Hostname:Port", "[Hostname]" or
    // "[Hostname]:Port".
    ["[google.com]:80", "google.com", "80"],
    ["google.com]:80", "google.com]", "80"],
    ["google.com:80_invalid_port", "google.com:80_invalid_port", ""],
    ["[::1]extra]:80", "::1]extra", "80"],
    ["google.com]extra:extra", "google.com]extra:extra", ""],
  ];
  for (const [host, hostname, port] of cases) assert.deepEqual(splitHostPort(host), [hostname, port], host);
});

void test("ParseQuery keeps the first-seen key order and drops malformed pairs, as URL.Query does", () => {
  const q = (s: string) => Object.fromEntries(parseQuery(s));
  assert.deepEqual(q("a=1&b=2"), { a: ["1"], b: ["2"] });
  assert.deepEqual(q("a=1&a=2&a=banana"), { a: ["1", "2", "banana"] });
  assert.deepEqual(q("ascii=%3Ckey%3A+0x90%3E"), { ascii: ["<key: 0x90>"] });
  assert.deepEqual(q("a=1;b=2"), {});
  assert.deepEqual(q("a;b=1"), {});
  assert.deepEqual(q("a=%3B"), { a: [";"] });
  assert.deepEqual(q("a%3Bb=1"), { "a;b": ["1"] });
  assert.deepEqual(q("a=1&a=2;a=banana"), { a: ["1"] });
  assert.deepEqual(q("a=%zz&b=1"), { b: ["1"] });
});

void test("non-ASCII input is parsed as its UTF-8 bytes", () => {
  const u = parseURL(toByteString("http://h/é"));
  assert.equal(urlString(u), "http://h/%C3%A9");
});
