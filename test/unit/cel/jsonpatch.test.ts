import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeJsonPointerKey, jsonpatchLibrary } from "../../../src/cel/library/jsonpatch.ts";
import type { CelValue } from "../../../src/cel/runtime/values.ts";
import { ADMISSION_VARIABLES, compile, createEnvironment, EvalState, run } from "../../../src/cel/index.ts";
import { evaluate, libraryHarness } from "../../helpers/library.ts";

const { overload, call } = libraryHarness(jsonpatchLibrary);

function escapeKey(s: string): CelValue {
  assert.ok(!overload("jsonpatch.escapeKey", "string_jsonpatch_escapeKey_string").member);
  return call("jsonpatch.escapeKey", "string_jsonpatch_escapeKey_string", s);
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

test("jsonpatch.escapeKey evaluates end to end, in a mutation's environment only (Kubernetes cel/mutation)", () => {
  const source = `"/metadata/labels/" + jsonpatch.escapeKey('k8s.io/my~label')`;
  const mutation = createEnvironment({
    variables: { ...ADMISSION_VARIABLES },
    structTypes: ["Object", "JSONPatch"],
  });
  const c = compile(source, mutation);
  assert.ok(c.ok, c.ok ? "" : c.problems[0]?.rendered);
  const r = run(c.program, { values: {} }, new EvalState(1_000_000, performance.now() + 10_000));
  assert.ok(r.ok);
  assert.equal(r.value, "/metadata/labels/k8s.io~1my~0label");
  // A validating policy's environment has no jsonpatch library.
  assert.equal(evaluate(source).ok, false);
});
