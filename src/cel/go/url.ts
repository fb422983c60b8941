/**
 * Go's net/url (net/url/url.go) as Kubernetes' URL library and its `uri` format use it: Parse,
 * ParseRequestURI, URL.String, EscapedPath, the host:port split and ParseQuery, with Go's error
 * texts. Nothing is normalized the way WHATWG `URL` would (hosts keep their case, paths keep their
 * dot segments, IPv6 hosts keep their brackets).
 *
 * Go works on bytes, so this port does too: every string here is a byte string (utf8.ts), one char
 * per UTF-8 byte; callers convert at the edges.
 */
import { parseAddr } from "./netip.ts";
import { quoteBytes } from "./quote.ts";
import { toByteString } from "./utf8.ts";

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

/** A parse failure; `message` is Go's text (url.Error's, with the `parse "..."` wrapper where Go adds it). */
export class UrlParseError extends Error {}

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
  return new UrlParseError(`invalid URL escape ${quoteBytes(s)}`);
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
        throw new UrlParseError(`invalid character ${quoteBytes(s[i] as string)} in host name`);
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
 * Why a bracketed host is not an IPv6 address (Go's message), or undefined when it is one: net/url's
 * parseHost asks netip.ParseAddr and refuses an IPv4 address in brackets.
 */
function checkIPv6Literal(address: string): string | undefined {
  const addr = parseAddr(address, quoteBytes);
  if (!addr.ok) return `invalid host: ${addr.error}`;
  return addr.family === 4 ? "invalid IP-literal" : undefined;
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
      throw new UrlParseError(`invalid port ${quoteBytes(colonPort)} after host`);
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
      throw new UrlParseError(`invalid port ${quoteBytes(colonPort)} after host`);
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
  if (err instanceof UrlParseError) throw new UrlParseError(`${op} ${quoteBytes(raw)}: ${err.message}`);
  throw err;
}

/** Go's `url.ParseRequestURI` on a byte string; throws a UrlParseError with Go's message. */
export function parseRequestURI(raw: string): GoURL {
  try {
    return parse(raw, true);
  } catch (err) {
    return wrap("parse", raw, err);
  }
}

/** Go's `url.Parse` on a byte string; throws a UrlParseError with Go's message. */
export function parseURL(raw: string): GoURL {
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
    parseRequestURI(toByteString(s));
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

export function escapedPath(u: GoURL): string {
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
export function urlString(u: GoURL): string {
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

export function splitHostPort(hostPort: string): [string, string] {
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
export function parseQuery(query: string): Map<string, string[]> {
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
