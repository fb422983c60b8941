/**
 * `celgate lint`: admission deadlocks, as the Kubernetes documentation describes them ("Avoiding
 * deadlocks in self-hosted webhooks", "Avoiding operating on the kube-system namespace"), found by
 * asking the engine whether a Fail pair matches the requests a cluster needs to heal.
 */
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { cli, tempTree } from "../cli/fake-io.ts";

async function lint(t: TestContext, files: Record<string, string>, ...flags: string[]) {
  const dir = await tempTree(files);
  t.after(() => rm(dir, { recursive: true, force: true }));
  const r = await cli(["lint", ...flags, "-o", "json", dir]);
  const report = JSON.parse(r.stdout || "{}") as {
    findings: {
      rule: string;
      severity: string;
      message: string;
      fix: string;
      location?: { file: string; line: number };
    }[];
    errors: number;
  };
  return { ...r, dir, report };
}

const policy = (
  name: string,
  failurePolicy: string,
  rules: string,
  extra = "",
) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: ${failurePolicy}
  matchConstraints:
    resourceRules: [${rules}]
${extra}  validations: [{ expression: "true" }]
`;
const binding = (name: string, actions = "[Deny]", matchResources = "") => `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec:
  policyName: ${name}
  validationActions: ${actions}
${matchResources}`;

const ALL_PODS = `{ apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods] }`;
const NODES = `{ apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [nodes, nodes/status] }`;

void test("served by celgate, Pods are safe (its webhooks exclude those namespaces) but Nodes are not", async (t) => {
  const r = await lint(t, {
    "pods.yaml": policy("pods", "Fail", ALL_PODS) + binding("pods"),
    "nodes.yaml": policy("nodes", "Fail", NODES) + binding("nodes"),
  });
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(
    r.report.findings.map((f) => [f.rule, f.location?.file.slice(r.dir.length + 1), f.location?.line]),
    [["control-plane", "nodes.yaml", 4]],
  );
  const [f] = r.report.findings;
  assert.equal(
    f?.message,
    "ValidatingAdmissionPolicy 'nodes' (binding 'nodes'), served by celgate through webhook celgate.celgate.fail.validate.celgate.dev, can match the kubelets' updates of their Node and the kubelets' Node status reports under failurePolicy Fail: when celgate is down, or the policy cannot be evaluated, they fail",
  );
  assert.match(
    f?.fix ?? "",
    /^narrow spec\.matchConstraints\.resourceRules so they do not reach those objects/,
  );
});

void test("--native: a Fail policy on every Pod can block celgate's own Pods and kube-system's", async (t) => {
  const r = await lint(t, { "pods.yaml": policy("pods", "Fail", ALL_PODS) + binding("pods") }, "--native");
  assert.equal(r.code, 1);
  assert.deepEqual(
    r.report.findings.map((f) => f.rule),
    ["self-deadlock"],
  );
  const [f] = r.report.findings;
  assert.match(
    f?.message ?? "",
    /applied natively, can match the creation of celgate's own Pods \(namespace celgate\) and the creation of control-plane Pods in kube-system under failurePolicy Fail/,
  );
  assert.equal(
    f?.fix,
    "exclude them in the binding: matchResources.namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [celgate, kube-system]}]}",
  );
});

void test("--native: the fix works, and what cannot deny or says Ignore is no deadlock", async (t) => {
  const excluded = `  matchResources:
    namespaceSelector:
      matchExpressions: [{ key: kubernetes.io/metadata.name, operator: NotIn, values: [celgate, kube-system] }]
`;
  const r = await lint(
    t,
    {
      "fixed.yaml": policy("fixed", "Fail", ALL_PODS) + binding("fixed", "[Deny]", excluded),
      "warn.yaml": policy("warn", "Fail", ALL_PODS) + binding("warn", "[Warn, Audit]"),
      "ignore.yaml": policy("ignore", "Ignore", ALL_PODS) + binding("ignore"),
      "unbound.yaml": policy("unbound", "Fail", ALL_PODS),
    },
    "--native",
  );
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(r.report.findings, []);
});

void test("matchConditions count: the docs' example bound with [Deny] spares the kubelets and leases, not kube-system's Pods", async (t) => {
  // kubernetes/website content/en/examples/access/validating-admission-policy-match-conditions.yaml
  const docs = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "demo-policy.example.com"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups:   ["*"]
        apiVersions: ["*"]
        operations:  ["CREATE", "UPDATE"]
        resources:   ["*"]
  matchConditions:
    - name: 'exclude-leases'
      expression: '!(request.resource.group == "coordination.k8s.io" && request.resource.resource == "leases")'
    - name: 'exclude-kubelet-requests'
      expression: '!("system:nodes" in request.userInfo.groups)'
    - name: 'rbac'
      expression: 'request.resource.group != "rbac.authorization.k8s.io"'
  validations:
    - expression: "!object.metadata.name.contains('demo') || object.metadata.namespace == 'demo'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-test.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [Deny]
`;
  const native = await lint(t, { "demo.yaml": docs }, "--native");
  assert.equal(native.report.findings.length, 1);
  assert.match(
    native.report.findings[0]?.message ?? "",
    /can match the creation of celgate's own Pods \(namespace celgate\), the ReplicaSets of celgate's Deployment \(namespace celgate\) and the creation of control-plane Pods in kube-system under/,
  );
  const served = await lint(t, { "demo.yaml": docs });
  assert.deepEqual(
    served.report.findings,
    [],
    "the kubelets' Node updates are excluded by its matchCondition",
  );
});

void test("a policy that denies a probe as written says so", async (t) => {
  const denying = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: needs-team }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [${ALL_PODS}]
  validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels" }]
${binding("needs-team")}`;
  const r = await lint(t, { "p.yaml": denying }, "--native");
  assert.match(
    r.report.findings[0]?.message ?? "",
    /; as written it even denies the creation of celgate's own Pods \(namespace celgate\) and the creation of control-plane Pods in kube-system$/,
  );
});

const WEBHOOKS = (namespaceSelector: string) => `apiVersion: v1
kind: List
items:
  - apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingWebhookConfiguration
    metadata: { name: gatekeeper-validating-webhook-configuration, uid: 1234 }
    webhooks:
      - name: validation.gatekeeper.sh
        admissionReviewVersions: [v1]
        sideEffects: None
        failurePolicy: Fail
        timeoutSeconds: 3
        clientConfig: { service: { namespace: gatekeeper-system, name: gatekeeper-webhook-service, path: /v1/admit } }
        rules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: ["*"] }]
${namespaceSelector}`;

void test("--cluster: a Fail webhook on everything can block celgate's Pods, kube-system, the nodes' Leases and Nodes", async (t) => {
  // resources: ["*"] takes no subresource, so the Node status reports are not among them.
  const dir = await tempTree({ "cluster.yaml": WEBHOOKS("") });
  t.after(() => rm(dir, { recursive: true, force: true }));
  const r = await cli(["lint", "--cluster", join(dir, "cluster.yaml")]);
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stdout.split("\n");
  assert.match(
    lines[0] ?? "",
    /cluster\.yaml:8:15: error: \[self-deadlock\] webhook 'validation\.gatekeeper\.sh' of ValidatingWebhookConfiguration 'gatekeeper-validating-webhook-configuration' can match the creation of celgate's own Pods \(namespace celgate\), .* the nodes' heartbeat Leases in kube-node-lease, the kubelets' updates of their Node and the kubelets' client certificate requests under failurePolicy Fail: when its server is down they fail$/,
  );
  assert.match(lines[1] ?? "", /^ {2}fix: narrow its rules so they do not reach those objects/);
});

void test("--cluster: webhooks that exclude the system namespaces and the kubelets are fine, celgate's own among them", async (t) => {
  const excluded = `        namespaceSelector:
          matchExpressions: [{ key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kube-node-lease, celgate] }]
        objectSelector: {}
        matchConditions: [{ name: not-kubelets, expression: "!('system:nodes' in request.userInfo.groups)" }]
`;
  // celgate's own: what serve --register-webhooks writes for deploy/ with every library policy.
  const policies = fileURLToPath(new URL("../../../policies", import.meta.url));
  const own = await cli([
    "manifests",
    "--policies",
    policies,
    "--service",
    "celgate",
    "--namespace",
    "celgate",
  ]);
  assert.equal(own.code, 0, own.stderr);
  const dir = await tempTree({ "cluster.yaml": WEBHOOKS(excluded), "celgate.yaml": own.stdout });
  t.after(() => rm(dir, { recursive: true, force: true }));
  const r = await cli([
    "lint",
    "--cluster",
    join(dir, "cluster.yaml"),
    "--cluster",
    join(dir, "celgate.yaml"),
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, "no findings; 0 test objects in the mutation corpus\n");
});

void test("--cluster: the cluster's policies run natively, so a Fail one on every Pod is a deadlock there", async (t) => {
  const dump = `apiVersion: v1
kind: List
items:
  - apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata: { name: all-pods, uid: 42, resourceVersion: "7" }
    spec:
      failurePolicy: Fail
      matchConstraints:
        resourceRules: [${ALL_PODS}]
        matchPolicy: Equivalent
        namespaceSelector: {}
        objectSelector: {}
      validations: [{ expression: "true" }]
  - apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata: { name: all-pods }
    spec: { policyName: all-pods, validationActions: [Deny] }
`;
  const dir = await tempTree({ "cluster.yaml": dump });
  t.after(() => rm(dir, { recursive: true, force: true }));
  const r = await cli(["lint", "-o", "json", "--cluster", join(dir, "cluster.yaml")]);
  assert.equal(r.code, 1, r.stderr);
  const findings = (
    JSON.parse(r.stdout) as { findings: { rule: string; message: string; location: { line: number } }[] }
  ).findings;
  assert.deepEqual(
    findings.map((f) => [f.rule, f.location.line]),
    [["self-deadlock", 6]],
  );
  assert.match(
    findings[0]?.message ?? "",
    /'all-pods' \(binding 'all-pods'\), applied natively, can match the creation of celgate's own Pods/,
  );
});
