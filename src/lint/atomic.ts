/**
 * Atomic fields in an ApplyConfiguration. The API server refuses an apply configuration that sets a
 * list, map or struct its schema marks atomic ("invalid ApplyConfiguration: may not mutate atomic
 * arrays, maps or structs", k8s.io/apiserver .../policy/mutating/patch/smd.go validatePatch):
 * setting one would silently drop what the object had there. The mutation then fails, which under
 * failurePolicy Ignore means it silently does nothing.
 *
 * We have no OpenAPI schemas offline, so the atomic fields are listed by name: those that are
 * atomic wherever the name appears in core/v1, apps/v1 and batch/v1 (k8s.io/api types.go markers
 * `+listType=atomic`, `+mapType=atomic`, and fields whose type is `+structType=atomic`, with
 * metav1.LabelSelector). A name that is atomic in some types and not others (`ports`, `items`,
 * `finalizers` outside metadata) is left out, so this never reports a field that is not atomic, but
 * may miss one that is. `metadata` is never walked: its lists and maps merge.
 */

export const ATOMIC_FIELDS: ReadonlySet<string> = new Set([
  "accessModes",
  "add",
  "args",
  "claimRef",
  "clusterIPs",
  "command",
  "configMapKeyRef",
  "controllerExpandSecretRef",
  "controllerPublishSecretRef",
  "dataSource",
  "drop",
  "envFrom",
  "externalIPs",
  "fieldRef",
  "fileKeyRef",
  "hostIPs",
  "hostnames",
  "httpHeaders",
  "ipFamilies",
  "labelSelector",
  "loadBalancerSourceRanges",
  "matchExpressions",
  "matchFields",
  "matchLabelExpressions",
  "matchLabelKeys",
  "mismatchLabelKeys",
  "monitors",
  "mountOptions",
  "nameservers",
  "namespaceSelector",
  "namespaces",
  "nodeExpandSecretRef",
  "nodePublishSecretRef",
  "nodeSelector",
  "nodeSelectorTerms",
  "nodeStageSecretRef",
  "onPodConditions",
  "portals",
  "preference",
  "preferredDuringSchedulingIgnoredDuringExecution",
  "readinessGates",
  "required",
  "requiredDuringSchedulingIgnoredDuringExecution",
  "resizePolicy",
  "resourceFieldRef",
  "restartPolicyRules",
  "scopeSelector",
  "scopes",
  "searches",
  "secretKeyRef",
  "selector",
  "sources",
  "supplementalGroups",
  "sysctls",
  "taints",
  "targetWWNs",
  "tolerations",
  "volumeClaimTemplates",
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The field paths of an apply configuration that set an atomic field, as the API server names them. */
export function atomicPaths(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        walk(item, `${path}[${i}]`);
      });
      return;
    }
    if (!isObject(v)) return;
    for (const [k, child] of Object.entries(v)) {
      if (path === "" && (k === "metadata" || k === "apiVersion" || k === "kind")) continue;
      const p = `${path}.${k}`;
      if (ATOMIC_FIELDS.has(k) && (Array.isArray(child) || isObject(child))) out.push(p);
      else walk(child, p);
    }
  };
  walk(value, "");
  return out;
}
