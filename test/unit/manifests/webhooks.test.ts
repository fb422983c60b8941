import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { compilePolicySet } from "../../../src/compile/policy.ts";
import {
  certificateName,
  DEFAULT_TIMEOUT_SECONDS,
  NAMESPACE_NAME_LABEL,
  serviceDnsNames,
  WEBHOOK_PATHS,
  webhookManifests,
} from "../../../src/manifests/webhooks.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import { loadPolicyPaths } from "../../../src/sources/files.ts";

const GOOD = fileURLToPath(new URL("../../fixtures/policies/good", import.meta.url));
const OPTIONS = { service: "celgate", namespace: "policy-system" } as const;

interface Hook {
  name: string;
  failurePolicy: string;
  clientConfig: {
    service: { name: string; namespace: string; path: string; port: number };
    caBundle?: string;
  };
  rules: {
    operations: string[];
    apiGroups: string[];
    apiVersions: string[];
    resources: string[];
    scope: string;
  }[];
  namespaceSelector: unknown;
  matchPolicy: string;
  sideEffects: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy?: string;
}

interface Config {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  webhooks: Hook[];
}

function configs(documents: readonly Record<string, unknown>[]): Map<string, Config> {
  return new Map(documents.map((d) => [String(d.kind), d as unknown as Config]));
}

function compiled(text: string) {
  const parsed = parsePolicyText(text, "policies.yaml");
  assert.deepEqual(
    parsed.diagnostics.filter((d) => d.severity === "error"),
    [],
    "the test's policies parse",
  );
  return compilePolicySet(parsed.set);
}

function validating(name: string, failurePolicy: string, rules: string, extra = ""): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  failurePolicy: ${failurePolicy}
  matchConstraints:
    resourceRules:
${rules}
  validations: [{ expression: "true" }]
${extra}---
`;
}

function validatingBinding(name: string, policy: string, matchResources = ""): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec:
  policyName: ${policy}
  validationActions: [Deny]
${matchResources}---
`;
}

function mutating(name: string, failurePolicy: string, reinvocation: string, rules: string): string {
  return `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  failurePolicy: ${failurePolicy}
  reinvocationPolicy: ${reinvocation}
  matchConstraints:
    resourceRules:
${rules}
  mutations:
    - patchType: JSONPatch
      jsonPatch: { expression: "[]" }
---
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec:
  policyName: ${name}
---
`;
}

const PODS = `    - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }`;
const DEPLOYMENTS = `    - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments] }`;

void test("the good fixtures: one Fail validating webhook for deployments, one Fail mutating webhook for pods", async () => {
  const loaded = await loadPolicyPaths([GOOD]);
  const result = webhookManifests(compilePolicySet(loaded.set), OPTIONS);
  const byKind = configs(result.documents);
  assert.deepEqual([...byKind.keys()], ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]);

  const v = byKind.get("ValidatingWebhookConfiguration")!;
  assert.equal(v.apiVersion, "admissionregistration.k8s.io/v1");
  assert.equal(v.webhooks.length, 1);
  const hook = v.webhooks[0]!;
  assert.equal(hook.name, "celgate.policy-system.fail.validate.celgate.dev");
  assert.equal(hook.failurePolicy, "Fail");
  assert.deepEqual(hook.clientConfig, {
    service: { namespace: "policy-system", name: "celgate", path: "/validate/fail", port: 443 },
  });
  // Both bindings (demo and replicalimit) enforce the same rule: one rule, not two.
  assert.deepEqual(hook.rules, [
    {
      operations: ["CREATE", "UPDATE"],
      apiGroups: ["apps"],
      apiVersions: ["v1"],
      resources: ["deployments"],
      scope: "*",
    },
  ]);
  // Both bindings select namespaces labelled environment=test: the webhook does too.
  assert.deepEqual(hook.namespaceSelector, {
    matchLabels: { environment: "test" },
    matchExpressions: [
      {
        key: NAMESPACE_NAME_LABEL,
        operator: "NotIn",
        values: ["kube-system", "kube-node-lease", "policy-system"],
      },
    ],
  });
  assert.equal(hook.matchPolicy, "Equivalent");
  assert.equal(hook.sideEffects, "None");
  assert.equal(hook.timeoutSeconds, DEFAULT_TIMEOUT_SECONDS);
  assert.deepEqual(hook.admissionReviewVersions, ["v1", "v1beta1"]);
  assert.equal(hook.reinvocationPolicy, undefined, "validating webhooks have no reinvocationPolicy");

  const m = byKind.get("MutatingWebhookConfiguration")!;
  assert.equal(m.webhooks.length, 1);
  const mh = m.webhooks[0]!;
  assert.equal(mh.name, "celgate.policy-system.fail.mutate.celgate.dev");
  assert.equal(mh.clientConfig.service.path, "/mutate/fail");
  assert.deepEqual(mh.rules, [
    { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], scope: "*" },
  ]);
  assert.equal(mh.reinvocationPolicy, "IfNeeded", "the sidecar policy asks to be reinvoked");
  assert.deepEqual(result.notes, []);
});

void test("one webhook per failurePolicy, each on its split path with only its policies' rules", () => {
  const set = compiled(
    validating("strict", "Fail", DEPLOYMENTS) +
      validatingBinding("strict", "strict") +
      validating("lenient", "Ignore", PODS) +
      validatingBinding("lenient", "lenient") +
      mutating("m-fail", "Fail", "Never", PODS) +
      mutating("m-ignore", "Ignore", "Never", DEPLOYMENTS),
  );
  const byKind = configs(webhookManifests(set, { ...OPTIONS, timeoutSeconds: 5, port: 8443 }).documents);
  const summary = [...byKind.values()].flatMap((c) =>
    c.webhooks.map((h) => [
      h.name,
      h.failurePolicy,
      h.clientConfig.service.path,
      h.rules[0]?.resources[0],
      h.timeoutSeconds,
      h.clientConfig.service.port,
    ]),
  );
  assert.deepEqual(summary, [
    [
      "celgate.policy-system.fail.validate.celgate.dev",
      "Fail",
      WEBHOOK_PATHS.validate.Fail,
      "deployments",
      5,
      8443,
    ],
    [
      "celgate.policy-system.ignore.validate.celgate.dev",
      "Ignore",
      WEBHOOK_PATHS.validate.Ignore,
      "pods",
      5,
      8443,
    ],
    ["celgate.policy-system.fail.mutate.celgate.dev", "Fail", WEBHOOK_PATHS.mutate.Fail, "pods", 5, 8443],
    [
      "celgate.policy-system.ignore.mutate.celgate.dev",
      "Ignore",
      WEBHOOK_PATHS.mutate.Ignore,
      "deployments",
      5,
      8443,
    ],
  ]);
  for (const h of byKind.get("MutatingWebhookConfiguration")!.webhooks)
    assert.equal(h.reinvocationPolicy, "Never");
});

void test("a binding's matchResources narrows the rules and its selector is carried; exclusions are left to celgate", () => {
  const set = compiled(
    validating(
      "wide",
      "Fail",
      `    - { apiGroups: ["", apps], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [pods, deployments, "pods/ephemeralcontainers"] }`,
    ) +
      validatingBinding(
        "narrow",
        "wide",
        `  matchResources:
    namespaceSelector: { matchLabels: { team: a } }
    resourceRules:
      - { apiGroups: ["*"], apiVersions: ["*"], operations: [UPDATE], resources: ["pods/*"], scope: Namespaced }
    excludeResourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [pods], resourceNames: [x] }
`,
      ),
  );
  const hook = configs(webhookManifests(set, OPTIONS).documents).get("ValidatingWebhookConfiguration")!
    .webhooks[0]!;
  assert.deepEqual(hook.rules, [
    {
      operations: ["UPDATE"],
      apiGroups: ["", "apps"],
      apiVersions: ["v1"],
      resources: ["pods", "pods/ephemeralcontainers"],
      scope: "Namespaced",
    },
  ]);
  // The only pair on the webhook selects namespaces labelled team=a: so may the webhook.
  assert.deepEqual(hook.namespaceSelector, {
    matchLabels: { team: "a" },
    matchExpressions: [
      {
        key: NAMESPACE_NAME_LABEL,
        operator: "NotIn",
        values: ["kube-system", "kube-node-lease", "policy-system"],
      },
    ],
  });
});

void test("rules of different policies merge when they differ in one list, and keep their scope", () => {
  const set = compiled(
    validating(
      "a",
      "Fail",
      `    - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments], scope: Namespaced }`,
    ) +
      validatingBinding("a", "a") +
      validating(
        "b",
        "Fail",
        `    - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [statefulsets], scope: Namespaced }`,
      ) +
      validatingBinding("b", "b") +
      validating(
        "c",
        "Fail",
        `    - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces], scope: Cluster }`,
      ) +
      validatingBinding("c", "c"),
  );
  const hook = configs(webhookManifests(set, OPTIONS).documents).get("ValidatingWebhookConfiguration")!
    .webhooks[0]!;
  assert.deepEqual(hook.rules, [
    {
      operations: ["CREATE"],
      apiGroups: ["apps"],
      apiVersions: ["v1"],
      resources: ["deployments", "statefulsets"],
      scope: "Namespaced",
    },
    {
      operations: ["CREATE"],
      apiGroups: [""],
      apiVersions: ["v1"],
      resources: ["namespaces"],
      scope: "Cluster",
    },
  ]);
});

void test("unbound policies add nothing; a configuration without webhooks is left out and noted", () => {
  const set = compiled(
    validating("lonely", "Fail", PODS) +
      validating("bound", "Ignore", PODS) +
      validatingBinding("b", "bound"),
  );
  const result = webhookManifests(set, OPTIONS);
  assert.deepEqual(
    result.documents.map((d) => d.kind),
    ["ValidatingWebhookConfiguration"],
  );
  const hooks = configs(result.documents).get("ValidatingWebhookConfiguration")!.webhooks;
  assert.deepEqual(
    hooks.map((h) => h.failurePolicy),
    ["Ignore"],
  );
  assert.ok(
    result.notes.some((n) => n.includes("'lonely' has no binding")),
    result.notes.join("\n"),
  );
  assert.ok(
    result.notes.some((n) => n.startsWith("no MutatingWebhookConfiguration")),
    result.notes.join("\n"),
  );
});

void test("a binding that selects nothing of its policy adds no rules and says so", () => {
  const set = compiled(
    validating("p", "Fail", PODS) +
      validatingBinding(
        "b",
        "p",
        `  matchResources:\n    resourceRules:\n      - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments] }\n`,
      ),
  );
  const result = webhookManifests(set, OPTIONS);
  assert.deepEqual(result.documents, []);
  assert.ok(
    result.notes.some((n) => n.includes("'b' selects no resource of policy 'p'")),
    result.notes.join("\n"),
  );
});

void test("caBundle goes into every clientConfig; cert-manager adds the injection annotation and the Certificate", () => {
  const set = compiled(
    validating("p", "Fail", PODS) + validatingBinding("b", "p") + mutating("m", "Ignore", "IfNeeded", PODS),
  );
  const withCa = webhookManifests(set, { ...OPTIONS, caBundle: "Q0E=" });
  for (const c of configs(withCa.documents).values()) {
    assert.equal(c.metadata.annotations, undefined);
    for (const h of c.webhooks) assert.equal(h.clientConfig.caBundle, "Q0E=");
  }

  const viaCertManager = webhookManifests(set, {
    ...OPTIONS,
    certManager: { kind: "Issuer", name: "selfsigned" },
  });
  const [cert, ...rest] = viaCertManager.documents;
  assert.deepEqual(
    rest.map((d) => d.kind),
    ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"],
  );
  for (const c of rest as unknown as Config[]) {
    assert.deepEqual(c.metadata.annotations, {
      "cert-manager.io/inject-ca-from": "policy-system/celgate-tls",
    });
    for (const h of c.webhooks) assert.equal(h.clientConfig.caBundle, undefined);
  }
  assert.equal(cert?.kind, "Certificate");
  assert.equal(cert?.apiVersion, "cert-manager.io/v1");
  assert.deepEqual(cert?.metadata, {
    name: certificateName("celgate"),
    namespace: "policy-system",
    labels: { "app.kubernetes.io/name": "celgate", "app.kubernetes.io/instance": "celgate" },
  });
  const spec = cert?.spec as { secretName: string; dnsNames: string[]; issuerRef: unknown };
  assert.equal(spec.secretName, "celgate-tls");
  assert.deepEqual(spec.dnsNames, ["celgate.policy-system.svc", "celgate.policy-system.svc.cluster.local"]);
  assert.deepEqual(spec.dnsNames, serviceDnsNames("celgate", "policy-system"));
  assert.deepEqual(spec.issuerRef, { name: "selfsigned", kind: "Issuer", group: "cert-manager.io" });
});

void test("celgate in kube-system does not list kube-system twice", () => {
  const set = compiled(validating("p", "Fail", PODS) + validatingBinding("b", "p"));
  const hook = configs(webhookManifests(set, { service: "celgate", namespace: "kube-system" }).documents).get(
    "ValidatingWebhookConfiguration",
  )!.webhooks[0]!;
  assert.deepEqual(hook.namespaceSelector, {
    matchExpressions: [
      { key: NAMESPACE_NAME_LABEL, operator: "NotIn", values: ["kube-system", "kube-node-lease"] },
    ],
  });
});
