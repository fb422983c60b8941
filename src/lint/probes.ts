/**
 * The requests a cluster cannot do without, as the API server would send them to admission: the
 * writes that start celgate's own Pods (a rollout or a rescheduling after a node failure), those of
 * the control plane in kube-system, the heartbeats of the nodes (their Node status and their Lease
 * in kube-node-lease) and the kubelets' certificate requests (a kubelet whose client certificate
 * expires unrenewed drops out of the cluster). A Fail policy or webhook that matches one of them turns celgate being
 * down, or a policy bug, into a cluster that cannot heal ("Avoiding deadlocks in self-hosted
 * webhooks" and "Avoiding operating on the kube-system namespace" in the dynamic admission control
 * documentation).
 */
import type { AdmissionRequest, UserInfo } from "../engine/types.ts";
import type { LintOptions, LintRule } from "./types.ts";

export interface Probe {
  readonly rule: LintRule;
  /** What the request is, for messages: `the creation of celgate's own Pods`. */
  readonly what: string;
  /** Whether a namespaceSelector can keep a webhook off it (false for cluster-scoped objects). */
  readonly namespaced: boolean;
  readonly request: AdmissionRequest;
}

const CONTROLLER = (name: string): UserInfo => ({
  username: `system:serviceaccount:kube-system:${name}`,
  groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
});
const KUBELET: UserInfo = {
  username: "system:node:node-1",
  groups: ["system:nodes", "system:authenticated"],
};
const CONTROLLER_MANAGER: UserInfo = {
  username: "system:kube-controller-manager",
  groups: ["system:authenticated"],
};

interface Spec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly resource: string;
  readonly subResource?: string;
  readonly operation: "CREATE" | "UPDATE";
  readonly namespace: string;
  readonly name: string;
  readonly userInfo: UserInfo;
  readonly object: Record<string, unknown>;
}

function request(s: Spec, uid: string): AdmissionRequest {
  const kind = { group: s.group, version: s.version, kind: s.kind };
  const resource = { group: s.group, version: s.version, resource: s.resource };
  return {
    uid,
    kind,
    resource,
    ...(s.subResource ? { subResource: s.subResource, requestSubResource: s.subResource } : {}),
    requestKind: kind,
    requestResource: resource,
    name: s.name,
    namespace: s.namespace,
    operation: s.operation,
    userInfo: s.userInfo,
    object: s.object,
    oldObject: s.operation === "UPDATE" ? s.object : null,
    dryRun: false,
    options: {
      apiVersion: "meta.k8s.io/v1",
      kind: s.operation === "CREATE" ? "CreateOptions" : "UpdateOptions",
    },
  };
}

function pod(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  image: string,
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: name.split("-")[0], image }] },
  };
}

/**
 * The critical requests for a cluster where celgate runs in `options.namespace`. Long because it is
 * a table: one entry per request, each written out as the API server would send it.
 */
export function criticalProbes(options: LintOptions): Probe[] {
  const ns = options.namespace;
  const self = options.selfLabels;
  const lease = (namespace: string, name: string) => ({
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, namespace },
    spec: { holderIdentity: name, leaseDurationSeconds: 40 },
  });
  const node = {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "node-1", labels: { "kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux" } },
    status: { conditions: [{ type: "Ready", status: "True" }] },
  };
  const specs: (Spec & { rule: LintRule; what: string; namespaced: boolean })[] = [
    {
      rule: "self-deadlock",
      what: `the creation of celgate's own Pods (namespace ${ns})`,
      namespaced: true,
      group: "",
      version: "v1",
      kind: "Pod",
      resource: "pods",
      operation: "CREATE",
      namespace: ns,
      name: "celgate-7d9f8b6c5-x2x4q",
      userInfo: CONTROLLER("replicaset-controller"),
      object: pod(ns, "celgate-7d9f8b6c5-x2x4q", { ...self }, "celgate:0.1.0"),
    },
    {
      rule: "self-deadlock",
      what: `the ReplicaSets of celgate's Deployment (namespace ${ns})`,
      namespaced: true,
      group: "apps",
      version: "v1",
      kind: "ReplicaSet",
      resource: "replicasets",
      operation: "CREATE",
      namespace: ns,
      name: "celgate-7d9f8b6c5",
      userInfo: CONTROLLER("deployment-controller"),
      object: {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: "celgate-7d9f8b6c5", namespace: ns, labels: { ...self } },
        spec: {
          replicas: 3,
          selector: { matchLabels: { ...self } },
          template: pod(ns, "celgate", { ...self }, "celgate:0.1.0"),
        },
      },
    },
    {
      rule: "control-plane",
      what: "the creation of control-plane Pods in kube-system",
      namespaced: true,
      group: "",
      version: "v1",
      kind: "Pod",
      resource: "pods",
      operation: "CREATE",
      namespace: "kube-system",
      name: "coredns-5d78c9869d-abcde",
      userInfo: CONTROLLER("replicaset-controller"),
      object: pod(
        "kube-system",
        "coredns-5d78c9869d-abcde",
        { "k8s-app": "kube-dns" },
        "registry.k8s.io/coredns/coredns:v1.11.1",
      ),
    },
    {
      rule: "control-plane",
      what: "the control plane's leader election Leases in kube-system",
      namespaced: true,
      group: "coordination.k8s.io",
      version: "v1",
      kind: "Lease",
      resource: "leases",
      operation: "UPDATE",
      namespace: "kube-system",
      name: "kube-controller-manager",
      userInfo: CONTROLLER_MANAGER,
      object: lease("kube-system", "kube-controller-manager"),
    },
    {
      rule: "control-plane",
      what: "the nodes' heartbeat Leases in kube-node-lease",
      namespaced: true,
      group: "coordination.k8s.io",
      version: "v1",
      kind: "Lease",
      resource: "leases",
      operation: "UPDATE",
      namespace: "kube-node-lease",
      name: "node-1",
      userInfo: KUBELET,
      object: lease("kube-node-lease", "node-1"),
    },
    {
      rule: "control-plane",
      what: "the kubelets' updates of their Node",
      namespaced: false,
      group: "",
      version: "v1",
      kind: "Node",
      resource: "nodes",
      operation: "UPDATE",
      namespace: "",
      name: "node-1",
      userInfo: KUBELET,
      object: node,
    },
    {
      rule: "control-plane",
      what: "the kubelets' Node status reports",
      namespaced: false,
      group: "",
      version: "v1",
      kind: "Node",
      resource: "nodes",
      subResource: "status",
      operation: "UPDATE",
      namespace: "",
      name: "node-1",
      userInfo: KUBELET,
      object: node,
    },
    {
      rule: "control-plane",
      what: "the kubelets' client certificate requests",
      namespaced: false,
      group: "certificates.k8s.io",
      version: "v1",
      kind: "CertificateSigningRequest",
      resource: "certificatesigningrequests",
      operation: "CREATE",
      namespace: "",
      name: "csr-node-1",
      userInfo: KUBELET,
      object: {
        apiVersion: "certificates.k8s.io/v1",
        kind: "CertificateSigningRequest",
        metadata: { name: "csr-node-1" },
        spec: {
          signerName: "kubernetes.io/kube-apiserver-client-kubelet",
          usages: ["digital signature", "client auth"],
          request: "",
        },
      },
    },
  ];
  return specs.map(({ rule, what, namespaced, ...s }, i) => ({
    rule,
    what,
    namespaced,
    request: request(s, `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`),
  }));
}
