/**
 * What test/kube/webhook.test.ts installs and sends: policies of the library (policies/) beside
 * purpose-written ones that cover what the webhook path adds to a policy's decision (a Deny with
 * reason Invalid, Warn and Audit actions, a namespaceSelector and a matchCondition the webhook
 * configuration carries, an Ignore policy, a MutatingAdmissionPolicy of each patch type), and the
 * requests: every object as every user in every namespace, created and updated with server-side dry
 * run, so nothing is stored and each phase sees the same cluster.
 *
 * At most one policy denies each request: when several do, which one the API server names is not
 * specified (natively the first in its policy cache's order, which is a map's; through webhooks the
 * first webhook to answer, k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go),
 * so the two sides could name different policies for the same decision.
 */
import type { KubeManifest } from "../helpers/kube-objects.ts";

/** Files of policies/ installed as they are. */
export const LIBRARY_FILES = [
  "disallow-latest-tag.yaml",
  "replica-limit.yaml",
  "default-labels.yaml",
] as const;

export const ENFORCED_LABEL = "celgate-test/enforced";

export const WEBHOOK_POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: wh-users.celgate.dev }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods] }
  validations:
    - expression: "request.userInfo.username != 'mallory' || object.metadata.?labels.tier.orValue('') != 'web'"
      message: mallory may not write web Pods
    - expression: "!object.metadata.?labels.tier.hasValue() || object.metadata.labels.tier in ['web', 'db']"
      messageExpression: "'tier ' + object.metadata.labels.tier + ' is not one of web, db'"
      reason: Invalid
  auditAnnotations:
    - { key: writer, valueExpression: "request.userInfo.username" }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: wh-users.celgate.dev }
spec: { policyName: wh-users.celgate.dev, validationActions: [Deny] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: wh-replicas-warn.celgate.dev }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments] }
  validations:
    - expression: "object.spec.?replicas.orValue(1) <= 3"
      messageExpression: "'more than 3 replicas (' + string(object.spec.replicas) + ') by ' + request.userInfo.username"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: wh-replicas-warn.celgate.dev }
spec: { policyName: wh-replicas-warn.celgate.dev, validationActions: [Warn, Audit] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: wh-secrets.celgate.dev }
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: { matchLabels: { ${ENFORCED_LABEL}: "true" } }
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets] }
  validations:
    - expression: "!object.metadata.name.startsWith('bad-')"
      message: secrets named bad-* are refused in enforced namespaces
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: wh-secrets.celgate.dev }
spec: { policyName: wh-secrets.celgate.dev, validationActions: [Deny] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: wh-configmaps.celgate.dev }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps] }
  matchConditions:
    - name: not-skipped
      expression: "object.metadata.?labels.skip.orValue('') != 'true'"
  validations:
    - expression: "!('forbidden' in object.?data.orValue({}))"
      message: the key forbidden is refused
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: wh-configmaps.celgate.dev }
spec: { policyName: wh-configmaps.celgate.dev, validationActions: [Deny] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: wh-services.celgate.dev }
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [services] }
  validations:
    - expression: "!object.metadata.name.startsWith('bad-')"
      message: services named bad-* are refused
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: wh-services.celgate.dev }
spec: { policyName: wh-services.celgate.dev, validationActions: [Deny] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: { name: wh-annotate.celgate.dev }
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: >-
          Object{metadata: Object.metadata{annotations: {"celgate.dev/written-by": request.userInfo.username}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: { name: wh-annotate.celgate.dev }
spec: { policyName: wh-annotate.celgate.dev }
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: { name: wh-updated-by.celgate.dev }
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [pods] }
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: >-
          [JSONPatch{op: "add", path: "/metadata/labels", value: {}}].filter(p, !has(object.metadata.labels)) +
          [JSONPatch{op: "add", path: "/metadata/labels/updated-by", value: request.userInfo.username}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: { name: wh-updated-by.celgate.dev }
spec: { policyName: wh-updated-by.celgate.dev }
`;

export interface WebhookRequest {
  readonly what: string;
  readonly method: "POST" | "PUT";
  /** The collection (POST) or the object (PUT). */
  readonly path: string;
  readonly user: string;
  readonly body: Record<string, unknown>;
}

function pod(ns: string, name: string, image: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels },
    spec: {
      // No token volume: its name is random, and the objects of two phases are compared.
      automountServiceAccountToken: false,
      containers: [{ name: "app", image }],
    },
  };
}

function deployment(ns: string, name: string, replicas: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "nginx:1.27.3" }] },
      },
    },
  };
}

function configMap(
  ns: string,
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns, labels }, data };
}

function secret(ns: string, name: string) {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: ns }, stringData: { k: "v" } };
}

function service(ns: string, name: string) {
  // ExternalName: a ClusterIP Service would be given a random address, and objects are compared.
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns },
    spec: { type: "ExternalName", externalName: "example.com" },
  };
}

const COLLECTION: Readonly<Record<string, string>> = {
  Pod: "/api/v1/namespaces/NS/pods",
  Deployment: "/apis/apps/v1/namespaces/NS/deployments",
  ConfigMap: "/api/v1/namespaces/NS/configmaps",
  Secret: "/api/v1/namespaces/NS/secrets",
  Service: "/api/v1/namespaces/NS/services",
};

export function collectionOf(kind: string, ns: string): string {
  const c = COLLECTION[kind];
  if (c === undefined) throw new Error(`no collection for ${kind}`);
  return c.replace("NS", ns);
}

/** The objects created for every user in `ns`. */
export function createdObjects(ns: string): Record<string, unknown>[] {
  return [
    pod(ns, "good", "nginx:1.27.3", { tier: "web" }),
    pod(ns, "latest", "nginx:latest"),
    pod(ns, "bad-tier", "nginx:1.27.3", { tier: "cache" }),
    deployment(ns, "small", 2),
    deployment(ns, "warned", 5),
    deployment(ns, "too-many", 12),
    secret(ns, "bad-secret"),
    secret(ns, "fine-secret"),
    configMap(ns, "forbidden", { forbidden: "x" }),
    configMap(ns, "forbidden-skipped", { forbidden: "x" }, { skip: "true" }),
    configMap(ns, "fine", { a: "b" }),
    service(ns, "bad-svc"),
    service(ns, "fine-svc"),
  ];
}

/** Objects stored before any policy, then updated (dry run) by every user. */
export function storedObjects(ns: string): Record<string, unknown>[] {
  return [
    pod(ns, "stored", "nginx:1.27.3"),
    deployment(ns, "stored", 1),
    configMap(ns, "stored", { a: "b" }),
  ];
}

/** How each stored object is changed by an update. */
export function updated(stored: Record<string, unknown>): Record<string, unknown> {
  const o = structuredClone(stored) as {
    kind: string;
    spec: { containers: { image: string }[]; replicas: number };
    data: Record<string, string>;
  };
  // A new tag (no policy denies it), so the update's mutation shows in the object.
  if (o.kind === "Pod") o.spec.containers[0]!.image = "nginx:1.27.4";
  if (o.kind === "Deployment") o.spec.replicas = 12;
  if (o.kind === "ConfigMap") o.data = { forbidden: "x" };
  return o;
}

export function nameOf(o: Record<string, unknown>): string {
  return String((o.metadata as { name: string }).name);
}

export function namespaceOfObject(o: Record<string, unknown>): string {
  return String((o.metadata as { namespace: string }).namespace);
}

export type { KubeManifest };
