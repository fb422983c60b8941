/**
 * apps/v1 defaults: kubernetes pkg/apis/apps/v1/defaults.go, as SetObjectDefaults_* of
 * zz_generated.defaults.go call them (the workload's own function, then its pod template's), with the
 * feature gates of Kubernetes 1.37 (pkg/features/kube_features.go).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { withDefaults } from "../../../src/kube/defaults/index.ts";

type Json = Record<string, unknown>;

const workload = (kind: string, spec: Json) => ({
  apiVersion: "apps/v1",
  kind,
  metadata: { name: "w" },
  spec,
});
const TEMPLATE = { metadata: { labels: { app: "a" } }, spec: { containers: [{ name: "a", image: "a:1" }] } };
const spec = (o: Json) => o.spec as Json;
const templateSpec = (o: Json) => (spec(o).template as Json).spec as Json;

test("SetObjectDefaults_Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600, the template's defaults", () => {
  const { object } = withDefaults(
    workload("Deployment", { selector: { matchLabels: { app: "a" } }, template: structuredClone(TEMPLATE) }),
  );
  const s = spec(object);
  assert.equal(s.replicas, 1);
  assert.deepEqual(s.strategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" },
  });
  assert.equal(s.revisionHistoryLimit, 10);
  assert.equal(s.progressDeadlineSeconds, 600);
  const t = templateSpec(object);
  assert.equal(t.dnsPolicy, "ClusterFirst");
  assert.equal(t.enableServiceLinks, undefined); // SetDefaults_Pod is for pods, not templates
  assert.equal(((t.containers as Json[])[0] as Json).imagePullPolicy, "IfNotPresent");
});

test("SetDefaults_Deployment keeps what is set: replicas 0, Recreate without rollingUpdate, a partial rollingUpdate", () => {
  const recreate = withDefaults(
    workload("Deployment", { replicas: 0, strategy: { type: "Recreate" }, template: {} }),
  ).object;
  assert.equal(spec(recreate).replicas, 0);
  assert.deepEqual(spec(recreate).strategy, { type: "Recreate" });
  const partial = withDefaults(
    workload("Deployment", { strategy: { rollingUpdate: { maxSurge: 1 } } }),
  ).object;
  assert.deepEqual(spec(partial).strategy, {
    rollingUpdate: { maxSurge: 1, maxUnavailable: "25%" },
    type: "RollingUpdate",
  });
});

test("SetObjectDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10", () => {
  const { object } = withDefaults(workload("DaemonSet", { template: structuredClone(TEMPLATE) }));
  assert.deepEqual(spec(object).updateStrategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
  });
  assert.equal(spec(object).revisionHistoryLimit, 10);
  assert.equal(templateSpec(object).schedulerName, "default-scheduler");
  const onDelete = withDefaults(workload("DaemonSet", { updateStrategy: { type: "OnDelete" } })).object;
  assert.deepEqual(spec(onDelete).updateStrategy, { type: "OnDelete" });
});

// MaxUnavailableStatefulSet: beta, off by default, in 1.35 and 1.36; on by default from 1.37
// (kube_features.go), and then SetDefaults_StatefulSet gives a rolling update maxUnavailable 1.
test("SetObjectDefaults_StatefulSet (1.37: MaxUnavailableStatefulSet on, StatefulSetAutoDeletePVC GA)", () => {
  const { object } = withDefaults(
    workload("StatefulSet", {
      serviceName: "s",
      template: structuredClone(TEMPLATE),
      volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } }],
    }),
  );
  const s = spec(object);
  assert.equal(s.podManagementPolicy, "OrderedReady");
  assert.deepEqual(s.updateStrategy, {
    type: "RollingUpdate",
    rollingUpdate: { partition: 0, maxUnavailable: 1 },
  });
  assert.deepEqual(s.persistentVolumeClaimRetentionPolicy, { whenDeleted: "Retain", whenScaled: "Retain" });
  assert.equal(s.replicas, 1);
  assert.equal(s.revisionHistoryLimit, 10);
  assert.equal(templateSpec(object).restartPolicy, "Always");
  // SetDefaults_PersistentVolumeClaim and SetDefaults_PersistentVolumeClaimSpec on each claim template.
  assert.deepEqual(s.volumeClaimTemplates, [
    {
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], volumeMode: "Filesystem" },
      status: { phase: "Pending" },
    },
  ]);
});

test("SetDefaults_StatefulSet: rollingUpdate is made only with a defaulted type; a given one gets its partition", () => {
  const given = withDefaults(workload("StatefulSet", { updateStrategy: { type: "RollingUpdate" } })).object;
  assert.deepEqual(spec(given).updateStrategy, { type: "RollingUpdate" });
  const withPartition = withDefaults(
    workload("StatefulSet", { updateStrategy: { type: "RollingUpdate", rollingUpdate: {} } }),
  ).object;
  assert.deepEqual(spec(withPartition).updateStrategy, {
    type: "RollingUpdate",
    rollingUpdate: { partition: 0, maxUnavailable: 1 },
  });
  const kept = withDefaults(
    workload("StatefulSet", {
      updateStrategy: { rollingUpdate: { partition: 2 } },
      podManagementPolicy: "Parallel",
    }),
  ).object;
  assert.deepEqual(spec(kept).updateStrategy, {
    rollingUpdate: { partition: 2, maxUnavailable: 1 },
    type: "RollingUpdate",
  });
  const written = withDefaults(
    workload("StatefulSet", { updateStrategy: { rollingUpdate: { maxUnavailable: "50%" } } }),
  ).object;
  assert.deepEqual(spec(written).updateStrategy, {
    rollingUpdate: { maxUnavailable: "50%", partition: 0 },
    type: "RollingUpdate",
  });
  assert.equal(spec(kept).podManagementPolicy, "Parallel");
  const onDelete = withDefaults(workload("StatefulSet", { updateStrategy: { type: "OnDelete" } })).object;
  assert.deepEqual(spec(onDelete).updateStrategy, { type: "OnDelete" });
});

test("SetObjectDefaults_ReplicaSet: replicas 1 and the template's defaults", () => {
  const { object } = withDefaults(workload("ReplicaSet", { template: structuredClone(TEMPLATE) }));
  assert.equal(spec(object).replicas, 1);
  assert.equal(templateSpec(object).terminationGracePeriodSeconds, 30);
});

test("other apps versions are not defaulted: only apps/v1 is served", () => {
  const beta = { apiVersion: "apps/v1beta1", kind: "Deployment", spec: {} };
  assert.deepEqual(withDefaults(beta), { object: beta, defaulted: [] });
});
