/** Policy texts for the CLI tests, starting from the Kubernetes documentation's examples. */
import { map, mapBinding, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

/** Match constraints for apps/v1 deployments on `operations`. */
export function deploymentRules(operations: readonly string[]): Record<string, unknown> {
  return {
    resourceRules: [{ apiGroups: ["apps"], apiVersions: ["v1"], operations, resources: ["deployments"] }],
  };
}

/** A ValidatingAdmissionPolicy on deployments; `spec` adds the rest (validations, paramKind...). */
export function deploymentPolicy(
  name: string,
  operations: readonly string[],
  spec: Record<string, unknown>,
): Record<string, unknown> {
  return vap(name, { matchConstraints: deploymentRules(operations), ...spec });
}

/** The replicas ≤ 5 policy of the ValidatingAdmissionPolicy documentation. */
export const DEMO_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "demo-policy.example.com"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
`;

export function demoBinding(actions: string, extra = ""): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-test.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [${actions}]
${extra}`;
}

export const NAMESPACE_SELECTOR = `  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
`;

export const TEST_NAMESPACE = `apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    environment: test
`;

export function deployment(replicas: number, namespace?: string, name = "web"): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
${namespace ? `  namespace: ${namespace}\n` : ""}spec:
  replicas: ${replicas}
`;
}

/**
 * A policy whose expression does not compile: an undeclared variable on line 13. Written out as
 * text because the tests assert that line and column.
 */
export const BROKEN_EXPRESSION = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: broken.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
    - expression: "object.spec.replicas <= maxReplicas"
`;

/** Validates with a parameter object (the docs' ReplicaLimit). */
export const REPLICA_LIMIT = yamlDocs(
  deploymentPolicy("replicalimit.example.com", ["CREATE", "UPDATE"], {
    paramKind: { apiVersion: "rules.example.com/v1", kind: "ReplicaLimit" },
    validations: [
      {
        expression: "object.spec.replicas <= params.maxReplicas",
        messageExpression: "'replicas must be at most ' + string(params.maxReplicas)",
      },
    ],
  }),
  vapBinding("replicalimit-binding", "replicalimit.example.com", {
    paramRef: { name: "limit", namespace: "default", parameterNotFoundAction: "Deny" },
  }),
);

export const REPLICA_LIMIT_PARAM = `apiVersion: rules.example.com/v1
kind: ReplicaLimit
metadata:
  name: limit
  namespace: default
maxReplicas: 3
`;

/** Adds a label by JSONPatch; a validating policy requires it, so it passes only after the mutation. */
export const LABEL_MUTATION = yamlDocs(
  {
    ...map("add-team-label.example.com", {
      matchConstraints: deploymentRules(["CREATE"]),
      mutations: [
        {
          patchType: "JSONPatch",
          jsonPatch: {
            expression: '[JSONPatch{op: "add", path: "/metadata/labels", value: {"team": "platform"}}]',
          },
        },
      ],
    }),
    apiVersion: "admissionregistration.k8s.io/v1beta1",
  },
  {
    ...mapBinding("add-team-label-binding", "add-team-label.example.com"),
    apiVersion: "admissionregistration.k8s.io/v1beta1",
  },
  deploymentPolicy("require-team.example.com", ["CREATE"], {
    validations: [
      {
        expression: "has(object.metadata.labels) && 'team' in object.metadata.labels",
        message: "a team label is required",
      },
    ],
  }),
  vapBinding("require-team-binding", "require-team.example.com"),
);

/** Checks the request itself: operation, user, old object. */
export const REQUEST_POLICY = yamlDocs(
  deploymentPolicy("request.example.com", ["*"], {
    validations: [
      {
        expression: "request.operation != 'DELETE' || oldObject.metadata.name != 'protected'",
        message: "protected may not be deleted",
      },
      {
        expression: "request.operation != 'UPDATE' || object.spec.replicas >= oldObject.spec.replicas",
        message: "no scaling down",
      },
      {
        expression: "request.userInfo.username != 'mallory' && !('evil' in request.userInfo.groups)",
        message: "not you",
      },
      {
        expression:
          "request.kind.kind == 'Deployment' && request.resource.resource == 'deployments' && request.resource.group == 'apps'",
        message: "kind and resource",
      },
    ],
  }),
  vapBinding("request-binding", "request.example.com"),
);
