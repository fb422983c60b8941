/**
 * Shared subexpressions (plan/shared.ts): which subexpressions count as the same and may be shared, and
 * that a compiled program takes a shared value from its activation's memo, charging its cost.
 * test/unit/engine/shared.test.ts holds whole policies to the same decisions and costs either way.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setCodegenMode } from "../../../src/cel/configure.ts";
import {
  ADMISSION_VARIABLES,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  run,
  sharedSubexpressions,
} from "../../../src/cel/index.ts";
import { MemoEntry } from "../../../src/cel/state/activation.ts";

const ENV = createEnvironment({
  variables: { ...ADMISSION_VARIABLES },
  policyVariables: ["v"],
  extras: { bind: true },
});

const shared = (...sources: string[]) => [...sharedSubexpressions(sources, true).keys()];

const ALL = "object.spec.containers + object.spec.?initContainers.orValue([])";

test("a call or comprehension of the request's variables standing twice is shared, once per key", () => {
  const keys = shared(`(${ALL}).all(c, has(c.name))`, `(${ALL}).exists(c, c.name == 'x')`);
  // The concatenation, and inside it `orValue` of the optional chain: both stand twice.
  assert.equal(keys.length, 2);
  assert.ok(keys.some((k) => k.includes('"_+_"')));
  assert.ok(keys.some((k) => k.includes('"orValue"')));
  // Standing once, nothing is shared.
  assert.deepEqual(shared(`(${ALL}).all(c, has(c.name))`, "object.metadata.name == 'x'"), []);
});

test("in a loop, a subexpression that reads nothing the loop binds is shared even standing once", () => {
  const keys = shared("object.a.all(x, size(object.b) > x)");
  assert.equal(keys.length, 1, JSON.stringify(keys));
  assert.ok(keys[0]?.includes('"size"'));
  // Its range runs once: not shared for that.
  assert.deepEqual(shared("object.a.filter(x, x > 0).all(x, x > 1)"), []);
});

test("field reads, constants, variables and the authorizer are not shared", () => {
  assert.deepEqual(shared("object.spec.replicas > 1", "object.spec.replicas < 5"), []);
  assert.deepEqual(shared("size([1, 2]) > 1", "size([1, 2]) < 5"), []);
  assert.deepEqual(shared("size(variables.v) > 1", "size(variables.v) < 5"), []);
  assert.deepEqual(
    shared(
      "authorizer.group('').resource('pods').check('get').allowed()",
      "authorizer.group('').resource('pods').check('get').allowed()",
    ),
    [],
  );
});

/** The key of the largest subexpression `source` shares with itself: the whole expression's. */
const outermost = (source: string): string =>
  shared(source, source).reduce((a, b) => (b.length > a.length ? b : a), "");

test("constants of different types make different keys", () => {
  for (const [a, b] of [
    ["size(object.a) == 1", "size(object.a) == 1.0"],
    ["object.a.indexOf('1')", "object.a.indexOf(1)"],
    ["object.a.indexOf(1u)", "object.a.indexOf(1)"],
    ["object.a.filter(x, x == true)", "object.a.filter(x, x == 'true')"],
  ] as const) {
    const ka = outermost(a);
    const kb = outermost(b);
    assert.ok(ka !== "" && kb !== "", `${a} / ${b}`);
    assert.notEqual(ka, kb, `${a} / ${b}`);
    const both = shared(a, b);
    assert.ok(!both.includes(ka) && !both.includes(kb), `${a} / ${b}: ${JSON.stringify(both)}`);
  }
});

test("a name a comprehension or bind rebinds is not the request's: no sharing there", () => {
  // Inside the loop `object` is the loop's element, not the request's object.
  assert.deepEqual(shared("[{'a': [1]}].all(object, size(object.a) > 0)", "size(object.a) > 0"), []);
  assert.deepEqual(shared("cel.bind(object, {'a': [1]}, size(object.a) > 0)", "size(object.a) > 0"), []);
  // A subexpression of the request's object inside a loop over something else is shared.
  assert.equal(shared("[1, 2].all(x, size(object.a) > x)", "size(object.a) > 0").length, 1);
});

for (const mode of ["never", "always"] as const) {
  test(`a program reads a shared value from the memo and charges its cost (${mode === "always" ? "generated" : "closures"})`, () => {
    const was = setCodegenMode(mode);
    try {
      const source = "size(object.a.filter(x, x > 1))";
      const keys = sharedSubexpressions([source, source], true);
      const id = keys.get(outermost(source)) as number;
      const memoWith = (entry: MemoEntry): (MemoEntry | undefined)[] => {
        const m = new Array<MemoEntry | undefined>(keys.size);
        m[id] = entry;
        return m;
      };
      const c = compile(source, ENV, keys);
      assert.ok(c.ok);
      const object = { a: [1, 2, 3] } as CelValue;
      // No memo: computed.
      const plain = run(c.program, { values: { object } }, new EvalState(1e6, performance.now() + 10_000));
      assert.ok(plain.ok);
      assert.equal(plain.value, 2n);
      // A memo holding the value: taken from it, at the cost recorded with it.
      const memo = memoWith(new MemoEntry(40n, 7));
      const seeded = run(
        c.program,
        { values: { object }, memo },
        new EvalState(1e6, performance.now() + 10_000),
      );
      assert.ok(seeded.ok);
      assert.equal(seeded.value, 40n);
      assert.equal(seeded.cost, 7);
      // An empty memo: computed, then kept with its cost.
      const fresh = new Array<MemoEntry | undefined>(keys.size);
      const first = run(
        c.program,
        { values: { object }, memo: fresh },
        new EvalState(1e6, performance.now() + 10_000),
      );
      assert.ok(first.ok);
      assert.equal(first.value, 2n);
      assert.deepEqual(fresh[id], new MemoEntry(2n, plain.cost));
      // A replayed cost over the limit: computed afresh, so the limit error falls where it would.
      const tight = run(
        c.program,
        { values: { object }, memo: memoWith(new MemoEntry(40n, 1e6)) },
        new EvalState(1e6 - 1, performance.now() + 10_000),
      );
      assert.ok(tight.ok);
      assert.equal(tight.value, 2n);
      assert.equal(tight.cost, plain.cost);
      // Without the shared keys the program never looks at a memo.
      const own = compile(source, ENV);
      assert.ok(own.ok);
      const ignored = run(
        own.program,
        { values: { object }, memo },
        new EvalState(1e6, performance.now() + 10_000),
      );
      assert.ok(ignored.ok);
      assert.equal(ignored.value, 2n);
    } finally {
      setCodegenMode(was);
    }
  });
}

test("a policy's shared keys take the places 0, 1, 2 ... of its memo, whatever other policies share", () => {
  // The memo is an array as long as the policy's shared keys: each place is taken once.
  const other = sharedSubexpressions(
    ["size(object.b.filter(x, x > 1)) > 0", "size(object.b.filter(x, x > 1)) < 9"],
    true,
  );
  const keys = sharedSubexpressions(
    [`(${ALL}).all(c, has(c.name))`, `(${ALL}).exists(c, c.name == 'x')`],
    true,
  );
  assert.deepEqual([...keys.values()].sort(), [0, 1]);
  assert.deepEqual([...other.values()].sort(), [0, 1]);
});
