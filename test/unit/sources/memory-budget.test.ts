/**
 * The memory budget of a policy set (issue 37 item 5): a set's share of the heap, and the located
 * diagnostic for a set over it. How the estimate compares with what a compiled set keeps is measured
 * by `npm run bench -- memory`, whose gate fails when the estimate is below it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { estimateSetBytes } from "../../../src/compile/footprint.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import {
  memoryProblem,
  PROCESS_HEAP_BYTES,
  REQUEST_RESERVE_BYTES,
  setBudgetBytes,
} from "../../../src/sources/memory-budget.ts";

function policies(count: number, validations: number): string {
  return Array.from(
    { length: count },
    (_, p) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p-${p}
spec:
  matchConstraints:
    resourceRules: [{ apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments] }]
  validations:
${Array.from({ length: validations }, (_, i) => `    - expression: "object.metadata.name != 'n-${p}-${i}'"`).join("\n")}
`,
  ).join("---\n");
}

void test("a set's share is half the heap less what the server needs besides its sets", () => {
  const heap = 368 * 2 ** 20;
  assert.equal(setBudgetBytes(heap), (heap - PROCESS_HEAP_BYTES - REQUEST_RESERVE_BYTES) / 2);
  assert.equal(setBudgetBytes(PROCESS_HEAP_BYTES), 0);
});

void test("a set over its budget gets PE_SET_MEMORY at the policy where the running estimate passes it", () => {
  const parsed = parsePolicyText(policies(4, 10), "set.yaml");
  const set = parsed.set;
  const total = estimateSetBytes(set);
  assert.equal(total.expressions, 40);
  assert.equal(memoryProblem(set, total.bytes), undefined);
  // Room for a little over two policies: the third passes it.
  const d = memoryProblem(set, Math.floor(total.bytes / 2) + 1);
  assert.ok(d);
  assert.equal(d.code, "PE_SET_MEMORY");
  assert.equal(d.severity, "error");
  assert.deepEqual(d.object, { kind: "ValidatingAdmissionPolicy", name: "p-2" });
  assert.equal(d.path, "metadata.name");
  assert.equal(d.location?.file, "set.yaml");
  // The third document's metadata.name: two documents of 8 + 10 lines and a separator before it.
  assert.equal(d.location?.line, 2 * 19 + 4);
  assert.match(d.message, /4 policies, 40 expressions/);
});
