import assert from "node:assert/strict";
import { test } from "node:test";
import { setsLibrary } from "../../../src/cel/library/sets.ts";
import { CelMap, type CelValue, UInt } from "../../../src/cel/runtime/values.ts";
import { evaluate, libraryHarness } from "../../helpers/library.ts";

const sets = libraryHarness(setsLibrary);
// Each sets function has one overload, named after it: sets.contains is list_sets_contains_list.
const idOf = (name: string) => `list_${name.replace(".", "_")}_list`;
const call = (name: string, a: CelValue[], b: CelValue[]) => sets.call(name, idOf(name), a, b);

void test("setsLibrary is part of the Kubernetes environment, as global functions", () => {
  assert.equal(setsLibrary.availability, "kubernetes");
  for (const d of setsLibrary.functions) {
    assert.equal(d.overloads.length, 1);
    for (const o of d.overloads) assert.equal(o.member, false);
  }
});

const u = (n: bigint) => new UInt(n);

// [a, b, contains(a, b), equivalent(a, b), intersects(a, b)]
const cases: ReadonlyArray<readonly [CelValue[], CelValue[], boolean, boolean, boolean]> = [
  [[], [], true, true, false],
  [[], [1n], false, false, false],
  [[1n], [], true, false, false],
  [[1n, 2n, 3n, 4n], [2n, 3n], true, false, true],
  [[1n, 2.0, u(3n)], [1.0, u(2n), 3n], true, true, true],
  [[1n], [1n, 1n], true, true, true],
  [[1n], [u(1n), 1.0], true, true, true],
  [[1n, 2n, 3n], [u(3n), 2.0, 1n], true, true, true],
  [[1n, 2n], [2n, 3n], false, false, true],
  [
    [[1n], [2n, 3n]],
    [
      [1n, 2n],
      [2n, 3.0],
    ],
    false,
    false,
    true,
  ],
  [["a", "b"], ["c"], false, false, false],
  [[new CelMap([["k", 1n]])], [{ k: 1.0 }], true, true, true],
  [[1n], ["1"], false, false, false],
];

for (const [a, b, contains, equivalent, intersects] of cases) {
  void test(`sets on ${a.length} and ${b.length} elements`, () => {
    assert.equal(call("sets.contains", a, b), contains, "contains");
    assert.equal(call("sets.equivalent", a, b), equivalent, "equivalent");
    assert.equal(call("sets.intersects", a, b), intersects, "intersects");
  });
}

void test("costs are the product of the sizes, doubled for equivalent", () => {
  const cost = (name: string, a: CelValue[], b: CelValue[]) => sets.cost(name, idOf(name), a, b);
  assert.equal(cost("sets.contains", [1n, 2n, 3n], [1n, 2n]), 6);
  assert.equal(cost("sets.intersects", [1n], []), 0);
  assert.equal(cost("sets.equivalent", [1n, 2n, 3n], [1n, 2n]), 12);
});

void test("sets through evaluate", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["sets.contains([1, 2, 3], [3, 1])", true],
    ["sets.equivalent([1, 2], [2, 1, 1])", true],
    ["sets.intersects(['a'], ['b'])", false],
  ];
  for (const [source, expected] of cases) {
    const r = evaluate(source);
    assert.ok(r.ok, `${source}: ${r.ok ? "" : r.error}`);
    assert.equal(r.value, expected, source);
  }
});
