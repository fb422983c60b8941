/**
 * Whether a kind lives in a namespace, as the API server's REST mapping says: what decides where a
 * request's objects go and where a binding's params are looked up (the generic policy dispatcher's
 * `CollectParams` reads the param kind's `meta.RESTScope`).
 *
 * Offline there is no discovery: a built-in group's kinds are in kinds.ts's table, a custom
 * resource's scope is its CustomResourceDefinition's `spec.scope` when one is among the files read,
 * and any other kind is taken to be namespaced, which the caller says it did (`source: "assumed"`).
 */
import { isClusterScopedKind, splitApiVersion } from "./kinds.ts";

export type Scope = "Namespaced" | "Cluster";

/** A kind's scope and where celgate learnt it. */
export interface KindScope {
  readonly scope: Scope;
  /**
   * The built-in API's table, a CustomResourceDefinition read with the policies, a cluster's
   * discovery (a cluster-connected serve), or an assumption.
   */
  readonly source: "built-in" | "crd" | "served" | "assumed";
}

/**
 * The API groups the API server serves itself (Kubernetes 1.37, kube-aggregator's APIService and
 * apiextensions' CustomResourceDefinition included; 1.37 adds lifecycle.k8s.io). A kind of another group is a custom resource.
 */
const BUILT_IN_GROUPS: ReadonlySet<string> = new Set([
  "",
  "admissionregistration.k8s.io",
  "apiextensions.k8s.io",
  "apiregistration.k8s.io",
  "apps",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "autoscaling",
  "batch",
  "certificates.k8s.io",
  "coordination.k8s.io",
  "discovery.k8s.io",
  "events.k8s.io",
  "extensions",
  "flowcontrol.apiserver.k8s.io",
  "internal.apiserver.k8s.io",
  "lifecycle.k8s.io",
  "networking.k8s.io",
  "node.k8s.io",
  "policy",
  "rbac.authorization.k8s.io",
  "resource.k8s.io",
  "scheduling.k8s.io",
  "storage.k8s.io",
  "storagemigration.k8s.io",
]);

export function isBuiltInGroup(group: string): boolean {
  return BUILT_IN_GROUPS.has(group);
}

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const BUILT_IN_NAMESPACED: KindScope = Object.freeze({ scope: "Namespaced", source: "built-in" });
const BUILT_IN_CLUSTER: KindScope = Object.freeze({ scope: "Cluster", source: "built-in" });
const CRD_NAMESPACED: KindScope = Object.freeze({ scope: "Namespaced", source: "crd" });
const CRD_CLUSTER: KindScope = Object.freeze({ scope: "Cluster", source: "crd" });
const ASSUMED: KindScope = Object.freeze({ scope: "Namespaced", source: "assumed" });

/** The kinds' scopes: the built-in API's, and those of the CustomResourceDefinitions given. */
export class KindScopes {
  private constructor(private readonly crds: ReadonlyMap<string, Scope>) {}

  /**
   * From the objects read with the policies: every apiextensions.k8s.io CustomResourceDefinition
   * among them names its group, kind and scope (`spec.group`, `spec.names.kind`, `spec.scope`).
   */
  static from(objects: Iterable<unknown>): KindScopes {
    const crds = new Map<string, Scope>();
    for (const o of objects) {
      if (!isObject(o) || o.kind !== "CustomResourceDefinition") continue;
      if (typeof o.apiVersion !== "string" || !o.apiVersion.startsWith("apiextensions.k8s.io/")) continue;
      const spec = o.spec;
      if (!isObject(spec) || typeof spec.group !== "string" || !isObject(spec.names)) continue;
      const kind = spec.names.kind;
      if (typeof kind !== "string" || (spec.scope !== "Namespaced" && spec.scope !== "Cluster")) continue;
      crds.set(`${spec.group}/${kind}`, spec.scope);
    }
    return new KindScopes(crds);
  }

  /** Only the built-in API: every custom resource is assumed namespaced. */
  static readonly BUILT_IN: KindScopes = new KindScopes(new Map());

  /** The scope of `kind` in `apiVersion`'s group. */
  of(apiVersion: string, kind: string): KindScope {
    const { group } = splitApiVersion(apiVersion);
    const crd = this.crds.get(`${group}/${kind}`);
    if (crd !== undefined) return crd === "Cluster" ? CRD_CLUSTER : CRD_NAMESPACED;
    if (isBuiltInGroup(group)) return isClusterScopedKind(kind) ? BUILT_IN_CLUSTER : BUILT_IN_NAMESPACED;
    return ASSUMED;
  }
}
