/**
 * The apps/v1 kinds' defaults: kubernetes pkg/apis/apps/v1/defaults.go (SetDefaults_Deployment,
 * SetDefaults_DaemonSet, SetDefaults_StatefulSet, SetDefaults_ReplicaSet), each followed, as the
 * generated SetObjectDefaults_* do, by the core defaults of the pod template (and, for a
 * StatefulSet, of its volume claim templates).
 *
 * Feature gates as Kubernetes 1.37 ships them (pkg/features/kube_features.go): MaxUnavailableStatefulSet
 * is on (beta, on by default from 1.37; off before), so a StatefulSet's rolling update gets
 * `maxUnavailable: 1`; StatefulSetAutoDeletePVC is GA, so every StatefulSet gets a PVC retention policy.
 */
import { persistentVolumeClaim } from "./core.ts";
import { podTemplateSpec } from "./core-pod.ts";
import { type Place, unset } from "./place.ts";

/** SetObjectDefaults_Deployment. */
function deployment(d: Place): void {
  const spec = d.struct("spec");
  if (!spec) return;
  spec.default("replicas", 1, unset.pointer);
  const strategy = spec.struct("strategy");
  strategy?.default("type", "RollingUpdate", unset.string);
  if (strategy?.get("type") === "RollingUpdate") {
    const rollingUpdate = strategy.struct("rollingUpdate");
    rollingUpdate?.default("maxUnavailable", "25%", unset.pointer);
    rollingUpdate?.default("maxSurge", "25%", unset.pointer);
  }
  spec.default("revisionHistoryLimit", 10, unset.pointer);
  spec.default("progressDeadlineSeconds", 600, unset.pointer);
  podTemplateSpec(spec.struct("template"));
}

/** SetObjectDefaults_DaemonSet. */
function daemonSet(ds: Place): void {
  const spec = ds.struct("spec");
  if (!spec) return;
  const strategy = spec.struct("updateStrategy");
  strategy?.default("type", "RollingUpdate", unset.string);
  if (strategy?.get("type") === "RollingUpdate") {
    const rollingUpdate = strategy.struct("rollingUpdate");
    rollingUpdate?.default("maxUnavailable", 1, unset.pointer);
    rollingUpdate?.default("maxSurge", 0, unset.pointer);
  }
  spec.default("revisionHistoryLimit", 10, unset.pointer);
  podTemplateSpec(spec.struct("template"));
}

/** SetObjectDefaults_StatefulSet. */
function statefulSet(ss: Place): void {
  const spec = ss.struct("spec");
  if (!spec) return;
  spec.default("podManagementPolicy", "OrderedReady", unset.empty);
  const strategy = spec.struct("updateStrategy");
  // SetDefaults_StatefulSet makes an empty rollingUpdate only along with a defaulted type; a nil one
  // next to a type written out stays nil.
  const typeDefaulted = strategy?.default("type", "RollingUpdate", unset.string) ?? false;
  if (strategy?.get("type") === "RollingUpdate") {
    const rollingUpdate = typeDefaulted
      ? strategy.struct("rollingUpdate")
      : strategy.pointer("rollingUpdate");
    rollingUpdate?.default("partition", 0, unset.pointer);
    rollingUpdate?.default("maxUnavailable", 1, unset.pointer); // MaxUnavailableStatefulSet
  }
  const retention = spec.struct("persistentVolumeClaimRetentionPolicy");
  retention?.default("whenDeleted", "Retain", unset.empty);
  retention?.default("whenScaled", "Retain", unset.empty);
  spec.default("replicas", 1, unset.pointer);
  spec.default("revisionHistoryLimit", 10, unset.pointer);
  podTemplateSpec(spec.struct("template"));
  for (const claim of spec.items("volumeClaimTemplates")) persistentVolumeClaim(claim);
}

/** SetObjectDefaults_ReplicaSet. */
function replicaSet(rs: Place): void {
  const spec = rs.struct("spec");
  if (!spec) return;
  spec.default("replicas", 1, unset.pointer);
  podTemplateSpec(spec.struct("template"));
}

/** The apps/v1 kinds with defaults, by kind. */
export const APPS_V1: Readonly<Record<string, (object: Place) => void>> = {
  DaemonSet: daemonSet,
  Deployment: deployment,
  ReplicaSet: replicaSet,
  StatefulSet: statefulSet,
};
