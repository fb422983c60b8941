/**
 * The generated tier (plan/gen.ts) against the closures it replaces: every expression gives the same
 * value or error, and charges the same cost, either way. The conformance, differential and
 * json-input tests run on generated code too (they set "always"); this file holds the two tiers to
 * each other directly and checks when a program switches.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { setCodegenMode } from "../../../src/cel/configure.ts";
import {
  ADMISSION_VARIABLES,
  type CelValue,
  compile,
  createEnvironment,
  CelError,
  EvalState,
  type Program,
  run,
  toCel,
} from "../../../src/cel/index.ts";
import { canonOurs } from "../../helpers/differential.ts";
import { Optional } from "../../../src/cel/runtime/values.ts";
import { generateExpressions, generatorBindings } from "../../helpers/expr-gen.ts";

const before = setCodegenMode("never");
after(() => setCodegenMode(before));

// Unchecked: the tiers must agree on run-time errors too, so the corpus holds expressions the type
// checker refuses (a range over an int, mixed-type literals).
const ENV = createEnvironment({
  variables: { ...ADMISSION_VARIABLES },
  extras: { bind: true, math: true, base64: true },
  checks: "none",
});

const POD = {
  metadata: { name: "web", labels: { app: "web" }, annotations: { "a/b": "x" } },
  spec: {
    replicas: 3,
    hostNetwork: false,
    securityContext: { runAsNonRoot: true, seLinuxOptions: { type: "container_t" } },
    containers: [
      {
        name: "app",
        image: "nginx:1.27",
        ports: [{ containerPort: 80 }],
        securityContext: { privileged: false },
      },
      { name: "side", image: "envoy", securityContext: { capabilities: { add: ["NET_ADMIN"] } } },
    ],
    volumes: [
      { name: "data", emptyDir: {} },
      { name: "host", hostPath: { path: "/" } },
    ],
    nums: [1, 2.5, null, 3],
    matrix: [[1, 2.5], [3], []],
  },
};

const EXPRESSIONS = [
  "object.spec.replicas > 1 && object.spec.hostNetwork == false",
  "object.spec.?securityContext.?runAsNonRoot.orValue(false)",
  "object.spec.?securityContext.?seLinuxOptions.?type.orValue('') in ['', 'container_t']",
  "!object.spec.?securityContext.?seLinuxOptions.?user.hasValue()",
  "object.spec.containers.all(c, c.?securityContext.?privileged.orValue(false) == false)",
  "object.spec.containers.exists(c, c.?securityContext.?capabilities.?add.orValue([]).exists(x, x == 'NET_ADMIN'))",
  "object.spec.containers.map(c, c.name)",
  // A map literal with a computed key has no emitter: its closure reads the loop variable from the
  // frame, so this code must keep its slots there rather than in locals.
  "object.spec.containers.all(c, {c.name: 1}[c.name] == 1)",
  "object.spec.containers.map(c, cel.bind(n, c.name, {n: n}[n]))",
  "object.spec.containers.filter(c, has(c.ports)).map(c, c.ports[0].containerPort + 1)",
  "object.spec.volumes.exists_one(v, has(v.hostPath))",
  "object.spec.volumes.all(v, !has(v.hostPath)) ? 'ok' : 'host path'",
  "object.metadata.labels.all(k, k.startsWith('a'))",
  "object.metadata.annotations.exists(k, v, v == 'x')",
  "object.spec.containers.transformList(i, c, i * 2)",
  "cel.bind(cs, object.spec.containers, cs.size() + size(cs))",
  "object.spec.containers[0].image.matches('^nginx:[0-9.]+$')",
  "object.spec.missing == 1",
  "object.spec.replicas == 'x' || object.spec.missing",
  "object.spec.missing || true",
  "true && object.spec.missing",
  "false && object.spec.missing",
  "object.spec.missing && false",
  "1 / 0 == 1 || object.spec.replicas == 3",
  "object.spec.containers.all(c, c.image.size() / 0 > 1)",
  "object.spec.containers.exists(c, c.image.size() / (c.name == 'app' ? 0 : 1) > 1)",
  "object.spec.replicas ? 1 : 2",
  "!object.spec.replicas",
  "object.spec.replicas.x",
  "object.spec.?replicas.x",
  "has(object.spec.replicas.x)",
  "[1, 2, 3].map(x, x * x).filter(x, x > 1)",
  "{'a': 1}.a + 1",
  "object.spec.?containers[?0].?name.orValue('none')",
  "object.spec.containers.map(c, {'path': 'containers[' + c.name + ']', 'c': c}).filter(e, e.c.?securityContext.?privileged.orValue(false)).map(e, e.path)",
  "1.all(x, true)",
  "[[1, 2], [3]].all(l, l.all(x, x > 0))",
  "optional.of(object.spec).?replicas.orValue(0)",
  "object.spec.?replicas.hasValue() && object.spec.?nothing.orValue(7) == 7",
  "[object.spec.replicas, 'a', object.spec.?x.orValue(1)]",
  "{'a': object.spec.replicas, 'b': [object.spec.hostNetwork]}.b[0]",
  "object.spec.containers.map(c, [c.name, c.image]).map(p, p[1])",
  "[object.spec.missing, 1]",
  "{'a': 1, 'b': object.spec.missing}",
  "[1, 0].map(x, 1 / x)",
  "[1, 0].filter(x, 1 / x > 0)",
  "object.spec.containers.exists(c, [1, 0].map(x, 1 / x).size() > 0) || true",
  "object.spec[?'replicas'].orValue(0) + 1",
  "object.spec.?containers[0].?name.orValue('')",
  "object.spec.?containers[5].?name.orValue('none')",
  "{'a': 1}[?'b'].hasValue()",
  "[1, 2][?5].orValue(9)",
  "object.?nothing[?object.missing].orValue(1)",
  "object.spec[?object.missing].orValue(1)",
  "object.spec.?containers[object.missing]",
  "['hostNetwork', 'hostPID'].filter(f, object.spec[?f].orValue(false) == true)",
  // Calls, whose overload choice generated code writes out at each site.
  "object.spec.replicas + 'x'",
  "object.spec.replicas < 2.5 && 1u < object.spec.replicas && 'a' < object.metadata.name",
  "size(object.metadata.labels) + object.spec.containers.size() + size(object.metadata.name)",
  "object.metadata.name.contains(object.spec.containers[0].name)",
  "string(object.spec.replicas) + string(object.spec.hostNetwork) + string(object.spec.containers[0])",
  "int(object.spec.missing)",
  "object.spec.containers.map(c, c.name + ':' + c.image).all(s, s.size() > 3)",
  "object.spec.replicas - 1.5",
  // Three arguments: the applier picks the overload (and charges) from generated code.
  "object.metadata.name.replace('e', 'E').substring(1, 3) + object.spec.containers[0].image.split(':', 2)[0]",
  // `_+_` on values of each kind: generated code checks the cheapest overloads first.
  "[object.spec.replicas + object.spec.replicas, object.metadata.name + '-', size(object.spec.containers + object.spec.volumes)]",
  "object.spec.replicas + object.spec.volumes",
  // `in` a short constant list compares in turn; a longer one looks up a Set.
  "[object.metadata.name in ['web', 'a\\'b', 'c\\\\d'], object.spec.replicas in ['3'], object.spec.missing in ['x']]",
  "object.metadata.name in ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'web']",
  // Equality with a literal: === for strings, bools and JSON's ints, celEquals for the rest.
  "[object.spec.replicas == 3, 3 != object.spec.replicas, object.spec.replicas == 4, object.spec.replicas != 3.0]",
  "[object.metadata.name == 'web', 'web' != object.metadata.name, object.spec.hostNetwork == false, true == object.spec.hostNetwork]",
  "[object.spec.replicas == 'x', object.metadata.name == 3, 1u == object.spec.replicas, object.spec.containers == true]",
  "object.spec.missing == 'x'",
  // Two ints order as BigInts, written out; other pairs go to the applier.
  "[object.spec.replicas < 3, object.spec.replicas <= 3, object.spec.replicas > 3, object.spec.replicas >= 3]",
  "[size(object.metadata.name) <= 3, -1 < object.spec.replicas, 4 > object.spec.replicas, object.spec.replicas >= 3.0]",
  "[object.spec.replicas < object.spec.missing, object.spec.replicas > 'x', 9223372036854775807 > -9223372036854775808]",
  // `in` a map: a JSON map or one the evaluator built is tested in place; other maps and non-string
  // keys go to the applier, which also answers lists and the missing overload.
  "['app' in object.metadata.labels, 'nope' in object.metadata.labels, 1 in object.metadata.labels, object.spec.missing in object.metadata.labels]",
  "['a' in {'a': 1}, 1 in {1: 'x'}, 2 in {1: 'x'}, 'cpu' in object.spec.containers[0].?resources.?limits.orValue({})]",
  "[3 in [1, 2, 3], 'x' in object.spec.containers.map(c, c.name), 'constructor' in object.metadata.labels, 'toString' in {}]",
  "'a' in object.spec.replicas",
  "object.spec.missing in object.spec.missing",
  // `{}` is a plain object, except as a comprehension's accumulator, which transformMap fills in place.
  "['a/b' in object.metadata.?annotations.orValue({}), 'x' in object.spec.?nope.orValue({}), size({}), {} == {}]",
  "[type({}) == map, {}.?a.orValue('none'), object.spec.?nope.orValue({}).all(k, false), {} == {'a': 1}]",
  "object.metadata.labels.transformMap(k, v, v + '!')",
  // all/exists: errors held until a decisive element; of several, the first element's is kept.
  "[[1, 0, 2].all(x, 1 / x > 0)]",
  "[[0, -1].all(x, 1 / x > 0), [-1, 0].all(x, 1 / x > 0), [0, 1].exists(x, 1 / x > 0)]",
  "[0, -1].exists(x, 1 / x > 0)",
  "['a', 0].all(x, x / 0 > 0)",
  "[0, 'a'].exists(x, x / 0 > 0)",
  "[1, 2].all(x, x)",
  "[1, 2].exists(x, x)",
  "[0, 1].all(x, x == 0 ? 1 / x > 0 : 'str')",
  "[1, 0].exists(x, x == 0 ? 1 / x > 0 : 'str')",
  "[[1, 0].all(i, v, v > i), [3, 1].exists(i, v, v < i), {'a': 1, 'b': 0}.all(k, v, v >= 0)]",
  "{'a': 1, 'b': 0}.all(k, 1 / {'a': 1, 'b': 0}[k] > 0)",
  "[].all(x, x) && ![].exists(x, x)",
  // all/exists keep their first error, whatever fails after it, unless a decisive element follows.
  "[0, 'a'].all(x, 1 / x > 0)",
  "['a', 0].exists(x, 1 / x > 0)",
  "[1, 'x', 0].all(x, x)",
  "[1, 0, -1].all(x, 1 / x > 0 || x < 0)",
  "[1, 0, 'b', false].all(x, x / 0 > 0 || x)",
  "[0, true].exists(x, 1 / x > 0 || x)",
  // Fields of maps the expression builds, read as the generated code reads JSON maps.
  "object.spec.containers.map(c, {'path': 'containers[' + c.name + ']', 'c': c}).map(e, e.path + '=' + e.c.image)",
  "[{'a': [1, 2]}.a[0] + 1, {'a': 1.5}.a, {'a': {'b': 2}}.a.b, {'a': null}.a, {'a': 1}.?a.orValue(0), {'a': 1}.?b.orValue(0)]",
  "[{'constructor': 1}.constructor, {'a': 1}.?toString.orValue(2), {'a': 1}.?constructor.orValue(3), {'hasOwnProperty': 4}.?hasOwnProperty.orValue(0)]",
  "{'a': 1}.toString",
  "{'a': 1}.b",
  "{'a': 1}.?b.c.orValue(5)",
  // `in` a map or list read from the object, and maps the expression builds.
  "['app' in object.metadata.labels, 'web' in object.metadata.labels, 'toString' in object.metadata.labels, 'a' in {'a': 1}]",
  "['constructor' in {'constructor': 1}, 'constructor' in {}, 'b' in {'constructor': 1, 'b': 2}, 1 in {1: 'x'}, 'x' in {1: 'x'}]",
  "['NET_ADMIN' in object.spec.containers[1].securityContext.capabilities.add, 'x' in object.spec.containers.map(c, c.name), 80 in object.spec.containers[0].ports.map(p, p.containerPort)]",
  "[object.metadata.name in object.spec.containers.map(c, c.name), 'app' in object.spec.containers.map(c, c.name), object.spec.replicas in [1, 2, 3]]",
  "'x' in object.spec.replicas",
  "object.spec.replicas in object.metadata.labels",
  "[{'a': 1}.transformMap(k, v, v * 2), {}.transformMapEntry(k, v, {k: v}), {'a': 1}.transformMapEntry(k, v, {k + k: v})]",
  // Values that stay JSON through lists, loops, binds, conditionals and defaults (Compiled.plain).
  "(object.spec.containers + object.spec.?initContainers.orValue([])).all(c, has(c.securityContext) || c.name == 'x')",
  "(object.spec.replicas > 1 ? object.spec.containers : object.spec.volumes).map(x, x.name + ':' + x.?image.orValue('-'))",
  "cel.bind(cs, object.spec.containers + [], cs.exists(c, c.?securityContext.?capabilities.?add.orValue([]).exists(a, a == 'NET_ADMIN')))",
  "[object.spec.containers.all(i, c, c.name.size() > i), object.metadata.labels.all(k, v, v == 'web' && k.size() > 0)]",
  "[object.spec, object.metadata].exists(x, has(x.name)) && [object.spec, 'a'].exists(x, x.replicas == 3)",
  "[has(object.metadata.constructor), object.metadata.?toString.orValue('none'), object.spec.volumes.map(v, v.?hostPath.path.orValue(''))]",
  "object.spec.?securityContext.orValue({'runAsNonRoot': false}).runAsNonRoot",
  "object.spec.?nothing.orValue({'runAsNonRoot': 2.0}).runAsNonRoot",
  // A JSON array a loop ranges over is converted element by element (Compiled.emitList).
  "[object.spec.nums.map(n, type(n)), object.spec.?nums.orValue([]).filter(n, n != null), object.spec.nums.all(i, n, i >= 0)]",
  "object.spec.matrix.map(r, r.map(x, type(x))) + object.spec.?matrix.orValue([]).map(r, r.size())",
  "object.spec.?nothing.orValue([2.0, [1.5]]).all(x, type(x) == double || type(x) == list)",
  "object.spec.?nums.orValue([]).exists(n, n / 0 > 1) || object.spec.nums.exists(n, type(n) == double)",
  // Paths read more than once are kept in locals (Gen.pathCache): a loop element's for as long as
  // the loop is on it, a root variable's for the whole run. Each element must see its own.
  "object.spec.containers.map(c, [c.?securityContext.?privileged.orValue(true), c.?securityContext.?capabilities.?add.orValue([]), c.?securityContext.?privileged.hasValue()])",
  "object.spec.containers.map(c, c.securityContext.?privileged.orValue(true) || c.securityContext.?capabilities.?add.orValue([]).size() > 0)",
  "object.spec.containers.all(a, object.spec.containers.exists(b, a.name == b.name && a.image == b.image) && a.?ports.orValue([]).size() == size(a.?ports.orValue([])))",
  "object.spec.containers.map(c, c.name + ':' + c.image + ':' + c.name) + object.spec.volumes.map(v, v.name + v.name)",
  "[object.spec.replicas, object.spec.replicas + 1, object.spec.?securityContext.?runAsNonRoot.orValue(false), object.spec.securityContext.runAsNonRoot]",
  "object.spec.matrix.map(r, r.map(x, type(x))) + object.spec.matrix.map(r, r.size()) + [object.spec.matrix.size()]",
  "[object.spec.nope.x, object.spec.nope.x]",
  "object.spec.containers.map(c, c.?ports[0].?containerPort.orValue(-1)) + object.spec.containers.map(c, c.?ports[0].?containerPort.orValue(-2))",
  "object.spec.containers.exists(c, c.ports.size() > 0) || object.spec.containers.exists(c, c.ports.size() > 0)",
  "object.metadata.labels.all(k, object.metadata.labels[k] == 'web' && object.metadata.labels[k].size() == 3)",
  "{'a': 1, 'b': {'c': 2}}.all(k, k == 'a' || {'a': 1, 'b': {'c': 2}}[k].c == 2)",
  // Kubernetes' quantity library: sign is global, an add/sub result on the right of == equals nothing.
  // The legacy string.format (strings v2) and a timestamp keeping its offset.
  "'%s %f %e %d'.format([[1.5, 'a', {'k': timestamp('2011-08-18T19:03:37+01:00')}], 1234.5, -0.00012, 7])",
  "[sign(quantity('-1m')), quantity('1').add(1) == quantity('2'), quantity('2') == quantity('1').add(1), quantity('2') in [quantity('2')]]",
];

type Outcome =
  | { readonly value: string; readonly cost: number }
  | { readonly error: string; readonly offset?: number | undefined; readonly cost: number };

/** Two runs; with `json`, the activation promises JSON input (generated code reads it the quick way). */
function runTwice(p: Program, object: CelValue, json = false): Outcome[] {
  return [0, 1].map(() => {
    const st = new EvalState(1_000_000, performance.now() + 10_000);
    const r = run(p, json ? { values: { object }, json } : { values: { object } }, st);
    return r.ok
      ? { value: canonOurs(r.value), cost: r.cost }
      : { error: r.error.message, offset: r.error.offset, cost: r.cost };
  });
}

test("generated code gives the closures' value or error, at the same cost and position", () => {
  let generated = 0;
  for (const source of EXPRESSIONS) {
    for (const object of [JSON.parse(JSON.stringify(POD)) as CelValue, toCel(POD)]) {
      setCodegenMode("never");
      const closures = compile(`${source} `, ENV);
      if (!closures.ok) assert.fail(`${source}: ${closures.problems.map((p) => p.rendered).join("\n")}`);
      const expected = runTwice(closures.program, object);
      assert.equal(closures.program.generated(), false);
      setCodegenMode("always");
      const gen = compile(`${source}  `, ENV);
      assert.ok(gen.ok);
      assert.deepEqual(runTwice(gen.program, object, true), expected, `${source} (JSON input)`);
      assert.deepEqual(runTwice(gen.program, object), expected, source);
      if (gen.program.generated()) generated++;
    }
  }
  // Every expression here is made of emitted nodes or calls: all of them must have switched.
  assert.equal(generated, EXPRESSIONS.length * 2);
});

// Generated concatenations count a literal's size at compile time and carry a concatenation's size
// to the next one (plan/dispatch.ts concatSizeCode). Lone surrogates that pair up across a seam make the
// result one code point shorter than its operands: the sums below sit where that moves the cost.
test("string concatenations charge what the closures charge, surrogates meeting at a seam included", () => {
  const object = JSON.parse(
    '{"hi": "\\ud83d", "lo": "\\ude00", "pair": "\\ud83d\\ude00", "name": "app", "eight": "aaaaaaaa", "nine": "aaaaaaaaa"}',
  ) as CelValue;
  const sources = [
    "'x' + object.hi + object.lo + object.eight",
    "object.hi + '' + object.lo + object.nine",
    "object.hi + object.lo + object.nine",
    "'' + object.hi + object.lo + object.nine",
    "object.hi + ('' + object.lo) + object.nine",
    "'a😀' + object.lo + object.eight + object.hi + '😀' + object.nine",
    "'😀😀' + object.eight",
    "object.eight + '😀😀' + 'b'",
    "object.pair + object.pair + object.pair + object.pair + object.pair + object.pair + object.nine",
    "'containers[' + object.name + ']' + '.securityContext.privileged' + object.nine",
    "['x', 'yy'].map(s, s + object.hi + object.lo + object.eight).map(s, s + '!' + s + object.nine)",
  ];
  for (const source of sources) {
    setCodegenMode("never");
    const closures = compile(`${source} `, ENV);
    if (!closures.ok) assert.fail(`${source}: ${closures.problems.map((p) => p.rendered).join("\n")}`);
    const expected = runTwice(closures.program, object);
    setCodegenMode("always");
    const gen = compile(`${source}  `, ENV);
    assert.ok(gen.ok);
    assert.deepEqual(runTwice(gen.program, object, true), expected, `${source} (JSON input)`);
    assert.equal(gen.program.generated(), true, source);
  }
});

// `[]` and `{}` literals are shared frozen constants, except as a comprehension's accumulator,
// which map(), filter() and transformMap() fill in place: each evaluation must start from empty.
test("literals are shared only where nothing changes them: every run gives the same value", () => {
  const cases: [string, string][] = [
    ["[1, 2].map(x, x * 2)", "[2,4]"],
    ["[1, 2, 3].filter(x, x > 1) + []", "[2,3]"],
    ["{'a': 1}.transformMap(k, v, v + 1)", '{"a":2}'],
    ["[[], [1]].map(l, l + [0])", "[[0],[1,0]]"],
    ["object.spec.?nope.orValue([]) + [1]", "[1]"],
    ["[object.spec.?nope.orValue({}), {}, []]", "[{},{},[]]"],
  ];
  for (const mode of ["never", "always"] as const) {
    setCodegenMode(mode);
    for (const [source, expected] of cases) {
      const c = compile(source, ENV);
      if (!c.ok) assert.fail(source);
      for (let i = 0; i < 3; i++) {
        const r = run(
          c.program,
          { values: { object: toCel(POD) } },
          new EvalState(1e6, performance.now() + 1e4),
        );
        assert.ok(r.ok, source);
        assert.equal(
          canonOurs(r.value),
          canonOurs(toCel(JSON.parse(expected))),
          `${source} (${mode}, run ${i + 1})`,
        );
      }
    }
  }
  setCodegenMode("never");
});

test("without the promise of JSON input, generated code leaves the admission variables to the closures", () => {
  // Values no JSON holds: a map the evaluator built keeps a double 2.0 a double, which reading it
  // as JSON would make an int; an Optional is unwrapped by `.?`, which a JSON value never needs.
  setCodegenMode("never");
  const built = compile("{'a': 2.0, 'b': [{'c': 1.0}]}", ENV);
  assert.ok(built.ok);
  const made = run(built.program, { values: {} }, new EvalState(1_000_000, performance.now() + 10_000));
  assert.ok(made.ok);
  const cases: [string, CelValue][] = [
    ["type(object.a) == double && object.b.all(x, type(x.c) == double)", made.value],
    ["object.?a.orValue(0) == 2.0 && has(object.b)", made.value],
    ["cel.bind(m, object, m.b[0].c) == 1.0", made.value],
    ["object.?a.orValue(0) == 1", Optional.of(toCel({ a: 1 }))],
  ];
  for (const [source, object] of cases) {
    const [closures, generated] = (["never", "always"] as const).map((mode) => {
      setCodegenMode(mode);
      const c = compile(`${source}${mode === "never" ? " " : "  "}`, ENV);
      if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.rendered).join("\n")}`);
      const outcomes = runTwice(c.program, object);
      // Generated, but only for an activation that promises JSON: this one ran the closures.
      const expected = mode === "always" ? [true, true, false] : [false, false, false];
      const got = [c.program.generated(), c.program.generated({ json: true }), c.program.generated({})];
      assert.deepEqual(got, expected, `${source}: generated(), with and without the promise`);
      return outcomes;
    });
    assert.deepEqual(generated, closures, source);
    assert.deepEqual(
      closures?.map((o) => ("value" in o ? o.value : o.error)),
      [canonOurs(true), canonOurs(true)],
      source,
    );
  }
});

test("a cost limit stops generated code where it stops the closures", () => {
  const source = "[1, 2, 3, 4, 5, 6, 7, 8].all(x, [1, 2, 3, 4, 5, 6, 7, 8].all(y, x * y > 0))";
  for (const mode of ["never", "always"] as const) {
    setCodegenMode(mode);
    const c = compile(`${source}${mode === "never" ? " " : "  "}`, ENV);
    assert.ok(c.ok);
    const st = new EvalState(100, performance.now() + 10_000);
    const r = run(c.program, { values: {} }, st);
    assert.equal(r.ok, false, mode);
    assert.equal(r.ok ? "" : r.error.kind, "cost", mode);
    assert.equal(r.cost, 101, `${mode}: the charge that crossed the limit`);
  }
});

test("lazy: a program switches to generated code on its second run", () => {
  setCodegenMode("lazy");
  const c = compile("object.spec.replicas > 1   ", ENV);
  assert.ok(c.ok);
  const object = JSON.parse(JSON.stringify(POD)) as CelValue;
  const once = run(c.program, { values: { object } }, new EvalState(1_000_000, performance.now() + 10_000));
  assert.equal(c.program.generated(), false);
  const twice = run(c.program, { values: { object } }, new EvalState(1_000_000, performance.now() + 10_000));
  assert.equal(c.program.generated(), true);
  assert.deepEqual(twice, once);
});

test("variables.<name> reads through the resolver the same way in both tiers, errors included", () => {
  const env = createEnvironment({
    variables: { ...ADMISSION_VARIABLES },
    policyVariables: ["n", "bad", "list"],
  });
  const resolver = {
    get(name: string): CelValue {
      if (name === "bad") throw new CelError("no such key: x");
      return name === "n" ? 2n : [1n, 2n, 3n];
    },
  };
  for (const source of [
    "variables.n + 1",
    "variables.list.all(x, x < variables.n * 2)",
    "variables.bad == 1 || variables.n == 2",
    "has(variables.n) && variables.bad",
  ]) {
    const outcomes = (["never", "always"] as const).map((mode) => {
      setCodegenMode(mode);
      const c = compile(`${source}${mode === "never" ? " " : "  "}`, env);
      if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.rendered).join("\n")}`);
      const r = run(
        c.program,
        { values: {}, variables: resolver },
        new EvalState(1_000_000, performance.now() + 10_000),
      );
      assert.equal(c.program.generated(), mode === "always", source);
      return r.ok ? { value: canonOurs(r.value), cost: r.cost } : { error: r.error.message, cost: r.cost };
    });
    assert.deepEqual(outcomes[1], outcomes[0], source);
  }
});

/** Value or error, cost and position of one run of `source` in one tier, under `limit`. */
function outcomeIn(
  mode: "never" | "always",
  source: string,
  env: typeof ENV,
  values: Record<string, CelValue>,
  limit: number,
): Outcome & { readonly generated: boolean } {
  setCodegenMode(mode);
  // A different source per tier: the compile cache must not hand one tier's program to the other.
  const c = compile(`${source}${mode === "never" ? " " : "  "}`, env);
  if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.rendered).join("\n")}`);
  const r = run(c.program, { values }, new EvalState(limit, performance.now() + 10_000));
  const generated = c.program.generated();
  return r.ok
    ? { value: canonOurs(r.value), cost: r.cost, generated }
    : { error: `${r.error.kind}: ${r.error.message}`, offset: r.error.offset, cost: r.cost, generated };
}

test("generated code charges what the closures charge over the generated corpus, and stops where they stop", () => {
  const env = createEnvironment({
    variables: {
      ...ADMISSION_VARIABLES,
      ...Object.fromEntries(Object.keys(generatorBindings()).map((k) => [k, "dyn"])),
    },
    extras: { bind: true, math: true, base64: true },
    // The random corpus tests run-time semantics, type errors included: unchecked.
    checks: "none",
  });
  const values = generatorBindings();
  let compared = 0;
  let limited = 0;
  for (const source of generateExpressions(1500, 20261122, 4)) {
    setCodegenMode("never");
    if (!compile(source, env).ok) continue;
    const closures = outcomeIn("never", source, env, values, 1_000_000);
    const gen = outcomeIn("always", source, env, values, 1_000_000);
    assert.deepEqual({ ...gen, generated: false }, closures, source);
    compared++;
    if (closures.cost < 2) continue;
    // A limit half way: both tiers must stop at the same charge (or finish alike if the cost was late).
    const half = Math.floor(closures.cost / 2);
    assert.deepEqual(
      { ...outcomeIn("always", source, env, values, half), generated: false },
      outcomeIn("never", source, env, values, half),
      `${source} (limit ${half})`,
    );
    limited++;
  }
  assert.ok(compared > 1200 && limited > 600, `${compared} compared, ${limited} under a limit`);
});

test("a resolver that charges the shared state: both tiers count its cost and stop on it", () => {
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES }, policyVariables: ["n", "list"] });
  for (const source of [
    "variables.n + 1 > 0 && variables.list.all(x, x < variables.n * 2)",
    "[1, 2, 3].exists(x, x == variables.n) || variables.list.size() > 5",
    "[1, 0].map(x, variables.n / x).size()",
  ]) {
    for (const limit of [1_000_000, 12, 25]) {
      const outcomes = (["never", "always"] as const).map((mode) => {
        setCodegenMode(mode);
        const c = compile(`${source}${mode === "never" ? " " : "  "}`, env);
        if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.rendered).join("\n")}`);
        const st = new EvalState(limit, performance.now() + 10_000);
        // As a policy's variables are: evaluated on the state of the expression that reads them.
        const resolver = {
          get(name: string): CelValue {
            st.addCost(10);
            // As runExpr does for the variable's own expression: the limit moves while it runs.
            st.costLimit = Math.min(st.cost + limit, 1_000_000);
            return name === "n" ? 2n : [1n, 2n, 3n];
          },
        };
        const r = run(c.program, { values: {}, variables: resolver }, st);
        return r.ok
          ? { value: canonOurs(r.value), cost: r.cost }
          : { error: r.error.message, cost: r.cost, total: st.cost };
      });
      assert.deepEqual(outcomes[1], outcomes[0], `${source} (limit ${limit})`);
    }
  }
});
