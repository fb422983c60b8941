/**
 * JSON input is read lazily (runtime/values.ts fromJson): the engine hands CEL the request's objects as they
 * were parsed and converts what an expression reads. These tests hold that to the eager `toCel`
 * conversion, which the public API still uses: every expression must give the same typed result,
 * or the same error, either way, and the input must come out as it went in.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ADMISSION_VARIABLES,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  run,
  toCel,
  toJson,
} from "../../../src/cel/index.ts";
import { canonOurs } from "../../helpers/differential.ts";
import { setCodegenMode } from "../../../src/cel/configure.ts";
import { parseJson } from "../../../src/yaml/json-numbers.ts";

// Every case on generated code (plan/gen.ts); nodes without an emitter still run as closures inside it.
setCodegenMode("always");

// Unchecked: the cases build mixed-type literals to compare lazy and eager input at run time.
const ENV = createEnvironment({
  variables: { ...ADMISSION_VARIABLES },
  extras: { bind: true, math: true, base64: true },
  checks: "none",
});

/** A document with every shape of number JSON can hold where CEL tells int from double. */
const DOC_TEXT = JSON.stringify({
  metadata: { name: "web", labels: { app: "web", tier: "1" }, generation: 7 },
  spec: {
    replicas: 3,
    ratio: 0.5,
    whole: 2.0,
    negative: -4,
    big: 2 ** 53 + 2,
    huge: 1e20,
    ports: [80, 443.5, 8080],
    matrix: [[1, 2], [3.5]],
    empty: [],
    names: ["a", "b"],
    byName: { a: 1, b: 2.5, c: [1, 2] },
    containers: [
      { name: "app", ports: [{ containerPort: 80, hostPort: 0 }], resources: { limits: { cpu: 1 } } },
      { name: "side", ports: [{ containerPort: 9090 }], securityContext: { runAsUser: 1000 } },
    ],
    nothing: null,
  },
});

const EXPRESSIONS = [
  "object.spec.replicas",
  "object.spec.replicas + 1",
  "type(object.spec.replicas) == int",
  "type(object.spec.ratio) == double",
  "object.spec.whole",
  "object.spec.whole + 1",
  "object.spec.negative * 2",
  "object.spec.big",
  "object.spec.huge",
  "object.spec.ports",
  "object.spec.ports[0] + 1",
  "object.spec.ports[1]",
  "object.spec.ports.map(p, type(p))",
  "object.spec.ports.filter(p, p > 100)",
  "object.spec.ports.exists(p, p == 80)",
  "80 in object.spec.ports",
  "80.0 in object.spec.ports",
  "object.spec.ports == [80, 443.5, 8080]",
  "object.spec.ports + [1]",
  "object.spec.matrix",
  "object.spec.matrix[0][1] + 1",
  "object.spec.matrix[1][0]",
  "object.spec.matrix.map(r, r.map(x, type(x)))",
  "object.spec.empty",
  "object.spec.byName",
  "object.spec.byName.a + 1",
  "object.spec.byName['a'] + 1",
  "object.spec.byName['b']",
  "object.spec.byName.c[1] + 1",
  "object.spec.byName.map(k, object.spec.byName[k])",
  "object.spec.byName.all(k, k != '')",
  "object.spec.byName.transformList(k, v, type(v))",
  "object.spec.byName.exists(k, v, v == 2.5)",
  "object.spec.byName == {'a': 1, 'b': 2.5, 'c': [1, 2]}",
  "object.spec.byName == {'a': 1.0, 'b': 2.5, 'c': [1.0, 2.0]}",
  "object.spec.?byName.?a",
  "object.spec.?byName.?a.orValue(0) + 1",
  "object.spec.byName[?'b']",
  "object.spec.?missing.orValue(5) + 1",
  "object.spec.containers.map(c, c.ports.map(p, p.containerPort))",
  "object.spec.containers.all(c, c.?securityContext.?runAsUser.orValue(1) > 0)",
  "object.spec.containers.exists(c, c.ports.exists(p, p.?hostPort.orValue(0) != 0))",
  "object.spec.containers[0].resources.limits.cpu",
  "object.spec.containers[1].securityContext",
  "object.spec.containers.map(c, {'path': c.name, 'c': c})[1].c.securityContext.runAsUser + 1",
  "object.metadata.generation",
  "string(object.metadata.generation)",
  "object.metadata.labels.tier",
  "object.spec.nothing",
  "object.spec.nothing == null",
  "size(object.spec.ports)",
  "object.spec.ports.sum()",
  "object.spec.ports.max()",
  "object.spec.ports.sort()",
  "object.spec.matrix[0].indexOf(2)",
  "dyn(object.spec.replicas) + 1",
  "optional.of(object.spec.byName).value().a + 1",
  "[object.spec.byName][0].c",
  "{'k': object.spec.ports}.k[0] + 1",
  "cel.bind(x, object.spec.byName, x.a + 1)",
  "math.greatest(object.spec.ports)",
  "'%d'.format([object.spec.replicas])",
  "'%s'.format([object.spec.byName])",
  "object.spec.replicas == 3.0",
  "object.spec.ratio + 1",
  "object.spec.replicas + 0.5",
  "object.spec == object.spec",
  "object.spec.byName.a < object.spec.byName.b",
];

/** A double the evaluator computed stays a double wherever it is stored and read back. */
const BUILT_VALUES = [
  ["{'a': 2.0}.a", "double(2)"],
  ["type({'a': 2.0}.a) == double", "bool(true)"],
  ["{'a': [2.0, 3]}.a", "[double(2),int(3)]"],
  ["{'a': {'b': 2.0}}.a.b", "double(2)"],
  ["{'a': 2.0}.?a.orValue(1.0)", "double(2)"],
  ["{'a': 2.0}['a']", "double(2)"],
  ["{'a': 2.0}.all(k, v, type(v) == double)", "bool(true)"],
  ["{'a': 2.0} == {'a': 2}", "bool(true)"],
] as const;

type Outcome = { readonly value: string } | { readonly error: string };

/** The outcome with and without the activation's promise of JSON input, which must agree. */
function evalWith(source: string, object: CelValue): Outcome {
  const c = compile(source, ENV);
  if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.rendered).join("\n")}`);
  const [promised, plain] = [true, false].map((json) => {
    const r = run(
      c.program,
      { values: { object }, json },
      new EvalState(1_000_000, performance.now() + 10_000),
    );
    return r.ok ? { value: canonOurs(r.value) } : { error: r.error.message };
  });
  assert.deepEqual(promised, plain, `${source}: with and without the promise of JSON input`);
  return promised as Outcome;
}

test("JSON input read lazily gives what the eager toCel conversion gives, expression by expression", () => {
  const raw = JSON.parse(DOC_TEXT) as CelValue;
  const converted = toCel(JSON.parse(DOC_TEXT));
  const errors: string[] = [];
  for (const source of EXPRESSIONS) {
    const lazy = evalWith(source, raw);
    assert.deepEqual(lazy, evalWith(source, converted), source);
    if ("error" in lazy) errors.push(source);
  }
  // Only the mixed int/double arithmetic fails, both ways; everything else must give a value.
  assert.deepEqual(errors, [
    "object.spec.ports.sum()",
    "object.spec.ports.sort()",
    "object.spec.ratio + 1",
    "object.spec.replicas + 0.5",
  ]);
});

test("JSON input: ints and doubles come out typed as Kubernetes decodes them", () => {
  const raw = JSON.parse(DOC_TEXT) as CelValue;
  const expect: Record<string, string> = {
    "object.spec.replicas + 1": "int(4)",
    "object.spec.whole": "int(2)",
    "object.spec.ratio": "double(0.5)",
    "object.spec.huge": "double(100000000000000000000)",
    "object.spec.ports": "[int(80),double(443.5),int(8080)]",
    "object.spec.matrix[0][1] + 1": "int(3)",
    "object.spec.byName.b": "double(2.5)",
    "object.spec.byName.c[1] + 1": "int(3)",
  };
  for (const [source, want] of Object.entries(expect))
    assert.deepEqual(evalWith(source, raw), { value: want }, source);
});

test("JSON input is left as it was: nothing is converted in place", () => {
  const raw = JSON.parse(DOC_TEXT) as CelValue;
  for (const source of EXPRESSIONS) evalWith(source, raw);
  assert.deepEqual(raw, JSON.parse(DOC_TEXT));
});

test("maps the evaluator builds keep its doubles: 2.0 read back is a double, not an int", () => {
  for (const [source, want] of BUILT_VALUES)
    assert.deepEqual(evalWith(source, null), { value: want }, source);
});

test("a member named __proto__ stays a member through toCel, the evaluator and toJson", () => {
  const object = JSON.parse('{"metadata":{"__proto__":{"x":1},"name":"p"}}') as Record<string, unknown>;
  const asCel = toCel(object) as Record<string, Record<string, unknown>>;
  assert.ok(Object.hasOwn(asCel.metadata as object, "__proto__"));
  assert.equal(Object.getPrototypeOf(asCel.metadata), Object.prototype);
  for (const source of [
    "object.metadata",
    // A map the evaluator builds (a CelMap when a key is computed).
    '{"__proto__": object.metadata["__proto__"], "name": object.metadata.name}',
    '{"__proto__": 1}.map(k, k).size() == 1 ? {"__proto__": {"x": 1}, "name": "p"} : {}',
    // An object literal (a mutation's `Object{...}`), whose field names are identifiers.
    'Object{__proto__: Object{x: 1}, name: "p"}',
  ]) {
    const env = createEnvironment({
      variables: { ...ADMISSION_VARIABLES },
      structTypes: ["Object"],
      checks: "none",
    });
    const c = compile(source, env);
    if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.rendered).join("\n")}`);
    const r = run(
      c.program,
      { values: { object: object as CelValue } },
      new EvalState(1e6, performance.now() + 10_000),
    );
    if (!r.ok) assert.fail(`${source}: ${r.error.message}`);
    const json = toJson(r.value) as Record<string, unknown>;
    assert.equal(JSON.stringify(json), '{"__proto__":{"x":1},"name":"p"}', source);
    assert.equal(Object.getPrototypeOf(json), Object.prototype, source);
  }
});

test("members named as Object.prototype's are read as members, and absent ones as absent", () => {
  // Generated code tests `v.constructor` to tell a JSON map from other values, so a map with its own
  // `constructor` member must take the general path and still read right; reading a member must not
  // see Object.prototype's.
  const text = '{"constructor":{"a":1},"plain":{"b":2,"n":null},"toString":"t"}';
  const expect: Record<string, Outcome> = {
    "object.constructor.a + 1": { value: "int(2)" },
    "has(object.constructor)": { value: "bool(true)" },
    "object.?constructor.?a.orValue(0)": { value: "int(1)" },
    "object.toString": { value: '"t"' },
    "object.plain.b + 1": { value: "int(3)" },
    "has(object.plain.n)": { value: "bool(true)" },
    "object.plain.n == null": { value: "bool(true)" },
    "has(object.plain.constructor)": { value: "bool(false)" },
    "has(object.plain.toString)": { value: "bool(false)" },
    "has(object.plain.missing)": { value: "bool(false)" },
    "object.plain.?constructor.orValue(5)": { value: "int(5)" },
    "object.plain.?hasOwnProperty.hasValue()": { value: "bool(false)" },
    "object.plain.?missing.orValue(5)": { value: "int(5)" },
    "object.plain.constructor": { error: "no such key: constructor" },
    "object.plain.missing": { error: "no such key: missing" },
  };
  for (const [source, want] of Object.entries(expect)) {
    const lazy = evalWith(source, JSON.parse(text) as CelValue);
    assert.deepEqual(lazy, want, source);
    assert.deepEqual(evalWith(source, toCel(JSON.parse(text))), want, `${source} (toCel)`);
  }
});

test("a member holding undefined reads as absent, as in the JSON it stands for, in both tiers", () => {
  // JSON.parse and YAML make no such member; objects built by hand can, and JSON.stringify drops it.
  const object = () =>
    ({
      spec: { gone: undefined, toString: undefined, kept: null },
      list: [undefined],
    }) as unknown as CelValue;
  const expect: Record<string, Outcome> = {
    "has(object.spec.gone)": { value: "bool(false)" },
    "has(object.spec.toString)": { value: "bool(false)" },
    "object.spec.?gone.orValue(5)": { value: "int(5)" },
    "object.spec.?toString.orValue(5)": { value: "int(5)" },
    "object.spec.gone": { error: "no such key: gone" },
    "has(object.spec.kept)": { value: "bool(true)" },
    "object.spec.kept == null": { value: "bool(true)" },
    // In a list it still has a place, so it reads as null (toCel's conversion).
    "object.list[0] == null": { value: "bool(true)" },
  };
  for (const mode of ["always", "never"] as const) {
    const was = setCodegenMode(mode);
    try {
      for (const [source, want] of Object.entries(expect))
        for (let run = 0; run < 2; run++)
          assert.deepEqual(evalWith(source, object()), want, `${source} (${mode})`);
    } finally {
      setCodegenMode(was);
    }
  }
});

/** A JSON list nested `depth` levels as text, `[[…[leaf],1]…,1]` (JSON.stringify itself recurses). */
function nestedListText(depth: number, leaf: string): string {
  return `${"[".repeat(depth - 1)}[${leaf}]${",1]".repeat(depth - 1)}`;
}

test("nested JSON lists are converted once each, at any depth: each level is read as typed (issue 37 item 1)", () => {
  // Each level was converted twice, so 40 levels took 2^40 steps; 100,000 levels also overflowed the stack.
  for (const depth of [40, 100_000]) {
    const raw = JSON.parse(`{"spec":{"deep":${nestedListText(depth, "2.5")}}}`) as CelValue;
    const source = `object.spec.deep[1] + 1 == 2 && object.spec.deep[0][1] == 1`;
    assert.deepEqual(evalWith(source, raw), { value: "bool(true)" }, `depth ${depth}`);
  }
  // A list of lists that needs no conversion is read as it is.
  const strings = JSON.parse(`{"spec":{"deep":${nestedListText(50, '"s"').replaceAll(",1]", ',"t"]')}}}`);
  assert.deepEqual(evalWith("object.spec.deep[1]", strings as CelValue), { value: '"t"' });
});

test("lists nested 100,000 deep compare without recursion, equal or differing at the innermost level", () => {
  const doc = (a: string, b: string) =>
    JSON.parse(`{"spec":{"a":${nestedListText(100_000, a)},"b":${nestedListText(100_000, b)}}}`) as CelValue;
  assert.deepEqual(evalWith("object.spec.a == object.spec.b", doc("1", "1")), { value: "bool(true)" });
  assert.deepEqual(evalWith("object.spec.a == object.spec.b", doc("1", "1.0")), { value: "bool(true)" });
  assert.deepEqual(evalWith("object.spec.a != object.spec.b", doc("1", "2")), { value: "bool(true)" });
  assert.deepEqual(evalWith("object.spec.a == object.spec.b", doc('{"k":[1]}', '{"k":[2]}')), {
    value: "bool(false)",
  });
});

/**
 * JSON read exactly (yaml/json-numbers.ts, as the API server's decoder reads numbers: sigs.k8s.io/json
 * PreserveInts) holds a bigint for an int64 beyond 2^53 and a Number object for a float64 with an
 * integral value; every way an expression reads them, on generated code and on closures, gives an
 * int and a double, as the eager toCel conversion does.
 */
const EXACT_TEXT =
  '{"spec":{"a":9007199254740993,"x":1.0,"e":1e3,"max":9223372036854775807,"list":[9007199254740993,2.0,1],' +
  '"map":{"k":1.0,"l":[1.0,[2.0]]},"items":[{"v":1.0}]}}';

const EXACT_EXPECT: Record<string, string> = {
  "object.spec.a": "int(9007199254740993)",
  "object.spec.a - 1": "int(9007199254740992)",
  "object.spec.x": "double(1)",
  "object.spec.e": "double(1000)",
  "object.spec.max": "int(9223372036854775807)",
  "object.spec.list": "[int(9007199254740993),double(2),int(1)]",
  "object.spec.list[1]": "double(2)",
  "object.spec.list.map(v, type(v) == double)": "[bool(false),bool(true),bool(false)]",
  "object.spec.list.filter(v, type(v) == double)": "[double(2)]",
  "object.spec.map.k": "double(1)",
  "object.spec.map['k']": "double(1)",
  "object.spec.?map.?k.orValue(0)": "double(1)",
  "object.spec.map.l": "[double(1),[double(2)]]",
  "object.spec.map.l[1][0]": "double(2)",
  "object.spec.map.transformList(k, v, type(v) == double)": "[bool(true),bool(false)]",
  "object.spec.items.map(i, i.v)": "[double(1)]",
  "object.spec.items[0].v + 0.5": "double(1.5)",
};

for (const mode of ["always", "never"] as const)
  test(`JSON read exactly: big ints are ints and integral doubles doubles (codegen ${mode})`, (t) => {
    setCodegenMode(mode);
    t.after(() => setCodegenMode("always"));
    const exact = parseJson(EXACT_TEXT) as CelValue;
    for (const [source, want] of Object.entries(EXACT_EXPECT)) {
      assert.deepEqual(evalWith(source, exact), { value: want }, source);
      assert.deepEqual(evalWith(source, toCel(parseJson(EXACT_TEXT))), { value: want }, `${source} (toCel)`);
    }
  });
