/**
 * Kubernetes' URL library (`url`, `isURL`, `getScheme`, ...), with Go's net/url semantics: the
 * argument must be an absolute URI or an absolute path (`url.ParseRequestURI`), the value is then
 * taken from `url.Parse`, and nothing is normalized the way WHATWG `URL` would (hosts keep their
 * case, paths keep their dot segments, IPv6 hosts keep their brackets).
 *
 * Go works on bytes, so the parser does too: the input is turned into a "byte string" (one char per
 * UTF-8 byte) and components are decoded back to text when read.
 */
import { CelError, CelMap, CelObject, type CelValue } from "../runtime/values.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

// --- byte strings ------------------------------------------------------------------------------

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The UTF-8 bytes of `s`, one char per byte. */
export function toByteString(s: string): string {
  const bytes = encoder.encode(s);
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return out;
}

/** Text from a byte string; invalid UTF-8 becomes U+FFFD, as CEL strings cannot hold it. */
export function fromByteString(b: string): string {
  // Pure ASCII is the common case and needs no decoding.
  let ascii = true;
  for (let i = 0; i < b.length && ascii; i++) ascii = b.charCodeAt(i) < 0x80;
  if (ascii) return b;
  const bytes = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) bytes[i] = b.charCodeAt(i);
  return decoder.decode(bytes);
}

/** Go's printable-rune test (unicode.IsPrint): letters, marks, numbers, punctuation, symbols and ' '. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * Go's `strconv.Quote` of a byte string (`%q` in error messages): printable runes as they are,
 * invalid UTF-8 bytes as `\xNN`, other runes as `\n`, `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
 */
export function goQuoteBytes(b: string): string {
  let out = '"';
  let i = 0;
  while (i < b.length) {
    const rune = decodeRune(b, i);
    if (rune === undefined) {
      out += `\\x${b.charCodeAt(i).toString(16).padStart(2, "0")}`;
      i++;
    } else {
      out += quoteRune(rune[0]);
      i += rune[1];
    }
  }
  return `${out}"`;
}

/** The code point and byte length of the UTF-8 sequence at `i`, or undefined if it is not valid. */
function decodeRune(b: string, i: number): [number, number] | undefined {
  const c0 = b.charCodeAt(i);
  if (c0 < 0x80) return [c0, 1];
  let need: number;
  let v: number;
  let min: number;
  if (c0 >= 0xc2 && c0 <= 0xdf) [need, v, min] = [1, c0 & 0x1f, 0x80];
  else if (c0 >= 0xe0 && c0 <= 0xef) [need, v, min] = [2, c0 & 0x0f, 0x800];
  else if (c0 >= 0xf0 && c0 <= 0xf4) [need, v, min] = [3, c0 & 0x07, 0x10000];
  else return undefined;
  if (i + need >= b.length) return undefined;
  for (let k = 1; k <= need; k++) {
    const ck = b.charCodeAt(i + k);
    if ((ck & 0xc0) !== 0x80) return undefined;
    v = (v << 6) | (ck & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return undefined;
  return [v, need + 1];
}

/** `goQuoteBytes` of a JS string's UTF-8 encoding. */
export function goQuote(s: string): string {
  return goQuoteBytes(toByteString(s));
}

function quoteRune(cp: number): string {
  if (cp === 0x22) return '\\"';
  if (cp === 0x5c) return "\\\\";
  const ch = String.fromCodePoint(cp);
  if (PRINTABLE.test(ch)) return ch;
  switch (cp) {
    case 0x07:
      return "\\a";
    case 0x08:
      return "\\b";
    case 0x0c:
      return "\\f";
    case 0x0a:
      return "\\n";
    case 0x0d:
      return "\\r";
    case 0x09:
      return "\\t";
    case 0x0b:
      return "\\v";
  }
  if (cp < 0x20 || cp === 0x7f) return `\\x${cp.toString(16).padStart(2, "0")}`;
  if (cp < 0x10000) return `\\u${cp.toString(16).padStart(4, "0")}`;
  return `\\U${cp.toString(16).padStart(8, "0")}`;
}

// --- net/url -----------------------------------------------------------------------------------

/** A parsed URL; every string is a byte string, as Go keeps it. */
export interface GoURL {
  readonly scheme: string;
  readonly opaque: string;
  readonly user:
    | { readonly username: string; readonly password: string; readonly passwordSet: boolean }
    | undefined;
  readonly host: string;
  readonly path: string;
  readonly rawPath: string;
  readonly omitHost: boolean;
  readonly forceQuery: boolean;
  readonly rawQuery: string;
  readonly fragment: string;
  readonly rawFragment: string;
}

/** A parse failure; `message` is Go's text without the `parse "..."` wrapper. */
class UrlParseError extends Error {}

const Mode = {
  Path: 1,
  PathSegment: 2,
  Host: 3,
  Zone: 4,
  UserPassword: 5,
  QueryComponent: 6,
  Fragment: 7,
} as const;
type Mode = (typeof Mode)[keyof typeof Mode];

const UPPER_HEX = "0123456789ABCDEF";

function isAlnum(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

function unhex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return 0;
}

/** Whether byte `c` must be percent-encoded in the given part of a URL (Go's shouldEscape). */
function shouldEscape(c: number, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  const ch = String.fromCharCode(c);
  if (mode === Mode.Host || mode === Mode.Zone) {
    if ("!$&'()*+,;=:[]<>\"".includes(ch)) return false;
  }
  if ("-_.~".includes(ch)) return false;
  if ("$&+,/:;=?@".includes(ch)) {
    switch (mode) {
      case Mode.Path:
        return ch === "?";
      case Mode.PathSegment:
        return ch === "/" || ch === ";" || ch === "," || ch === "?";
      case Mode.UserPassword:
        return ch === "@" || ch === "/" || ch === "?" || ch === ":";
      case Mode.QueryComponent:
        return true;
      case Mode.Fragment:
        return false;
      default:
        break;
    }
  }
  if (mode === Mode.Fragment && "!()*".includes(ch)) return false;
  return true;
}

function escapeError(s: string): UrlParseError {
  return new UrlParseError(`invalid URL escape ${goQuoteBytes(s)}`);
}

function unescapeURL(s: string, mode: Mode): string {
  let n = 0;
  let hasPlus = false;
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      n++;
      if (i + 2 >= s.length || !isHex(s.charCodeAt(i + 1)) || !isHex(s.charCodeAt(i + 2))) {
        throw escapeError(s.slice(i, i + 3));
      }
      // A host may only percent-encode non-ASCII bytes, except "%25" in an IPv6 zone (RFC 6874).
      if (mode === Mode.Host && unhex(s.charCodeAt(i + 1)) < 8 && s.slice(i, i + 3) !== "%25") {
        throw escapeError(s.slice(i, i + 3));
      }
      if (mode === Mode.Zone) {
        const v = (unhex(s.charCodeAt(i + 1)) << 4) | unhex(s.charCodeAt(i + 2));
        if (s.slice(i, i + 3) !== "%25" && v !== 0x20 && shouldEscape(v, Mode.Host)) {
          throw escapeError(s.slice(i, i + 3));
        }
      }
      i += 3;
    } else if (c === 0x2b) {
      hasPlus = mode === Mode.QueryComponent;
      i++;
    } else {
      if ((mode === Mode.Host || mode === Mode.Zone) && c < 0x80 && shouldEscape(c, mode)) {
        throw new UrlParseError(`invalid character ${goQuoteBytes(s[i] as string)} in host name`);
      }
      i++;
    }
  }
  if (n === 0 && !hasPlus) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      out += String.fromCharCode((unhex(s.charCodeAt(i + 1)) << 4) | unhex(s.charCodeAt(i + 2)));
      i += 2;
    } else if (c === 0x2b) {
      out += mode === Mode.QueryComponent ? " " : "+";
    } else {
      out += s[i];
    }
  }
  return out;
}

function escapeURL(s: string, mode: Mode): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x20 && mode === Mode.QueryComponent) out += "+";
    else if (shouldEscape(c, mode)) out += `%${UPPER_HEX[c >> 4]}${UPPER_HEX[c & 15]}`;
    else out += s[i];
  }
  return out;
}

function getScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) continue;
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) {
      if (i === 0) return ["", raw];
      continue;
    }
    if (c === 0x3a) {
      if (i === 0) throw new UrlParseError("missing protocol scheme");
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ["", raw];
  }
  return ["", raw];
}

function validOptionalPort(port: string): boolean {
  if (port === "") return true;
  if (port[0] !== ":") return false;
  for (let i = 1; i < port.length; i++) {
    const c = port.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

function validUserinfo(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isAlnum(c)) continue;
    if (!"-._:~!$&'()*+,;=%@".includes(s[i] as string)) return false;
  }
  return true;
}

/**
 * Go's parseHost, with the bracketed-literal check Go added for CVE-2025-47912 (1.24.8 / 1.25.2):
 * only an IPv6 address may stand in brackets.
 */
function parseHost(host: string): string {
  const open = host.lastIndexOf("[");
  if (open > 0) throw new UrlParseError("invalid IP-literal");
  if (open === 0) {
    const close = host.lastIndexOf("]");
    if (close < 0) throw new UrlParseError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort))
      throw new UrlParseError(`invalid port ${goQuoteBytes(colonPort)} after host`);
    const port = unescapeURL(colonPort, Mode.Host);
    const inner = host.slice(1, close);
    const zone = inner.indexOf("%25");
    const address =
      zone >= 0
        ? unescapeURL(inner.slice(0, zone), Mode.Host) + unescapeURL(inner.slice(zone), Mode.Zone)
        : unescapeURL(inner, Mode.Host);
    const problem = checkIPv6Literal(address);
    if (problem !== undefined) throw new UrlParseError(problem);
    return `[${address}]${port}`;
  }
  const colon = host.lastIndexOf(":");
  if (colon !== -1) {
    const colonPort = host.slice(colon);
    if (!validOptionalPort(colonPort))
      throw new UrlParseError(`invalid port ${goQuoteBytes(colonPort)} after host`);
  }
  return unescapeURL(host, Mode.Host);
}

type MutableURL = { -readonly [K in keyof GoURL]: GoURL[K] };

function emptyURL(): MutableURL {
  return {
    scheme: "",
    opaque: "",
    user: undefined,
    host: "",
    path: "",
    rawPath: "",
    omitHost: false,
    forceQuery: false,
    rawQuery: "",
    fragment: "",
    rawFragment: "",
  };
}

function hasCtlByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function parse(raw: string, viaRequest: boolean): MutableURL {
  if (hasCtlByte(raw)) throw new UrlParseError("net/url: invalid control character in URL");
  if (raw === "" && viaRequest) throw new UrlParseError("empty url");
  const url = emptyURL();
  if (raw === "*") {
    url.path = "*";
    return url;
  }
  let [scheme, rest] = getScheme(raw);
  url.scheme = scheme.toLowerCase();
  scheme = url.scheme;
  if (rest.endsWith("?") && rest.indexOf("?") === rest.length - 1) {
    url.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf("?");
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith("/")) {
    if (scheme !== "") {
      // A rootless path after a scheme is opaque (RFC 3986).
      url.opaque = rest;
      return url;
    }
    if (viaRequest) throw new UrlParseError("invalid URI for request");
    const slash = rest.indexOf("/");
    const segment = slash < 0 ? rest : rest.slice(0, slash);
    if (segment.includes(":")) throw new UrlParseError("first path segment in URL cannot contain colon");
  }
  if ((scheme !== "" || (!viaRequest && !rest.startsWith("///"))) && rest.startsWith("//")) {
    let authority = rest.slice(2);
    rest = "";
    const slash = authority.indexOf("/");
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const at = authority.lastIndexOf("@");
    url.host = parseHost(at < 0 ? authority : authority.slice(at + 1));
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!validUserinfo(userinfo)) throw new UrlParseError("net/url: invalid userinfo");
      const colon = userinfo.indexOf(":");
      if (colon < 0) {
        url.user = { username: unescapeURL(userinfo, Mode.UserPassword), password: "", passwordSet: false };
      } else {
        url.user = {
          username: unescapeURL(userinfo.slice(0, colon), Mode.UserPassword),
          password: unescapeURL(userinfo.slice(colon + 1), Mode.UserPassword),
          passwordSet: true,
        };
      }
    }
  } else if (scheme !== "" && rest.startsWith("/")) {
    url.omitHost = true;
  }
  url.path = unescapeURL(rest, Mode.Path);
  url.rawPath = escapeURL(url.path, Mode.Path) === rest ? "" : rest;
  return url;
}

function wrap(op: string, raw: string, err: unknown): never {
  if (err instanceof UrlParseError) throw new UrlParseError(`${op} ${goQuoteBytes(raw)}: ${err.message}`);
  throw err;
}

/** Go's `url.ParseRequestURI` on a byte string; throws with Go's message. */
function parseRequestURIBytes(raw: string): GoURL {
  try {
    return parse(raw, true);
  } catch (err) {
    return wrap("parse", raw, err);
  }
}

/** Go's `url.Parse` on a byte string; throws with Go's message. */
function parseURLBytes(raw: string): GoURL {
  const hash = raw.indexOf("#");
  const before = hash < 0 ? raw : raw.slice(0, hash);
  const frag = hash < 0 ? "" : raw.slice(hash + 1);
  let url: MutableURL;
  try {
    url = parse(before, false);
  } catch (err) {
    return wrap("parse", before, err);
  }
  if (frag === "") return url;
  try {
    url.fragment = unescapeURL(frag, Mode.Fragment);
    url.rawFragment = escapeURL(url.fragment, Mode.Fragment) === frag ? "" : frag;
  } catch (err) {
    return wrap("parse", raw, err);
  }
  return url;
}

/**
 * The error text of Go's `url.ParseRequestURI(s)`, or undefined when it succeeds. This is the check
 * behind `isURL`, `url()` and the `uri` format.
 */
export function requestURIError(s: string): string | undefined {
  try {
    parseRequestURIBytes(toByteString(s));
    return undefined;
  } catch (err) {
    if (err instanceof UrlParseError) return err.message;
    throw err;
  }
}

function validEncoded(s: string, mode: Mode): boolean {
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    if ("!$&'()*+,;=:@[]%".includes(ch)) continue;
    if (shouldEscape(s.charCodeAt(i), mode)) return false;
  }
  return true;
}

function escapedPath(u: GoURL): string {
  if (u.rawPath !== "" && validEncoded(u.rawPath, Mode.Path)) {
    try {
      if (unescapeURL(u.rawPath, Mode.Path) === u.path) return u.rawPath;
    } catch {
      // fall through to escaping Path
    }
  }
  if (u.path === "*") return "*";
  return escapeURL(u.path, Mode.Path);
}

function escapedFragment(u: GoURL): string {
  if (u.rawFragment !== "" && validEncoded(u.rawFragment, Mode.Fragment)) {
    try {
      if (unescapeURL(u.rawFragment, Mode.Fragment) === u.fragment) return u.rawFragment;
    } catch {
      // fall through to escaping Fragment
    }
  }
  return escapeURL(u.fragment, Mode.Fragment);
}

/** Go's `URL.String()`, as a byte string. */
function urlString(u: GoURL): string {
  let out = "";
  if (u.scheme !== "") out += `${u.scheme}:`;
  if (u.opaque !== "") {
    out += u.opaque;
  } else {
    if (u.scheme !== "" || u.host !== "" || u.user !== undefined) {
      if (!(u.omitHost && u.host === "" && u.user === undefined)) {
        if (u.host !== "" || u.path !== "" || u.user !== undefined) out += "//";
        if (u.user !== undefined) {
          out += escapeURL(u.user.username, Mode.UserPassword);
          if (u.user.passwordSet) out += `:${escapeURL(u.user.password, Mode.UserPassword)}`;
          out += "@";
        }
        if (u.host !== "") out += escapeURL(u.host, Mode.Host);
      }
    }
    const path = escapedPath(u);
    if (path !== "" && path[0] !== "/" && u.host !== "") out += "/";
    if (out === "") {
      // A first segment with a colon would read as a scheme (RFC 3986 §4.2).
      const slash = path.indexOf("/");
      if ((slash < 0 ? path : path.slice(0, slash)).includes(":")) out += "./";
    }
    out += path;
  }
  if (u.forceQuery || u.rawQuery !== "") out += `?${u.rawQuery}`;
  if (u.fragment !== "") out += `#${escapedFragment(u)}`;
  return out;
}

function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = "";
  const colon = host.lastIndexOf(":");
  if (colon !== -1 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return [host, port];
}

/** Go's `url.ParseQuery`, ignoring malformed pairs as `URL.Query()` does; keys keep first-seen order. */
function parseQuery(query: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const pair of query.split("&")) {
    if (pair === "" || pair.includes(";")) continue;
    const eq = pair.indexOf("=");
    let key: string;
    let value: string;
    try {
      key = unescapeURL(eq < 0 ? pair : pair.slice(0, eq), Mode.QueryComponent);
      value = unescapeURL(eq < 0 ? "" : pair.slice(eq + 1), Mode.QueryComponent);
    } catch {
      continue;
    }
    const list = m.get(key);
    if (list) list.push(value);
    else m.set(key, [value]);
  }
  return m;
}

// --- netip.ParseAddr, for bracketed hosts ---------------------------------------------------------

class AddrError extends Error {
  constructor(input: string, msg: string, at = "") {
    super(`ParseAddr(${goQuoteBytes(input)}): ${msg}${at === "" ? "" : ` (at ${goQuoteBytes(at)})`}`);
  }
}

/** Parses dotted-quad fields of `input.slice(off, end)`; throws Go's netip errors. */
function parseIPv4Fields(input: string, off: number, end: number): void {
  const s = input.slice(off, end);
  let val = 0;
  let pos = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      if (digits === 1 && val === 0) throw new AddrError(input, "IPv4 field has octet with leading zero");
      val = val * 10 + (c - 0x30);
      digits++;
      if (val > 255) throw new AddrError(input, "IPv4 field has value >255");
    } else if (c === 0x2e) {
      if (i === 0 || i === s.length - 1 || s[i - 1] === ".") {
        throw new AddrError(input, "IPv4 field must have at least one digit", s.slice(i));
      }
      if (pos === 3) throw new AddrError(input, "IPv4 address too long");
      pos++;
      val = 0;
      digits = 0;
    } else {
      throw new AddrError(input, "unexpected character", s.slice(i));
    }
  }
  if (pos < 3) throw new AddrError(input, "IPv4 address too short");
}

function parseIPv6(input: string): void {
  let s = input;
  let zone = "";
  const pct = s.indexOf("%");
  if (pct !== -1) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === "") throw new AddrError(input, "zone must be a non-empty string");
  }
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ":" && s[1] === ":") {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return;
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const c = s.charCodeAt(off);
      if (!isHex(c)) break;
      acc = acc * 16 + unhex(c);
      if (off > 3) throw new AddrError(input, "each group must have 4 or less digits", s);
      if (acc > 0xffff) throw new AddrError(input, "IPv6 field has value >=2^16", s);
    }
    if (off === 0) throw new AddrError(input, "each colon-separated field must have at least one digit", s);
    if (off < s.length && s[off] === ".") {
      if (ellipsis < 0 && i !== 12) {
        throw new AddrError(input, "embedded IPv4 address must replace the final 2 fields of the address", s);
      }
      if (i + 4 > 16)
        throw new AddrError(
          input,
          "too many hex fields to fit an embedded IPv4 at the end of the address",
          s,
        );
      const end = zone.length > 0 ? input.length - zone.length - 1 : input.length;
      parseIPv4Fields(input, end - s.length, end);
      s = "";
      i += 4;
      break;
    }
    i += 2;
    s = s.slice(off);
    if (s.length === 0) break;
    if (s[0] !== ":") throw new AddrError(input, "unexpected character, want colon", s);
    if (s.length === 1) throw new AddrError(input, "colon must be followed by more characters", s);
    s = s.slice(1);
    if (s[0] === ":") {
      if (ellipsis >= 0) throw new AddrError(input, "multiple :: in address", s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw new AddrError(input, "trailing garbage after address", s);
  if (i < 16) {
    if (ellipsis < 0) throw new AddrError(input, "address string too short");
  } else if (ellipsis >= 0) {
    throw new AddrError(input, "the :: must expand to at least one field of zeros", s);
  }
}

/** Why a bracketed host is not an IPv6 address (Go's message), or undefined when it is one. */
function checkIPv6Literal(address: string): string | undefined {
  try {
    for (let i = 0; i < address.length; i++) {
      const ch = address[i];
      if (ch === ".") {
        parseIPv4Fields(address, 0, address.length);
        return "invalid IP-literal";
      }
      if (ch === ":") {
        parseIPv6(address);
        return undefined;
      }
      if (ch === "%") throw new AddrError(address, "missing IPv6 address");
    }
    throw new AddrError(address, "unable to parse IP");
  } catch (err) {
    if (err instanceof AddrError) return `invalid host: ${err.message}`;
    throw err;
  }
}

// --- the CEL type ------------------------------------------------------------------------------

/** `kubernetes.URL`: a parsed URL. Two URLs are equal when they print the same. */
export class URLValue extends CelObject {
  readonly celType = "kubernetes.URL";
  constructor(readonly url: GoURL) {
    super();
  }
  /** Parses as Kubernetes' `url()` does; throws a CelError with Kubernetes' message. */
  static parse(s: string): URLValue {
    const raw = toByteString(s);
    try {
      parseRequestURIBytes(raw);
      // ParseRequestURI folds a #fragment into the path or query; Parse splits it off properly.
      return new URLValue(parseURLBytes(raw));
    } catch (err) {
      if (err instanceof UrlParseError)
        throw new CelError(`URL parse error during conversion from string: ${err.message}`);
      throw err;
    }
  }
  equals(other: CelValue): boolean {
    return other instanceof URLValue && urlString(other.url) === urlString(this.url);
  }
  override toString(): string {
    return fromByteString(urlString(this.url));
  }
  toJSON(): string {
    return this.toString();
  }
  scheme(): string {
    return fromByteString(this.url.scheme);
  }
  host(): string {
    return fromByteString(this.url.host);
  }
  hostname(): string {
    return fromByteString(splitHostPort(this.url.host)[0]);
  }
  port(): string {
    return fromByteString(splitHostPort(this.url.host)[1]);
  }
  escapedPath(): string {
    return fromByteString(escapedPath(this.url));
  }
  query(): CelMap {
    const m = new CelMap();
    for (const [k, vs] of parseQuery(this.url.rawQuery)) m.set(fromByteString(k), vs.map(fromByteString));
    return m;
  }
}

/** Code points of a string, which is what Kubernetes' cost functions count as its size. */
function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Kubernetes charges `url()` one traversal of its argument (0.1 per character, rounded up) in place of the base cost. */
function traversalCost(s: string): number {
  return Math.max(0, Math.ceil(runeCount(s) * 0.1) - 1);
}

export const urlLibrary: Library = {
  name: "kubernetes.urls",
  availability: "kubernetes",
  functions: [
    fn(
      "url",
      globalFn(
        "string_to_url",
        ["string"],
        "kubernetes.URL",
        (s: string) => URLValue.parse(s),
        traversalCost,
      ),
    ),
    fn(
      "isURL",
      globalFn("is_url_string", ["string"], "bool", (s: string) => requestURIError(s) === undefined),
    ),
    fn(
      "getScheme",
      memberFn("url_get_scheme", ["kubernetes.URL"], "string", (u: URLValue) => u.scheme()),
    ),
    fn(
      "getHost",
      memberFn("url_get_host", ["kubernetes.URL"], "string", (u: URLValue) => u.host()),
    ),
    fn(
      "getHostname",
      memberFn("url_get_hostname", ["kubernetes.URL"], "string", (u: URLValue) => u.hostname()),
    ),
    fn(
      "getPort",
      memberFn("url_get_port", ["kubernetes.URL"], "string", (u: URLValue) => u.port()),
    ),
    fn(
      "getEscapedPath",
      memberFn("url_get_escaped_path", ["kubernetes.URL"], "string", (u: URLValue) => u.escapedPath()),
    ),
    fn(
      "getQuery",
      memberFn("url_get_query", ["kubernetes.URL"], "map", (u: URLValue) => u.query()),
    ),
  ],
};
