/**
 * The generated corpus of the Acceptance test: expressions the API server and celgate's checker
 * must accept or refuse alike, each put into a ValidatingAdmissionPolicy as a variable (a variable
 * may have any type, so an expression is judged by the checker alone, not by a validation's
 * bool-only rule; staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/
 * validation of spec.variables compiles every variable, used or not).
 *
 * Two sources, seeded and so reproducible:
 * - test/helpers/expr-gen.ts (operators, literals, conversions, macros, error paths), whose free
 *   names (`i`, `m`, ...) become `variables.i`, ... declared first in each policy with the values
 *   generatorBindings() gives them;
 * - calls of every function name of Kubernetes' CEL environments (the standard library, cel-go's
 *   extensions it adds, and Kubernetes' own libraries: staging/src/k8s.io/apiserver/pkg/cel/
 *   environment/base.go), as a global and as a method, with receivers and arguments of every type,
 *   so that both the overloads that exist and those that do not are asked for.
 */
import { generateExpressions, seededRandom } from "../helpers/expr-gen.ts";
import type { KubeManifest } from "../helpers/kube-objects.ts";

/** The expr-gen bindings as VAP variables: names and CEL literals of the values generatorBindings() holds. */
export const CORPUS_VARIABLES: readonly (readonly [string, string])[] = [
  ["i", "7"],
  ["u", "3u"],
  ["d", "2.5"],
  ["s", "'hello'"],
  ["b", "true"],
  ["by", "b'ab'"],
  ["n", "null"],
  ["l", "[1, 2, 3]"],
  ["ls", "['a', 'bc', '']"],
  ["m", "{'a': dyn(1), 'b': dyn('x'), 'c': dyn([1, 2]), 'd': dyn({'e': true}), 'f': dyn(2.5)}"],
  ["mi", "{dyn(1): 'one', dyn(2u): 'two', dyn(true): 'yes'}"],
];

const NAMES = new Set(CORPUS_VARIABLES.map(([n]) => n));

/**
 * `expr` with each free use of a corpus variable written `variables.<name>`: identifiers outside
 * string, bytes and number literals, not after a `.` (a field) and not before `(` (a function).
 */
export function rewriteNames(expr: string): string {
  let out = "";
  let i = 0;
  while (i < expr.length) {
    const c = expr[i] as string;
    const quote = /^(?:[rRbB]{0,2})('''|"""|'|")/.exec(expr.slice(i));
    if (quote && (i === 0 || !/[\w.]/.test(expr[i - 1] as string))) {
      const q = quote[1] as string;
      let j = i + quote[0].length;
      while (j < expr.length && !expr.startsWith(q, j)) j += expr[j] === "\\" ? 2 : 1;
      j += q.length;
      out += expr.slice(i, j);
      i = j;
      continue;
    }
    // A number, with its suffix or exponent, is no name (`3u`, `0x1Fu`, `1e308`).
    const number = /^(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)[uU]?/.exec(expr.slice(i));
    if (number) {
      out += number[0];
      i += number[0].length;
      continue;
    }
    const ident = /^[A-Za-z_]\w*/.exec(expr.slice(i));
    if (ident) {
      const name = ident[0];
      const prev = expr.slice(0, i).trimEnd().at(-1);
      const next = expr.slice(i + name.length).trimStart()[0];
      out += NAMES.has(name) && prev !== "." && next !== "(" ? `variables.${name}` : name;
      i += name.length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** Receivers and arguments of each type the libraries take, and some they do not. */
const VALUES: readonly string[] = [
  "'abc'",
  "'1.2.3'",
  "'10.0.0.1'",
  "'10.0.0.0/8'",
  "'https://example.com:8080/a?b=c'",
  "'1Gi'",
  "'%d and %s'",
  "'[a-z]+'",
  "7",
  "2u",
  "1.5",
  "true",
  "b'ab'",
  "null",
  "[1, 2, 3]",
  "['b', 'a']",
  "[[1], [2, 3]]",
  "{'a': 1}",
  "duration('1h')",
  "timestamp('2024-01-02T03:04:05Z')",
  "quantity('500m')",
  "ip('192.168.0.1')",
  "cidr('192.168.0.0/16')",
  "url('https://example.com/x')",
  "semver('1.2.3')",
  "optional.of(1)",
  "optional.none()",
  "dyn(1)",
  "type(1)",
];

/** Function names of the standard library, cel-go's extensions Kubernetes enables, and Kubernetes' libraries. */
// biome-ignore format: a table of names by library, easier to read compact
const FUNCTIONS: readonly string[] = [
  // standard
  "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string", "bytes",
  "bool", "duration", "timestamp", "dyn", "type", "getFullYear", "getMonth", "getDayOfYear", "getDate",
  "getDayOfMonth", "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
  // cel-go ext: strings (v2), sets, lists (v3), optional
  "charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split", "substring", "trim",
  "join", "reverse", "strings.quote", "format", "sets.contains", "sets.equivalent", "sets.intersects",
  "slice", "flatten", "distinct", "sort", "sortBy", "lists.range", "first", "last", "optional.of",
  "optional.none", "optional.ofNonZeroValue", "hasValue", "value", "orValue", "or",
  // cel-go ext not enabled by Kubernetes (must be refused alike)
  "base64.encode", "base64.decode", "math.greatest", "math.least", "math.abs", "math.ceil", "math.sqrt",
  "math.bitAnd", "math.isNaN", "strings.format", "encoders.base64",
  // Kubernetes: lists, regex, url, quantity, ip, cidr, format, semver, authz (no authorizer here)
  "isSorted", "sum", "min", "max", "find", "findAll", "url", "isURL", "getScheme", "getHost",
  "getHostname", "getPort", "getEscapedPath", "getQuery", "quantity", "isQuantity", "isGreaterThan",
  "isLessThan", "compareTo", "add", "sub", "asInteger", "asApproximateFloat", "isInteger", "sign", "ip",
  "isIP", "isCanonical", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
  "isLinkLocalUnicast", "isGlobalUnicast", "cidr", "isCIDR", "containsIP", "containsCIDR", "masked",
  "prefixLength", "semver", "isSemver", "major", "minor", "patch", "jsonpatch.escapeKey", "path", "group",
  "resource", "check", "allowed", "reason", "errored", "error", "fieldSelector", "labelSelector",
  // not a function anywhere
  "nosuchfunction",
];

/** `count` calls of the library functions, seeded: a global or a method, with 0 to 2 arguments. */
export function libraryCalls(count: number, seed: number): string[] {
  const r = seededRandom(seed);
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)] as X;
  const out = new Set<string>();
  // Every name at least once as a method on a string and as a global of one argument.
  for (const f of FUNCTIONS) {
    out.add(f.includes(".") ? `${f}('abc')` : `'abc'.${f}()`);
    out.add(`${f}(${pick(VALUES)})`);
  }
  let attempts = 0;
  while (out.size < count && attempts++ < count * 20) {
    const f = pick(FUNCTIONS);
    const args = Array.from({ length: Math.floor(r() * 3) }, () => pick(VALUES)).join(", ");
    out.add(!f.includes(".") && r() < 0.6 ? `${pick(VALUES)}.${f}(${args})` : `${f}(${args})`);
  }
  return [...out].slice(0, Math.max(count, FUNCTIONS.length * 2));
}

export interface CorpusCase {
  readonly expression: string;
  /** The policy it is in, and its field there. */
  readonly policy: string;
  readonly field: string;
}

export interface Corpus {
  readonly cases: readonly CorpusCase[];
  readonly policies: readonly KubeManifest[];
}

/** Policies of `perPolicy` expressions each, the corpus variables first. */
export function corpusPolicies(expressions: readonly string[], perPolicy: number): Corpus {
  const cases: CorpusCase[] = [];
  const policies: KubeManifest[] = [];
  for (let start = 0; start < expressions.length; start += perPolicy) {
    const name = `corpus-${String(policies.length).padStart(3, "0")}.celgate.test`;
    const chunk = expressions.slice(start, start + perPolicy);
    const variables = [
      ...CORPUS_VARIABLES.map(([n, e]) => ({ name: n, expression: e })),
      ...chunk.map((e, j) => ({ name: `g${j}`, expression: e })),
    ];
    chunk.forEach((expression, j) => {
      cases.push({
        expression,
        policy: name,
        field: `spec.variables[${CORPUS_VARIABLES.length + j}].expression`,
      });
    });
    policies.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] },
          ],
        },
        variables,
        validations: [{ expression: "true" }],
      },
    });
  }
  return { cases, policies };
}

/**
 * Syntax errors people make, whose messages and positions must be cel-go's (issue 34): unclosed and
 * unbalanced brackets (on one line and across lines) and trailing operators.
 */
export const SYNTAX_ERRORS: readonly string[] = [
  "1 +",
  "object.metadata.name == 'a' &&",
  "(1 + 2",
  "[1, 2",
  "{'a': 1",
  "size(object.metadata.name]",
  "1 + 2)",
  "object.spec.containers.exists(c,\n  (c.name == 'a')",
  "object.spec.containers.all(c,\n  c.name.startsWith('a')",
];

/** The whole corpus: `generated` expr-gen expressions, `calls` library calls, from `seed`, and SYNTAX_ERRORS. */
export function acceptanceCorpus(generated: number, calls: number, seed: number): string[] {
  return [
    ...generateExpressions(generated, seed).map(rewriteNames),
    ...libraryCalls(calls, seed + 1),
    ...SYNTAX_ERRORS,
  ];
}
