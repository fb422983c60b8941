import assert from "node:assert/strict";
import { test } from "node:test";
import type { Diagnostic } from "../../../src/errors.ts";
import {
  closestName,
  dns1035Label,
  dns1123Subdomain,
  isCelIdentifier,
  labelValue,
  pathSegmentName,
  qualifiedName,
} from "../../../src/policy/fields.ts";
import { checkReferences, mergePolicySets, parsePolicyText } from "../../../src/policy/parse.ts";
import type {
  MutatingBinding,
  MutatingPolicy,
  PolicySet,
  ValidatingBinding,
  ValidatingPolicy,
} from "../../../src/policy/types.ts";

const FILE = "p.yaml";

/** 1-based line and column of the nth occurrence of `needle` in `text`. */
function posOf(text: string, needle: string, nth = 0): string {
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = text.indexOf(needle, at + 1);
    if (at < 0) throw new Error(`"${needle}" (#${nth}) not in text`);
  }
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  const column = at - before.lastIndexOf("\n");
  return `${line}:${column}`;
}

interface Compact {
  code: string;
  path?: string;
  at: string;
  message: string;
  severity?: "warning";
}

function compact(d: Diagnostic): Compact {
  return {
    code: d.code,
    ...(d.path === undefined ? {} : { path: d.path }),
    at: d.location ? `${d.location.line}:${d.location.column}` : "-",
    message: d.message,
    ...(d.severity === "warning" ? { severity: "warning" as const } : {}),
  };
}

/** The set as plain data, without the source maps (functions and syntax trees). */
function plain(set: PolicySet): unknown {
  return JSON.parse(JSON.stringify(set, (key, value: unknown) => (key === "source" ? undefined : value)));
}

const ANY_SELECTOR = { matchLabels: {}, matchExpressions: [] };

// ------------------------------------------------------------------------------------------------
// Kubernetes documentation examples

const DEMO_POLICY_JSONISH = `---
{
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicy",
  metadata: {
    name: "demo-policy.example.com",
  },
  spec: {
    failurePolicy: "Fail",
    matchConstraints: {
      resourceRules: [{
        apiGroups: [
          "apps",
        ],
        apiVersions: [
          "v1",
        ],
        operations: [
          "CREATE",
          "UPDATE",
        ],
        resources: [
          "deployments",
        ],
      }],
    },
    validations: [{
      expression: "object.spec.replicas <= 5",
    }],
  },
}
`;

const DEMO_BINDING_YAML = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-test.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
`;

test("the demo-policy.example.com replicas policy and binding from the docs parse into the model", () => {
  const text = `${DEMO_POLICY_JSONISH}---\n${DEMO_BINDING_YAML}`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(plain(set), {
    policies: [
      {
        kind: "ValidatingAdmissionPolicy",
        name: "demo-policy.example.com",
        apiVersion: "admissionregistration.k8s.io/v1",
        matchConstraints: {
          namespaceSelector: ANY_SELECTOR,
          objectSelector: ANY_SELECTOR,
          resourceRules: [
            {
              operations: ["CREATE", "UPDATE"],
              apiGroups: ["apps"],
              apiVersions: ["v1"],
              resources: ["deployments"],
              resourceNames: [],
              scope: "*",
            },
          ],
          excludeResourceRules: [],
          matchPolicy: "Equivalent",
        },
        matchConditions: [],
        variables: [],
        failurePolicy: "Fail",
        annotations: {},
        validations: [{ expression: "object.spec.replicas <= 5" }],
        auditAnnotations: [],
      },
    ],
    bindings: [
      {
        kind: "ValidatingAdmissionPolicyBinding",
        name: "demo-binding-test.example.com",
        apiVersion: "admissionregistration.k8s.io/v1",
        policyName: "demo-policy.example.com",
        matchResources: {
          namespaceSelector: { matchLabels: { environment: "test" }, matchExpressions: [] },
          objectSelector: ANY_SELECTOR,
          resourceRules: [],
          excludeResourceRules: [],
          matchPolicy: "Equivalent",
        },
        validationActions: ["Deny"],
      },
    ],
    resources: [],
  });
  assert.deepEqual(checkReferences(set), []);
});

test("the docs' parameterised policy, its ReplicaLimit parameter and binding", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "replicalimit-policy.example.com"
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: rules.example.com/v1
    kind: ReplicaLimit
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= params.maxReplicas"
      reason: Invalid
---
{
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: {
    name: "replicalimit-binding-test.example.com",
  },
  spec: {
    policyName: "replicalimit-policy.example.com",
    validationActions: [
      "Deny",
    ],
    paramRef: {
      name: "replica-limit-test.example.com",
      namespace: "default",
      parameterNotFoundAction: "Deny",
    },
    matchResources: {
      namespaceSelector: {
        matchLabels: {
          environment: "test",
        },
      },
    },
  },
}
---
apiVersion: rules.example.com/v1
kind: ReplicaLimit
metadata:
  name: "replica-limit-test.example.com"
  namesapce: "default"
maxReplicas: 3
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  // The docs' parameter object misspells "namespace": that is worth a warning, not a rejection.
  assert.deepEqual(diagnostics.map(compact), [
    {
      code: "PE_FIELD_VALUE",
      path: "metadata.namesapce",
      at: posOf(text, "namesapce"),
      message: 'unknown field "namesapce" (did you mean "namespace"?)',
      severity: "warning",
    },
  ]);
  const policy = set.policies[0] as ValidatingPolicy;
  assert.deepEqual(policy.paramKind, { apiVersion: "rules.example.com/v1", kind: "ReplicaLimit" });
  assert.deepEqual(policy.validations, [
    { expression: "object.spec.replicas <= params.maxReplicas", reason: "Invalid" },
  ]);
  const binding = set.bindings[0] as ValidatingBinding;
  assert.deepEqual(binding.paramRef, {
    name: "replica-limit-test.example.com",
    namespace: "default",
    parameterNotFoundAction: "Deny",
  });
  assert.deepEqual(plain({ policies: [], bindings: [], resources: set.resources }), {
    policies: [],
    bindings: [],
    resources: [
      {
        apiVersion: "rules.example.com/v1",
        kind: "ReplicaLimit",
        name: "replica-limit-test.example.com",
        labels: {},
        object: {
          apiVersion: "rules.example.com/v1",
          kind: "ReplicaLimit",
          metadata: { name: "replica-limit-test.example.com", namesapce: "default" },
          maxReplicas: 3,
        },
      },
    ],
  });
});

const SIDECAR_APPLY = `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata:
  name: "sidecar-policy.example.com"
spec:
  paramKind:
    kind: Sidecar
    apiVersion: mutations.example.com/v1
  matchConstraints:
    resourceRules:
    - apiGroups:   [""]
      apiVersions: ["v1"]
      operations:  ["CREATE"]
      resources:   ["pods"]
  matchConditions:
    - name: does-not-already-have-sidecar
      expression: "!object.spec.initContainers.exists(ic, ic.name == \\"mesh-proxy\\")"
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  mutations:
    - patchType: "ApplyConfiguration"
      applyConfiguration:
        expression: >
          Object{
            spec: Object.spec{
              initContainers: [
                Object.spec.initContainers{
                  name: "mesh-proxy",
                  image: "mesh/proxy:v1.0.0",
                  args: ["proxy", "sidecar"],
                  restartPolicy: "Always"
                }
              ]
            }
          }
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: "sidecar-policy.example.com"
spec:
  matchResources:
    namespaceSelector: {}
  policyName: "sidecar-policy.example.com"
`;

test("the docs' MutatingAdmissionPolicy sidecar example (ApplyConfiguration) and its binding", () => {
  const { set, diagnostics } = parsePolicyText(SIDECAR_APPLY, FILE);
  assert.deepEqual(diagnostics, []);
  const expression = `Object{
  spec: Object.spec{
    initContainers: [
      Object.spec.initContainers{
        name: "mesh-proxy",
        image: "mesh/proxy:v1.0.0",
        args: ["proxy", "sidecar"],
        restartPolicy: "Always"
      }
    ]
  }
}
`;
  assert.deepEqual(plain(set), {
    policies: [
      {
        kind: "MutatingAdmissionPolicy",
        name: "sidecar-policy.example.com",
        apiVersion: "admissionregistration.k8s.io/v1alpha1",
        paramKind: { apiVersion: "mutations.example.com/v1", kind: "Sidecar" },
        matchConstraints: {
          namespaceSelector: ANY_SELECTOR,
          objectSelector: ANY_SELECTOR,
          resourceRules: [
            {
              operations: ["CREATE"],
              apiGroups: [""],
              apiVersions: ["v1"],
              resources: ["pods"],
              resourceNames: [],
              scope: "*",
            },
          ],
          excludeResourceRules: [],
          matchPolicy: "Equivalent",
        },
        matchConditions: [
          {
            name: "does-not-already-have-sidecar",
            expression: '!object.spec.initContainers.exists(ic, ic.name == "mesh-proxy")',
          },
        ],
        variables: [],
        failurePolicy: "Fail",
        annotations: {},
        mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression } }],
        reinvocationPolicy: "IfNeeded",
      },
    ],
    bindings: [
      {
        kind: "MutatingAdmissionPolicyBinding",
        name: "sidecar-policy.example.com",
        apiVersion: "admissionregistration.k8s.io/v1",
        policyName: "sidecar-policy.example.com",
        matchResources: {
          namespaceSelector: ANY_SELECTOR,
          objectSelector: ANY_SELECTOR,
          resourceRules: [],
          excludeResourceRules: [],
          matchPolicy: "Equivalent",
        },
      },
    ],
    resources: [],
  });
  assert.deepEqual(checkReferences(set), []);
});

test("the docs' JSONPatch sidecar example (v1beta1)", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: "sidecar-policy.example.com"
spec:
  paramKind:
    kind: Sidecar
    apiVersion: mutations.example.com/v1
  matchConstraints:
    resourceRules:
    - apiGroups:   [""]
      apiVersions: ["v1"]
      operations:  ["CREATE"]
      resources:   ["pods"]
  matchConditions:
    - name: does-not-already-have-sidecar
      expression: "!object.spec.initContainers.exists(ic, ic.name == \\"mesh-proxy\\")"
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  mutations:
    - patchType: "JSONPatch"
      jsonPatch:
        expression: >
          [
            JSONPatch{
              op: "add", path: "/spec/initContainers/-",
              value: Object.spec.initContainers{
                name: "mesh-proxy",
                image: "mesh-proxy/v1.0.0",
                restartPolicy: "Always"
              }
            }
          ]
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics, []);
  const policy = set.policies[0] as MutatingPolicy;
  assert.equal(policy.apiVersion, "admissionregistration.k8s.io/v1beta1");
  assert.equal(policy.mutations.length, 1);
  assert.equal(policy.mutations[0]?.patchType, "JSONPatch");
  assert.equal(policy.mutations[0]?.applyConfiguration, undefined);
  assert.match(policy.mutations[0]?.jsonPatch?.expression ?? "", /^\[\n {2}JSONPatch\{\n {4}op: "add"/);
});

// ------------------------------------------------------------------------------------------------
// defaults

test("defaults are applied as the API server applies them", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: m.example.com
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: "[]"
---
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: b.example.com
spec:
  policyName: p.example.com
  validationActions: [Audit]
  paramRef:
    selector:
      matchLabels: {tier: gold}
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics, []);
  const policy = set.policies[0] as MutatingPolicy;
  assert.equal(policy.failurePolicy, "Fail");
  assert.equal(policy.reinvocationPolicy, "Never");
  assert.equal(policy.matchConstraints?.matchPolicy, "Equivalent");
  assert.deepEqual(policy.matchConstraints?.namespaceSelector, ANY_SELECTOR);
  assert.deepEqual(policy.matchConstraints?.objectSelector, ANY_SELECTOR);
  assert.equal(policy.matchConstraints?.resourceRules[0]?.scope, "*");
  assert.equal(policy.paramKind, undefined);
  const binding = set.bindings[0] as ValidatingBinding;
  assert.deepEqual(binding.paramRef, {
    selector: { matchLabels: { tier: "gold" }, matchExpressions: [] },
    parameterNotFoundAction: "Deny",
  });
  assert.equal(binding.matchResources, undefined);
});

test("optional validation fields: empty message strings are unset, reason stays absent", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p.example.com
  annotations:
    description: "keeps replicas small"
spec:
  failurePolicy: Ignore
  matchConstraints:
    matchPolicy: Exact
    resourceRules:
    - apiGroups: ["*"]
      apiVersions: ["*"]
      operations: ["*"]
      resources: ["*", "pods/status", "*/scale"]
      scope: Namespaced
  validations:
  - expression: "true"
    message: ""
    messageExpression: ""
  - expression: "false"
    message: "no"
    messageExpression: "'no: ' + object.metadata.name"
    reason: Forbidden
  auditAnnotations:
  - key: high-replica-count
    valueExpression: "'x'"
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics, []);
  const policy = set.policies[0] as ValidatingPolicy;
  assert.equal(policy.failurePolicy, "Ignore");
  assert.deepEqual(policy.annotations, { description: "keeps replicas small" });
  assert.equal(policy.matchConstraints?.matchPolicy, "Exact");
  assert.deepEqual(policy.matchConstraints?.resourceRules[0]?.resources, ["*", "pods/status", "*/scale"]);
  assert.equal(policy.matchConstraints?.resourceRules[0]?.scope, "Namespaced");
  assert.deepEqual(policy.validations, [
    { expression: "true" },
    {
      expression: "false",
      message: "no",
      messageExpression: "'no: ' + object.metadata.name",
      reason: "Forbidden",
    },
  ]);
  assert.deepEqual(policy.auditAnnotations, [{ key: "high-replica-count", valueExpression: "'x'" }]);
});

// ------------------------------------------------------------------------------------------------
// field rules, one broken field per case

const VAP_HEAD = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p.example.com
spec:
`;
const MAP_HEAD = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: m.example.com
spec:
  reinvocationPolicy: Never
`;
const VAPB_HEAD = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: b.example.com
spec:
`;
const MAPB_HEAD = `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: mb.example.com
spec:
  policyName: m.example.com
`;
const MC = `  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
`;
const VALIDATIONS = `  validations:
  - expression: "true"
`;
const MUTATIONS = `  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{}"
`;

/** A validating policy whose only rule is written by the case (the `- ` is supplied). */
function withRule(ruleLines: string): string {
  return `${VAP_HEAD}  matchConstraints:\n    resourceRules:\n    - ${ruleLines}${VALIDATIONS}`;
}
const RULE_REST = `apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
`;

const DNS_MESSAGE =
  "must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. 'example.com')";
const NAME_PART_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')";
const LABEL_VALUE_MESSAGE =
  "a label value must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

interface Case {
  name: string;
  text: string;
  /** Expected diagnostics; `at` given as [needle, nth?] is resolved with posOf. */
  expect: (Omit<Compact, "at"> & { at: string | [string, number?] })[];
}

const cases: Case[] = [
  // ---- metadata
  {
    name: "metadata.name missing: reported at the metadata mapping",
    text: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  labels: {team: a}
spec:
${MC}${VALIDATIONS}`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "metadata.name",
        at: "4:3",
        message: 'missing required field "name"',
      },
    ],
  },
  {
    name: "metadata missing altogether",
    text: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
spec:
${MC}${VALIDATIONS}`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "metadata.name",
        at: "1:1",
        message: 'missing required field "metadata.name"',
      },
    ],
  },
  {
    name: "metadata.name must be a DNS subdomain",
    text: VAP_HEAD.replace("p.example.com", "Demo_Policy") + MC + VALIDATIONS,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "metadata.name",
        at: "4:9",
        message: `${DNS_MESSAGE}; got "Demo_Policy"`,
      },
    ],
  },
  {
    name: "metadata.name must be a string",
    text: VAP_HEAD.replace("p.example.com", "[a, b]") + MC + VALIDATIONS,
    expect: [
      { code: "PE_FIELD_TYPE", path: "metadata.name", at: "4:9", message: "must be a string; got a list" },
    ],
  },
  {
    name: "label values follow the label value format",
    text:
      VAP_HEAD.replace(
        "  name: p.example.com\n",
        '  name: p.example.com\n  labels:\n    tier: "gold plated"\n',
      ) +
      MC +
      VALIDATIONS,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "metadata.labels.tier",
        at: "6:11",
        message: `${LABEL_VALUE_MESSAGE}; got "gold plated"`,
      },
    ],
  },
  // ---- spec and its required parts
  {
    name: "spec missing",
    text: VAP_HEAD.replace("spec:\n", ""),
    expect: [{ code: "PE_MISSING_FIELD", path: "spec", at: "1:1", message: 'missing required field "spec"' }],
  },
  {
    name: "matchConstraints missing: reported at the spec mapping",
    text: VAP_HEAD + VALIDATIONS,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.matchConstraints",
        at: "6:3",
        message: 'missing required field "matchConstraints": a policy must say which resources it applies to',
      },
    ],
  },
  {
    name: "matchConstraints must be a mapping",
    text: `${VAP_HEAD}  matchConstraints: []\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_TYPE",
        path: "spec.matchConstraints",
        at: "6:21",
        message: "must be a mapping; got a list",
      },
    ],
  },
  {
    name: "matchConstraints.resourceRules missing",
    text: `${VAP_HEAD}  matchConstraints:\n    matchPolicy: Exact\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.matchConstraints.resourceRules",
        at: "7:5",
        message:
          'missing required field "resourceRules": at least one rule is needed to give the policy its types',
      },
    ],
  },
  {
    name: "matchConstraints.resourceRules empty",
    text: `${VAP_HEAD}  matchConstraints:\n    resourceRules: []\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules",
        at: "7:20",
        message: "must contain at least one item",
      },
    ],
  },
  {
    name: "neither validations nor auditAnnotations",
    text: VAP_HEAD + MC,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.validations",
        at: "6:3",
        message: "validations or auditAnnotations must contain at least one item",
      },
    ],
  },
  {
    name: "validations must be a list",
    text: `${VAP_HEAD}${MC}  validations:\n    expression: "true"\n`,
    expect: [
      {
        code: "PE_FIELD_TYPE",
        path: "spec.validations",
        at: "13:5",
        message: "must be a list; got a mapping",
      },
      {
        code: "PE_MISSING_FIELD",
        path: "spec.validations",
        at: "13:5",
        message: "validations or auditAnnotations must contain at least one item",
      },
    ],
  },
  {
    name: "failurePolicy outside its enum",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  failurePolicy: Sometimes\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.failurePolicy",
        at: ["Sometimes"],
        message: 'must be one of "Fail", "Ignore"; got "Sometimes"',
      },
    ],
  },
  {
    name: "failurePolicy of the wrong type",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  failurePolicy: 3\n`,
    expect: [
      {
        code: "PE_FIELD_TYPE",
        path: "spec.failurePolicy",
        at: "14:18",
        message: "must be a string; got number 3",
      },
    ],
  },
  // ---- validations
  {
    name: "a validation without expression: located at its mapping",
    text: `${VAP_HEAD}${MC}  validations:
  - expression: "true"
  - expression: "false"
    message: m
  - message: "no expression"
`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.validations[2].expression",
        at: ['message: "no expression"'],
        message: 'missing required field "expression"',
      },
    ],
  },
  {
    name: "a blank expression",
    text: `${VAP_HEAD}${MC}  validations:\n  - expression: "  "\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validations[0].expression",
        at: ['"  "'],
        message: "must not be empty",
      },
    ],
  },
  {
    name: "an expression YAML reads as a boolean",
    text: `${VAP_HEAD}${MC}  validations:\n  - expression: true\n`,
    expect: [
      {
        code: "PE_FIELD_TYPE",
        path: "spec.validations[0].expression",
        at: "13:17",
        message: "must be a string; got boolean true",
      },
    ],
  },
  {
    name: "a message with a line break",
    text: `${VAP_HEAD}${MC}  validations:\n  - expression: "true"\n    message: "first\\nsecond"\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validations[0].message",
        at: ['"first'],
        message: "must not contain line breaks",
      },
    ],
  },
  {
    name: "a blank message",
    text: `${VAP_HEAD}${MC}  validations:\n  - expression: "true"\n    message: "   "\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validations[0].message",
        at: ['"   "'],
        message: "must be non-empty if specified",
      },
    ],
  },
  {
    name: "a blank messageExpression",
    text: `${VAP_HEAD}${MC}  validations:\n  - expression: "true"\n    messageExpression: " "\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validations[0].messageExpression",
        at: ['" "'],
        message: "must be non-empty if specified",
      },
    ],
  },
  {
    name: "reason outside its enum",
    text: `${VAP_HEAD}${MC}  validations:\n  - expression: "true"\n    reason: Teapot\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validations[0].reason",
        at: ["Teapot"],
        message:
          'must be one of "Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"; got "Teapot"',
      },
    ],
  },
  // ---- resource rules
  {
    name: "operations: '*' with others",
    text: withRule(
      `apiGroups: ["apps"]\n      apiVersions: ["v1"]\n      operations: ["*", "CREATE"]\n      resources: ["deployments"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].operations",
        at: ['["*", "CREATE"]'],
        message: "if '*' is present, must not specify other operations",
      },
    ],
  },
  {
    name: "operations outside the enum",
    text: withRule(
      `apiGroups: ["apps"]\n      apiVersions: ["v1"]\n      operations: ["CREATE", "PATCH"]\n      resources: ["deployments"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].operations[1]",
        at: ['"PATCH"'],
        message: 'must be one of "CREATE", "UPDATE", "DELETE", "CONNECT", "*"; got "PATCH"',
      },
    ],
  },
  {
    name: "operations missing: located at the rule mapping",
    text: withRule(`apiGroups: ["apps"]\n      apiVersions: ["v1"]\n      resources: ["deployments"]\n`),
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.matchConstraints.resourceRules[0].operations",
        at: "8:7",
        message: 'missing required field "operations"',
      },
    ],
  },
  {
    name: "operations empty",
    text: withRule(
      `apiGroups: ["apps"]\n      apiVersions: ["v1"]\n      operations: []\n      resources: ["deployments"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].operations",
        at: ["[]"],
        message: "must contain at least one item",
      },
    ],
  },
  {
    name: "apiGroups: '*' with others",
    text: withRule(`apiGroups: ["*", "apps"]\n      ${RULE_REST}`),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].apiGroups",
        at: ['["*", "apps"]'],
        message: "if '*' is present, must not specify other API groups",
      },
    ],
  },
  {
    name: "apiVersions: an empty version",
    text: withRule(
      `apiGroups: ["apps"]\n      apiVersions: ["v1", ""]\n      operations: ["CREATE"]\n      resources: ["deployments"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].apiVersions[1]",
        at: ['""'],
        message: "must not be empty",
      },
    ],
  },
  {
    name: "resources: '*/*' with others",
    text: withRule(
      `apiGroups: ["apps"]\n      apiVersions: ["v1"]\n      operations: ["CREATE"]\n      resources: ["*/*", "pods"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].resources",
        at: ['["*/*"'],
        message: "if '*/*' is present, must not specify other resources",
      },
    ],
  },
  {
    name: "resources: 'pods/*' and a pods subresource",
    text: withRule(
      `apiGroups: [""]\n      apiVersions: ["v1"]\n      operations: ["CREATE"]\n      resources: ["pods/*", "pods/log"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].resources[1]",
        at: ['"pods/log"'],
        message: "if 'pods/*' is present, must not specify pods/log",
      },
    ],
  },
  {
    name: "resources: '*/scale' and a scale subresource, in either order",
    text: withRule(
      `apiGroups: ["apps"]\n      apiVersions: ["v1"]\n      operations: ["UPDATE"]\n      resources: ["deployments/scale", "*/scale"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].resources[0]",
        at: ['"deployments/scale"'],
        message: "if '*/scale' is present, must not specify deployments/scale",
      },
    ],
  },
  {
    name: "resources: '*' and a plain resource",
    text: withRule(
      `apiGroups: ["apps"]\n      apiVersions: ["v1"]\n      operations: ["CREATE"]\n      resources: ["pods", "*"]\n`,
    ),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].resources",
        at: ['["pods", "*"]'],
        message: "if '*' is present, must not specify other resources without subresources",
      },
    ],
  },
  {
    name: "scope outside its enum",
    text: withRule(`apiGroups: ["apps"]\n      ${RULE_REST}      scope: Global\n`),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].scope",
        at: ["Global"],
        message: 'must be one of "Cluster", "Namespaced", "*"; got "Global"',
      },
    ],
  },
  {
    name: "resourceNames: path segments, unique",
    text: withRule(`apiGroups: ["apps"]\n      ${RULE_REST}      resourceNames: ["a/b", "x", "x"]\n`),
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].resourceNames[0]",
        at: ['"a/b"'],
        message: `may not contain '/'; got "a/b"`,
      },
      {
        code: "PE_DUPLICATE",
        path: "spec.matchConstraints.resourceRules[0].resourceNames[2]",
        at: ['"x"', 1],
        message: 'duplicate resource name "x"',
      },
    ],
  },
  {
    name: "excludeResourceRules are validated like resourceRules",
    text: `${VAP_HEAD}${MC}    excludeResourceRules:\n    - apiGroups: ["apps"]\n      operations: ["CREATE"]\n      resources: ["deployments"]\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.matchConstraints.excludeResourceRules[0].apiVersions",
        at: "13:7",
        message: 'missing required field "apiVersions"',
      },
    ],
  },
  {
    name: "matchPolicy outside its enum",
    text: `${VAP_HEAD}${MC}    matchPolicy: Fuzzy\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.matchPolicy",
        at: ["Fuzzy"],
        message: 'must be one of "Exact", "Equivalent"; got "Fuzzy"',
      },
    ],
  },
  // ---- selectors
  {
    name: "selector operator outside its enum",
    text: `${VAP_HEAD}${MC}    namespaceSelector:\n      matchExpressions:\n      - {key: env, operator: Has, values: [a]}\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.namespaceSelector.matchExpressions[0].operator",
        at: ["Has"],
        message: 'must be one of "In", "NotIn", "Exists", "DoesNotExist"; got "Has"',
      },
    ],
  },
  {
    name: "selector In without values",
    text: `${VAP_HEAD}${MC}    namespaceSelector:\n      matchExpressions:\n      - key: env\n        operator: In\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.matchConstraints.namespaceSelector.matchExpressions[0].values",
        at: ["key: env"],
        message: 'must be specified when operator is "In" or "NotIn"',
      },
    ],
  },
  {
    name: "selector Exists with values",
    text: `${VAP_HEAD}${MC}    objectSelector:\n      matchExpressions:\n      - key: env\n        operator: Exists\n        values: [a]\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.objectSelector.matchExpressions[0].values",
        at: ["[a]"],
        message: 'must be empty when operator is "Exists" or "DoesNotExist"',
      },
    ],
  },
  {
    name: "selector matchLabels key that is not a qualified name",
    text: `${VAP_HEAD}${MC}    objectSelector:\n      matchLabels:\n        "bad key!": x\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: 'spec.matchConstraints.objectSelector.matchLabels["bad key!"]',
        at: ['"bad key!"'],
        message: `key name part ${NAME_PART_MESSAGE}; got "bad key!"`,
      },
    ],
  },
  {
    name: "selector matchLabels value of the wrong type",
    text: `${VAP_HEAD}${MC}    objectSelector:\n      matchLabels:\n        version: 1.5\n${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_TYPE",
        path: "spec.matchConstraints.objectSelector.matchLabels.version",
        at: ["1.5"],
        message: "must be a string; got number 1.5",
      },
    ],
  },
  // ---- matchConditions
  {
    name: "more than 64 matchConditions",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  matchConditions:\n${Array.from({ length: 65 }, (_, i) => `  - {name: c${i}, expression: "true"}\n`).join("")}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConditions",
        at: "15:3",
        message: "must have at most 64 items; got 65",
      },
    ],
  },
  {
    name: "matchCondition names are unique",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  matchConditions:\n  - name: a\n    expression: "true"\n  - name: a\n    expression: "false"\n`,
    expect: [
      {
        code: "PE_DUPLICATE",
        path: "spec.matchConditions[1].name",
        at: "17:11",
        message: 'duplicate match condition name "a" (first at line 15)',
      },
    ],
  },
  {
    name: "matchCondition names are qualified names",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  matchConditions:\n  - name: "-not-ok"\n    expression: "true"\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConditions[0].name",
        at: ['"-not-ok"'],
        message: `name part ${NAME_PART_MESSAGE}; got "-not-ok"`,
      },
    ],
  },
  {
    name: "matchCondition expression missing",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  matchConditions:\n  - name: a\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.matchConditions[0].expression",
        at: "15:5",
        message: 'missing required field "expression"',
      },
    ],
  },
  // ---- variables
  {
    name: "variable names are CEL identifiers",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  variables:\n  - name: 1abc\n    expression: "1"\n  - name: in\n    expression: "2"\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.variables[0].name",
        at: ["1abc"],
        message:
          "must be a CEL identifier (letters, digits and '_', not starting with a digit, not a reserved word); got \"1abc\"",
      },
      {
        code: "PE_FIELD_VALUE",
        path: "spec.variables[1].name",
        at: ["in\n"],
        message:
          "must be a CEL identifier (letters, digits and '_', not starting with a digit, not a reserved word); got \"in\"",
      },
    ],
  },
  {
    name: "variable names are unique",
    text: `${VAP_HEAD}${MC}${VALIDATIONS}  variables:\n  - name: x\n    expression: "1"\n  - name: x\n    expression: "2"\n`,
    expect: [
      {
        code: "PE_DUPLICATE",
        path: "spec.variables[1].name",
        at: "17:11",
        message: 'duplicate variable name "x" (first at line 15)',
      },
    ],
  },
  // ---- audit annotations
  {
    name: "auditAnnotation keys: qualified-name rules, unique",
    text: `${VAP_HEAD}${MC}  auditAnnotations:\n  - key: "bad key"\n    valueExpression: "'a'"\n  - key: ok\n    valueExpression: "'b'"\n  - key: ok\n    valueExpression: "'c'"\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.auditAnnotations[0].key",
        at: ['"bad key"'],
        message: `${NAME_PART_MESSAGE} (the key becomes "<policy name>/<key>"); got "bad key"`,
      },
      {
        code: "PE_DUPLICATE",
        path: "spec.auditAnnotations[2].key",
        at: ["ok", 1],
        message: 'duplicate audit annotation key "ok" (first at line 15)',
      },
    ],
  },
  {
    name: "auditAnnotation valueExpression missing",
    text: `${VAP_HEAD}${MC}  auditAnnotations:\n  - key: a\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.auditAnnotations[0].valueExpression",
        at: "13:5",
        message: 'missing required field "valueExpression"',
      },
    ],
  },
  {
    name: "more than 20 auditAnnotations",
    text: `${VAP_HEAD}${MC}  auditAnnotations:\n${Array.from({ length: 21 }, (_, i) => `  - {key: k${i}, valueExpression: "'v'"}\n`).join("")}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.auditAnnotations",
        at: "13:3",
        message: "must have at most 20 items; got 21",
      },
    ],
  },
  // ---- paramKind
  {
    name: "paramKind: malformed apiVersion, missing kind",
    text: `${VAP_HEAD}  paramKind:\n    apiVersion: a/b/c\n${MC}${VALIDATIONS}`,
    expect: [
      // Sorted by position: the mapping that lacks "kind" starts before the apiVersion value.
      {
        code: "PE_MISSING_FIELD",
        path: "spec.paramKind.kind",
        at: "7:5",
        message: 'missing required field "kind"',
      },
      {
        code: "PE_FIELD_VALUE",
        path: "spec.paramKind.apiVersion",
        at: ["a/b/c"],
        message: 'must be "group/version" or "version"; got "a/b/c"',
      },
    ],
  },
  {
    name: "paramKind: version must be a DNS-1035 label",
    text: `${VAP_HEAD}  paramKind:\n    apiVersion: example.com/V1\n    kind: Thing\n${MC}${VALIDATIONS}`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.paramKind.apiVersion",
        at: ["example.com/V1"],
        message:
          "version must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (e.g. 'v1'); got \"V1\"",
      },
    ],
  },
  // ---- unknown fields
  {
    name: "a misspelt field is a warning with a hint, and what it was meant to be is then missing",
    text: `${VAP_HEAD}${MC}  validation:\n  - expression: "true"\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.validations",
        at: "6:3",
        message: "validations or auditAnnotations must contain at least one item",
      },
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validation",
        at: "12:3",
        message: 'unknown field "validation" (did you mean "validations"?)',
        severity: "warning",
      },
    ],
  },
  // ---- mutating policies
  {
    name: "mutating: mutations missing",
    text: MAP_HEAD + MC,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.mutations",
        at: "6:3",
        message: 'missing required field "mutations": it must contain at least one item',
      },
    ],
  },
  {
    name: "mutating: patchType missing",
    text: `${MAP_HEAD}${MC}  mutations:\n  - jsonPatch:\n      expression: "[]"\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.mutations[0].patchType",
        at: "14:5",
        message: 'missing required field "patchType"',
      },
    ],
  },
  {
    name: "mutating: patchType outside its enum",
    text: `${MAP_HEAD}${MC}  mutations:\n  - patchType: Merge\n    jsonPatch:\n      expression: "[]"\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.mutations[0].patchType",
        at: ["Merge"],
        message: 'must be one of "ApplyConfiguration", "JSONPatch"; got "Merge"',
      },
    ],
  },
  {
    name: "mutating: the expression field must match patchType",
    text: `${MAP_HEAD}${MC}  mutations:\n  - patchType: JSONPatch\n    applyConfiguration:\n      expression: "Object{}"\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.mutations[0].jsonPatch",
        at: "14:5",
        message: 'missing required field "jsonPatch": it must be specified when patchType is "JSONPatch"',
      },
      {
        code: "PE_FIELD_VALUE",
        path: "spec.mutations[0].applyConfiguration",
        at: "16:7",
        message: 'must not be specified when patchType is "JSONPatch"',
      },
    ],
  },
  {
    name: "mutating: an empty patch expression",
    text: `${MAP_HEAD}${MC}  mutations:\n  - patchType: JSONPatch\n    jsonPatch:\n      expression: ""\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.mutations[0].jsonPatch.expression",
        at: ['""'],
        message: "must not be empty",
      },
    ],
  },
  {
    name: "mutating: reinvocationPolicy outside its enum",
    text: `${MAP_HEAD.replace("  reinvocationPolicy: Never\n", "")}${MC}${MUTATIONS}  reinvocationPolicy: Always\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.reinvocationPolicy",
        at: ["Always"],
        message: 'must be one of "Never", "IfNeeded"; got "Always"',
      },
    ],
  },
  {
    // validation.go, validateMutatingAdmissionPolicySpec: Required, and no version defaults it.
    name: "mutating: reinvocationPolicy missing (required, no default)",
    text: `${MAP_HEAD.replace("  reinvocationPolicy: Never\n", "")}${MC}${MUTATIONS}`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.reinvocationPolicy",
        at: "6:3",
        message: 'missing required field "reinvocationPolicy": "Never" or "IfNeeded"',
      },
    ],
  },
  {
    name: "mutating: DELETE may not be matched",
    text: MAP_HEAD + MC.replace('["CREATE"]', '["CREATE", "DELETE"]') + MUTATIONS,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchConstraints.resourceRules[0].operations[1]",
        at: ['"DELETE"'],
        message:
          'must be one of "CREATE", "UPDATE", "CONNECT", "*"; got "DELETE" (mutating admission policies cannot match DELETE)',
      },
    ],
  },
  {
    name: "mutating binding: DELETE may not be matched either",
    text: `${MAPB_HEAD}  matchResources:\n    resourceRules:\n    - {apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.matchResources.resourceRules[0].operations[0]",
        at: ["DELETE"],
        message:
          'must be one of "CREATE", "UPDATE", "CONNECT", "*"; got "DELETE" (mutating admission policies cannot match DELETE)',
      },
    ],
  },
  // ---- bindings
  {
    name: "binding: policyName missing",
    text: `${VAPB_HEAD}  validationActions: [Deny]\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.policyName",
        at: "6:3",
        message: 'missing required field "policyName"',
      },
    ],
  },
  {
    name: "binding: policyName must be a DNS subdomain",
    text: `${VAPB_HEAD}  policyName: Bad_Name\n  validationActions: [Deny]\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.policyName",
        at: "6:15",
        message: `${DNS_MESSAGE}; got "Bad_Name"`,
      },
    ],
  },
  {
    name: "binding: validationActions missing",
    text: `${VAPB_HEAD}  policyName: p.example.com\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.validationActions",
        at: "6:3",
        message:
          'missing required field "validationActions": at least one of "Deny", "Warn", "Audit" is required',
      },
    ],
  },
  {
    name: "binding: validationActions empty",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: []\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validationActions",
        at: "7:22",
        message: "must contain at least one item",
      },
    ],
  },
  {
    name: "binding: both Deny and Warn",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Deny, Warn]\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validationActions",
        at: "7:22",
        message: 'must not contain both "Deny" and "Warn" (the same failure would be reported twice)',
      },
    ],
  },
  {
    name: "binding: a validation action twice",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Audit, Audit]\n`,
    expect: [
      {
        code: "PE_DUPLICATE",
        path: "spec.validationActions[1]",
        at: "7:30",
        message: 'duplicate validation action "Audit"',
      },
    ],
  },
  {
    name: "binding: a validation action outside the enum",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Block]\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.validationActions[0]",
        at: "7:23",
        message: 'must be one of "Deny", "Warn", "Audit"; got "Block"',
      },
    ],
  },
  {
    name: "binding: paramRef with both name and selector",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Deny]\n  paramRef:\n    name: limits\n    selector: {}\n    parameterNotFoundAction: Deny\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.paramRef.name",
        at: ["limits"],
        message: "name and selector are mutually exclusive",
      },
    ],
  },
  {
    name: "binding: paramRef with neither name nor selector",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Deny]\n  paramRef:\n    namespace: default\n    parameterNotFoundAction: Deny\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.paramRef",
        at: "9:5",
        message: "one of name or selector must be specified",
      },
    ],
  },
  {
    // validation.go, validateParamRef: Required; only v1alpha1 defaults it (SetDefaults_ParamRef).
    name: "binding: v1 paramRef without parameterNotFoundAction",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Deny]\n  paramRef:\n    name: limits\n`,
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "spec.paramRef.parameterNotFoundAction",
        at: "9:5",
        message: 'missing required field "parameterNotFoundAction": "Deny" or "Allow"',
      },
    ],
  },
  {
    name: "binding: a v1alpha1 paramRef without parameterNotFoundAction is defaulted to Deny",
    text: `${VAPB_HEAD.replace("/v1\n", "/v1alpha1\n")}  policyName: p.example.com\n  validationActions: [Deny]\n  paramRef:\n    name: limits\n`,
    expect: [],
  },
  {
    name: "binding: parameterNotFoundAction outside its enum",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Deny]\n  paramRef:\n    name: limits\n    parameterNotFoundAction: Maybe\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.paramRef.parameterNotFoundAction",
        at: ["Maybe"],
        message: 'must be one of "Allow", "Deny"; got "Maybe"',
      },
    ],
  },
  {
    name: "binding: paramRef.name is a path segment",
    text: `${VAPB_HEAD}  policyName: p.example.com\n  validationActions: [Deny]\n  paramRef:\n    name: "a%b"\n    parameterNotFoundAction: Deny\n`,
    expect: [
      {
        code: "PE_FIELD_VALUE",
        path: "spec.paramRef.name",
        at: ['"a%b"'],
        message: `may not contain '%'; got "a%b"`,
      },
    ],
  },
  // ---- documents
  {
    // Like a Deployment or a CRD beside the policies: not refused (issue 34).
    name: "a kind of admissionregistration.k8s.io that is not a policy or binding is kept as an object",
    text: "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: w\n",
    expect: [],
  },
  {
    name: "a known kind at an unknown version",
    text: VAP_HEAD.replace("/v1\n", "/v2\n") + MC + VALIDATIONS,
    expect: [
      {
        code: "PE_UNKNOWN_KIND",
        path: "apiVersion",
        at: "1:13",
        message:
          'ValidatingAdmissionPolicy is read from apiVersion admissionregistration.k8s.io/v1, admissionregistration.k8s.io/v1beta1, admissionregistration.k8s.io/v1alpha1; got "admissionregistration.k8s.io/v2"',
      },
    ],
  },
  {
    name: "a document that is a list",
    text: "- a\n- b\n",
    expect: [
      {
        code: "PE_NOT_OBJECT",
        at: "1:1",
        message: "a document must be a mapping with apiVersion and kind; got a list",
      },
    ],
  },
  {
    name: "a document without kind",
    text: "apiVersion: v1\nmetadata:\n  name: x\n",
    expect: [
      {
        code: "PE_NOT_OBJECT",
        path: "kind",
        at: "1:1",
        message: 'a Kubernetes object needs "apiVersion" and "kind"; "kind" is missing',
      },
    ],
  },
  {
    name: "a resource object without a name",
    text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: default\n",
    expect: [
      {
        code: "PE_MISSING_FIELD",
        path: "metadata.name",
        at: "4:3",
        message: 'missing required field "name"',
      },
    ],
  },
  {
    name: "YAML syntax error: yaml's own message and position",
    text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a: b\n",
    expect: [
      {
        code: "PE_YAML_SYNTAX",
        at: "4:9",
        message: "Nested mappings are not allowed in compact mappings",
      },
    ],
  },
  {
    name: "duplicate keys are a YAML error",
    text: "apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata:\n  name: a\n",
    expect: [{ code: "PE_YAML_SYNTAX", at: "3:1", message: "Map keys must be unique" }],
  },
  {
    name: "an alias to an anchor that does not exist",
    text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: *nothing\n",
    expect: [
      { code: "PE_YAML_SYNTAX", at: "4:9", message: "alias *nothing refers to no anchor defined before it" },
    ],
  },
];

for (const c of cases) {
  test(`diagnostic: ${c.name}`, () => {
    const expected = c.expect.map((e) => ({
      ...e,
      at: typeof e.at === "string" ? e.at : posOf(c.text, e.at[0], e.at[1] ?? 0),
    }));
    const { set, diagnostics } = parsePolicyText(c.text, FILE);
    assert.deepEqual(diagnostics.map(compact), expected);
    // Any error keeps the document out of the set.
    const total = set.policies.length + set.bindings.length + set.resources.length;
    assert.equal(total, expected.some((e) => e.severity !== "warning") ? 0 : 1);
  });
}

test("an install manifest: webhook configurations, a Deployment and a CRD beside a policy are kept as objects, never PE_UNKNOWN_KIND", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: vwc}
webhooks: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mwc}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: x}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
---
${VAP_HEAD}${MC}${VALIDATIONS}`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics, []);
  assert.equal(set.policies.length, 1);
  assert.deepEqual(
    set.resources.map((r) => r.kind),
    [
      "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration",
      "Deployment",
      "CustomResourceDefinition",
    ],
  );
});

test("every diagnostic carries the file and the object it belongs to", () => {
  const text = `${VAP_HEAD}${MC}${VALIDATIONS}  failurePolicy: Sometimes\n`;
  const [d] = parsePolicyText(text, "dir/policy.yaml").diagnostics;
  assert.deepEqual(d, {
    code: "PE_FIELD_VALUE",
    severity: "error",
    message: 'must be one of "Fail", "Ignore"; got "Sometimes"',
    path: "spec.failurePolicy",
    location: { file: "dir/policy.yaml", line: 14, column: 18 },
    object: { kind: "ValidatingAdmissionPolicy", name: "p.example.com" },
  });
});

test("an unknown field is only a warning: the policy is kept", () => {
  const text = `${VAP_HEAD}${MC}${VALIDATIONS}  comment: hello\n`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics.map(compact), [
    {
      code: "PE_FIELD_VALUE",
      path: "spec.comment",
      at: "14:3",
      message: 'unknown field "comment"',
      severity: "warning",
    },
  ]);
  assert.equal(set.policies.length, 1);
});

test("all problems of a file are reported together, in file order; good documents are kept", () => {
  const text = `${VAP_HEAD}${MC}${VALIDATIONS}  failurePolicy: Sometimes
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    env: prod
---
foo: [1,
---
${VAPB_HEAD}  policyName: p.example.com
  validationActions: [Warn, Deny]
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.location?.line]),
    [
      ["PE_FIELD_VALUE", 14],
      ["PE_YAML_SYNTAX", 24],
      ["PE_FIELD_VALUE", 31],
    ],
  );
  assert.deepEqual(plain({ policies: [], bindings: [], resources: set.resources }), {
    policies: [],
    bindings: [],
    resources: [
      {
        apiVersion: "v1",
        kind: "Namespace",
        name: "team-a",
        labels: { env: "prod" },
        object: {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "team-a", labels: { env: "prod" } },
        },
      },
    ],
  });
  assert.equal(set.policies.length, 0);
  assert.equal(set.bindings.length, 0);
});

test("a YAML syntax error keeps yaml's code frame as the detail", () => {
  const [d] = parsePolicyText("a: b: c\n", FILE).diagnostics;
  assert.equal(d?.code, "PE_YAML_SYNTAX");
  assert.equal(d?.detail, "a: b: c\n   ^");
});

test("empty documents and comment-only files produce nothing", () => {
  for (const text of ["", "# nothing here\n", "---\n---\n", "---\n# a\n---\n"]) {
    const { set, diagnostics } = parsePolicyText(text, FILE);
    assert.deepEqual(diagnostics, [], JSON.stringify(text));
    assert.deepEqual(plain(set), { policies: [], bindings: [], resources: [] });
  }
});

test("a List expands to its items, each read as its own object", () => {
  const text = `apiVersion: v1
kind: List
items:
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicyBinding
  metadata: {name: b.example.com}
  spec: {policyName: p.example.com, validationActions: [Deny]}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: limits, namespace: default}
  data: {max: "3"}
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicyBinding
  metadata: {name: broken.example.com}
  spec: {validationActions: [Deny]}
- 42
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics.map(compact), [
    {
      code: "PE_MISSING_FIELD",
      path: "spec.policyName",
      at: posOf(text, "{validationActions"),
      message: 'missing required field "policyName"',
    },
    {
      code: "PE_NOT_OBJECT",
      path: "items[3]",
      at: "16:3",
      message: "a document must be a mapping with apiVersion and kind; got number 42",
    },
  ]);
  assert.deepEqual(diagnostics[0]?.object, {
    kind: "ValidatingAdmissionPolicyBinding",
    name: "broken.example.com",
  });
  assert.deepEqual(
    set.bindings.map((b) => b.name),
    ["b.example.com"],
  );
  const cm = set.resources[0];
  assert.equal(cm?.kind, "ConfigMap");
  assert.equal(cm?.namespace, "default");
  assert.deepEqual(cm?.object, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "limits", namespace: "default" },
    data: { max: "3" },
  });
  // Each item's source map is rooted at the item.
  assert.deepEqual(cm?.source.locate("data.max"), { file: FILE, line: 11, column: 15 });
});

test("anchors and aliases are followed", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p.example.com
spec:
  matchConstraints:
    resourceRules:
    - &rule
      apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
    excludeResourceRules:
    - *rule
  validations:
  - expression: &expr "object.spec.replicas <= 5"
  auditAnnotations:
  - key: k
    valueExpression: *expr
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics, []);
  const p = set.policies[0] as ValidatingPolicy;
  assert.deepEqual(p.matchConstraints?.excludeResourceRules, p.matchConstraints?.resourceRules);
  assert.equal(p.auditAnnotations[0]?.valueExpression, "object.spec.replicas <= 5");
});

test("JSON text, tab-indented, is read as YAML", () => {
  const text =
    '{\n\t"apiVersion": "v1",\n\t"kind": "Namespace",\n\t"metadata": {\n\t\t"name": "ns1",\n\t\t"labels": {"a": "b"}\n\t}\n}\n';
  const { set, diagnostics } = parsePolicyText(text, "ns.json");
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(set.resources[0]?.labels, { a: "b" });
  assert.deepEqual(set.resources[0]?.source.locate("metadata.labels.a"), {
    file: "ns.json",
    line: 6,
    column: 19,
  });
});

// ------------------------------------------------------------------------------------------------
// SourceMap

test("SourceMap.locate answers for any path of the document", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p.example.com
  labels:
    app.kubernetes.io/name: demo
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "true"
  - expression: >
      object.spec.replicas
      <= 5
    message: small
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  assert.deepEqual(diagnostics, []);
  const source = set.policies[0]?.source;
  assert.ok(source);
  assert.equal(source.file, FILE);
  const at = (path: string): string => {
    const l = source.locate(path);
    return `${l.line}:${l.column}`;
  };
  assert.equal(at("spec.validations[1].expression"), "16:17");
  assert.equal(at("spec.validations[1].message"), "19:14");
  assert.equal(at("spec.validations[1]"), "16:5");
  assert.equal(at("spec.matchConstraints.resourceRules[0].operations[0]"), "12:20");
  assert.equal(at('metadata.labels["app.kubernetes.io/name"]'), "6:29");
  assert.equal(at("metadata.name"), "4:9");
  assert.equal(at(""), "1:1");
  // A path that is not there resolves to its nearest ancestor that is.
  assert.equal(at("spec.validations[1].reason"), "16:5");
  assert.equal(at("spec.validations[7].expression"), "15:3");
  assert.equal(at("nothing.here"), "1:1");
});

test("SourceMap.locate points at the key of a field written without a value", () => {
  const text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  empty:\n";
  const { set } = parsePolicyText(text, FILE);
  assert.deepEqual(set.resources[0]?.source.locate("data.empty"), { file: FILE, line: 6, column: 3 });
});

// ------------------------------------------------------------------------------------------------
// checkReferences

function parsed(text: string, file: string): PolicySet {
  const r = parsePolicyText(text, file);
  assert.deepEqual(r.diagnostics, []);
  return r.set;
}

// A binding whose policy does not exist is stored by the API server and never matched (the generic
// policy source pairs bindings with existing policies): inert, so a warning, not an error.
test("checkReferences: a binding that names no loaded policy of its own kind is inert, a warning", () => {
  const policy = parsed(`${VAP_HEAD}${MC}${VALIDATIONS}`, "policy.yaml");
  const bindings = parsed(
    `${VAPB_HEAD}  policyName: p.example.com
  validationActions: [Deny]
---
${VAPB_HEAD.replace("b.example.com", "b2.example.com")}  policyName: missing.example.com
  validationActions: [Deny]
---
${MAPB_HEAD.replace("m.example.com", "p.example.com")}`,
    "bindings.yaml",
  );
  const diagnostics = checkReferences(mergePolicySets([policy, bindings]));
  assert.deepEqual(diagnostics, [
    {
      code: "PE_UNKNOWN_POLICY",
      severity: "warning",
      message:
        'no ValidatingAdmissionPolicy named "missing.example.com" is loaded: the binding applies to nothing',
      path: "spec.policyName",
      location: { file: "bindings.yaml", line: 14, column: 15 },
      object: { kind: "ValidatingAdmissionPolicyBinding", name: "b2.example.com" },
    },
    {
      code: "PE_UNKNOWN_POLICY",
      severity: "warning",
      message: 'no MutatingAdmissionPolicy named "p.example.com" is loaded: the binding applies to nothing',
      path: "spec.policyName",
      location: { file: "bindings.yaml", line: 22, column: 15 },
      object: { kind: "MutatingAdmissionPolicyBinding", name: "mb.example.com" },
    },
  ]);
  const binding = bindings.bindings[2] as MutatingBinding;
  assert.equal(binding.kind, "MutatingAdmissionPolicyBinding");
});

test("checkReferences: an object defined twice across files", () => {
  const a = parsed(`${VAP_HEAD}${MC}${VALIDATIONS}`, "a.yaml");
  const b = parsed(
    `${VAP_HEAD}${MC}${VALIDATIONS}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: y}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n`,
    "b.yaml",
  );
  assert.deepEqual(checkReferences(mergePolicySets([a, b])), [
    {
      code: "PE_DUPLICATE",
      severity: "error",
      message: 'ValidatingAdmissionPolicy "p.example.com" is defined more than once (first at a.yaml:4:9)',
      path: "metadata.name",
      location: { file: "b.yaml", line: 4, column: 9 },
      object: { kind: "ValidatingAdmissionPolicy", name: "p.example.com" },
    },
    {
      code: "PE_DUPLICATE",
      severity: "error",
      message: 'ConfigMap "x/c" is defined more than once (first at b.yaml:17:18)',
      path: "metadata.name",
      location: { file: "b.yaml", line: 25, column: 18 },
      object: { kind: "ConfigMap", name: "c" },
    },
  ]);
});

// ------------------------------------------------------------------------------------------------
// name formats (src/policy/fields.ts)

test("name formats accept and reject what the API server does", () => {
  const table: [string, (v: string) => boolean, string, boolean][] = [
    ["dns1123Subdomain", (v) => dns1123Subdomain(v).length === 0, "demo-policy.example.com", true],
    ["dns1123Subdomain", (v) => dns1123Subdomain(v).length === 0, "a", true],
    ["dns1123Subdomain", (v) => dns1123Subdomain(v).length === 0, "Demo", false],
    ["dns1123Subdomain", (v) => dns1123Subdomain(v).length === 0, "-a", false],
    ["dns1123Subdomain", (v) => dns1123Subdomain(v).length === 0, "a..b", false],
    ["dns1123Subdomain", (v) => dns1123Subdomain(v).length === 0, "a".repeat(254), false],
    ["dns1035Label", (v) => dns1035Label(v).length === 0, "v1beta1", true],
    ["dns1035Label", (v) => dns1035Label(v).length === 0, "1v", false],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "MyName", true],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "example.com/My_Name.1", true],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "a".repeat(63), true],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "a".repeat(64), false],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "/name", false],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "Example.com/name", false],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "a/b/c", false],
    ["qualifiedName", (v) => qualifiedName(v).length === 0, "name_", false],
    ["labelValue", (v) => labelValue(v).length === 0, "", true],
    ["labelValue", (v) => labelValue(v).length === 0, "v1.2_3-x", true],
    ["labelValue", (v) => labelValue(v).length === 0, "a b", false],
    ["pathSegmentName", (v) => pathSegmentName(v).length === 0, "limits.example.com", true],
    ["pathSegmentName", (v) => pathSegmentName(v).length === 0, "..", false],
    ["isCelIdentifier", isCelIdentifier, "_x1", true],
    ["isCelIdentifier", isCelIdentifier, "while", false],
    ["isCelIdentifier", isCelIdentifier, "a-b", false],
  ];
  for (const [name, check, value, expected] of table) {
    assert.equal(check(value), expected, `${name}(${JSON.stringify(value)})`);
  }
  assert.deepEqual(qualifiedName("Example.com/name"), [
    "prefix part must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. 'example.com')",
  ]);
});

test("closestName suggests only near misses", () => {
  const fields = ["validations", "auditAnnotations", "matchConditions"];
  assert.equal(closestName("validation", fields), "validations");
  assert.equal(closestName("MatchConditions", fields), "matchConditions");
  assert.equal(closestName("comment", fields), undefined);
});

// apimachinery api/validation/objectmeta.go ValidateOwnerReferences / validateOwnerReference: the API
// server refused kyverno's generated policy (test/fixtures/public-policies/kyverno-block-exec-in-pods.yaml)
// for its owner reference without a uid ("metadata.ownerReferences[0].uid: Required value" at 1.37.2).
test("metadata.ownerReferences: apiVersion, kind, name and uid required; the apiVersion's form; one controller", () => {
  const text = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p
  ownerReferences:
    - apiVersion: kyverno.io/v1
      kind: ClusterPolicy
      name: a
      controller: true
    - apiVersion: a/b/c
      kind: X
      name: b
      uid: "2"
      controller: true
    - {apiVersion: v1, kind: Event, name: e, uid: "3"}
spec:
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
    - expression: "true"
`;
  const { set, diagnostics } = parsePolicyText(text, FILE);
  const owners = (ds: readonly Diagnostic[]) =>
    ds.filter((d) => d.path?.startsWith("metadata.ownerReferences"));
  // An error, and the policy is still read: the API server looks at the API version first.
  assert.equal(set.policies.length, 1);
  assert.deepEqual(
    owners(diagnostics).map((d) => [d.code, d.path, d.message]),
    [
      ["PE_MISSING_FIELD", "metadata.ownerReferences[0].uid", "must not be empty"],
      // Reported where the second controller's reference begins, so before its own fields' problems.
      [
        "PE_FIELD_VALUE",
        "metadata.ownerReferences",
        'Only one reference can have Controller set to true. Found "true" in references for ClusterPolicy/a and X/b',
      ],
      ["PE_FIELD_VALUE", "metadata.ownerReferences[1].apiVersion", "must be <group>/<version> or <version>"],
      ["PE_FIELD_VALUE", "metadata.ownerReferences[2]", "v1, Kind=Event is disallowed from being an owner"],
    ],
  );
  const good = text
    .replace(/ {4}- apiVersion: a\/b\/c[\s\S]*?uid: "3"\}\n/, "")
    .replace("name: a\n", 'name: a\n      uid: "1"\n');
  assert.deepEqual(owners(parsePolicyText(good, FILE).diagnostics), []);
});
