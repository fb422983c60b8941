import assert from "node:assert/strict";
import { test } from "node:test";
import { formatCheckText } from "../../../src/adapters/output/diagnostics.ts";
import { lineDiff } from "../../../src/adapters/output/diff.ts";
import {
  formatResultsTable,
  type ResourceEvaluation,
  resultEntries,
} from "../../../src/adapters/output/results.ts";
import { renderValue } from "../../../src/adapters/output/value.ts";
import type { PolicyResult } from "../../../src/engine/types.ts";

test("lineDiff: changed lines with context, removals before additions", () => {
  const before = "a\nb\nc\nd\ne\nf\ng\nh\n";
  const after = "a\nb\nc\nD\ne\nf\ng\nh\ni\n";
  assert.deepEqual(lineDiff(before, after, 1), ["  c", "- d", "+ D", "  e", "  ...", "  h", "+ i"]);
  assert.deepEqual(lineDiff("x\n", "x\n"), []);
  assert.deepEqual(lineDiff("", "new\n"), ["+ new"]);
});

test("renderValue: JSON with the CEL type", () => {
  assert.equal(renderValue(3n), "3 (int)");
  assert.equal(renderValue("a"), '"a" (string)');
  assert.equal(renderValue([1n]), "[\n  1\n] (list)");
});

const ref = { apiVersion: "v1", kind: "Pod", namespace: "default", name: "p" };

function result(over: Partial<PolicyResult>): PolicyResult {
  return {
    policy: "p.example.com",
    policyKind: "ValidatingAdmissionPolicy",
    outcome: "pass",
    violations: [],
    warnings: [],
    auditAnnotations: {},
    trace: [],
    cost: 0,
    durationMs: 0,
    ...over,
  };
}

test("resultEntries: each mutation's patched object builds on the previous one", () => {
  const ev: ResourceEvaluation = {
    resource: ref,
    original: { a: 1 },
    allowed: true,
    warnings: [],
    results: [
      result({
        policyKind: "MutatingAdmissionPolicy",
        binding: "m1",
        patch: [{ op: "add", path: "/b", value: 2 }],
      }),
      result({ policyKind: "MutatingAdmissionPolicy", binding: "m2", patch: [{ op: "remove", path: "/a" }] }),
      result({ binding: "v" }),
    ],
  };
  const entries = resultEntries(ev);
  assert.deepEqual(entries[0]?.patched, { a: 1, b: 2 });
  assert.deepEqual(entries[1]?.patched, { b: 2 });
  assert.equal(entries[2]?.patched, undefined);
  assert.equal(entries[2]?.patch, undefined);
});

test("formatResultsTable: errors show what failurePolicy made of them", () => {
  const ev: ResourceEvaluation = {
    resource: ref,
    original: {},
    allowed: true,
    warnings: [],
    results: [
      result({ outcome: "error", reason: "boom", binding: "b", errorKind: "runtime" }),
      result({
        outcome: "error",
        reason: "bang",
        binding: "c",
        violations: [{ message: "bang", reason: "Invalid", code: 422, action: "Deny", expressionIndex: 0 }],
      }),
      result({ outcome: "skip", reason: "matchCondition 'x' is false", binding: "d" }),
    ],
  };
  const text = formatResultsTable([ev]);
  assert.match(text, /\bb\s+error\s+\[ignored\] boom\n/);
  assert.match(text, /\bc\s+error\s+\[Deny\] bang\n/);
  assert.match(text, /\bd\s+skip\s+matchCondition 'x' is false\n/);
  assert.match(text, /1 resource: 1 allowed, 0 denied, 2 evaluation errors\n$/);
});

test("formatCheckText pluralises the summary", () => {
  assert.equal(
    formatCheckText({ files: [], policies: 2, bindings: 1, diagnostics: [], unbound: [] }),
    "2 policies, 1 binding, 0 problems\n",
  );
});
