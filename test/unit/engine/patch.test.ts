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
import { applyMutation } from "../../../src/engine/mutate.ts";
import { appendPatch } from "../../../src/engine/patch.ts";
import type { JsonPatchOp } from "../../../src/engine/types.ts";
import { applyJsonPatch } from "../../helpers/json-patch.ts";
import { seededRandom } from "../../helpers/random.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const prng = seededRandom;

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
        `mutation ${JSON.stringify(value)} on ${JSON.stringify(working)}: ${res.ok ? "" : res.error}`,
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
  const object = { metadata: { labels: { a: "1" } }, spec: { containers: [{ name: "a", image: "x" }] } };
  const same = applyMutation(object, "ApplyConfiguration", toCel(structuredClone(object)));
  assert.ok(same.ok);
  assert.deepEqual(same.value.ops, []);
  assert.equal(same.value.object, object);
  const changed = applyMutation(
    object,
    "ApplyConfiguration",
    toCel({ spec: { containers: [{ name: "a", image: "y" }] } }),
  );
  assert.ok(changed.ok);
  assert.deepEqual(changed.value.ops, [{ op: "replace", path: "/spec/containers/0/image", value: "y" }]);
});
