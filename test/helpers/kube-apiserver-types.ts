/**
 * The test API server's vocabulary: the object and resource types it serves, the built-in kinds it
 * knows from the start, SubjectAccessReview attributes and answers, and the `Status` body of its
 * errors (metav1.Status, as the API server writes it).
 */
export type KubeObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
};

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The plural resource name, as discovery lists it. */
  readonly plural: string;
  readonly namespaced: boolean;
  /** Built-in kinds are listed without apiVersion/kind on their items. */
  readonly builtIn?: boolean;
}

export interface SarAttributes {
  readonly user: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  readonly extra?: Record<string, readonly string[]>;
  readonly resourceAttributes?: SarResourceAttributes;
  readonly nonResourceAttributes?: Record<string, string>;
}

/** authorization/v1 ResourceAttributes: strings, and the selectors (v1.31+) as objects. */
export interface SarResourceAttributes {
  readonly verb?: string;
  readonly version?: string;
  readonly group?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly fieldSelector?: { readonly rawSelector?: string; readonly requirements?: unknown[] };
  readonly labelSelector?: { readonly rawSelector?: string; readonly requirements?: unknown[] };
}

export interface SarStatus {
  readonly allowed: boolean;
  readonly denied?: boolean;
  readonly reason?: string;
  readonly evaluationError?: string;
}

export const BUILT_IN: readonly ResourceType[] = [
  { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false, builtIn: true },
  { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true, builtIn: true },
  { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true, builtIn: true },
  {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    namespaced: true,
    builtIn: true,
  },
  ...(["v1", "v1beta1"] as const).flatMap((version) =>
    (
      [
        ["ValidatingAdmissionPolicy", "validatingadmissionpolicies"],
        ["ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings"],
      ] as const
    ).map(([kind, plural]) => ({
      group: "admissionregistration.k8s.io",
      version,
      kind,
      plural,
      namespaced: false,
      builtIn: true,
    })),
  ),
  ...(
    [
      ["MutatingAdmissionPolicy", "mutatingadmissionpolicies"],
      ["MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings"],
    ] as const
  ).map(([kind, plural]) => ({
    group: "admissionregistration.k8s.io",
    version: "v1beta1",
    kind,
    plural,
    namespaced: false,
    builtIn: true,
  })),
  ...(
    [
      ["ValidatingWebhookConfiguration", "validatingwebhookconfigurations"],
      ["MutatingWebhookConfiguration", "mutatingwebhookconfigurations"],
    ] as const
  ).map(([kind, plural]) => ({
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind,
    plural,
    namespaced: false,
    builtIn: true,
  })),
];

export function apiVersionOf(t: ResourceType): string {
  return t.group === "" ? t.version : `${t.group}/${t.version}`;
}

/** metav1.StatusDetails: what a Status says about the object it is about. */
export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  /** The resource (plural), as apierrors writes it, not the kind. */
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly { readonly reason: string; readonly message: string; readonly field: string }[];
}

/**
 * A failure Status as the API server writes it; `details` when the error names a resource
 * (apimachinery/pkg/api/errors: NewNotFound, NewForbidden, NewAlreadyExists, NewConflict,
 * NewInvalid), `{}` for a path that names none (a 404 of an unknown resource), absent otherwise.
 */
export function status(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): Record<string, unknown> {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    ...(details !== undefined ? { details } : {}),
    code,
  };
}

/** The details of an error about the object `name` of `plural` in `group` (group left out when ""). */
export function detailsOf(plural: string, group: string, name?: string): StatusDetails {
  return { ...(name !== undefined ? { name } : {}), ...(group !== "" ? { group } : {}), kind: plural };
}
