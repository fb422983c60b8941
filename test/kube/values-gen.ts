/**
 * The expressions of the Values fuzzer, seeded and so reproducible: test/helpers/expr-gen.ts's
 * (operators, literals, conversions, macros, error paths; its free names written `variables.<name>`,
 * as corpus.ts does) and, beside them, well-typed calls of the Kubernetes CEL environment's library
 * functions (staging/src/k8s.io/apiserver/pkg/cel/environment/base.go: cel-go's strings, lists,
 * sets and optional extensions, and Kubernetes' lists, regex, url, quantity, ip, cidr, semver and
 * format libraries) with arguments that succeed and that fail, over literals, `object`, `params`,
 * `request` and `variables`, and expressions that run into the per-call cost limit.
 *
 * Each template is a function of a random source; `pickArg` draws from small pools so that the
 * same function meets good and bad input.
 */
import { generateExpressions, seededRandom } from "../helpers/expr-gen.ts";
import { rewriteNames } from "./corpus.ts";

type Rand = () => number;

function pick<X>(r: Rand, xs: readonly X[]): X {
  return xs[Math.floor(r() * xs.length)] as X;
}

const STRINGS = [
  "'abc'",
  "'Hello, World'",
  "''",
  "'ünï'",
  "'a,b,,c'",
  "variables.s",
  "object.data.k1",
  "params.data.p1",
];
const INTS = ["0", "1", "-1", "2", "7", "-17", "variables.i", "9223372036854775807", "-9223372036854775808"];
const LISTS = [
  "[1, 2, 3]",
  "[3, 1, 2]",
  "[]",
  "variables.l",
  "[1, 1, 2]",
  "[-5, 0, 5]",
  "[9223372036854775807, 1]",
];
const DOUBLE_LISTS = ["[1.5, 2.5]", "[0.1, 0.2]", "[1e308, 1e308]", "[-0.0]"];
const STRING_LISTS = ["['b', 'a']", "variables.ls", "['x']", "[]"];
const QUANTITIES = [
  "'1Gi'",
  "'500m'",
  "'1.5'",
  "'1e3'",
  "'1Ei'",
  "'9223372036854775807'",
  "'10Ki'",
  "'0.1'",
  "'-2'",
  "'1x'",
];
const IPS = [
  "'192.168.0.1'",
  "'::1'",
  "'10.0.0.1'",
  "'fe80::1'",
  "'0.0.0.0'",
  "'127.0.0.1'",
  "'2001:db8::1'",
  "'::ffff:1.2.3.4'",
  "'1.2.3'",
  "'224.0.0.1'",
];
const CIDRS = [
  "'10.0.0.0/8'",
  "'192.168.1.5/24'",
  "'::1/128'",
  "'2001:db8::/32'",
  "'0.0.0.0/0'",
  "'10.0.0.0/33'",
];
const URLS = [
  "'https://example.com:8080/a%20b?x=1&y=2&x=3'",
  "'http://[::1]:80/p'",
  "'https://user@host/path#frag'",
  "'/relative/path'",
  "'not a url'",
  "'https://example.com'",
];
const SEMVERS = ["'1.2.3'", "'1.2.3-alpha.1'", "'v1.2.3'", "'1.2'", "'01.2.3'", "'2.0.0+build'", "'1.10.0'"];
const REGEXES = ["'[0-9]+'", "'[a-z]'", "'(a)(b)?'", "'^$'", "'x*'", "'['"];
const FORMATS = [
  "dns1123Label",
  "dns1123Subdomain",
  "qualifiedName",
  "uuid",
  "uri",
  "byte",
  "date",
  "datetime",
  "labelValue",
];
const DURATIONS = ["'1h'", "'90s'", "'-1.5h'", "'1h30m'", "'0s'", "'1ms'", "'2562047h'", "'1d'"];
const TIMESTAMPS = [
  "'2020-01-01T00:00:00Z'",
  "'2024-02-29T12:34:56.789Z'",
  "'1970-01-01T00:00:00+01:00'",
  "'9999-12-31T23:59:59Z'",
  "'2020-13-01T00:00:00Z'",
];
const ZONES = ["'UTC'", "'America/New_York'", "'+05:30'", "'Asia/Kolkata'", "'Nowhere/City'"];

/** One call per template; each returns a CEL expression. */
const TEMPLATES: readonly ((r: Rand) => string)[] = [
  // cel-go strings extension (Kubernetes: strings v2)
  (r) => `${pick(r, STRINGS)}.charAt(${pick(r, ["0", "1", "3", "-1", "12"])})`,
  (r) =>
    `${pick(r, STRINGS)}.${pick(r, ["indexOf", "lastIndexOf"])}(${pick(r, ["'l'", "''", "'b'", "'l', 5", "'x', 99", "'', 2"])})`,
  (r) => `${pick(r, STRINGS)}.${pick(r, ["lowerAscii()", "upperAscii()", "trim()"])}`,
  (r) =>
    `${pick(r, STRINGS)}.replace(${pick(r, ["'l', 'L'", "'', '-'", "'a', 'b', 1", "'l', 'x', 0", "'l', 'x', -1"])})`,
  (r) => `${pick(r, STRINGS)}.split(${pick(r, ["','", "''", "',', 2", "',', 0", "',', -1"])})`,
  (r) => `${pick(r, STRINGS)}.substring(${pick(r, ["0", "1", "2, 4", "3, 1", "9", "-1"])})`,
  (r) => `${pick(r, STRING_LISTS)}.join(${pick(r, ["", "', '", "'-'"])})`,
  (r) => `strings.quote(${pick(r, [...STRINGS, "'a\\nb\\t\"c\"'", "'\\u00ff\\x01'"])})`,
  (r) =>
    `${pick(r, ["'%d'", "'%s'", "'%.2f'", "'%x'", "'%X'", "'%o'", "'%b'", "'%e'", "'%5d'", "'%.3s'", "'%%'", "'%d %d'"])}.format([${pick(r, ["1", "-3", "2.5", "'str'", "true", "null", "[1, 2]", "{'a': 1}", "b'ab'", "255u", "duration('1h')", "timestamp('2020-01-01T00:00:00Z')", "1e100", "-0.0"])}])`,
  (r) => `${pick(r, INTS)} ${pick(r, ["+", "-", "*", "/", "%"])} ${pick(r, INTS)}`,
  // cel-go lists extension (Kubernetes: lists v3)
  (r) => `${pick(r, LISTS)}.slice(${pick(r, ["0, 1", "1, 3", "2, 1", "0, 9", "-1, 1"])})`,
  (r) =>
    `${pick(r, ["[[1], [2, 3]]", "[[[1]], [2]]", "[]", "[[]]"])}.flatten(${pick(r, ["", "1", "2", "-1"])})`,
  (r) => `${pick(r, [...LISTS, ...STRING_LISTS, "[1, 1u, 1.0]", "[[1], [1]]"])}.distinct()`,
  (r) => `${pick(r, [...LISTS, ...STRING_LISTS, ...DOUBLE_LISTS])}.sort()`,
  (r) => `${pick(r, LISTS)}.sortBy(x, ${pick(r, ["-x", "x % 2", "string(x)"])})`,
  (r) => `lists.range(${pick(r, ["0", "3", "-1", "5"])})`,
  (r) => `${pick(r, [...LISTS, ...STRING_LISTS])}.reverse()`,
  // cel-go sets extension
  (r) => `sets.${pick(r, ["contains", "equivalent", "intersects"])}(${pick(r, LISTS)}, ${pick(r, LISTS)})`,
  // Kubernetes lists library
  (r) =>
    `${pick(r, [...LISTS, ...STRING_LISTS, ...DOUBLE_LISTS])}.${pick(r, ["isSorted()", "sum()", "min()", "max()"])}`,
  (r) => `${pick(r, LISTS)}.${pick(r, ["indexOf", "lastIndexOf"])}(${pick(r, ["1", "2", "9"])})`,
  // Kubernetes regex library
  (r) => `${pick(r, STRINGS)}.${pick(r, ["find", "findAll"])}(${pick(r, REGEXES)})`,
  (r) => `'a1b22c333'.findAll(${pick(r, REGEXES)}, ${pick(r, ["0", "1", "2", "-1"])})`,
  (r) => `${pick(r, STRINGS)}.matches(${pick(r, REGEXES)})`,
  // Kubernetes url library
  (r) =>
    `url(${pick(r, URLS)}).${pick(r, ["getScheme()", "getHost()", "getHostname()", "getPort()", "getEscapedPath()", "getQuery()"])}`,
  (r) => `isURL(${pick(r, URLS)})`,
  // Kubernetes quantity library
  (r) =>
    `quantity(${pick(r, QUANTITIES)}).${pick(r, ["asInteger()", "asApproximateFloat()", "isInteger()", "sign()"])}`,
  (r) =>
    `quantity(${pick(r, QUANTITIES)}).${pick(r, ["compareTo", "isGreaterThan", "isLessThan"])}(quantity(${pick(r, QUANTITIES)}))`,
  (r) =>
    `quantity(${pick(r, QUANTITIES)}).${pick(r, ["add", "sub"])}(${pick(r, ["quantity('1')", "1", "-5", "quantity('100Mi')"])}).asApproximateFloat()`,
  (r) => `isQuantity(${pick(r, QUANTITIES)})`,
  // Kubernetes ip and cidr libraries
  (r) =>
    `ip(${pick(r, IPS)}).${pick(r, ["family()", "isUnspecified()", "isLoopback()", "isLinkLocalMulticast()", "isLinkLocalUnicast()", "isGlobalUnicast()"])}`,
  (r) => `${pick(r, ["isIP", "ip.isCanonical", "isCIDR"])}(${pick(r, [...IPS, ...CIDRS])})`,
  (r) => `string(ip(${pick(r, IPS)}))`,
  (r) => `cidr(${pick(r, CIDRS)}).containsIP(${pick(r, [...IPS, `ip(${pick(r, IPS)})`])})`,
  (r) => `cidr(${pick(r, CIDRS)}).containsCIDR(${pick(r, CIDRS)})`,
  (r) => `cidr(${pick(r, CIDRS)}).prefixLength()`,
  (r) => `string(cidr(${pick(r, CIDRS)}).${pick(r, ["masked()", "ip()"])})`,
  // Kubernetes semver library
  (r) => `semver(${pick(r, SEMVERS)}).${pick(r, ["major()", "minor()", "patch()"])}`,
  (r) =>
    `semver(${pick(r, SEMVERS)}).${pick(r, ["compareTo", "isGreaterThan", "isLessThan"])}(semver(${pick(r, SEMVERS)}))`,
  (r) => `isSemver(${pick(r, SEMVERS)}${pick(r, ["", ", true", ", false"])})`,
  // Kubernetes format library
  (r) =>
    `format.${pick(r, FORMATS)}().validate(${pick(r, ["'abc'", "'Abc'", "'a.b'", "'-x'", "'2020-01-01'", "''", "'x/y'"])})`,
  (r) => `format.named(${pick(r, ["'dns1123Label'", "'nosuch'", "'uuid'"])}).hasValue()`,
  // optionals (cel-go optional library)
  (r) =>
    `${pick(r, ["optional.of(1)", "optional.none()", "optional.ofNonZeroValue(0)", "optional.ofNonZeroValue('x')", "variables.m.?a", "variables.m.?zz", "object.data.?k1", "object.data.?nope", "params.data.?p1"])}${pick(r, ["", ".hasValue()", ".orValue('dflt')", ".or(optional.of(2))"])}`,
  (r) =>
    `${pick(r, ["[1, 2]", "variables.l", "[]"])}[?${pick(r, ["0", "5", "-1"])}]${pick(r, ["", ".orValue(0)"])}`,
  (r) => `{?'a': ${pick(r, ["optional.of(1)", "optional.none()"])}, 'b': 2}`,
  (r) => `[?${pick(r, ["optional.of(1)", "optional.none()"])}, 3]`,
  // time
  (r) =>
    `timestamp(${pick(r, TIMESTAMPS)}).${pick(r, ["getFullYear", "getMonth", "getDayOfYear", "getDate", "getDayOfMonth", "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds"])}(${pick(r, ["", ...ZONES])})`,
  (r) =>
    `duration(${pick(r, DURATIONS)}).${pick(r, ["getHours()", "getMinutes()", "getSeconds()", "getMilliseconds()"])}`,
  (r) => `timestamp(${pick(r, TIMESTAMPS)}) ${pick(r, ["+", "-"])} duration(${pick(r, DURATIONS)})`,
  (r) => `timestamp(${pick(r, TIMESTAMPS)}) - timestamp(${pick(r, TIMESTAMPS)})`,
  (r) => `duration(${pick(r, DURATIONS)}) ${pick(r, ["+", "-"])} duration(${pick(r, DURATIONS)})`,
  (r) =>
    `${pick(r, ["int", "string"])}(${pick(r, [`timestamp(${pick(r, TIMESTAMPS)})`, `duration(${pick(r, DURATIONS)})`])})`,
  (r) => `timestamp(${pick(r, ["0", "1600000000", "-62135596801", "253402300800"])})`,
  // the request's own variables: object, params, request, namespaceObject
  (r) =>
    pick(r, [
      "object.metadata.name",
      "object.metadata.namespace",
      "object.metadata.labels",
      "object.data",
      "object.data.k1",
      "object.data['k2']",
      "object.data.missing",
      "has(object.data.k1)",
      "has(object.metadata.annotations)",
      "object.kind + '/' + object.apiVersion",
      "size(object.data)",
      "object.data.map(k, k).sort()",
      "object.data.k2.split(',')",
      "int(object.data.num) + 1",
      "params.data",
      "params.data.p1",
      "params.metadata.name",
      "params.data.p2.matches('^[0-9]+$')",
      "request.operation",
      "request.namespace",
      "request.name",
      "request.kind",
      "request.resource.resource",
      "request.dryRun",
      "request.subResource",
      "request.userInfo.username",
      "namespaceObject.metadata.name",
      "oldObject",
      "oldObject.metadata",
    ]),
  // the per-call cost limit (celconfig.PerCallLimit): comprehensions far beyond it
  (r) =>
    pick(r, [
      "lists.range(2000).map(x, lists.range(2000).filter(y, y == x)).size()",
      "lists.range(1100).all(x, lists.range(1100).all(y, x + y >= 0))",
      "lists.range(600).map(x, lists.range(600).map(y, string(x) + string(y))).size()",
      "lists.range(100).map(x, x).size()",
    ]),
];

/**
 * `count` distinct expressions from `seed`: library calls (up to a third; their pools hold fewer
 * distinct calls than that at the larger counts), the rest from expr-gen; the same seed always gives
 * the same list.
 */
export function valueExpressions(count: number, seed: number): string[] {
  const r = seededRandom(seed);
  const calls = new Set<string>();
  const third = Math.floor(count / 3);
  for (let attempts = 0; calls.size < third && attempts < third * 20; attempts++)
    calls.add(pick(r, TEMPLATES)(r));
  const out = new Set(calls);
  for (const e of generateExpressions(count - calls.size, seed)) out.add(rewriteNames(e));
  return [...out].slice(0, count);
}
