import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { compareInventories, inventoryOf } from "../../../src/sources/inventory.ts";

function inventory(text: string, file = "p.yaml") {
  const parsed = parsePolicyText(text, file);
  assert.deepEqual(parsed.diagnostics, []);
  return inventoryOf(parsed.set);
}

const PARAM = (data: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: limits
  namespace: team-a
data:
  source: "${data}"
`;

const POLICY = (expression: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "${expression}"
`;

void test("objects are keyed by kind, namespace and name, with the file that defines them", () => {
  const inv = inventory(`${POLICY("true")}---\n${PARAM("a")}`);
  assert.deepEqual(
    [...inv.values()].map((e) => `${e.key} ${e.kind} ${e.namespace ?? "-"} ${e.name} ${e.file}`),
    [
      "ValidatingAdmissionPolicy/p ValidatingAdmissionPolicy - p p.yaml",
      "ConfigMap/team-a/limits ConfigMap team-a limits p.yaml",
    ],
  );
});

void test("a change is what an object says, not where it stands", () => {
  const before = inventory(`${POLICY("true")}---\n${PARAM("a")}`);
  const moved = inventory(`# a comment\n\n${POLICY("true")}---\n${PARAM("a")}`, "other.yaml");
  assert.deepEqual(compareInventories(before, moved), { added: [], removed: [], changed: [] });
  // A param's own field named `source` is data, not the parser's source map.
  const edited = inventory(`${POLICY("false")}---\n${PARAM("b")}`);
  assert.deepEqual(
    compareInventories(before, edited).changed.map((e) => e.key),
    ["ValidatingAdmissionPolicy/p", "ConfigMap/team-a/limits"],
  );
});

void test("added and removed objects, each in its set's order", () => {
  const before = inventory(POLICY("true"));
  const after = inventory(PARAM("a"));
  const changes = compareInventories(before, after);
  assert.deepEqual(
    changes.added.map((e) => e.key),
    ["ConfigMap/team-a/limits"],
  );
  assert.deepEqual(
    changes.removed.map((e) => e.key),
    ["ValidatingAdmissionPolicy/p"],
  );
});

void test("a param holding an integer beyond 2^53 is inventoried, and a change of its last digit counts", () => {
  // YAML integers are read as kubectl delivers them to the API server: beyond 2^53 exactly (a bigint).
  const widget = (n: string) => `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: team-a}
spec: {a: ${n}}
`;
  const before = inventory(widget("9007199254740992"));
  const after = inventory(widget("9007199254740993"));
  const changes = compareInventories(before, after);
  assert.deepEqual(
    changes.changed.map((e) => e.name),
    ["w"],
  );
});
