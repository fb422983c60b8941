import assert from "node:assert/strict";
import { test } from "node:test";
import { celListsLibrary, kubernetesListsLibrary, traversalCost } from "../../../src/cel/library/lists.ts";
import { CelMap, type CelValue, Duration, Timestamp, UInt } from "../../../src/cel/runtime/values.ts";
import { evaluate, type LibraryHarness, libraryHarness, throwsCel } from "../../helpers/library.ts";

const kubernetesLists = libraryHarness(kubernetesListsLibrary);
const celLists = libraryHarness(celListsLibrary);
const k8s = kubernetesLists.call;
const ext = celLists.call;

function cost(lists: LibraryHarness, name: string, id: string, ...args: CelValue[]): number {
  assert.ok(lists.overload(name, id).cost, `${id} declares a cost`);
  return lists.cost(name, id, ...args);
}

const ms = (n: bigint) => new Duration(n * 1_000_000n);

void test("both libraries are in the Kubernetes environment", () => {
  assert.equal(kubernetesListsLibrary.availability, "kubernetes");
  assert.equal(celListsLibrary.availability, "kubernetes");
});

// ---------------------------------------------------------------------------------------------
// Kubernetes' lists library

const isSortedCases: ReadonlyArray<readonly [CelValue[], boolean]> = [
  [[1n, 2n, 3n], true],
  [["a", "b", "b", "c"], true],
  [[2.0, 1.0], false],
  [[1n], true],
  [[], true],
  [[1n, 1.5, new UInt(2n)], true], // numbers compare across types
  [[new UInt(3n), 2n], false],
  [[false, true], true],
  [[ms(2n), ms(1n)], false],
  [[new Timestamp(1n), new Timestamp(2n)], true],
  [[new Uint8Array([1]), new Uint8Array([1, 0])], true],
  [[1n, "a"], true], // Kubernetes ignores a comparison between unrelated types
];

for (const [list, expected] of isSortedCases) {
  void test(`isSorted(${list.length} elements) is ${expected}`, () => {
    assert.equal(k8s("isSorted", "list_is_sorted_bool", list), expected);
  });
}

void test("isSorted of lists or maps has no overload", () => {
  throwsCel(
    () => k8s("isSorted", "list_is_sorted_bool", [[1n], [2n]]),
    /^no such overload: isSorted\(list\)$/,
  );
  throwsCel(() => k8s("isSorted", "list_is_sorted_bool", [new CelMap()]), /^no such overload: isSorted/);
});

const sumCases: ReadonlyArray<readonly [CelValue[], CelValue]> = [
  [[1n, 3n], 4n],
  [[1.0, 3.0], 4.0],
  [[new UInt(1n), new UInt(2n)], new UInt(3n)],
  [[ms(60_000n), ms(1000n)], ms(61_000n)],
  [[], 0n],
];

for (const [list, expected] of sumCases) {
  void test(`sum of ${list.length} elements`, () => {
    assert.deepEqual(k8s("sum", "list_sum", list), expected);
  });
}

void test("sum errors", () => {
  throwsCel(() => k8s("sum", "list_sum", [2n ** 62n, 2n ** 62n]), "integer overflow");
  throwsCel(
    () => k8s("sum", "list_sum", [new UInt(2n ** 64n - 1n), new UInt(1n)]),
    "unsigned integer overflow",
  );
  throwsCel(() => k8s("sum", "list_sum", [1n, 1.5]), "no such overload: _+_(int, double)");
  throwsCel(() => k8s("sum", "list_sum", ["a"]), /^no such overload: sum/);
});

const minMaxCases: ReadonlyArray<readonly [CelValue[], CelValue, CelValue]> = [
  [[1n, 3n], 1n, 3n],
  [[3n, 1n, 2n], 1n, 3n],
  [[1n], 1n, 1n],
  [["b", "a", "c"], "a", "c"],
  [[1.5, 1n, new UInt(2n)], 1n, new UInt(2n)],
  [[ms(5n), ms(2n)], ms(2n), ms(5n)],
  [[true, false], false, true],
  [[1n, "a", 0n], 0n, 1n], // the string cannot be compared with ints and is passed over
];

for (const [list, min, max] of minMaxCases) {
  void test(`min and max of ${list.length} elements`, () => {
    assert.deepEqual(k8s("min", "list_min", list), min);
    assert.deepEqual(k8s("max", "list_max", list), max);
  });
}

void test("min and max of an empty list fail", () => {
  throwsCel(() => k8s("min", "list_min", []), "min called on empty list");
  throwsCel(() => k8s("max", "list_max", []), "max called on empty list");
  throwsCel(() => k8s("max", "list_max", [[1n]]), /^no such overload: max/);
});

const indexCases: ReadonlyArray<readonly [CelValue[], CelValue, bigint, bigint]> = [
  [[1n, 2n, 2n, 3n], 2n, 1n, 2n],
  [["a", "b", "b", "c"], "b", 1n, 2n],
  [[1.0], 1.1, -1n, -1n],
  [[], "string", -1n, -1n],
  [[1n, new UInt(2n), 3.0], 2.0, 1n, 1n], // CEL equality across numeric types
  [[[1n], [2n]], [2n], 1n, 1n],
];

for (const [list, item, first, last] of indexCases) {
  void test(`indexOf and lastIndexOf of ${JSON.stringify(String(item))} in ${list.length} elements`, () => {
    assert.equal(k8s("indexOf", "list_a_index_of_int", list, item), first);
    assert.equal(k8s("lastIndexOf", "list_a_last_index_of_int", list, item), last);
  });
}

void test("Kubernetes' list functions cost one traversal of the list", () => {
  // Strings cost 0.1 per UTF-8 byte (rounded down), other elements 1; the base cost of 1 is included.
  assert.equal(traversalCost([1n, 2n, 3n]), 3);
  assert.equal(traversalCost(["a".repeat(25), "é".repeat(5)]), 3);
  assert.equal(traversalCost([]), 0);
  assert.equal(traversalCost(new CelMap([["k", [1n, 2n]]])), 2);
  assert.equal(cost(kubernetesLists, "isSorted", "list_is_sorted_bool", [1n, 2n, 3n]), 2);
  assert.equal(cost(kubernetesLists, "indexOf", "list_a_index_of_int", [1n, 2n], 1n), 1);
  assert.equal(cost(kubernetesLists, "sum", "list_sum", []), -1);
});

// lists.go version 1 (ListsVersion(1), base.go 1.37): includes; a list holds the item (Equal), any
// other receiver equals it; cost.go charges one traversal of the receiver.
void test("includes (lists v1, 1.37): membership in a list, equality otherwise, one traversal's cost", () => {
  assert.equal(k8s("includes", "list_includes_dyn_dyn", [1n, 2n, 3n], 2n), true);
  assert.equal(k8s("includes", "list_includes_dyn_dyn", [1n, 2n, 3n], 2.0), true, "heterogeneous equality");
  assert.equal(k8s("includes", "list_includes_dyn_dyn", [1n, 2n], 4n), false);
  assert.equal(k8s("includes", "list_includes_dyn_dyn", "model-a", "model-a"), true);
  assert.equal(k8s("includes", "list_includes_dyn_dyn", "model-a", "model-b"), false);
  assert.equal(k8s("includes", "list_includes_dyn_dyn", [["a"]], ["a"]), true);
  assert.equal(cost(kubernetesLists, "includes", "list_includes_dyn_dyn", [1n, 2n, 3n], 9n), 2);
});

// ---------------------------------------------------------------------------------------------
// cel-go's lists extension

const sliceCases: ReadonlyArray<readonly [CelValue[], bigint, bigint, CelValue[]]> = [
  [[1n, 2n, 3n, 4n], 1n, 3n, [2n, 3n]],
  [[1n, 2n, 3n, 4n], 2n, 4n, [3n, 4n]],
  [[1n, 2n], 0n, 0n, []],
  [[1n, 2n], 2n, 2n, []],
];

for (const [list, start, end, expected] of sliceCases) {
  void test(`slice(${start}, ${end})`, () => {
    assert.deepEqual(ext("slice", "list_slice", list, start, end), expected);
  });
}

void test("slice errors", () => {
  throwsCel(
    () => ext("slice", "list_slice", [1n], -1n, 1n),
    "cannot slice(-1, 1), negative indexes not supported",
  );
  throwsCel(
    () => ext("slice", "list_slice", [1n, 2n], 2n, 1n),
    "cannot slice(2, 1), start index must be less than or equal to end index",
  );
  throwsCel(() => ext("slice", "list_slice", [1n, 2n], 0n, 3n), "cannot slice(0, 3), list is length 2");
});

const flattenCases: ReadonlyArray<readonly [CelValue[], bigint | undefined, CelValue[]]> = [
  [[1n, [2n, 3n], [4n]], undefined, [1n, 2n, 3n, 4n]],
  [[1n, [2n, [3n, 4n]]], undefined, [1n, 2n, [3n, 4n]]],
  [[1n, 2n, [], [], [3n, 4n]], undefined, [1n, 2n, 3n, 4n]],
  [[1n, [2n, [3n, [4n]]]], 2n, [1n, 2n, 3n, [4n]]],
  [[1n, [2n, [3n, [4n]]]], 0n, [1n, [2n, [3n, [4n]]]]],
  [[[[["deep"]]]], 10n, ["deep"]],
  [[1n, 2n], undefined, [1n, 2n]],
];

for (const [list, depth, expected] of flattenCases) {
  void test(`flatten(${depth ?? ""}) of ${JSON.stringify(list, (_k, v) => (typeof v === "bigint" ? Number(v) : v))}`, () => {
    const result =
      depth === undefined
        ? ext("flatten", "list_flatten", list)
        : ext("flatten", "list_flatten_int", list, depth);
    assert.deepEqual(result, expected);
  });
}

void test("flatten with a negative depth fails", () => {
  throwsCel(() => ext("flatten", "list_flatten_int", [[1n]], -1n), "level must be non-negative");
});

const distinctCases: ReadonlyArray<readonly [CelValue[], CelValue[]]> = [
  [
    [1n, 2n, 2n, 3n, 3n, 3n],
    [1n, 2n, 3n],
  ],
  [
    ["b", "b", "c", "a", "c"],
    ["b", "c", "a"],
  ],
  [
    [1n, "b", 2n, "b"],
    [1n, "b", 2n],
  ],
  [[1n, 1.0, new UInt(1n)], [1n]], // one value in three numeric types
  [
    [[1n], [1n], [2n]],
    [[1n], [2n]],
  ],
  [[], []],
];

for (const [list, expected] of distinctCases) {
  void test(`distinct of ${list.length} elements`, () => {
    assert.deepEqual(ext("distinct", "list_distinct", list), expected);
  });
}

void test("reverse", () => {
  const list = [5n, 3n, 1n, 2n];
  assert.deepEqual(ext("reverse", "list_reverse", list), [2n, 1n, 3n, 5n]);
  assert.deepEqual(list, [5n, 3n, 1n, 2n], "the receiver is left alone");
  assert.deepEqual(ext("reverse", "list_reverse", []), []);
});

const sortCases: ReadonlyArray<readonly [CelValue[], CelValue[]]> = [
  [
    [3n, 2n, 1n],
    [1n, 2n, 3n],
  ],
  [
    ["b", "c", "a"],
    ["a", "b", "c"],
  ],
  [
    [2.5, -1.0, 0.0],
    [-1.0, 0.0, 2.5],
  ],
  [
    [new UInt(2n), new UInt(1n)],
    [new UInt(1n), new UInt(2n)],
  ],
  [
    [true, false],
    [false, true],
  ],
  [
    [ms(3n), ms(1n)],
    [ms(1n), ms(3n)],
  ],
  [
    [new Uint8Array([2]), new Uint8Array([1, 5])],
    [new Uint8Array([1, 5]), new Uint8Array([2])],
  ],
  [[], []],
];

for (const [list, expected] of sortCases) {
  void test(`sort of ${list.length} elements`, () => {
    assert.deepEqual(ext("sort", "list_sort", list), expected);
  });
}

void test("sort errors", () => {
  throwsCel(() => ext("sort", "list_sort", [1n, "b"]), "list elements must have the same type");
  throwsCel(() => ext("sort", "list_sort", [1n, 2.0]), "list elements must have the same type");
  throwsCel(() => ext("sort", "list_sort", [[1n, 2n, 3n]]), "list elements must be comparable");
});

void test("@sortByAssociatedKeys orders a list by the keys beside it", () => {
  const sortBy = (list: CelValue[], keys: CelValue[]) =>
    ext("@sortByAssociatedKeys", "list_sortByAssociatedKeys", list, keys);
  assert.deepEqual(sortBy(["foo", "bar", "baz"], [3n, 1n, 2n]), ["bar", "baz", "foo"]);
  // Equal keys keep their order.
  assert.deepEqual(sortBy(["a", "b", "c", "d"], [1n, 0n, 1n, 0n]), ["b", "d", "a", "c"]);
  assert.deepEqual(sortBy([], []), []);
  throwsCel(
    () => sortBy([1n, 2n], [1n]),
    "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got 2 and 1 elements respectively",
  );
  throwsCel(() => sortBy([1n, 2n], ["a", 1n]), "list elements must have the same type");
  throwsCel(() => sortBy([1n], [new CelMap()]), "list elements must be comparable");
});

void test("lists.range", () => {
  const range = (n: bigint) => ext("lists.range", "lists_range", n);
  assert.deepEqual(range(5n), [0n, 1n, 2n, 3n, 4n]);
  assert.deepEqual(range(0n), []);
  // cel-go v0.26 (Kubernetes 1.34 to 1.36, ext/lists.go genRange) counts up from 0 while below n, so a
  // negative size is an empty list; v0.29 (Kubernetes 1.37) refuses it. Found by the Values fuzzer
  // against a real kube-apiserver 1.36 (test/kube/values.test.ts).
  assert.deepEqual(range(-1n), []);
  assert.deepEqual(range(-9223372036854775808n), []);
  throwsCel(() => range(10_000_001n), "lists.range: size 10000001 exceeds maximum allowed (10000000)");
});

void test("the extension's costs follow cel-go's version 3 trackers", () => {
  const c = (name: string, id: string, ...args: CelValue[]) => cost(celLists, name, id, ...args);
  // Result size × factor + 10 for the new list (the base cost of 1 is counted by the evaluator).
  assert.equal(c("slice", "list_slice", [1n, 2n, 3n, 4n], 1n, 3n), 12);
  assert.equal(c("reverse", "list_reverse", [1n, 2n, 3n]), 13);
  assert.equal(c("lists.range", "lists_range", 5n), 15);
  assert.equal(c("flatten", "list_flatten", [[1n], [2n]]), 12);
  assert.equal(c("flatten", "list_flatten_int", [[1n], [2n]], 3n), 16);
  // Quadratic: 2 per pair, 2.1 for strings.
  assert.equal(c("distinct", "list_distinct", [1n, 2n, 3n]), 28);
  assert.equal(c("sort", "list_sort", ["a", "b", "c"]), 28);
  assert.equal(c("sort", "list_sort", []), 10);
  assert.equal(c("@sortByAssociatedKeys", "list_sortByAssociatedKeys", ["x", "y"], [2n, 1n]), 18);
});

void test("lists functions through evaluate", () => {
  const cases: ReadonlyArray<readonly [string, CelValue]> = [
    ["[1, 2, 3].isSorted()", true],
    ["[1, 3].sum()", 4n],
    ["[1, 3].max()", 3n],
    ["[1, 2, 2].lastIndexOf(2)", 2n],
    ["[1, 2, 3, 4].slice(1, 3)", [2n, 3n]],
    ["[1, [2, [3]]].flatten()", [1n, 2n, [3n]]],
    ["[3, 1, 2].sort()", [1n, 2n, 3n]],
    ["[1, 2, 2].distinct()", [1n, 2n]],
    ["lists.range(3).reverse()", [2n, 1n, 0n]],
    ["['bb', 'a', 'ccc'].sortBy(s, -s.size())", ["ccc", "bb", "a"]],
  ];
  for (const [source, expected] of cases) {
    // cel-go's checker alone: flatten's case is a mixed list, which Kubernetes' validator refuses.
    const r = evaluate(source, {}, { checks: "cel" });
    assert.ok(r.ok, `${source}: ${r.ok ? "" : r.error}`);
    assert.deepEqual(r.value, expected, source);
  }
  const empty = evaluate("[].min()");
  assert.ok(!empty.ok && empty.error.includes("min called on empty list"));
});
