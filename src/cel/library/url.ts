/**
 * Kubernetes' URL library (`url`, `isURL`, `getScheme`, ...), with Go's net/url semantics
 * (ported in ../go/url.ts): the argument must be an absolute URI or an absolute path
 * (`url.ParseRequestURI`), and the value is then taken from `url.Parse`.
 *
 * Go works on bytes, so the input is turned into a byte string (one char per UTF-8 byte) and
 * components are decoded back to text when read.
 */
import { CelError, CelMap, CelObject, type CelValue } from "../runtime/values.ts";
import {
  escapedPath,
  type GoURL,
  parseQuery,
  parseRequestURI,
  parseURL,
  requestURIError,
  splitHostPort,
  UrlParseError,
  urlString,
} from "../go/url.ts";
import { fromByteString, toByteString } from "../go/utf8.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

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
      parseRequestURI(raw);
      // ParseRequestURI folds a #fragment into the path or query; Parse splits it off properly.
      return new URLValue(parseURL(raw));
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
