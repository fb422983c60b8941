/**
 * A cluster for the benchmarks and the trial to connect `serve` to: the test API server
 * (test/helpers/kube-apiserver.ts: the wire protocol of list, watch and SubjectAccessReview over
 * HTTPS on 127.0.0.1), with the Namespaces of the bench reviews, a `limits` ConfigMap in each, and
 * a policy that reads them (a namespaceSelector, params by name in the request's namespace, and
 * namespaceObject), so that every review of the connected server reads the cluster's caches.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeApiServer, type KubeObject } from "../test/helpers/kube-apiserver.ts";

/** Allows the bench Pods and Widgets: they are small, and their namespaces are labelled. */
const CONNECTED_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: bench-connected.example.com }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
  matchConstraints:
    resourceRules:
      - apiGroups: ["", "example.com"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["pods", "widgets"]
  validations:
    - expression: "object.metadata.name.size() <= int(params.data.maxName)"
      messageExpression: "'names in ' + namespaceObject.metadata.name + ' are at most ' + params.data.maxName + ' characters'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: bench-connected.example.com }
spec:
  policyName: bench-connected.example.com
  validationActions: [Deny]
  paramRef: { name: limits, parameterNotFoundAction: Deny }
  matchResources:
    namespaceSelector: { matchLabels: { bench: "yes" } }
`;

/** The namespaces the bench reviews are in (review.ts: team-a; isolation.ts's Widget: default). */
const NAMESPACES = ["team-a", "default"];

export interface BenchCluster {
  readonly api: KubeApiServer;
  /** A kubeconfig file for `api`. */
  readonly kubeconfig: string;
  /** The connected policy's file (serve it beside the others). */
  readonly policies: string;
  stop(): Promise<void>;
}

/** Starts the API server with the bench namespaces, their ConfigMaps, and `extra` objects. */
export async function startBenchCluster(extra: readonly KubeObject[] = []): Promise<BenchCluster> {
  const api = new KubeApiServer();
  await api.start();
  for (const name of NAMESPACES) {
    api.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, labels: { "kubernetes.io/metadata.name": name, bench: "yes" } },
    });
    api.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "limits", namespace: name },
      data: { maxName: "63" },
    });
  }
  if (extra.length > 0) api.putMany(extra);
  const dir = mkdtempSync(join(tmpdir(), "celgate-bench-cluster-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, api.kubeconfig());
  const policies = join(dir, "connected.yaml");
  writeFileSync(policies, CONNECTED_POLICY);
  return {
    api,
    kubeconfig,
    policies,
    stop: async () => {
      await api.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
