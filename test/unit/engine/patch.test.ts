/**
 * The webhook's patch is built from what the mutations did (src/engine/mutate.ts, patch.ts), not by
 * diffing objects. Property: for seeded random objects and random sequences of ApplyConfiguration
 * merges and JSON Patch mutations, the appended patch, applied to the original by an independent
 * RFC 6902 applier, gives exactly the mutated object; the original is never changed; a mutation
 * that changes nothing contributes no operation.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { toCel } from "../../../src/cel/index.ts";
import { type KindSchema, kindMergeSchema } from "../../../src/kube/schemas/index.ts";
import { kindMergeOf } from "../../../src/engine/kind-schemas.ts";
import { applyMutation } from "../../../src/engine/mutate.ts";
import { appendPatch } from "../../../src/engine/patch.ts";
import type { JsonPatchOp } from "../../../src/engine/types.ts";
import { applyJsonPatch } from "../../helpers/json-patch.ts";
import { seededRandom } from "../../helpers/random.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const prng = seededRandom;

const POD = kindMergeOf({ group: "", version: "v1", kind: "Pod" });

const KEYS = ["name", "image", "a/b", "x~y", "labels", "env", "value", "containers", "ports", "finalizers"];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}

function randomValue(r: () => number, depth: number): Json {
  const k = r();
  if (depth <= 0 || k < 0.45) return pick(r, ["a", "b", 1, 2, true, false, "nginx"] as Json[]);
  if (k < 0.75) {
    const o: JsonObject = {};
    const n = 1 + Math.floor(r() * 3);
    for (let i = 0; i < n; i++) o[pick(r, KEYS)] = randomValue(r, depth - 1);
    return o;
  }
  const n = Math.floor(r() * 3);
  return Array.from({ length: n }, (_, i) =>
    r() < 0.6 ? { name: `c${i % 2}`, image: pick(r, ["x", "y"]) } : randomValue(r, depth - 1),
  );
}

function randomObject(r: () => number): JsonObject {
  const v = randomValue(r, 3);
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v : { spec: v };
}

/** Every pointer to a value in `doc`, with the value's container kind. */
function pointers(doc: Json, at = ""): { path: string; value: Json }[] {
  const out = [{ path: at, value: doc }];
  const esc = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");
  if (Array.isArray(doc)) {
    for (let i = 0; i < doc.length; i++) out.push(...pointers(doc[i] as Json, `${at}/${i}`));
  } else if (doc !== null && typeof doc === "object")
    for (const [k, v] of Object.entries(doc)) out.push(...pointers(v, `${at}/${esc(k)}`));
  return out;
}

/** Valid JSON Patch operations for `doc` (each chosen against the document as it will be then). */
function randomOps(r: () => number, doc: JsonObject): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  let cur: unknown = structuredClone(doc);
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const all = pointers(cur as Json).filter((p) => p.path !== "");
    const containers = pointers(cur as Json).filter((p) => typeof p.value === "object" && p.value !== null);
    const k = r();
    let op: JsonPatchOp;
    if (k < 0.35 || all.length === 0) {
      const c = pick(r, containers);
      const path = Array.isArray(c.value)
        ? `${c.path}/${r() < 0.5 ? "-" : Math.floor(r() * (c.value.length + 1))}`
        : `${c.path}/${pick(r, KEYS).replace(/~/g, "~0").replace(/\//g, "~1")}`;
      op = { op: "add", path, value: randomValue(r, 1) };
    } else if (k < 0.6) {
      const p = pick(r, all);
      // Sometimes the value it already has: a no-op the patch must leave out.
      op = { op: "replace", path: p.path, value: r() < 0.3 ? structuredClone(p.value) : randomValue(r, 1) };
    } else if (k < 0.75) op = { op: "remove", path: pick(r, all).path };
    else if (k < 0.85) {
      const p = pick(r, all);
      op = { op: "test", path: p.path, value: structuredClone(p.value) };
    } else {
      const from = pick(r, all).path;
      const target = pick(
        r,
        containers.filter((c) => !Array.isArray(c.value) && !`${c.path}/`.startsWith(`${from}/`)),
      );
      if (!target) continue;
      op = { op: r() < 0.5 ? "copy" : "move", from, path: `${target.path}/moved` };
      if (op.op === "move" && (op.path === from || op.path.startsWith(`${from}/`))) continue;
    }
    try {
      cur = applyJsonPatch(cur, [op]);
    } catch {
      // A move whose removal shifts the target's index: not a valid operation here, draw another.
      continue;
    }
    ops.push(op);
  }
  return ops;
}

/** An apply configuration: a random object, sometimes with nulls (removals) and existing values. */
function randomApply(r: () => number, doc: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [k, v] of Object.entries(doc)) {
    const c = r();
    if (c < 0.2) patch[k] = null;
    else if (c < 0.5) patch[k] = structuredClone(v);
    else if (c < 0.7) patch[k] = randomValue(r, 2);
  }
  if (r() < 0.5) patch[pick(r, KEYS)] = randomValue(r, 2);
  return patch;
}

test("appended patches take the original to the mutated object (2,000 seeded sequences)", () => {
  const r = prng(20261122);
  let ops = 0;
  let folded = 0;
  let noops = 0;
  for (let n = 0; n < 2000; n++) {
    const original = randomObject(r);
    const frozen = structuredClone(original);
    let working: Record<string, unknown> = original;
    const patch: JsonPatchOp[] = [];
    const steps = 1 + Math.floor(r() * 3);
    for (let s = 0; s < steps; s++) {
      const apply = r() < 0.5;
      const value = apply ? randomApply(r, working as JsonObject) : randomOps(r, working as JsonObject);
      const res = applyMutation(working, apply ? "ApplyConfiguration" : "JSONPatch", toCel(value));
      assert.ok(
        res.ok,
        `mutation ${JSON.stringify(value)} on ${JSON.stringify(working)}: ${res.ok ? "" : res.error.message}`,
      );
      const before = working;
      working = res.value.object;
      if (res.value.ops.length === 0) {
        noops++;
        assert.ok(isDeepStrictEqual(before, working), "no operations but the object changed");
      }
      const length = patch.length;
      appendPatch(patch, res.value.ops, working);
      ops += res.value.ops.length;
      folded += length + res.value.ops.length - patch.length;
    }
    assert.deepEqual(original, frozen, "a mutation changed the request's object in place");
    const replayed = applyJsonPatch(structuredClone(original), patch);
    assert.deepEqual(replayed, working, `patch ${JSON.stringify(patch)} on ${JSON.stringify(original)}`);
  }
  // The run exercised what it claims to: many operations, some folded, some mutations no-ops.
  assert.ok(ops > 3000, `${ops} operations`);
  assert.ok(folded > 50, `${folded} folded`);
  assert.ok(noops > 50, `${noops} no-op mutations`);
});

test("adds into a freshly added map or list fold into it; '-' becomes the index it lands at", () => {
  const original = { metadata: { name: "p" }, spec: { containers: [{ name: "a" }] } };
  const patch: JsonPatchOp[] = [];
  const step = (ops: JsonPatchOp[]) => {
    const res = applyMutation(working, "JSONPatch", toCel(ops));
    assert.ok(res.ok);
    working = res.value.object;
    appendPatch(patch, res.value.ops, working);
  };
  let working: Record<string, unknown> = original;
  step([
    { op: "add", path: "/metadata/labels", value: {} },
    { op: "add", path: "/metadata/labels/a~1b", value: "1" },
    { op: "add", path: "/spec/tolerations", value: [] },
    { op: "add", path: "/spec/tolerations/-", value: { key: "k" } },
    { op: "add", path: "/spec/containers/-", value: { name: "b" } },
  ]);
  step([{ op: "add", path: "/metadata/labels/c", value: "2" }]);
  assert.deepEqual(patch, [
    { op: "add", path: "/metadata/labels", value: { "a/b": "1", c: "2" } },
    { op: "add", path: "/spec/tolerations", value: [{ key: "k" }] },
    { op: "add", path: "/spec/containers/1", value: { name: "b" } },
  ]);
});

test("an apply configuration that restates the object emits nothing; a changed field one replace", () => {
  const object = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { labels: { a: "1" } },
    spec: { containers: [{ name: "a", image: "x" }] },
  };
  const same = applyMutation(object, "ApplyConfiguration", toCel(structuredClone(object)), POD);
  assert.ok(same.ok);
  assert.deepEqual(same.value.ops, []);
  assert.equal(same.value.object, object);
  const changed = applyMutation(
    object,
    "ApplyConfiguration",
    toCel({ spec: { containers: [{ name: "a", image: "y" }] } }),
    POD,
  );
  assert.ok(changed.ok);
  assert.deepEqual(changed.value.ops, [{ op: "replace", path: "/spec/containers/0/image", value: "y" }]);
});

/** A Pod-like object with escaped keys, a list, a null member and an own `__proto__` member (JSON.parse makes those). */
function pinnedDoc(): Record<string, unknown> {
  return JSON.parse(
    '{"metadata":{"name":"p","labels":{"a":"1","x/y":"2","t~u":"3","e~1":"6"},"__proto__":{"polluted":true}},' +
      '"spec":{"list":[1,2,{"k":"v"}],"m":{"n":null}}}',
  ) as Record<string, unknown>;
}

type Pinned =
  | { readonly ops: readonly JsonPatchOp[]; readonly edit: (d: Record<string, unknown>) => void }
  | { readonly error: string };

const spec = (d: Record<string, unknown>) => d.spec as { list: unknown[]; m: Record<string, unknown> };
const meta = (d: Record<string, unknown>) => d.metadata as { labels: Record<string, unknown> } & JsonObject;

const PINNED: readonly (readonly [string, readonly unknown[], Pinned])[] = [
  [
    "add with an escaped '/'",
    [{ op: "add", path: "/metadata/labels/c~1d", value: "4" }],
    {
      ops: [{ op: "add", path: "/metadata/labels/c~1d", value: "4" }],
      edit: (d) => {
        meta(d).labels["c/d"] = "4";
      },
    },
  ],
  [
    "'~01' is '~1', not '/'",
    [{ op: "add", path: "/metadata/labels/e~0f~01", value: "5" }],
    {
      ops: [{ op: "add", path: "/metadata/labels/e~0f~01", value: "5" }],
      edit: (d) => {
        meta(d).labels["e~f~1"] = "5";
      },
    },
  ],
  [
    "'~01' names the member 'e~1': its current value is dropped",
    [{ op: "add", path: "/metadata/labels/e~01", value: "6" }],
    { ops: [], edit: () => {} },
  ],
  [
    "'~0' names a '~': its current value is dropped",
    [{ op: "replace", path: "/metadata/labels/t~0u", value: "3" }],
    { ops: [], edit: () => {} },
  ],
  [
    "add of a member's current value is dropped",
    [{ op: "add", path: "/metadata/labels/x~1y", value: "2" }],
    { ops: [], edit: () => {} },
  ],
  [
    "replace of a list item with its value is dropped",
    [{ op: "replace", path: "/spec/list/2", value: { k: "v" } }],
    { ops: [], edit: () => {} },
  ],
  [
    "replace of null with null is dropped",
    [{ op: "replace", path: "/spec/m/n", value: null }],
    { ops: [], edit: () => {} },
  ],
  [
    "add into a list inserts, even a value equal to the item there",
    [{ op: "add", path: "/spec/list/0", value: 1 }],
    { ops: [{ op: "add", path: "/spec/list/0", value: 1 }], edit: (d) => void spec(d).list.unshift(1) },
  ],
  [
    "'/-' is named by the index it lands at",
    [
      { op: "add", path: "/spec/list/-", value: 9 },
      { op: "add", path: "/spec/list/-", value: 10 },
    ],
    {
      ops: [
        { op: "add", path: "/spec/list/3", value: 9 },
        { op: "add", path: "/spec/list/4", value: 10 },
      ],
      edit: (d) => void spec(d).list.push(9, 10),
    },
  ],
  [
    "remove of an escaped '~'",
    [{ op: "remove", path: "/metadata/labels/t~0u" }],
    {
      ops: [{ op: "remove", path: "/metadata/labels/t~0u" }],
      edit: (d) => void delete meta(d).labels["t~u"],
    },
  ],
  [
    "add to and remove from a map with an own __proto__ member",
    [
      { op: "add", path: "/metadata/zz", value: 1 },
      { op: "remove", path: "/metadata/name" },
    ],
    {
      ops: [
        { op: "add", path: "/metadata/zz", value: 1 },
        { op: "remove", path: "/metadata/name" },
      ],
      edit: (d) => {
        meta(d).zz = 1;
        delete meta(d).name;
      },
    },
  ],
  [
    "move",
    [{ op: "move", from: "/metadata/labels/a", path: "/spec/m/a" }],
    {
      ops: [{ op: "move", path: "/spec/m/a", from: "/metadata/labels/a" }],
      edit: (d) => {
        delete meta(d).labels.a;
        spec(d).m.a = "1";
      },
    },
  ],
  [
    "copy, then an add into the copy leaves the source alone",
    [
      { op: "copy", from: "/spec/list", path: "/spec/m/copied" },
      { op: "add", path: "/spec/m/copied/-", value: 3 },
    ],
    {
      ops: [
        { op: "copy", path: "/spec/m/copied", from: "/spec/list" },
        { op: "add", path: "/spec/m/copied/3", value: 3 },
      ],
      edit: (d) => {
        spec(d).m.copied = [1, 2, { k: "v" }, 3];
      },
    },
  ],
  [
    "a passing test is checked and left out",
    [
      { op: "test", path: "/metadata/name", value: "p" },
      { op: "add", path: "/metadata/labels/b", value: "2" },
    ],
    {
      ops: [{ op: "add", path: "/metadata/labels/b", value: "2" }],
      edit: (d) => {
        meta(d).labels.b = "2";
      },
    },
  ],
  [
    "a failing test after an add leaves the object unpatched",
    [
      { op: "add", path: "/metadata/labels/b", value: "2" },
      { op: "test", path: "/metadata/name", value: "q" },
    ],
    { ops: [], edit: () => {} },
  ],
  // The errors are gopkg.in/evanphx/json-patch.v4's, prefixed as json_patch.go prefixes them.
  [
    "remove of a missing member",
    [{ op: "remove", path: "/metadata/labels/zz" }],
    {
      error:
        "JSON Patch: error in remove for path: '/metadata/labels/zz': Unable to remove nonexistent key: zz: missing value",
    },
  ],
  [
    "add under a missing map",
    [{ op: "add", path: "/metadata/nope/zz", value: 1 }],
    {
      error:
        'JSON Patch: add operation does not apply: doc is missing path: "/metadata/nope/zz": missing value',
    },
  ],
  [
    "add under a scalar",
    [{ op: "add", path: "/metadata/name/x", value: 1 }],
    {
      error:
        'JSON Patch: add operation does not apply: doc is missing path: "/metadata/name/x": missing value',
    },
  ],
  [
    "a pointer without a '/' has no parent",
    [{ op: "add", path: "metadata", value: 1 }],
    { error: 'JSON Patch: add operation does not apply: doc is missing path: "metadata": missing value' },
  ],
  [
    "a pointer not starting with '/' loses its first token: 'x/metadata/name' is /metadata/name",
    [{ op: "replace", path: "x/metadata/name", value: "q" }],
    {
      ops: [{ op: "replace", path: "/metadata/name", value: "q" }],
      edit: (d) => {
        meta(d).name = "q";
      },
    },
  ],
  [
    "a list index past the end",
    [{ op: "add", path: "/spec/list/9", value: 1 }],
    {
      error:
        "JSON Patch: error in add for path: '/spec/list/9': Unable to access invalid index: 9: invalid index referenced",
    },
  ],
  [
    "move from a missing member",
    [{ op: "move", from: "/metadata/zz", path: "/spec/m/a" }],
    {
      error: "JSON Patch: error in move for path: 'zz': Unable to remove nonexistent key: zz: missing value",
    },
  ],
  [
    "an operation that is not one of RFC 6902's",
    [{ op: "frob", path: "/a" }],
    { error: "JSON Patch: Unexpected kind: frob" },
  ],
  [
    'an operation without a path has the path ""',
    [{ op: "add", value: 1 }],
    { error: 'JSON Patch: add operation does not apply: doc is missing path: "": missing value' },
  ],
  ["an item that is not an object", ["x"], { error: "JSONPatch[0] is not a JSONPatch object" }],
];

test("JSONPatch mutations: the exact operations, object and error messages", () => {
  for (const [name, value, want] of PINNED) {
    const working = pinnedDoc();
    const res = applyMutation(working, "JSONPatch", toCel(value));
    assert.deepEqual(working, pinnedDoc(), `${name}: the working object changed in place`);
    if ("error" in want) {
      assert.deepEqual(res, { ok: false, error: { kind: "runtime", message: want.error } }, name);
      continue;
    }
    assert.ok(res.ok, `${name}: ${res.ok ? "" : res.error.message}`);
    assert.deepEqual(res.value.ops, want.ops, name);
    // Key order is the order the webhook serialises the patch in.
    assert.equal(JSON.stringify(res.value.ops), JSON.stringify(want.ops), name);
    const expected = pinnedDoc();
    want.edit(expected);
    assert.deepEqual(res.value.object, expected, name);
    if (want.ops.length === 0)
      assert.equal(res.value.object, working, `${name}: a no-op must return the same object`);
    // The own `__proto__` member stays a member; no copy's prototype is changed.
    const m = res.value.object.metadata as object;
    assert.ok(Object.hasOwn(m, "__proto__"), name);
    assert.equal(Object.getPrototypeOf(m), Object.prototype, name);
  }
});

test("JSONPatch mutations: many distinct pointers, then the first ones again, resolve to their own members", () => {
  let working: Record<string, unknown> = { m: {} };
  const expected: Record<string, string> = {};
  for (let round = 0; round < 2; round++)
    for (let i = 0; i < 1200; i++) {
      // Pairs of pointers that differ only by escaping: "/m/k~17" is the member "k/7", "/m/k~07" the member "k~7".
      const path = `/m/k${i % 2 === 0 ? "~1" : "~0"}${i >> 1}`;
      // The same value for both of a pair: a pointer taken for the other's would make the add a no-op.
      const value = `${round}:${i >> 1}`;
      const res = applyMutation(working, "JSONPatch", toCel([{ op: "add", path, value }]));
      assert.ok(res.ok, res.ok ? "" : res.error.message);
      assert.deepEqual(res.value.ops, [{ op: "add", path, value }]);
      working = res.value.object;
      expected[`k${i % 2 === 0 ? "/" : "~"}${i >> 1}`] = value;
    }
  assert.deepEqual(working, { m: expected });
});

test("JSONPatch mutations: a member added to a map copied for it does not appear in the original", () => {
  const original = { metadata: { annotations: { a: "1" } }, spec: {} };
  const res = applyMutation(
    original,
    "JSONPatch",
    toCel([{ op: "add", path: "/metadata/annotations/celgate.dev~1admitted-by", value: "celgate" }]),
  );
  assert.ok(res.ok);
  assert.deepEqual(original, { metadata: { annotations: { a: "1" } }, spec: {} });
  assert.deepEqual(res.value.object, {
    metadata: { annotations: { a: "1", "celgate.dev/admitted-by": "celgate" } },
    spec: {},
  });
  // Only the containers on the path are copied.
  assert.equal(res.value.object.spec, original.spec);
});

test("ApplyConfiguration: adding to and removing from a map with an own __proto__ member keeps it a member", () => {
  const working = JSON.parse('{"metadata":{"name":"p","__proto__":{"x":1}}}') as Record<string, unknown>;
  // A built-in-like kind whose metadata keeps unknown members: `name: null` removes the field.
  const schema: KindSchema = {
    apiVersion: "example.com/v1",
    kind: "Thing",
    origin: "builtin",
    definition: () => undefined,
    schema: {
      type: "object",
      properties: {
        metadata: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: {
            name: { type: "string" },
            labels: { type: "object", additionalProperties: { type: "string" } },
          },
        },
      },
    },
  };
  const kind = { root: kindMergeSchema(schema), schema };
  for (const [config, ops, name] of [
    [
      { metadata: { labels: { a: "1" } } },
      [{ op: "add", path: "/metadata/labels", value: { a: "1" } }],
      "add",
    ],
    [{ metadata: { name: null } }, [{ op: "remove", path: "/metadata/name" }], "remove"],
    [{ metadata: { name: "q" } }, [{ op: "replace", path: "/metadata/name", value: "q" }], "replace"],
  ] as const) {
    const res = applyMutation(working, "ApplyConfiguration", toCel(config), kind);
    assert.ok(res.ok, `${name}: ${res.ok ? "" : res.error.message}`);
    assert.deepEqual(res.value.ops, ops, name);
    const m = res.value.object.metadata as Record<string, unknown>;
    assert.ok(Object.hasOwn(m, "__proto__"), name);
    assert.equal(Object.getPrototypeOf(m), Object.prototype, name);
    assert.equal(Object.keys(m).length, name === "add" ? 3 : name === "remove" ? 1 : 2, name);
  }
  assert.deepEqual(Object.keys(working.metadata as object), ["name", "__proto__"]);
});

test("ApplyConfiguration: a __proto__ member the configuration adds becomes a member, not the prototype", () => {
  // A ConfigMap's data keys may be `__proto__` (Kubernetes allows [-._a-zA-Z0-9]+).
  const working = JSON.parse('{"data":{"a":"1"}}') as Record<string, unknown>;
  const config = toCel(JSON.parse('{"data":{"__proto__":"x"}}'));
  const res = applyMutation(working, "ApplyConfiguration", config);
  assert.ok(res.ok, res.ok ? "" : res.error.message);
  assert.deepEqual(res.value.ops, [{ op: "add", path: "/data/__proto__", value: "x" }]);
  const data = res.value.object.data as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(data), Object.prototype);
  assert.ok(Object.hasOwn(data, "__proto__"));
  assert.equal(JSON.stringify(res.value.object), '{"data":{"a":"1","__proto__":"x"}}');
  assert.deepEqual(Object.keys(working.data as object), ["a"]);
});
