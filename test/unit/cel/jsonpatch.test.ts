import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeJsonPointerKey, jsonpatchLibrary } from "../../../src/cel/library/jsonpatch.ts";
import type { CallContext } from "../../../src/cel/library/types.ts";
import type { CelValue } from "../../../src/cel/values.ts";

type Evaluate = (
  source: string,
) =>
  | { readonly ok: true; readonly value: CelValue }
  | { readonly ok: false; readonly error: string; readonly stage: string };

/** The evaluator, loaded only by the end-to-end test so the unit tests do not depend on the whole engine. */
async function loadEvaluate(): Promise<Evaluate> {
  const mod = (await import("../../../src/cel/index.ts")) as { evaluate: Evaluate };
  return mod.evaluate;
}

const ctx: CallContext = {
  regex: () => {
    throw new Error("jsonpatch compiles no regular expressions");
  },
  addCost: () => {},
};

type Fn = (...args: unknown[]) => CelValue;

function escapeKey(s: string): CelValue {
  const decl = jsonpatchLibrary.functions.find((f) => f.name === "jsonpatch.escapeKey");
  assert.ok(decl);
  const o = decl.overloads.find((x) => x.id === "string_jsonpatch_escapeKey_string");
  assert.ok(o && !o.member);
  return (o.impl as unknown as Fn)(s, ctx);
}

const cases: readonly [string, string][] = [
  ["k8s.io/my~label", "k8s.io~1my~0label"],
  ["plain", "plain"],
  ["", ""],
  ["/", "~1"],
  ["~", "~0"],
  // '~' is escaped before '/', so "~1" in the input does not become "~1" in the output.
  ["~1", "~01"],
  ["/~/", "~1~0~1"],
  ["a//b~~c", "a~1~1b~0~0c"],
  ["ünï/cødé", "ünï~1cødé"],
];

test("jsonpatch.escapeKey escapes '~' and '/' as RFC 6901 requires", () => {
  for (const [input, want] of cases) {
    assert.equal(escapeKey(input), want, input);
    assert.equal(escapeJsonPointerKey(input), want, input);
  }
});

test("jsonpatch.escapeKey evaluates end to end", async () => {
  const evaluate = await loadEvaluate();
  const r = evaluate(`"/metadata/labels/" + jsonpatch.escapeKey('k8s.io/my~label')`);
  assert.ok(r.ok, r.ok ? "" : r.error);
  assert.equal(r.value, "/metadata/labels/k8s.io~1my~0label");
});
