/**
 * The library API (src/index.ts), each export held to its written contract. The packed package is
 * exercised from plain JavaScript in test/e2e/dist.test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import {
  admit,
  compilePolicies,
  evaluateExpression,
  formatDiagnostic,
  loadPolicies,
  loadPolicyFiles,
  requestFor,
} from "../../../src/index.ts";
import { map, mapBinding, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

const pod = (labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", labels },
  spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
});

const NEEDS_TEAM = vap("needs-team", {
  validations: [
    { expression: "'team' in object.metadata.?labels.orValue({})", message: "a team label is required" },
  ],
});

test("loadPolicies: a malformed policy is a diagnostic with file, line, column and field path", () => {
  const loaded = loadPolicies(
    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  failurePolicy: Sometimes\n",
    "p.yaml",
  );
  const d = loaded.diagnostics.find((x) => x.path === "spec.failurePolicy");
  assert.ok(d, JSON.stringify(loaded.diagnostics));
  assert.equal(d.code, "PE_FIELD_VALUE");
  assert.equal(d.path, "spec.failurePolicy");
  assert.deepEqual(d.location, { file: "p.yaml", line: 5, column: 18 });
  assert.match(formatDiagnostic(d), /^p\.yaml:5:18: error: spec\.failurePolicy: /);
});

test("loadPolicies: a binding that names no loaded policy is reported (references are checked)", () => {
  const loaded = loadPolicies(yamlDocs(vapBinding("b", "absent")));
  assert.deepEqual(
    loaded.diagnostics.map((d) => d.code),
    ["PE_UNKNOWN_POLICY"],
  );
});

test("loadPolicyFiles: a path that cannot be read is a diagnostic, not a rejection", async () => {
  const loaded = await loadPolicyFiles([join(import.meta.dirname, "no-such-dir")]);
  assert.deepEqual(
    loaded.diagnostics.map((d) => d.code),
    ["PE_IO"],
  );
});

test("compilePolicies: a policy that does not compile is kept, and its requests are decided by failurePolicy", () => {
  const policies = compilePolicies(
    loadPolicies(
      yamlDocs(vap("p", { validations: [{ expression: "object.spec.x ==" }] }), vapBinding("b", "p")),
    ).set,
  );
  assert.equal(policies.diagnostics[0]?.code, "PE_CEL_PARSE");
  const request = requestFor(pod());
  assert.ok(request.ok);
  const d = admit(policies, request.value);
  assert.equal(d.allowed, false);
  assert.match(d.status?.message ?? "", /compilation error/);
});

test("requestFor: the request the API server would send; an object without a kind is a failed Result", () => {
  const r = requestFor(pod());
  assert.ok(r.ok);
  assert.equal(r.value.operation, "CREATE");
  assert.equal(r.value.namespace, "default");
  assert.deepEqual(r.value.resource, { group: "", version: "v1", resource: "pods" });
  assert.deepEqual(r.value.userInfo, { username: "celgate", groups: ["system:authenticated"] });
  const update = requestFor(pod(), { oldObject: pod(), namespace: "team-a" });
  assert.ok(update.ok);
  assert.equal(update.value.operation, "UPDATE");
  assert.equal(update.value.namespace, "team-a");
  const bad = requestFor({ metadata: { name: "x" } });
  assert.equal(bad.ok, false);
});

test("admit: the whole chain by default (mutations first), one phase on request", () => {
  const policies = compilePolicies(
    loadPolicies(
      yamlDocs(
        map("add-team", {
          mutations: [
            {
              patchType: "ApplyConfiguration",
              applyConfiguration: {
                expression: "Object{metadata: Object.metadata{labels: {'team': 'web'}}}",
              },
            },
          ],
        }),
        mapBinding("add-team", "add-team"),
        NEEDS_TEAM,
        vapBinding("needs-team", "needs-team"),
      ),
    ).set,
  );
  const request = requestFor(pod());
  assert.ok(request.ok);
  const chain = admit(policies, request.value);
  assert.equal(chain.allowed, true);
  assert.ok(chain.patch && chain.patch.length > 0);
  const validated = admit(policies, request.value, { phase: "validate" });
  assert.equal(validated.allowed, false);
  assert.match(validated.status?.message ?? "", /a team label is required/);
});

test("admit: an unbound policy is not enforced unless includeUnbound, as eval and test evaluate it", () => {
  const policies = compilePolicies(loadPolicies(yamlDocs(NEEDS_TEAM)).set);
  const request = requestFor(pod());
  assert.ok(request.ok);
  assert.equal(admit(policies, request.value).allowed, true);
  assert.equal(admit(policies, request.value, { includeUnbound: true }).allowed, false);
});

test("evaluateExpression: the value as JSON with its type; errors by stage", () => {
  assert.deepEqual(evaluateExpression("[1, 2].map(x, x * 2)"), { ok: true, value: [2, 4], type: "list" });
  assert.deepEqual(evaluateExpression("object == null"), { ok: true, value: true, type: "bool" });
  const compileError = evaluateExpression("1 +");
  assert.equal(compileError.ok, false);
  assert.equal(compileError.ok === false && compileError.stage, "compile");
  const evalError = evaluateExpression("xs[3]", { xs: [1] });
  assert.equal(evalError.ok === false && evalError.stage, "eval");
});
