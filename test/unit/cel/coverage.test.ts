/**
 * Coverage of an expression (cel/plan/coverage.ts, `celgate test --coverage`): exactly which nodes
 * ran and which branch outcomes were taken, on expressions written for each case: short-circuit,
 * the ternary, comprehensions (empty and not), optional chains, optMap; and that counting changes
 * no value, error or cost.
 *
 * Which operand of `&&`/`||` runs follows cel-go's evaluator (interpreter/interpretable.go evalAnd,
 * evalOr: the right side is not evaluated when the left one decides), as plan/logic.ts does; a
 * macro's parts follow cel-go's expansions (parser/macro.go MakeAll, MakeExists, MakeMap, MakeFilter).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  compile,
  createEnvironment,
  EvalState,
  OUTCOMES,
  PER_CALL_COST_LIMIT,
  run,
  toCel,
} from "../../../src/cel/index.ts";

const ENV = createEnvironment({ variables: { x: "dyn", l: "dyn", o: "dyn" }, extras: { bind: true } });

const state = () => new EvalState(PER_CALL_COST_LIMIT, performance.now() + 5_000);

/**
 * Runs `source` once per input and names what stayed uncovered: a node by the source from its
 * position (`node@x < 5`), a branch outcome by kind and outcome at its position (`logic:true@&& x`).
 */
function uncovered(
  source: string,
  inputs: readonly Record<string, unknown>[],
): { nodes: string[]; branches: string[] } {
  const r = compile(source, ENV, undefined, undefined, { coverage: true, booleanResult: true });
  assert.ok(r.ok, r.ok ? "" : r.problems.map((p) => p.rendered).join("\n"));
  assert.ok(r.coverage);
  for (const input of inputs) {
    const values = Object.fromEntries(Object.entries(input).map(([k, v]) => [k, toCel(v)]));
    run(r.program, { values }, state());
  }
  const at = (offset: number | undefined) => source.slice(offset ?? 0);
  const points = r.coverage.points().filter((p) => p.hits === 0);
  return {
    nodes: points.filter((p) => p.kind === "node").map((p) => at(p.offset)),
    branches: points
      .filter((p) => p.kind === "branch")
      .map((p) => `${p.branch}:${OUTCOMES[p.branch ?? "result"][p.outcome ?? 0]}@${at(p.offset)}`),
  };
}

test("&&: a false left side leaves the right side unevaluated and the true outcome untaken", () => {
  const src = "x > 1 && x < 5";
  assert.deepEqual(uncovered(src, [{ x: 0 }]), {
    nodes: ["< 5", "x < 5"],
    branches: ["logic:true@&& x < 5"],
  });
  // Both outcomes, both sides: nothing left.
  assert.deepEqual(uncovered(src, [{ x: 0 }, { x: 3 }]), { nodes: [], branches: [] });
  // True on the left decides `||`: its right side never runs.
  assert.deepEqual(uncovered("x > 1 || x < 0", [{ x: 3 }, { x: 0 }]), { nodes: [], branches: [] });
  assert.deepEqual(uncovered("x > 1 || x < 0", [{ x: 3 }]), {
    nodes: ["< 0", "x < 0"],
    branches: ["logic:false@|| x < 0"],
  });
});

test("?: counts its condition's two outcomes, and the branch not taken is not evaluated", () => {
  const src = "(x > 1 ? x + 1 : x - 1) > 0";
  assert.deepEqual(uncovered(src, [{ x: 3 }]), {
    nodes: ["- 1) > 0", "x - 1) > 0"],
    branches: ["condition:false@? x + 1 : x - 1) > 0", "result:false@> 0"],
  });
  assert.deepEqual(uncovered(src, [{ x: 3 }, { x: -3 }]), { nodes: [], branches: [] });
});

test("a comprehension: its range empty and not, all()'s outcomes, and its predicate run only on elements", () => {
  const src = "l.all(e, e > 0)";
  // Only the empty list: the predicate never ran, and all() was only true.
  assert.deepEqual(uncovered(src, [{ l: [] }]), {
    nodes: ["> 0)", "e > 0)"],
    branches: ["range:non-empty@(e, e > 0)", "quantifier:false@(e, e > 0)"],
  });
  assert.deepEqual(uncovered(src, [{ l: [1] }]), {
    nodes: [],
    branches: ["range:empty@(e, e > 0)", "quantifier:false@(e, e > 0)"],
  });
  assert.deepEqual(uncovered(src, [{ l: [] }, { l: [1, -1] }]), { nodes: [], branches: [] });
  // map with a filter: the transform runs only for elements the filter keeps.
  assert.deepEqual(uncovered("l.map(e, e > 0, e * 2).size() > 0", [{ l: [-1] }]), {
    nodes: ["* 2).size() > 0", "e * 2).size() > 0"],
    branches: ["range:empty@(e, e > 0, e * 2).size() > 0", "result:true@> 0"],
  });
});

test("a macro's expansion adds nothing to count: the accumulator, its step and its condition are not nodes", () => {
  const r = compile("l.exists(e, e == 1)", ENV, undefined, undefined, {
    coverage: true,
    booleanResult: true,
  });
  assert.ok(r.ok && r.coverage);
  const nodes = r.coverage.points().filter((p) => p.kind === "node");
  // The comprehension, `l`, `==` and `e`; the constant 1 counts with its parent.
  assert.equal(nodes.length, 4);
});

test("optional chains and optMap: present and absent", () => {
  const src = "o.?a.?b.orValue(0) == 1";
  assert.deepEqual(uncovered(src, [{ o: { a: { b: 1 } } }]), {
    nodes: [],
    branches: [
      "optional:absent@.?b.orValue(0) == 1",
      "optional:absent@.?a.?b.orValue(0) == 1",
      "result:false@== 1",
    ],
  });
  // An absent start leaves the whole chain absent: each selection of it counts absent.
  assert.deepEqual(uncovered(src, [{ o: { a: { b: 1 } } }, { o: {} }]).branches, []);
  assert.deepEqual(uncovered("o[?'k'].hasValue()", [{ o: {} }]).branches, [
    "optional:present@[?'k'].hasValue()",
    "result:true@()",
  ]);
  assert.deepEqual(uncovered("o.?a.optMap(v, v + 1).orValue(0) > 0", [{ o: {} }]), {
    nodes: ["+ 1).orValue(0) > 0", "v + 1).orValue(0) > 0"],
    branches: [
      "optMap:present@(v, v + 1).orValue(0) > 0",
      "optional:present@.?a.optMap(v, v + 1).orValue(0) > 0",
      "result:true@> 0",
    ],
  });
});

test("counting changes no value, error or cost", () => {
  const cases: [string, Record<string, unknown>][] = [
    ["l.all(e, e > 0) && o.?a.orValue(1) == 1", { l: [1, 2, 3], o: {} }],
    ["l.filter(e, e % 2 == 0).map(e, e * 2)", { l: [1, 2, 3, 4] }],
    ["x / 0 > 1 || x > 1", { x: 3 }],
    ["x / 0 > 1", { x: 3 }],
    ["cel.bind(y, x + 1, y * y) > 3 ? 'big' : 'small'", { x: 3 }],
  ];
  for (const [src, input] of cases) {
    const values = Object.fromEntries(Object.entries(input).map(([k, v]) => [k, toCel(v)]));
    const plain = compile(src, ENV);
    const counted = compile(src, ENV, undefined, undefined, { coverage: true });
    assert.ok(plain.ok && counted.ok);
    // The plain program twice, so it runs its generated code the second time (configure.ts lazy).
    run(plain.program, { values }, state());
    const a = run(plain.program, { values }, state());
    const b = run(counted.program, { values }, state());
    assert.deepEqual(b, a, src);
    assert.equal(counted.program.generated(), false, "a counted program runs only closures");
    // Without coverage, nothing changes: no counters, and the generated code serves.
    assert.equal(plain.coverage, undefined);
    assert.equal(plain.program.generated(), true, src);
    // Compiled again with coverage, it is a program of its own, with its own counts.
    const again = compile(src, ENV, undefined, undefined, { coverage: true });
    assert.ok(again.ok && again.program !== counted.program);
  }
});
