/** Policy texts for the CLI tests, starting from the Kubernetes documentation's examples. */

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

/** A policy whose expression does not compile: an undeclared variable on line 13. */
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
export const REPLICA_LIMIT = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicalimit.example.com
spec:
  paramKind:
    apiVersion: rules.example.com/v1
    kind: ReplicaLimit
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
    - expression: "object.spec.replicas <= params.maxReplicas"
      messageExpression: "'replicas must be at most ' + string(params.maxReplicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicalimit-binding
spec:
  policyName: replicalimit.example.com
  validationActions: [Deny]
  paramRef:
    name: limit
    namespace: default
    parameterNotFoundAction: Deny
`;

export const REPLICA_LIMIT_PARAM = `apiVersion: rules.example.com/v1
kind: ReplicaLimit
metadata:
  name: limit
  namespace: default
maxReplicas: 3
`;

/** Adds a label by JSONPatch; a validating policy requires it, so it passes only after the mutation. */
export const LABEL_MUTATION = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: add-team-label.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: >
          [JSONPatch{op: "add", path: "/metadata/labels", value: {"team": "platform"}}]
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: add-team-label-binding
spec:
  policyName: add-team-label.example.com
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: require-team.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
    - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
      message: "a team label is required"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: require-team-binding
spec:
  policyName: require-team.example.com
  validationActions: [Deny]
`;

/** Checks the request itself: operation, user, old object. */
export const REQUEST_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: request.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["*"]
      resources: ["deployments"]
  validations:
    - expression: "request.operation != 'DELETE' || oldObject.metadata.name != 'protected'"
      message: "protected may not be deleted"
    - expression: "request.operation != 'UPDATE' || object.spec.replicas >= oldObject.spec.replicas"
      message: "no scaling down"
    - expression: "request.userInfo.username != 'mallory' && !('evil' in request.userInfo.groups)"
      message: "not you"
    - expression: "request.kind.kind == 'Deployment' && request.resource.resource == 'deployments' && request.resource.group == 'apps'"
      message: "kind and resource"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: request-binding
spec:
  policyName: request.example.com
  validationActions: [Deny]
`;
