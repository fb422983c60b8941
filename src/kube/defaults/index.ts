/**
 * The defaults the API server applies to a built-in object when it decodes it, before admission:
 * what a ValidatingAdmissionPolicy, a MutatingAdmissionPolicy or a webhook sees in `object` (and, for
 * a stored object, in `oldObject`) in place of the manifest that was sent.
 *
 * Modelled on Kubernetes 1.37 (k8s.io/kubernetes v1.37.2 pkg/apis/{core,apps,batch,
 * networking,policy}/v1/defaults.go and zz_generated.defaults.go, with feature gates at their 1.37
 * defaults), for the kinds policies meet most: core Pod, PodTemplate, ReplicationController,
 * Service, Namespace, ConfigMap, Secret, PersistentVolumeClaim and Endpoints; apps Deployment,
 * StatefulSet, DaemonSet and ReplicaSet; batch Job and CronJob; networking NetworkPolicy, IngressClass
 * and Ingress; policy PodDisruptionBudget. Other kinds, other versions and custom resources are left
 * as they are.
 *
 * Offline only: the webhook receives objects the API server has already defaulted.
 */
import { DEFAULT_RELEASE } from "../../cel/index.ts";
import { APPS_V1 } from "./apps.ts";
import { BATCH_V1 } from "./batch.ts";
import { CORE_V1 } from "./core.ts";
import { NETWORKING_V1 } from "./networking.ts";
import { type DefaultedField, isObject, type JsonObject, Place } from "./place.ts";
import { POLICY_V1 } from "./policy.ts";

export type { DefaultedField };

/** The Kubernetes release whose defaults these are: the default release celgate models. */
export const DEFAULTS_RELEASE = DEFAULT_RELEASE;

/** The defaulters by apiVersion, then kind. A group listed with no kinds has none to apply. */
const DEFAULTERS: Readonly<Record<string, Readonly<Record<string, (object: Place) => void>>>> = {
  v1: CORE_V1,
  "apps/v1": APPS_V1,
  "batch/v1": BATCH_V1,
  "networking.k8s.io/v1": NETWORKING_V1,
  "policy/v1": POLICY_V1,
};

/** Whether celgate knows this kind's defaults (it may still have none to apply). */
export function hasDefaults(apiVersion: string, kind: string): boolean {
  return DEFAULTERS[apiVersion]?.[kind] !== undefined;
}

/**
 * Applies the API server's defaults to `object`, in place, and lists what they changed (nothing for a
 * kind without defaults). Never throws: a field of the wrong type is left for validation to reject.
 */
export function applyDefaults(object: JsonObject): DefaultedField[] {
  return defaultInPlace(object, undefined);
}

/**
 * `applyDefaults`, also giving each change's JSON Pointer (in the order of the changes), for a
 * caller that turns them into JSON Patch operations.
 */
export function applyDefaultsWithPointers(object: JsonObject): {
  readonly fields: DefaultedField[];
  readonly pointers: string[];
} {
  const pointers: string[] = [];
  return { fields: defaultInPlace(object, pointers), pointers };
}

function defaultInPlace(object: JsonObject, pointers: string[] | undefined): DefaultedField[] {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== "string" || typeof kind !== "string") return [];
  const defaulter = DEFAULTERS[apiVersion]?.[kind];
  if (!defaulter) return [];
  const changes: DefaultedField[] = [];
  defaulter(Place.root(object, changes, pointers));
  return changes;
}

/** A copy of `object` with the API server's defaults, and what they changed. */
export function withDefaults(object: JsonObject): { object: JsonObject; defaulted: DefaultedField[] } {
  const copy = structuredClone(object);
  return { object: copy, defaulted: isObject(copy) ? applyDefaults(copy) : [] };
}
