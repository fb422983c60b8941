/**
 * Issue 36: one rule for a policy nothing binds, everywhere. The API server builds its policy hooks
 * from the bindings (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/
 * policy_source.go, calculatePolicyData: policiesToBindings is keyed by each binding's policyName),
 * so a policy without a binding is never evaluated, and `serve` follows it. `eval`, `audit`, `test`
 * and the REPL used to evaluate such a policy as if bound with [Deny], so `always-deny` in
 * policies/ failed every object; now they do as the API server does, and `--include-unbound` (the
 * REPL's `:policy --include-unbound`) asks for the old dry run explicitly.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { ReplSession } from "../../../src/adapters/repl/session.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const DENY_ALL = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: deny-all }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - { apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"] }
  validations:
  - { expression: "false", message: closed }
`;

const REPLICAS = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replicas }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments] }
  validations:
  - { expression: "object.spec.replicas <= 5" }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replicas }
spec: { policyName: replicas, validationActions: [Deny] }
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: team-a }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: app, image: registry.io/app:1.0 }] }
`;

async function tree(t: TestContext): Promise<string> {
  const dir = await tempTree({
    "policies/deny-all.yaml": DENY_ALL,
    "policies/replicas.yaml": REPLICAS,
    "deploy.yaml": DEPLOYMENT,
  });
  t.after(() => removeTree(dir));
  return dir;
}

const NOTE =
  /note: 1 policy no binding names is not evaluated \(as in the API server\): deny-all; --include-unbound evaluates it as if bound with validationActions \[Deny\]/;

void test("eval: a policy nothing binds is not evaluated, as serve does; --include-unbound evaluates it", async (t) => {
  const dir = await tree(t);
  const r = await cli(["eval", "-p", "policies", "-r", "deploy.yaml"], { cwd: dir });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /Deployment team-a\/web: allowed/);
  assert.doesNotMatch(r.stdout, /deny-all/);
  assert.match(r.stderr, NOTE);

  const all = await cli(["eval", "-p", "policies", "-r", "deploy.yaml", "--include-unbound"], { cwd: dir });
  assert.equal(all.code, 1, all.stdout + all.stderr);
  assert.match(all.stdout, /deny-all +\(none\)\* +fail/);
  assert.doesNotMatch(all.stderr, /note: /);
});

void test("audit: a policy nothing binds reports no failures; --include-unbound audits it", async (t) => {
  const dir = await tree(t);
  const r = await cli(["audit", "-p", "policies", "-r", "deploy.yaml", "-o", "policyreport"], { cwd: dir });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /deny-all/);
  assert.doesNotMatch(r.stdout, /"result": "fail"/);
  assert.match(r.stderr, NOTE);

  const all = await cli(["audit", "-p", "policies", "-r", "deploy.yaml", "--include-unbound"], { cwd: dir });
  assert.equal(all.code, 1, all.stdout + all.stderr);
  assert.match(all.stdout, /deny-all +\(none\)\*/);
});

void test("test: a suite's case is admitted as the API server admits it; an unbound policy needs a binding", async (t) => {
  const dir = await tree(t);
  const suite = (policies: string) => `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${policies}]
cases:
  - name: a small deployment
    objectFile: deploy.yaml
    expect: { allowed: true, matched: [replicas] }
`;
  await writeFile(join(dir, "a.test.yaml"), suite("policies"));
  const r = await cli(["test", join(dir, "a.test.yaml")]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /1 passed/);
});

void test("repl: :policy evaluates bound policies only and says so; :policy --include-unbound evaluates the rest", async (t) => {
  const dir = await tree(t);
  const s = new ReplSession({ cwd: dir });
  const answers: string[] = [];
  for (const line of [":object deploy.yaml", ":policy policies", ":policy --include-unbound policies"]) {
    const reply = await s.handle(line);
    answers.push(reply.text);
  }
  assert.match(answers[1] ?? "", /Deployment team-a\/web: allowed/);
  assert.doesNotMatch(
    (answers[1] ?? "")
      .split("\n")
      .filter((l) => !l.startsWith("note:"))
      .join("\n"),
    /deny-all/,
  );
  assert.match(
    answers[1] ?? "",
    /note: 1 policy no binding names is not evaluated \(as in the API server\): deny-all; :policy --include-unbound evaluates it/,
  );
  assert.match(answers[2] ?? "", /deny-all +\(none\)\* +fail/);
});
