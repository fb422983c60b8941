/**
 * The RBAC a cluster-connected `celgate serve` needs, derived from the loaded policies so that it
 * stays as narrow as they allow: get/list/watch on Namespaces and on each bound paramKind's
 * resource, create on SubjectAccessReviews when a bound policy reads `authorizer`, and get/list/watch
 * on the admission policy kinds when serve reads them from the cluster.
 *
 * Each rule comes with why it is there: which policies need it, and what serve then caches (every
 * object of a paramKind's resource, cluster-wide, on every replica), so the cost of a policy is seen
 * where its rights are granted. `base: false` leaves out what every serve needs (Namespaces, and its
 * own webhook configurations), for the ClusterRole of one opt-in policy set in deploy/library.
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
  /** serve runs with --register-webhooks: the name of its two webhook configurations. */
  readonly registerWebhooks?: string;
  /** Include what every serve needs (Namespaces, the webhook configurations); default true. */
  readonly base?: boolean;
}

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
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
  /** Why each rule is there (same order as `rules`): one line per need. */
  readonly reasons: readonly (readonly string[])[];
  readonly notes: readonly string[];
}

export interface RbacRuleOptions {
  readonly policiesFromCluster?: boolean;
  readonly registerWebhooks?: string;
  readonly base?: boolean;
}

const NAMESPACES_REASON =
  "Namespaces: every namespaceSelector and namespaceObject; serve caches every Namespace (list and watch)";

function names(list: Iterable<string>): string {
  return [...new Set(list)].sort().join(", ");
}

/** The resource of each bound paramKind, by group, with the policies that read it. */
function paramResources(set: CompiledPolicySet, notes: string[]): Map<string, Map<string, Set<string>>> {
  const byGroup = new Map<string, Map<string, Set<string>>>();
  for (const b of set.bindings) {
    const kind = b.policy.policy.paramKind;
    if (!kind || !b.binding.paramRef) continue;
    const { group } = splitApiVersion(kind.apiVersion);
    let resource = BUILT_IN[`${group}/${kind.kind}`];
    if (resource === undefined) {
      resource = guessPlural(kind.kind);
      const note = `paramKind ${kind.apiVersion} ${kind.kind}: resource '${resource}' is a guess; check it against the CRD's spec.names.plural`;
      if (!notes.includes(note)) notes.push(note);
    }
    const resources = byGroup.get(group) ?? new Map<string, Set<string>>();
    const users = resources.get(resource) ?? new Set<string>();
    users.add(b.policy.name);
    resources.set(resource, users);
    byGroup.set(group, resources);
  }
  return byGroup;
}

/** The rules, each with why it is there; see rbacManifests. */
export function rbacRules(
  set: CompiledPolicySet,
  policiesFromCluster = false,
  options: RbacRuleOptions = {},
): { rules: PolicyRule[]; reasons: string[][]; notes: string[] } {
  const notes: string[] = [];
  const base = options.base ?? true;
  const byGroup = paramResources(set, notes);
  if (base) {
    const core = byGroup.get("") ?? new Map<string, Set<string>>();
    if (!core.has("namespaces")) core.set("namespaces", new Set());
    byGroup.set("", core);
  }
  const rules: PolicyRule[] = [];
  const reasons: string[][] = [];
  for (const [group, resources] of [...byGroup.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const sorted = [...resources.keys()].sort();
    rules.push({ apiGroups: [group], resources: sorted, verbs: [...READ] });
    reasons.push(
      sorted.map((r) => {
        const users = resources.get(r) ?? new Set<string>();
        const params =
          users.size > 0
            ? `params of ${names(users)}: serve caches all ${r} in the cluster (list and watch), on each replica`
            : "";
        if (group === "" && r === "namespaces" && base)
          return params === "" ? NAMESPACES_REASON : `${NAMESPACES_REASON}; ${params}`;
        return params;
      }),
    );
  }
  const authorizers = set.bindings.filter((b) => b.policy.needs.authorizer || b.policy.needs.requestResource);
  if (authorizers.length > 0) {
    rules.push({
      apiGroups: ["authorization.k8s.io"],
      resources: ["subjectaccessreviews"],
      verbs: ["create"],
    });
    reasons.push([
      `authorizer checks of ${names(authorizers.map((b) => b.policy.name))}: one SubjectAccessReview per check its cache cannot answer`,
    ]);
  }
  if (base && options.registerWebhooks !== undefined) {
    rules.push({
      apiGroups: ["admissionregistration.k8s.io"],
      resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
      resourceNames: [options.registerWebhooks],
      verbs: ["get", "update"],
    });
    reasons.push([
      "--register-webhooks: serve writes its own two webhook configurations, by name, nothing cached; create is not granted (it cannot be limited to a name): apply them first, empty, as deploy/ does",
    ]);
  }
  if (policiesFromCluster) {
    reasons.push(["--policies-from-cluster: serve caches the cluster's admission policies and bindings"]);
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
  }
  return { rules, reasons, notes };
}

/** The ClusterRole and its ClusterRoleBinding to the ServiceAccount. */
export function rbacManifests(set: CompiledPolicySet, options: RbacOptions): RbacResult {
  const { rules, reasons, notes } = rbacRules(set, options.policiesFromCluster ?? false, {
    ...(options.registerWebhooks !== undefined ? { registerWebhooks: options.registerWebhooks } : {}),
    ...(options.base !== undefined ? { base: options.base } : {}),
  });
  const labels = { "app.kubernetes.io/name": "celgate" };
  return {
    rules,
    reasons,
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
