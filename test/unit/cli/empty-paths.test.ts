/**
 * Issue 36: a path that holds no policy is a warning in every command that reads policies, with
 * check's code and text (PE_NO_POLICIES), so a misspelt path in CI or in a Deployment's --policies
 * does not pass silently. One function words it (sources/files.ts's noPolicyWarnings).
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { startTestWebhook } from "../../helpers/webhook.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: cap }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments] }
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: cap }
spec: { policyName: cap, validationActions: [Deny] }
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: team-a }
spec: { replicas: 1 }
`;

async function tree(t: TestContext): Promise<string> {
  const dir = await tempTree({
    "policies/cap.yaml": POLICY,
    "polcies/readme.md": "a misspelt directory with no policy in it",
    "deploy.yaml": DEPLOYMENT,
  });
  t.after(() => removeTree(dir));
  return dir;
}

const WARNING =
  "warning: polcies holds no ValidatingAdmissionPolicy, MutatingAdmissionPolicy or binding [PE_NO_POLICIES]";

void test("check, eval, audit, lint and manifests give check's warning for a path with no policy", async (t) => {
  const dir = await tree(t);
  const checked = await cli(["check", "policies", "polcies"], { cwd: dir });
  assert.ok(checked.stdout.includes(WARNING), checked.stdout);
  const runs = {
    eval: ["eval", "-p", "policies", "-p", "polcies", "-r", "deploy.yaml"],
    audit: ["audit", "-p", "policies", "-p", "polcies", "-r", "deploy.yaml"],
    lint: ["lint", "policies", "polcies"],
    manifests: [
      "manifests",
      "--policies",
      "policies",
      "--policies",
      "polcies",
      "--service",
      "celgate",
      "--namespace",
      "celgate",
    ],
  };
  for (const [name, argv] of Object.entries(runs)) {
    const r = await cli(argv, { cwd: dir });
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    assert.ok(r.stderr.includes(WARNING), `${name}: ${r.stderr}`);
  }
});

void test("serve logs the warning for a --policies path with no policy, and serves the rest", async (t) => {
  const dir = await tree(t);
  const { join } = await import("node:path");
  const { logs } = await startTestWebhook(t, { policies: [join(dir, "policies"), join(dir, "polcies")] });
  assert.ok(
    logs.some((l) =>
      l.includes(
        `warning: ${join(dir, "polcies")} holds no ValidatingAdmissionPolicy, MutatingAdmissionPolicy or binding [PE_NO_POLICIES]`,
      ),
    ),
    logs.join("\n"),
  );
});
