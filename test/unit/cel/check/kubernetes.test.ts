/**
 * The checker in the Kubernetes admission environment: the typed admission variables
 * (admission/plugin/cel/compile.go, composition.go, cel/mutation), every library the environment
 * enables with its declarations (k8s.io/apiserver/pkg/cel/library/*.go, cel-go ext/*.go,
 * cel/library.go), the releases that enabled them (environment/base.go), and celgate's extras.
 * Expected types and error texts are the API server's (cel-go's checker with those declarations).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AdmissionCheckOptions,
  admissionCheckEnv,
  celTypes,
  formatType,
  resultTypeIssue,
} from "../../../../src/cel/check/index.ts";
import { check } from "./helpers.ts";

function checked(src: string, options: AdmissionCheckOptions = {}) {
  return check(src, admissionCheckEnv(options)).result;
}

function typeOf(src: string, options: AdmissionCheckOptions = {}): string {
  const r = checked(src, options);
  assert.deepEqual(
    r.diagnostics.map((d) => d.message),
    [],
    src,
  );
  return formatType(r.type);
}

function errors(src: string, options: AdmissionCheckOptions = {}): string[] {
  return checked(src, options).diagnostics.map((d) => d.message);
}

const TYPES: readonly (readonly [string, string])[] = [
  // The issue's examples that pass: cross-type ordering only.
  ["1 < 1.0 && 1u <= 2 && 2.5 > 1u", "bool"],
  ["object.spec.replicas <= 5", "bool"],
  ["object.metadata.?labels.orValue({})", "dyn"],
  // kubernetes.lists (library/lists.go doc examples)
  ["[1, 2, 3].isSorted()", "bool"],
  ["['a', 'b', 'b', 'c'].isSorted()", "bool"],
  ["[2.0, 1.0].isSorted()", "bool"],
  ["[].isSorted()", "bool"],
  ["[1, 3].sum()", "int"],
  ["[1.0, 3.0].sum()", "double"],
  ["[duration('1m'), duration('1s')].sum()", "duration"],
  // The first overload that fits binds the empty list's element type (int), ruling out the rest.
  ["[].sum()", "int"],
  ["[1, 3].min()", "int"],
  ["['b', 'a'].max()", "string"],
  ["[1, 2, 2, 3].indexOf(2)", "int"],
  ["['a', 'b', 'b', 'c'].lastIndexOf('b')", "int"],
  ["[1.0].indexOf(1.1)", "int"],
  ["[].indexOf('string')", "int"],
  // kubernetes.regex
  ["'abc 123'.find('[0-9]*')", "string"],
  ["'123 abc 456'.findAll('[0-9]*')", "list(string)"],
  ["'123 abc 456'.findAll('[0-9]*', 1)", "list(string)"],
  // kubernetes.urls
  ["url('https://example.com/path?k1=a').getQuery()", "map(string, list(string))"],
  ["url('https://example.com').getScheme()", "string"],
  ["isURL('https://example.com')", "bool"],
  // kubernetes.quantity
  ["quantity('12Mi')", "kubernetes.Quantity"],
  ["quantity('200M') == quantity('0.2G')", "bool"],
  ["quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()", "int"],
  ["quantity('50.703k').asApproximateFloat()", "double"],
  ["sign(quantity('-1'))", "int"],
  ["isQuantity('20Mi')", "bool"],
  // kubernetes.net.ip, net.cidr (library/ip_test.go, cidr_test.go)
  ["ip('192.168.0.1')", "net.IP"],
  ["type(ip('192.168.0.1')) == net.IP", "bool"],
  ["ip('127.0.0.1').family()", "int"],
  ["ip.isCanonical('127.0.0.1')", "bool"],
  ["string(ip('::1'))", "string"],
  ["cidr(dyn('192.168.0.0/24'))", "net.CIDR"],
  ["type(cidr('192.168.0.0/24')) == net.CIDR", "bool"],
  ["cidr('192.168.0.0/24').containsIP(ip('192.168.0.1')) && cidr('::/0').containsIP('::1')", "bool"],
  ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25')", "bool"],
  ["cidr('192.168.0.1/24').masked().ip()", "net.IP"],
  ["cidr('::1/128').prefixLength()", "int"],
  // format (library/format.go)
  ["format.dns1123Label().validate('my-label-name')", "optional_type(list(string))"],
  ["format.named('uuid').value().validate('x').hasValue()", "bool"],
  // kubernetes.Semver
  ["semver('1.2.3').major()", "int"],
  ["semver('1.0', true).compareTo(semver('1.0.0'))", "int"],
  ["isSemver('v1.0', true)", "bool"],
  // kubernetes.authz (library/authz.go): group() gives a GroupCheck, resource() a ResourceCheck
  [
    "authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('delete').allowed()",
    "bool",
  ],
  ["authorizer.path('/healthz').check('get').reason()", "string"],
  ["authorizer.requestResource.subresource('status').check('update').errored()", "bool"],
  ["authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('get').error()", "string"],
  // cel-go sets, strings (version 2), lists (version 3), optional types
  ["sets.contains([1, 2, 3], [2]) && sets.equivalent([1], [1]) && sets.intersects([1], [2])", "bool"],
  ["'abc'.charAt(1) + 'x'.lowerAscii() + 'a,b'.split(',')[0]", "string"],
  ["['a', 'b'].join(',')", "string"],
  ["'%d items, %s'.format([1, 'x'])", "string"],
  ["strings.quote('a')", "string"],
  ["[1, 2, 3].slice(1, 2)", "list(int)"],
  ["[[1], [2]].flatten()", "list(int)"],
  ["[3, 1, 2].sort()", "list(int)"],
  ["['bb', 'a'].sortBy(s, s.size())", "list(string)"],
  ["lists.range(3)", "list(int)"],
  ["[1, 2].reverse() + [1, 1].distinct()", "list(int)"],
  ["optional.of(1).value()", "int"],
  ["optional.none().orValue(2)", "int"],
  ["[1, 2][?5].hasValue()", "bool"],
  ["{'a': 1}[?'a'].orValue(0)", "int"],
  ["optional.ofNonZeroValue('').or(optional.of('x'))", "optional_type(string)"],
  // Two-variable comprehensions (ext/comprehensions.go)
  ["{'a': 1}.all(k, v, v > 0)", "bool"],
  ["[1, 2].exists(i, v, i == v)", "bool"],
  ["[1, 2].existsOne(i, v, i == v)", "bool"],
  ["{'a': 1}.transformMap(k, v, v + 1)", "map(string, int)"],
  ["{'a': 1}.transformMap(k, v, v > 0, k + 'x')", "map(string, string)"],
  ["[1, 2].transformList(i, v, v * i)", "list(int)"],
  ["{'a': 1}.transformMapEntry(k, v, {v: k})", "map(int, string)"],
  // Loop variables are typed from the range.
  ["{'a': 1}.map(k, k)", "list(string)"],
  ["[[1]].map(l, l[0])", "list(int)"],
  // request: kubernetes.AdmissionRequest (BuildRequestType)
  ["request.operation == 'CREATE' && request.dryRun", "bool"],
  ["request.userInfo.groups.exists(g, g == 'system:masters')", "bool"],
  ["request.userInfo.extra['k'][0]", "string"],
  ["request.kind.group + request.resource.resource + request.requestKind.kind", "string"],
  ["request.options.propagationPolicy", "dyn"],
  ["has(request.namespace)", "bool"],
  ["request", "kubernetes.AdmissionRequest"],
  // namespaceObject: kubernetes.Namespace (BuildNamespaceType)
  ["namespaceObject.metadata.labels['env'] == 'prod'", "bool"],
  ["namespaceObject.metadata.creationTimestamp < timestamp('2024-01-01T00:00:00Z')", "bool"],
  ["namespaceObject.status.conditions.exists(c, c.type == 'Ready')", "bool"],
  ["namespaceObject.spec.finalizers", "list(string)"],
];

for (const [src, want] of TYPES) {
  test(`kubernetes env: ${src} : ${want}`, () => {
    assert.equal(typeOf(src), want);
  });
}

const ERRORS: readonly (readonly [string, readonly string[]])[] = [
  // The issue's examples: the API server refuses each of these.
  ["1 == 1.0", ["found no matching overload for '_==_' applied to '(int, double)'"]],
  ["1u == 1", ["found no matching overload for '_==_' applied to '(uint, int)'"]],
  ["1 in [1.0]", ["found no matching overload for '@in' applied to '(int, list(double))'"]],
  ["[1] + [2.0]", ["found no matching overload for '_+_' applied to '(list(int), list(double))'"]],
  ["true ? 1 : 'a'", ["found no matching overload for '_?_:_' applied to '(bool, int, string)'"]],
  ["'abc'[0]", ["found no matching overload for '_[_]' applied to '(string, int)'"]],
  ["has([1, 2].foo)", ["type 'list(int)' does not support field selection"]],
  ["['a'].sum()", ["found no matching overload for 'sum' applied to 'list(string).()'"]],
  ["[[1]].min()", ["found no matching overload for 'min' applied to 'list(list(int)).()'"]],
  ["[1, 2].indexOf('a')", ["found no matching overload for 'indexOf' applied to 'list(int).(string)'"]],
  ["[1].join()", ["found no matching overload for 'join' applied to 'list(int).()'"]],
  [
    "sets.contains([1], ['1'])",
    ["found no matching overload for 'sets.contains' applied to '(list(int), list(string))'"],
  ],
  [
    "quantity('1') == '1Gi'",
    ["found no matching overload for '_==_' applied to '(kubernetes.Quantity, string)'"],
  ],
  ["request.foo", ["undefined field 'foo'"]],
  // Libraries
  ["cidr(192168)", ["found no matching overload for 'cidr' applied to '(int)'"]],
  ["isQuantity([1, 2, 3])", ["found no matching overload for 'isQuantity' applied to '(list(int))'"]],
  // Kubernetes declares sign as a global function only (library/quantity.go).
  ["quantity('1').sign()", ["found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'"]],
  [
    "authorizer.group('apps').check('get')",
    ["found no matching overload for 'check' applied to 'kubernetes.authorization.GroupCheck.(string)'"],
  ],
  [
    "authorizer.requestResource.resource('pods')",
    [
      "found no matching overload for 'resource' applied to 'kubernetes.authorization.ResourceCheck.(string)'",
    ],
  ],
  ["[[1]].sort()", ["found no matching overload for 'sort' applied to 'list(list(int)).()'"]],
  // Strings version 3's reverse is not in Kubernetes (version 2); lists' reverse is.
  ["'abc'.reverse()", ["found no matching overload for 'reverse' applied to 'string.()'"]],
  // Library types are not identifiers, except net.IP and net.CIDR (declared by library/ip.go, cidr.go).
  ["type(quantity('1')) == kubernetes.Quantity", ["undeclared reference to 'kubernetes' (in container '')"]],
  // Field selection on a library object: cel-go cannot resolve its (absent) message type.
  ["quantity('1').value", ["unexpected failed resolution of 'kubernetes.Quantity'"]],
  ["ip('::1').foo", ["unexpected failed resolution of 'net.IP'"]],
  // Comprehension predicates must be bool.
  ["[1].all(x, x)", ["expected type 'bool' but found 'int'"]],
  ["[1].exists(x, 'a')", ["expected type 'bool' but found 'string'"]],
  ["[1].exists_one(x, 1)", ["found no matching overload for '_?_:_' applied to '(int, int, int)'"]],
  ["[1].filter(x, x)", ["found no matching overload for '_?_:_' applied to '(int, list(int), list(int))'"]],
  ["[1].map(x, x, x)", ["found no matching overload for '_?_:_' applied to '(int, list(int), list(int))'"]],
  ["{'a': 1}.all(k, v, v)", ["expected type 'bool' but found 'int'"]],
  [
    "1.all(x, true)",
    ["expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)"],
  ],
  // The admission types
  ["namespaceObject.metadata.foo", ["undefined field 'foo'"]],
  ["request.userInfo.groups.foo", ["type 'list(string)' does not support field selection"]],
  ["request.operation == 1", ["found no matching overload for '_==_' applied to '(string, int)'"]],
  ["Object{spec: 1}", ["undeclared reference to 'Object' (in container '')"]],
  ["JSONPatch{op: 'add'}", ["undeclared reference to 'JSONPatch' (in container '')"]],
  [
    "jsonpatch.escapeKey('a/b')",
    [
      "undeclared reference to 'jsonpatch' (in container '')",
      "undeclared reference to 'escapeKey' (in container '')",
    ],
  ],
  ["variables.missing", ["undefined field 'missing'"]],
  // cel.bind is an extra: without it, a call of undeclared names.
  [
    "math.greatest(1, 2)",
    [
      "undeclared reference to 'math' (in container '')",
      "undeclared reference to 'greatest' (in container '')",
    ],
  ],
];

for (const [src, want] of ERRORS) {
  test(`kubernetes env refuses: ${src}`, () => {
    assert.deepEqual(errors(src), want);
  });
}

test("variables: typed as their expressions, converted as composition.go converts them (AddField)", () => {
  const variables: [string, celTypes.CelType | undefined][] = [
    ["n", celTypes.INT],
    ["names", celTypes.listOf(celTypes.STRING)],
    ["q", celTypes.objectType("kubernetes.Quantity")],
    ["opt", celTypes.optionalOf(celTypes.INT)],
    ["failed", undefined],
  ];
  assert.equal(typeOf("variables.n + 1", { variables }), "int");
  assert.equal(typeOf("variables.names.all(x, x != '')", { variables }), "bool");
  // Library objects, optionals and failed variables are dyn to the expressions after them.
  assert.equal(typeOf("variables.q", { variables }), "dyn");
  assert.equal(typeOf("variables.opt", { variables }), "dyn");
  assert.equal(typeOf("variables.failed", { variables }), "dyn");
  assert.deepEqual(errors("variables.n == 'x'", { variables }), [
    "found no matching overload for '_==_' applied to '(int, string)'",
  ]);
  // A variable is visible only to those compiled after it.
  assert.deepEqual(errors("variables.later", { variables }), ["undefined field 'later'"]);
});

test("params: dyn when the policy has a paramKind, undeclared otherwise (HasParams)", () => {
  assert.equal(typeOf("params.maxReplicas"), "dyn");
  assert.equal(
    typeOf("params.maxReplicas", { params: celTypes.mapOf(celTypes.STRING, celTypes.INT) }),
    "int",
  );
  assert.deepEqual(errors("params.maxReplicas", { params: null }), [
    "undeclared reference to 'params' (in container '')",
  ]);
});

test("object and oldObject: dyn, or the type given (typed from a schema later)", () => {
  const typed = celTypes.mapOf(celTypes.STRING, celTypes.INT);
  assert.equal(typeOf("object.replicas", { object: typed }), "int");
  assert.equal(typeOf("oldObject", { oldObject: typed }), "map(string, int)");
});

test("authorizer: declared for policies, absent where HasAuthorizer is false", () => {
  assert.equal(typeOf("authorizer"), "kubernetes.authorization.Authorizer");
  assert.deepEqual(errors("authorizer.path('/x')", { authorizer: false }), [
    "undeclared reference to 'authorizer' (in container '')",
  ]);
});

test("MutatingAdmissionPolicy: Object.* literals with dyn fields, JSONPatch, jsonpatch.escapeKey (mutation/*.go)", () => {
  const m = { mutation: true } as const;
  assert.equal(typeOf("Object{spec: Object.spec{replicas: 3, template: {'a': 1}}}", m), "Object");
  assert.equal(typeOf("Object.spec.template.spec{containers: []}", m), "Object.spec.template.spec");
  assert.equal(
    typeOf("[JSONPatch{op: 'add', path: '/x/' + jsonpatch.escapeKey('a/b'), value: {'a': 1}}]", m),
    "list(JSONPatch)",
  );
  assert.equal(typeOf("JSONPatch{op: 'test', path: '/x', from: '/y', value: dyn(1)}.value", m), "dyn");
  assert.deepEqual(errors("JSONPatch{op: 1}", m), [
    "expected type of field 'op' is 'string' but provided type is 'int'",
  ]);
  // An unknown JSONPatch field has no type (jsonpatch.go Field returns a nil type): only dyn fits.
  assert.deepEqual(errors("JSONPatch{foo: 1}", m), [
    "expected type of field 'foo' is '' but provided type is 'int'",
  ]);
  assert.deepEqual(errors("JSONPatch{foo: dyn(1)}", m), []);
});

test("release targeting: what a 1.27 or 1.29 API server did not have yet (environment/base.go)", () => {
  const v = (kubernetesVersion: string) => ({ kubernetesVersion });
  // CrossTypeNumericComparisons, optional types and quantity arrived in 1.28.
  assert.deepEqual(errors("1 < 1.0", v("1.27")), [
    "found no matching overload for '_<_' applied to '(int, double)'",
  ]);
  assert.equal(typeOf("1 < 1.0", v("1.28")), "bool");
  assert.deepEqual(errors("optional.none()", v("1.27")), [
    "undeclared reference to 'optional' (in container '')",
    "undeclared reference to 'none' (in container '')",
  ]);
  // IP and CIDR in 1.30, format in 1.31, two-variable comprehensions in 1.32, semver in 1.33, lists in 1.34.
  assert.deepEqual(errors("isIP('x')", v("1.29")), ["undeclared reference to 'isIP' (in container '')"]);
  assert.deepEqual(errors("semver('1.0.0')", v("1.32")), [
    "undeclared reference to 'semver' (in container '')",
  ]);
  assert.deepEqual(errors("[1].distinct()", v("1.33")), [
    "undeclared reference to 'distinct' (in container '')",
  ]);
  assert.equal(typeOf("[1].distinct()", v("1.34")), "list(int)");
  // Literal validators arrived in 1.29; strings' format and quote too.
  assert.deepEqual(errors("duration('1x')", v("1.28")), []);
  assert.deepEqual(errors("duration('1x')", v("1.29")), ["invalid duration argument"]);
  assert.deepEqual(errors("'%d'.format([1])", v("1.28")), [
    "undeclared reference to 'format' (in container '')",
  ]);
});

test("extras: math, base64 and cel.bind only when asked for", () => {
  const math = { extras: { math: true } } as const;
  assert.equal(typeOf("math.greatest(1, 2)", math), "int");
  assert.equal(typeOf("math.least([1.5, 2.0])", math), "double");
  assert.equal(typeOf("math.greatest(1, 2.0, 3u)", math), "dyn");
  assert.equal(typeOf("math.abs(-1) + math.bitShiftLeft(1, 2)", math), "int");
  assert.equal(typeOf("math.sqrt(4)", math), "double");
  // The macros' argument checks (ext/math.go mathGreatest/mathLeast).
  assert.deepEqual(errors("math.greatest('a')", math), ["math.greatest() invalid single argument value"]);
  assert.deepEqual(errors("math.least()", math), ["math.least() requires at least one argument"]);
  assert.deepEqual(errors("math.least(1, 'a', 2)", math), [
    "math.least() simple literal arguments must be numeric",
  ]);
  assert.equal(typeOf("base64.encode(b'x')", { extras: { base64: true } }), "string");
  assert.equal(typeOf("base64.decode('eA==')", { extras: { base64: true } }), "bytes");
  assert.equal(typeOf("cel.bind(x, 1, x + 1)"), "int");
});

test("result types: each kind of expression must have exactly its accessor's type (plugin/cel/compile.go)", () => {
  const t = (src: string, mutation = false) => checked(src, { mutation }).type;
  assert.equal(resultTypeIssue("validation", t("object.spec.replicas > 1")), undefined);
  assert.equal(resultTypeIssue("validation", t("object.spec.paused")), "must evaluate to bool but got dyn");
  assert.equal(resultTypeIssue("validation", t("1")), "must evaluate to bool but got int");
  assert.equal(resultTypeIssue("messageExpression", t("'x' + string(1)")), undefined);
  assert.equal(resultTypeIssue("auditAnnotation", t("null")), undefined);
  assert.equal(
    resultTypeIssue("auditAnnotation", t("1")),
    "must evaluate to one of [string null_type] but got int",
  );
  assert.equal(resultTypeIssue("variable", t("object.spec")), undefined);
  assert.equal(resultTypeIssue("applyConfiguration", t("Object{}", true)), undefined);
  assert.equal(resultTypeIssue("jsonPatch", t("[JSONPatch{op: 'add'}]", true)), undefined);
  assert.equal(
    resultTypeIssue("jsonPatch", t("[]", true)),
    "must evaluate to list(JSONPatch) but got list(dyn)",
  );
});

test("annotations: overloads, resolved function names and references for the planner", () => {
  const annotate = (src: string, options: AdmissionCheckOptions = {}) => {
    const { parsed, result } = check(src, admissionCheckEnv(options));
    assert.deepEqual(result.diagnostics, [], src);
    return { root: parsed.root, result };
  };
  const ns = annotate("optional.of(1)");
  assert.equal(ns.result.functions.get(ns.root.id), "optional.of");
  assert.deepEqual(ns.result.overloads.get(ns.root.id), ["optional_of"]);
  // A call keeps every overload its argument types fit, for the run time to pick among.
  const one = annotate("object.x + 1");
  assert.deepEqual(one.result.overloads.get(one.root.id), ["add_int64"]);
  assert.equal(formatType(one.result.type), "int");
  const all = annotate("object.x + object.y");
  assert.deepEqual(all.result.overloads.get(all.root.id), [
    "add_bytes",
    "add_double",
    "add_duration_duration",
    "add_duration_timestamp",
    "add_timestamp_duration",
    "add_int64",
    "add_list",
    "add_string",
    "add_uint64",
  ]);
  assert.equal(formatType(all.result.type), "dyn");
  const rr = annotate("authorizer.requestResource");
  assert.equal(rr.result.references.get(rr.root.id), "authorizer.requestResource");
  // map's step appends with `_+_` (add_list), as cel-go's `accu + [x]`.
  const m = annotate("[1].map(x, x * 2)");
  const comp = m.root as Extract<typeof m.root, { kind: "comprehension" }>;
  assert.equal(m.result.functions.get(comp.loopStep.id), "_+_");
  assert.deepEqual(m.result.overloads.get(comp.loopStep.id), ["add_list"]);
  const g = annotate("math.greatest(1, 2)", { extras: { math: true } });
  assert.equal(g.result.functions.get(g.root.id), "math.@max");
  assert.deepEqual(g.result.overloads.get(g.root.id), ["math_@max_int_int"]);
});
