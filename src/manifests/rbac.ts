/**
 * The RBAC a cluster-connected `celgate serve` needs, derived from the loaded policies so that it
 * stays as narrow as they allow: get/list/watch on Namespaces and on each bound paramKind's
 * resource, create on SubjectAccessReviews when a bound policy reads `authorizer`, and get/list/watch
 * on the admission policy kinds when serve reads them from the cluster.
 *
 * There is no cluster here to ask discovery, so a paramKind's resource name comes from a table of
 * built-in kinds; any other kind gets the plural the API machinery guesses
 * (apimachinery/pkg/api/meta/restmapper.go UnsafeGuessKindToResource), with a note to check it
 * against the CRD's `spec.names.plural`.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import { splitApiVersion } from "../kube/kinds.ts";

export interface RbacOptions {
  /** The ClusterRole and ClusterRoleBinding name. */
  readonly name: string;
  readonly namespace: string;
  readonly serviceAccount: string;
  /** serve runs with --policies-from-cluster. */
  readonly policiesFromCluster?: boolean;
}

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

const READ = ["get", "list", "watch"] as const;

/** `group/Kind` → plural resource name, for the kinds Kubernetes itself serves. */
const BUILT_IN: Readonly<Record<string, string>> = {
  "/ConfigMap": "configmaps",
  "/Secret": "secrets",
  "/Namespace": "namespaces",
  "/Pod": "pods",
  "/Service": "services",
  "/ServiceAccount": "serviceaccounts",
  "/Node": "nodes",
  "/Endpoints": "endpoints",
  "/Event": "events",
  "/LimitRange": "limitranges",
  "/ResourceQuota": "resourcequotas",
  "/PersistentVolume": "persistentvolumes",
  "/PersistentVolumeClaim": "persistentvolumeclaims",
  "/PodTemplate": "podtemplates",
  "/ReplicationController": "replicationcontrollers",
  "apps/Deployment": "deployments",
  "apps/DaemonSet": "daemonsets",
  "apps/StatefulSet": "statefulsets",
  "apps/ReplicaSet": "replicasets",
  "batch/Job": "jobs",
  "batch/CronJob": "cronjobs",
  "networking.k8s.io/Ingress": "ingresses",
  "networking.k8s.io/IngressClass": "ingressclasses",
  "networking.k8s.io/NetworkPolicy": "networkpolicies",
  "rbac.authorization.k8s.io/Role": "roles",
  "rbac.authorization.k8s.io/RoleBinding": "rolebindings",
  "rbac.authorization.k8s.io/ClusterRole": "clusterroles",
  "rbac.authorization.k8s.io/ClusterRoleBinding": "clusterrolebindings",
  "storage.k8s.io/StorageClass": "storageclasses",
  "scheduling.k8s.io/PriorityClass": "priorityclasses",
  "policy/PodDisruptionBudget": "poddisruptionbudgets",
  "autoscaling/HorizontalPodAutoscaler": "horizontalpodautoscalers",
  "coordination.k8s.io/Lease": "leases",
  "apiextensions.k8s.io/CustomResourceDefinition": "customresourcedefinitions",
};

/**
 * UnsafeGuessKindToResource, rule for rule: lower-case; a name ending in "endpoints" stays as it
 * is, a final "s" takes "es", a final "y" becomes "ies" (even after a vowel: "Gateway" guesses
 * "gatewaies"), anything else takes "s".
 */
export function guessPlural(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith("endpoints")) return k;
  if (k.endsWith("s")) return `${k}es`;
  if (k.endsWith("y")) return `${k.slice(0, -1)}ies`;
  return k === "" ? k : `${k}s`;
}

export interface RbacResult {
  readonly documents: readonly Record<string, unknown>[];
  readonly rules: readonly PolicyRule[];
  readonly notes: readonly string[];
}

export function rbacRules(
  set: CompiledPolicySet,
  policiesFromCluster = false,
): { rules: PolicyRule[]; notes: string[] } {
  const notes: string[] = [];
  const byGroup = new Map<string, Set<string>>([["", new Set(["namespaces"])]]);
  for (const b of set.bindings) {
    const kind = b.policy.policy.paramKind;
    if (!kind || !b.binding.paramRef) continue;
    const { group } = splitApiVersion(kind.apiVersion);
    let resource = BUILT_IN[`${group}/${kind.kind}`];
    if (resource === undefined) {
      resource = guessPlural(kind.kind);
      notes.push(
        `paramKind ${kind.apiVersion} ${kind.kind}: resource '${resource}' is a guess; check it against the CRD's spec.names.plural`,
      );
    }
    const resources = byGroup.get(group) ?? new Set<string>();
    resources.add(resource);
    byGroup.set(group, resources);
  }
  const rules: PolicyRule[] = [...byGroup.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([group, resources]) => ({
      apiGroups: [group],
      resources: [...resources].sort(),
      verbs: [...READ],
    }));
  if (set.bindings.some((b) => b.policy.needs.authorizer || b.policy.needs.requestResource))
    rules.push({
      apiGroups: ["authorization.k8s.io"],
      resources: ["subjectaccessreviews"],
      verbs: ["create"],
    });
  if (policiesFromCluster)
    rules.push({
      apiGroups: ["admissionregistration.k8s.io"],
      resources: [
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
      ],
      verbs: [...READ],
    });
  return { rules, notes };
}

/** The ClusterRole and its ClusterRoleBinding to the ServiceAccount. */
export function rbacManifests(set: CompiledPolicySet, options: RbacOptions): RbacResult {
  const { rules, notes } = rbacRules(set, options.policiesFromCluster ?? false);
  const labels = { "app.kubernetes.io/name": options.name };
  return {
    rules,
    notes,
    documents: [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: options.name, labels },
        rules,
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: options.name, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: options.name },
        subjects: [{ kind: "ServiceAccount", name: options.serviceAccount, namespace: options.namespace }],
      },
    ],
  };
}
