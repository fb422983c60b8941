/**
 * The param index (src/engine/param-index.ts) answers what a walk over every object would, through
 * adds, replacements (labels changed) and deletes, as client-go's thread_safe_store.go keeps its
 * indices in step with the store (updateIndices on Add, Update and Delete). The walk is the
 * reference: for each namespace, name and selector the index's answer is compared with it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ParamIndex, overlayObjects, type StoredParam } from "../../../src/engine/param-index.ts";
import { describeParamMiss, paramLookup } from "../../../src/engine/params.ts";
import { compileLabelSelector } from "../../../src/match/index.ts";
import type { LabelSelector } from "../../../src/policy/types.ts";
import { seededRandom } from "../../helpers/random.ts";

const NAMESPACES = ["", "a", "b", "c"];
const NAMES = ["p", "q", "r", "s", "t"];
const VALUES = ["x", "y", "z"];

function param(namespace: string, name: string, labels: Record<string, string>): StoredParam {
  return { apiVersion: "v1", name, namespace, labels, object: { metadata: { name, namespace, labels } } };
}

const ids = (ps: Iterable<StoredParam>) => [...ps].map((p) => `${p.namespace}/${p.name}`).sort();

const SELECTORS: LabelSelector[] = [
  { matchLabels: {}, matchExpressions: [] },
  { matchLabels: { tier: "x" }, matchExpressions: [] },
  { matchLabels: { tier: "x", team: "y" }, matchExpressions: [] },
  { matchLabels: {}, matchExpressions: [{ key: "tier", operator: "In", values: ["x", "z"] }] },
  { matchLabels: {}, matchExpressions: [{ key: "team", operator: "Exists", values: [] }] },
  { matchLabels: {}, matchExpressions: [{ key: "team", operator: "NotIn", values: ["y"] }] },
  { matchLabels: { team: "z" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist", values: [] }] },
  { matchLabels: { tier: "nobody" }, matchExpressions: [] },
];

/** Every lookup of the index against the same lookup by a walk over `truth`. */
function agree(index: ParamIndex, truth: Map<string, StoredParam>, step: number): void {
  const all = [...truth.values()];
  assert.equal(index.size, all.length, `size, step ${step}`);
  assert.deepEqual(ids(index.all()), ids(all));
  for (const ns of NAMESPACES) {
    assert.deepEqual(ids(index.inNamespace(ns)), ids(all.filter((p) => p.namespace === ns)), `ns ${ns}`);
    for (const name of NAMES)
      assert.equal(index.named(ns, name), truth.get(`${ns}/${name}`), `named ${ns}/${name}, step ${step}`);
  }
  for (const name of NAMES)
    assert.deepEqual(ids(index.withName(name)), ids(all.filter((p) => p.name === name)), `name ${name}`);
  for (const sel of SELECTORS) {
    const m = compileLabelSelector(sel);
    assert.ok(m.ok);
    const want = ids(all.filter((p) => m.value.matches(p.labels)));
    const narrowed = index.candidates(sel);
    const got = ids([...(narrowed ?? index.all())].filter((p) => m.value.matches(p.labels)));
    assert.deepEqual(got, want, `selector ${JSON.stringify(sel)}, step ${step}`);
  }
}

void test("the index answers as a walk over every object does, through adds, label changes and deletes", () => {
  const random = seededRandom(36);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const index = new ParamIndex();
  const truth = new Map<string, StoredParam>();
  for (let step = 0; step < 400; step++) {
    const ns = pick(NAMESPACES);
    const name = pick(NAMES);
    if (random() < 0.3) {
      assert.equal(index.delete(ns, name), truth.delete(`${ns}/${name}`));
    } else {
      const labels: Record<string, string> = {};
      if (random() < 0.7) labels.tier = pick(VALUES);
      if (random() < 0.5) labels.team = pick(VALUES);
      const p = param(ns, name, labels);
      index.set(p);
      truth.set(`${ns}/${name}`, p);
    }
    if (step % 20 === 0) agree(index, truth, step);
  }
  agree(index, truth, 400);
});

void test("an overlay reads the cluster's object where both have one of that namespace and name, the files' elsewhere", () => {
  const cluster = new ParamIndex();
  const files = new ParamIndex();
  cluster.set(param("a", "p", { tier: "x" }));
  files.set(param("a", "p", { tier: "x", from: "files" }));
  files.set(param("a", "q", { tier: "x" }));
  const both = overlayObjects(cluster, files);
  assert.equal(both.size, 2);
  assert.equal(both.named("a", "p")?.labels.from, undefined, "the cluster's object wins");
  assert.deepEqual(ids(both.inNamespace("a")), ["a/p", "a/q"]);
  assert.deepEqual(ids(both.withName("p")), ["a/p"]);
  assert.deepEqual(ids(both.candidates({ matchLabels: { tier: "x" }, matchExpressions: [] }) ?? []), [
    "a/p",
    "a/q",
  ]);
});

void test("what a selector's miss nearly found is counted up to a bound, so a miss costs the same in any cache", () => {
  const source = { file: "f", locate: () => ({ file: "f", line: 1, column: 1 }) };
  const resources = Array.from({ length: 150 }, (_, i) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    name: "limits",
    namespace: `ns-${i}`,
    labels: { tier: "x" },
    object: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "limits", namespace: `ns-${i}`, labels: { tier: "x" } },
    },
    source,
  }));
  const lookup = paramLookup(resources);
  const ref = {
    selector: { matchLabels: { tier: "x" }, matchExpressions: [] },
    parameterNotFoundAction: "Allow",
  } as const;
  assert.equal(
    describeParamMiss(lookup, { apiVersion: "v1", kind: "ConfigMap" }, ref, "elsewhere"),
    "looked up ConfigMap objects (v1, in namespace elsewhere) with labels tier=x; at least 100 match elsewhere: ns-0/limits (v1), ns-1/limits (v1), ns-2/limits (v1)",
  );
  const few = paramLookup(resources.slice(0, 2));
  assert.equal(
    describeParamMiss(few, { apiVersion: "v1", kind: "ConfigMap" }, ref, "elsewhere"),
    "looked up ConfigMap objects (v1, in namespace elsewhere) with labels tier=x; 2 match elsewhere: ns-0/limits (v1), ns-1/limits (v1)",
  );
});
