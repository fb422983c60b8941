/**
 * `celgate lint`: params from a custom resource under Fail ("If ParamKind refers to a non-existent
 * kind, this policy definition is mis-configured and the FailurePolicy is applied",
 * admissionregistration/v1 types.go), webhook timeouts against the request deadline (mutating
 * webhooks in sequence, reinvoked ones twice: k8s.io/apiserver/pkg/admission/reinvocation.go;
 * validating in parallel: webhook/validating/dispatcher.go), and the command's contract.
 */
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { splitApiVersion } from "../../../src/kube/kinds.ts";
import { isBuiltInGroup } from "../../../src/kube/scope.ts";
import { cli, tempTree } from "../cli/fake-io.ts";

async function tree(t: TestContext, files: Record<string, string>): Promise<string> {
  const dir = await tempTree(files);
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const REPLICA_LIMIT = fileURLToPath(
  new URL("../../fixtures/policies/good/replicalimit.yaml", import.meta.url),
);

void test("a Fail policy whose params are a custom resource is a finding, at its paramKind", async () => {
  const r = await cli(["lint", REPLICA_LIMIT]);
  assert.equal(r.code, 1);
  const [first, fix] = r.stdout.split("\n");
  assert.equal(
    first,
    `${REPLICA_LIMIT}:9:5: error: [custom-param-fail] ValidatingAdmissionPolicy 'replicalimit-policy.example.com' takes its params from rules.example.com/v1 ReplicaLimit, a custom resource, under failurePolicy Fail: while its CRD is missing or not yet served, every request it matches fails`,
  );
  assert.match(fix ?? "", /^ {2}fix: keep params in a built-in kind \(a ConfigMap\)/);
});

void test("params in a ConfigMap, or failurePolicy Ignore, are no finding; a policy on CRDs too locks itself in", async (t) => {
  const policy = (
    name: string,
    failurePolicy: string,
    kind: string,
    resources: string,
  ) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  failurePolicy: ${failurePolicy}
  paramKind: ${kind}
  matchConstraints:
    resourceRules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: [CREATE], resources: [${resources}] }]
  validations: [{ expression: "true" }]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec:
  policyName: ${name}
  validationActions: [Deny]
  paramRef: { name: p, namespace: default, parameterNotFoundAction: Deny }
---
`;
  const dir = await tree(t, {
    "configmap.yaml": policy("configmap", "Fail", "{ apiVersion: v1, kind: ConfigMap }", "deployments"),
    "ignore.yaml": policy(
      "ignore",
      "Ignore",
      "{ apiVersion: rules.example.com/v1, kind: Limit }",
      "deployments",
    ),
    "gateway.yaml": policy(
      "gateway",
      "Fail",
      "{ apiVersion: gateway.networking.k8s.io/v1, kind: Gateway }",
      "customresourcedefinitions",
    ),
  });
  const r = await cli(["lint", "-o", "json", dir]);
  const findings = (JSON.parse(r.stdout) as { findings: { rule: string; message: string }[] }).findings;
  assert.deepEqual(
    findings.map((f) => f.rule),
    ["custom-param-fail"],
  );
  assert.match(
    findings[0]?.message ?? "",
    /^ValidatingAdmissionPolicy 'gateway' takes its params from gateway\.networking\.k8s\.io\/v1 Gateway, .*; it also matches CustomResourceDefinitions, so the CRD cannot be put back while it fails$/,
  );
  // A .k8s.io group is not built in for being one: gateway.networking.k8s.io is a CRD.
  assert.equal(isBuiltInGroup(splitApiVersion("gateway.networking.k8s.io/v1").group), false);
  assert.equal(isBuiltInGroup(splitApiVersion("v1").group), true);
  assert.equal(isBuiltInGroup(splitApiVersion("apps/v1").group), true);
  // k8s.io/api v0.37.2 lifecycle/v1alpha1 register.go: GroupName lifecycle.k8s.io, new in 1.37.
  assert.equal(isBuiltInGroup(splitApiVersion("lifecycle.k8s.io/v1alpha1").group), true);
});

const hooks = (kind: string, entries: string) => `---
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata: { name: ${kind.toLowerCase()} }
webhooks:
${entries}`;
const hook = (name: string, timeout: number, extra = "") => `  - name: ${name}
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Ignore
    timeoutSeconds: ${timeout}
    clientConfig: { url: "https://${name}/" }
    rules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }]
${extra}`;

void test("webhook timeouts past the API server's deadline are an error, past half of it a warning", async (t) => {
  const dir = await tree(t, {
    "slow.yaml":
      hooks(
        "MutatingWebhookConfiguration",
        hook("a.mutate.example.com", 20, "    reinvocationPolicy: IfNeeded\n") +
          hook("b.mutate.example.com", 15),
      ) +
      hooks(
        "ValidatingWebhookConfiguration",
        hook("c.validate.example.com", 10) + hook("d.validate.example.com", 12),
      ),
  });
  const file = join(dir, "slow.yaml");
  const r = await cli(["lint", "--cluster", file]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout.split("\n")[0],
    `${file}:10:21: error: [timeouts] one request can wait 67 s on webhooks a.mutate.example.com (mutatingwebhookconfiguration) (twice, reinvoked), b.mutate.example.com (mutatingwebhookconfiguration), d.validate.example.com (validatingwebhookconfiguration): past the API server's 60 s request deadline, after which it fails whatever their failurePolicy`,
  );
  const longer = await cli(["lint", "--cluster", file, "--request-timeout", "120"]);
  assert.equal(longer.code, 0, "past half of the deadline is a warning");
  assert.match(
    longer.stdout,
    /warning: \[timeouts\] one request can wait 67 s .*: more than half of the API server's 120 s request deadline/,
  );
  const fine = await cli(["lint", "--cluster", file, "--request-timeout", "200"]);
  assert.equal(fine.stdout, "no findings; 0 test objects in the mutation corpus\n");
});

void test("usage: exit 2 for bad options and for input that does not read", async (t) => {
  const dir = await tree(t, {
    "broken.yaml":
      "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: { name: x }\nspec: [\n",
  });
  const cases: [string[], RegExp][] = [
    [["lint"], /missing the policy files or directories to lint/],
    [["lint", "-o", "xml", dir], /unknown output format 'xml'/],
    [["lint", "--namespace", "Bad", dir], /--namespace must be a namespace name/],
    [["lint", "--request-timeout", "0", dir], /--request-timeout must be a whole number of seconds/],
    [["lint", "--exclude-namespace", "a_b", dir], /--exclude-namespace must name namespaces/],
    [["lint", "--cluster", join(dir, "nowhere.yaml")], /--cluster .*nowhere\.yaml: ENOENT/],
    [["lint", dir], /the input does not read:\n.*broken\.yaml:\d+:\d+: error/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message, argv.join(" "));
  }
  const help = await cli(["lint", "--help"]);
  assert.equal(help.code, 0);
  for (const word of [
    "--cluster",
    "--objects",
    "--native",
    "--exclude-namespace",
    "self-deadlock",
    "reinvocation-loop",
  ])
    assert.ok(help.stdout.includes(word), word);
});

void test("--objects adds objects to the corpus, each a CREATE", async (t) => {
  const dir = await tree(t, {
    "m.yaml": `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: m }
spec:
  reinvocationPolicy: Never
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }]
  mutations:
    - patchType: JSONPatch
      jsonPatch: { expression: "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'seen': 'yes'}}]" }
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: m }
spec: { policyName: m }
`,
    "objects/pods.yaml":
      "apiVersion: v1\nkind: List\nitems:\n  - { apiVersion: v1, kind: Pod, metadata: { name: a, namespace: team-a }, spec: { containers: [{ name: c, image: x }] } }\n",
  });
  const r = await cli([
    "lint",
    "-o",
    "json",
    "--objects",
    join(dir, "objects/pods.yaml"),
    join(dir, "m.yaml"),
  ]);
  const report = JSON.parse(r.stdout) as { corpus: number; findings: { rule: string; message: string }[] };
  assert.equal(report.corpus, 1);
  // Replacing the annotations map again with the same value is an empty second patch: idempotent.
  assert.deepEqual(report.findings, []);
});
