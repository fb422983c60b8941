/**
 * batch/v1 defaults: kubernetes pkg/apis/batch/v1/defaults.go (SetDefaults_Job, SetDefaults_CronJob,
 * SetDefaults_PodFailurePolicyOnPodConditionsPattern) with the pod template's core defaults, as the
 * generated SetObjectDefaults_Job and SetObjectDefaults_CronJob call them (Kubernetes 1.36).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { withDefaults } from "../../../src/kube/defaults/index.ts";

type Json = Record<string, unknown>;

const job = (spec: Json, metadata: Json = { name: "j" }) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata,
  spec,
});
const TEMPLATE = {
  metadata: { labels: { app: "a" } },
  spec: { restartPolicy: "Never", containers: [{ name: "a", image: "a:1" }] },
};

test("SetObjectDefaults_Job on a plain job", () => {
  const { object } = withDefaults(job({ template: structuredClone(TEMPLATE) }));
  const spec = object.spec as Json;
  assert.equal(spec.completions, 1);
  assert.equal(spec.parallelism, 1);
  assert.equal(spec.backoffLimit, 6);
  assert.equal(spec.completionMode, "NonIndexed");
  assert.equal(spec.suspend, false);
  assert.equal(spec.podReplacementPolicy, "TerminatingOrFailed"); // JobPodReplacementPolicy: GA
  assert.equal(spec.manualSelector, false);
  // The template's labels become the Job's when it has none.
  assert.deepEqual((object.metadata as Json).labels, { app: "a" });
  const t = (spec.template as Json).spec as Json;
  assert.equal(t.restartPolicy, "Never");
  assert.equal(t.dnsPolicy, "ClusterFirst");
});

test("SetDefaults_Job: parallel jobs, per-index backoff, a pod failure policy, labels already set", () => {
  const parallel = withDefaults(job({ parallelism: 3, template: {} })).object.spec as Json;
  assert.equal(parallel.completions, undefined);
  assert.equal(parallel.parallelism, 3);
  const completions = withDefaults(job({ completions: 5, template: {} })).object.spec as Json;
  assert.equal(completions.completions, 5);
  assert.equal(completions.parallelism, 1);
  const perIndex = withDefaults(
    job({ completionMode: "Indexed", completions: 2, backoffLimitPerIndex: 1, template: {} }),
  ).object.spec as Json;
  assert.equal(perIndex.backoffLimit, 2147483647);
  assert.equal(perIndex.completionMode, "Indexed");
  const failurePolicy = withDefaults(
    job({
      template: {},
      podFailurePolicy: {
        rules: [
          {
            action: "Ignore",
            onPodConditions: [{ type: "DisruptionTarget" }, { type: "X", status: "False" }],
          },
        ],
      },
    }),
  ).object.spec as Json;
  assert.equal(failurePolicy.podReplacementPolicy, "Failed");
  // SetDefaults_PodFailurePolicyOnPodConditionsPattern.
  assert.deepEqual((failurePolicy.podFailurePolicy as Json).rules, [
    {
      action: "Ignore",
      onPodConditions: [
        { type: "DisruptionTarget", status: "True" },
        { type: "X", status: "False" },
      ],
    },
  ]);
  const labelled = withDefaults(
    job({ template: structuredClone(TEMPLATE) }, { name: "j", labels: { team: "t" } }),
  ).object;
  assert.deepEqual((labelled.metadata as Json).labels, { team: "t" });
});

test("SetObjectDefaults_CronJob: its own defaults and its pod template's; its job template is not a Job", () => {
  const { object } = withDefaults({
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: { name: "c" },
    spec: {
      schedule: "* * * * *",
      jobTemplate: {
        spec: {
          template: structuredClone(TEMPLATE),
          podFailurePolicy: {
            rules: [{ action: "FailJob", onPodConditions: [{ type: "DisruptionTarget" }] }],
          },
        },
      },
    },
  });
  const spec = object.spec as Json;
  assert.equal(spec.concurrencyPolicy, "Allow");
  assert.equal(spec.suspend, false);
  assert.equal(spec.successfulJobsHistoryLimit, 3);
  assert.equal(spec.failedJobsHistoryLimit, 1);
  const jobSpec = (spec.jobTemplate as Json).spec as Json;
  assert.equal(jobSpec.backoffLimit, undefined);
  assert.equal(jobSpec.completions, undefined);
  assert.equal(((jobSpec.template as Json).spec as Json).schedulerName, "default-scheduler");
  assert.deepEqual(((jobSpec.podFailurePolicy as Json).rules as Json[])[0], {
    action: "FailJob",
    onPodConditions: [{ type: "DisruptionTarget", status: "True" }],
  });
});
