/**
 * A binding that names a policy that does not exist is inert, as in the API server: it stores the
 * binding, and the generic policy source (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/
 * generic/policy_source.go) pairs bindings only with the policies it has, so it never matches a
 * request. celgate loads such a set, warns about the binding (PE_UNKNOWN_POLICY) and evaluates the
 * rest; `check` exits 0 when nothing else is wrong.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { loadPolicies } from "../../../src/index.ts";
import { podObject, podRequest, validateText, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";
import { cli, removeTree, tempTree } from "../cli/fake-io.ts";

const TEXT = yamlDocs(
  vap("real", { validations: [{ expression: "false", message: "denied by the real policy" }] }),
  vapBinding("real", "real", { validationActions: ["Warn"] }),
  vapBinding("dangling", "absent.example.com"),
);

test("the set loads with a warning for the dangling binding, which evaluates nothing", () => {
  const loaded = loadPolicies(TEXT);
  assert.deepEqual(
    loaded.diagnostics.map((d) => [d.code, d.severity]),
    [["PE_UNKNOWN_POLICY", "warning"]],
  );
  const d = validateText(TEXT, podRequest(podObject()));
  assert.equal(d.allowed, true);
  assert.deepEqual(
    d.results.map((r) => [r.policy, r.binding]),
    [["real", "real"]],
  );
  assert.deepEqual(d.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'real' with binding 'real': denied by the real policy",
  ]);
});

test("check reports the inert binding as a warning and exits 0; eval evaluates the rest", async () => {
  const dir = await tempTree({
    "policies.yaml": TEXT,
    "pod.yaml":
      "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: a:1}]}\n",
  });
  try {
    const check = await cli(["check", join(dir, "policies.yaml")]);
    assert.equal(check.code, 0, check.stdout);
    assert.match(
      check.stdout,
      /warning: spec\.policyName: no ValidatingAdmissionPolicy named "absent\.example\.com" is loaded: the binding applies to nothing \[PE_UNKNOWN_POLICY\]/,
    );
    const evaluated = await cli(["eval", "-p", join(dir, "policies.yaml"), "-r", join(dir, "pod.yaml")]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    assert.match(evaluated.stdout, /\[Warn\] denied by the real policy/);
  } finally {
    await removeTree(dir);
  }
});
