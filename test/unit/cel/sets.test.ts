import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { ALL_LIBRARIES } from "../../../src/cel/library/index.ts";
import { setsLibrary } from "../../../src/cel/library/sets.ts";
import type { CallContext, Overload } from "../../../src/cel/library/types.ts";
import { CelMap, type CelValue, UInt } from "../../../src/cel/values.ts";

const ctx: CallContext = {
  regex: () => {
    throw new Error("the sets library compiles no regular expressions");
  },
  addCost: () => {},
};

function overload(name: string): Overload {
  const decl = setsLibrary.functions.find((f) => f.name === name);
  assert.ok(decl, `function ${name} is declared`);
  assert.equal(decl.overloads.length, 1);
  return decl.overloads[0] as Overload;
}

type Fn = (...args: unknown[]) => CelValue;
type CostFn = (...args: unknown[]) => number;

const call = (name: string, a: CelValue[], b: CelValue[]) =>
  (overload(name).impl as unknown as Fn)(a, b, ctx);

void test("setsLibrary is part of the Kubernetes environment, as global functions", () => {
  assert.equal(setsLibrary.availability, "kubernetes");
  for (const d of setsLibrary.functions) for (const o of d.overloads) assert.equal(o.member, false);
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
  const cost = (name: string, a: CelValue[], b: CelValue[]) =>
    (overload(name).cost as unknown as CostFn)(a, b);
  assert.equal(cost("sets.contains", [1n, 2n, 3n], [1n, 2n]), 6);
  assert.equal(cost("sets.intersects", [1n], []), 0);
  assert.equal(cost("sets.equivalent", [1n, 2n, 3n], [1n, 2n]), 12);
});

const indexPath = new URL("../../../src/cel/index.ts", import.meta.url);

void test("sets through evaluate", {
  skip: !existsSync(indexPath)
    ? "src/cel/index.ts does not exist yet"
    : !ALL_LIBRARIES.includes(setsLibrary)
      ? "setsLibrary is not registered in ALL_LIBRARIES yet"
      : false,
}, async () => {
  const { evaluate } = (await import("../../../src/cel/index.ts")) as {
    evaluate: (s: string) => { ok: true; value: CelValue } | { ok: false; error: string };
  };
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
