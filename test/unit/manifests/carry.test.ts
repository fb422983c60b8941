/**
 * What the generated webhooks carry of their policies (matchConditions, selectors), what they never
 * intercept, what they warn about, and the routing rule they share with the server.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePolicySet } from "../../../src/compile/policy.ts";
import { webhookConditionProblems } from "../../../src/manifests/carry.ts";
import { HAZARDS, matchesByWildcard, wildcardHazards } from "../../../src/manifests/hazards.ts";
import { type WebhookOptions, webhookManifests } from "../../../src/manifests/webhooks.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { canDeny, routeOf } from "../../../src/policy/routing.ts";

const OPTIONS: WebhookOptions = { service: "celgate", namespace: "celgate" };

function manifests(text: string, options: Partial<WebhookOptions> = {}) {
  const parsed = parsePolicyText(text, "policies.yaml");
  assert.deepEqual(
    parsed.diagnostics.filter((d) => d.severity === "error"),
    [],
  );
  return webhookManifests(compilePolicySet(parsed.set), { ...OPTIONS, ...options });
}

interface Hook {
  name: string;
  failurePolicy: string;
  clientConfig: { service: { path: string } };
  rules: { resources: string[] }[];
  namespaceSelector: unknown;
  objectSelector?: unknown;
  matchConditions?: { name: string; expression: string }[];
}

function hooks(result: ReturnType<typeof manifests>): Hook[] {
  return result.documents.flatMap((d) => (d.webhooks as Hook[] | undefined) ?? []);
}

// The Kubernetes documentation's matchConditions example (kubernetes/website
// content/en/examples/access/validating-admission-policy-match-conditions.yaml), bound with [Warn].
const DOCS_EXAMPLE = `apiVersion: admissionregistration.k8s.io/v1
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
    - name: 'exclude-leases' # Each match condition must have a unique name
      expression: '!(request.resource.group == "coordination.k8s.io" && request.resource.resource == "leases")' # Match non-lease resources.
    - name: 'exclude-kubelet-requests'
      expression: '!("system:nodes" in request.userInfo.groups)' # Match requests made by non-node users.
    - name: 'rbac' # Skip RBAC requests.
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
  validationActions: [Warn]
`;

void test("the docs' matchConditions example bound with [Warn]: one Ignore webhook that carries the conditions", () => {
  const result = manifests(DOCS_EXAMPLE);
  const [hook, ...more] = hooks(result);
  assert.equal(more.length, 0);
  assert.equal(
    hook?.failurePolicy,
    "Ignore",
    "a binding that can only warn never fails requests when celgate is down",
  );
  assert.equal(hook?.clientConfig.service.path, "/validate/ignore");
  assert.deepEqual(
    hook?.matchConditions?.map((c) => c.name),
    ["exclude-leases", "exclude-kubelet-requests", "rbac"],
  );
  assert.ok(
    result.notes.some((n) => n.includes("can only warn or audit")),
    result.notes.join("\n"),
  );
  // The wildcard rule reaches leases, events, the admission configuration objects and the
  // authentication and authorization reviews.
  assert.equal(result.warnings.length, 4, result.warnings.join("\n"));
  for (const what of [
    "leases",
    "events",
    "admission configuration objects",
    "authentication and authorization reviews",
  ])
    assert.ok(
      result.warnings.some((w) => w.includes(`also matches ${what}`)),
      `${what}: ${result.warnings.join("\n")}`,
    );
});

void test("routing: Warn and Audit alone go to Ignore; anything with Deny keeps the policy's failurePolicy", () => {
  const v = (fp: "Fail" | "Ignore") => ({ kind: "ValidatingAdmissionPolicy" as const, failurePolicy: fp });
  const b = (actions: ("Deny" | "Warn" | "Audit")[]) => ({
    kind: "ValidatingAdmissionPolicyBinding" as const,
    validationActions: actions,
  });
  assert.equal(routeOf(v("Fail"), b(["Warn"])), "Ignore");
  assert.equal(routeOf(v("Fail"), b(["Audit"])), "Ignore");
  assert.equal(routeOf(v("Fail"), b(["Warn", "Audit"])), "Ignore");
  assert.equal(routeOf(v("Fail"), b(["Deny"])), "Fail");
  assert.equal(routeOf(v("Fail"), b(["Audit", "Deny"])), "Fail");
  assert.equal(routeOf(v("Ignore"), b(["Deny"])), "Ignore");
  assert.equal(routeOf(v("Fail"), undefined), "Fail", "the CLI's default binding denies");
  const m = { kind: "MutatingAdmissionPolicy" as const, failurePolicy: "Fail" as const };
  assert.equal(routeOf(m, { kind: "MutatingAdmissionPolicyBinding" }), "Fail", "mutations keep theirs");
  assert.equal(canDeny(b(["Warn"])), false);
});

const POLICY = (
  name: string,
  conditions: string,
  constraints = "",
) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }]
${constraints}  matchConditions:
${conditions}
  validations: [{ expression: "true" }]
---
`;
const BINDING = (name: string, matchResources = "") => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec:
  policyName: ${name}
  validationActions: [Deny]
${matchResources}---
`;

void test("matchConditions: only those every policy on the webhook has, and only those a webhook can evaluate", () => {
  const result = manifests(
    POLICY(
      "a",
      `    - { name: not-kubelet, expression: "!('system:nodes' in request.userInfo.groups)" }
    - { name: labelled, expression: "has(object.metadata.labels)" }
    - { name: uses-params, expression: "params != null" }
    - { name: uses-namespace, expression: "namespaceObject != null" }`,
    ) +
      BINDING("a") +
      POLICY(
        "b",
        `    - { name: not-a-node, expression: "!('system:nodes' in request.userInfo.groups)" }
    - { name: uses-params, expression: "params != null" }
    - { name: uses-namespace, expression: "namespaceObject != null" }`,
      ) +
      BINDING("b"),
  );
  // "labelled" is a's alone; the params and namespaceObject conditions are shared but a webhook
  // has neither variable. The shared condition keeps a's name.
  assert.deepEqual(hooks(result)[0]?.matchConditions, [
    { name: "not-kubelet", expression: "!('system:nodes' in request.userInfo.groups)" },
  ]);
});

void test("a webhook's matchCondition compiles without policy variables and without celgate's extras", () => {
  assert.deepEqual(webhookConditionProblems("request.operation == 'CREATE' && object != null"), []);
  assert.deepEqual(
    webhookConditionProblems("authorizer.group('').resource('pods').check('create').allowed()"),
    [],
  );
  for (const e of [
    "params.x == 1",
    "variables.x",
    "namespaceObject.metadata.name == 'a'",
    "math.greatest([1, 2]) == 2",
  ])
    assert.notDeepEqual(webhookConditionProblems(e), [], e);
});

void test("selectors: requirements every pair has (policy's and binding's together) are carried", () => {
  const match = (ns: string, obj = "") => `  matchResources:
    namespaceSelector: ${ns}
${obj}`;
  const result = manifests(
    POLICY("a", `    - { name: c, expression: "true" }`) +
      BINDING(
        "a",
        match(
          "{ matchLabels: { tier: prod, team: a } }",
          "    objectSelector: { matchExpressions: [{ key: skip, operator: DoesNotExist }] }\n",
        ),
      ) +
      POLICY(
        "b",
        `    - { name: c, expression: "true" }`,
        "    namespaceSelector: { matchExpressions: [{ key: tier, operator: In, values: [prod] }] }\n",
      ) +
      BINDING(
        "b",
        match(
          "{ matchLabels: { team: b } }",
          "    objectSelector: { matchExpressions: [{ key: skip, operator: DoesNotExist }] }\n",
        ),
      ),
  );
  const hook = hooks(result)[0];
  // tier=prod is required of both pairs (a's binding, b's policy); team differs; both object selectors agree.
  assert.deepEqual(hook?.namespaceSelector, {
    matchLabels: { tier: "prod" },
    matchExpressions: [
      {
        key: "kubernetes.io/metadata.name",
        operator: "NotIn",
        values: ["kube-system", "kube-node-lease", "celgate"],
      },
    ],
  });
  assert.deepEqual(hook?.objectSelector, { matchExpressions: [{ key: "skip", operator: "DoesNotExist" }] });
});

void test("selectors: nothing is carried when one pair selects everything", () => {
  const result = manifests(
    POLICY("a", `    - { name: c, expression: "true" }`) +
      BINDING("a", "  matchResources:\n    namespaceSelector: { matchLabels: { tier: prod } }\n") +
      POLICY("b", `    - { name: c, expression: "true" }`) +
      BINDING("b"),
  );
  const hook = hooks(result)[0];
  assert.deepEqual(hook?.namespaceSelector, {
    matchExpressions: [
      {
        key: "kubernetes.io/metadata.name",
        operator: "NotIn",
        values: ["kube-system", "kube-node-lease", "celgate"],
      },
    ],
  });
  assert.equal(hook?.objectSelector, undefined);
});

void test("--exclude-namespace adds to kube-system, kube-node-lease and celgate's own namespace", () => {
  const result = manifests(POLICY("a", `    - { name: c, expression: "true" }`) + BINDING("a"), {
    excludeNamespaces: ["monitoring", "kube-node-lease", "gitops"],
  });
  assert.deepEqual(hooks(result)[0]?.namespaceSelector, {
    matchExpressions: [
      {
        key: "kubernetes.io/metadata.name",
        operator: "NotIn",
        values: ["kube-system", "kube-node-lease", "celgate", "monitoring", "gitops"],
      },
    ],
  });
});

void test("hazards: a rule that names leases is meant; one that reaches them through * is warned about", () => {
  const rule = (apiGroups: string[], resources: string[]) => ({
    operations: ["*" as const],
    apiGroups,
    apiVersions: ["*"],
    resources,
    scope: "*" as const,
  });
  assert.equal(
    matchesByWildcard(rule(["coordination.k8s.io"], ["leases"]), "coordination.k8s.io", "leases"),
    false,
  );
  assert.equal(matchesByWildcard(rule(["*"], ["leases"]), "coordination.k8s.io", "leases"), true);
  assert.equal(
    matchesByWildcard(rule(["coordination.k8s.io"], ["*"]), "coordination.k8s.io", "leases"),
    true,
  );
  assert.equal(matchesByWildcard(rule(["*"], ["*/*"]), "", "events"), true);
  assert.equal(matchesByWildcard(rule(["*"], ["pods"]), "", "events"), false);
  assert.equal(matchesByWildcard(rule(["*"], ["*/status"]), "", "events"), false, "subresources only");
  assert.deepEqual(
    HAZARDS.map((h) => h.what),
    [
      "leases (coordination.k8s.io)",
      "events",
      "admission configuration objects",
      "authentication and authorization reviews",
    ],
  );
  // kubernetes pkg/kubeapiserver/admission/exclusion/resources.go `excluded`: the virtual resources
  // webhooks no longer see from 1.37 (ExcludeAdmissionWebhookVirtualResources, on by default).
  assert.deepEqual(
    wildcardHazards([rule(["*"], ["*"])]).map((h) => h.what),
    HAZARDS.map((h) => h.what),
  );
  assert.deepEqual(
    wildcardHazards([rule(["authorization.k8s.io"], ["*"])]).map((h) => h.what),
    ["authentication and authorization reviews"],
  );
});

const ONE = (name: string, rule: string, condition?: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [${rule}]
${condition ? `  matchConditions: [{ name: only, expression: "${condition}" }]\n` : ""}  validations: [{ expression: "true" }]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec: { policyName: ${name}, validationActions: [Deny] }
---
`;

void test("pairs no request reaches together get webhooks of their own, each carrying its own conditions", () => {
  const result = manifests(
    ONE("pods", `{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }`) +
      ONE(
        "csr",
        `{ apiGroups: [certificates.k8s.io], apiVersions: [v1], operations: [CREATE], resources: [certificatesigningrequests] }`,
        "object.spec.signerName == 'kubernetes.io/kube-apiserver-client'",
      ) +
      ONE("services", `{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [services] }`),
  );
  assert.deepEqual(
    hooks(result).map((h) => [
      h.name,
      h.clientConfig.service.path,
      h.rules.flatMap((r) => r.resources),
      h.matchConditions?.length ?? 0,
    ]),
    [
      // pods and services carry the same (nothing): one webhook says as much as two.
      ["celgate.celgate.fail.validate.celgate.dev", "/validate/fail", ["pods", "services"], 0],
      ["celgate.celgate.fail-2.validate.celgate.dev", "/validate/fail", ["certificatesigningrequests"], 1],
    ],
  );
});

void test("pairs whose rules meet share one webhook, even through another group (matchPolicy Equivalent)", () => {
  const result = manifests(
    ONE("apps", `{ apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments] }`) +
      ONE(
        "extensions",
        `{ apiGroups: [extensions], apiVersions: [v1beta1], operations: [CREATE, UPDATE], resources: [deployments] }`,
        "object.metadata.name != 'x'",
      ),
  );
  // A request for apps/v1 deployments reaches an extensions/v1beta1 webhook too, converted: two
  // webhooks on one path would have the path evaluate both pairs twice.
  const all = hooks(result);
  assert.equal(all.length, 1);
  assert.equal(all[0]?.matchConditions, undefined, "a condition only one pair has is left to celgate");
});

// apiserver admission/plugin/webhook/generic/webhook.go isExcludedFromAllHooks: with
// ExcludeAdmissionWebhookVirtualResources (beta, on by default in 1.37) the resources of kubernetes
// pkg/kubeapiserver/admission/exclusion/resources.go `excluded` reach no webhook, even one whose
// rules name them.
void test("a policy that names the auth/authz reviews gets a webhook, with a warning that 1.37 never calls it for them", () => {
  const result = manifests(
    ONE(
      "sar",
      `{ apiGroups: [authorization.k8s.io], apiVersions: [v1], operations: [CREATE], resources: [subjectaccessreviews] }`,
    ),
  );
  const unreached = result.warnings.filter((w) => w.includes("its rules name"));
  assert.equal(unreached.length, 1, result.warnings.join("\n"));
  assert.match(
    unreached[0] ?? "",
    /its rules name authentication and authorization reviews: from Kubernetes 1\.37 the API server sends these to no webhook \(ExcludeAdmissionWebhookVirtualResources, on by default\)/,
  );
  const pods = manifests(
    ONE("pods", `{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }`),
  );
  assert.deepEqual(pods.warnings, []);
});
