/**
 * The batch/v1 kinds' defaults: kubernetes pkg/apis/batch/v1/defaults.go (SetDefaults_Job,
 * SetDefaults_CronJob, SetDefaults_PodFailurePolicyOnPodConditionsPattern), each followed, as the
 * generated SetObjectDefaults_* do, by the core defaults of the pod template. A CronJob's job template
 * is not a Job: it gets its pod template's and its pod failure policy's defaults, not SetDefaults_Job.
 *
 * JobPodReplacementPolicy is GA (locked on in 1.36, its gate gone from 1.37's SetDefaults_Job), so
 * every Job gets a podReplacementPolicy.
 */
import { podTemplateSpec } from "./core-pod.ts";
import { isObject, type Place, unset } from "./place.ts";

/** math.MaxInt32: the backoffLimit of a Job that counts failures per index. */
const MAX_INT32 = 2147483647;

/** SetDefaults_PodFailurePolicyOnPodConditionsPattern, on every rule's patterns. */
function podFailurePolicy(policy: Place | undefined): void {
  for (const rule of policy?.items("rules") ?? [])
    for (const pattern of rule.items("onPodConditions")) pattern.default("status", "True", unset.string);
}

/** SetObjectDefaults_Job. */
function job(j: Place): void {
  const spec = j.struct("spec");
  if (!spec) return;
  if (unset.pointer(spec.get("completions")) && unset.pointer(spec.get("parallelism"))) {
    spec.set("completions", 1);
    spec.set("parallelism", 1);
  }
  spec.default("parallelism", 1, unset.pointer);
  spec.default(
    "backoffLimit",
    unset.pointer(spec.get("backoffLimitPerIndex")) ? 6 : MAX_INT32,
    unset.pointer,
  );
  const labels = spec.pointer("template")?.pointer("metadata")?.get("labels");
  // An empty map would be copied as an empty map, which serializes as nothing.
  if (isObject(labels) && Object.keys(labels).length > 0) {
    const metadata = j.struct("metadata");
    if (metadata && unset.empty(metadata.get("labels"))) metadata.set("labels", structuredClone(labels));
  }
  spec.default("completionMode", "NonIndexed", unset.pointer);
  spec.default("suspend", false, unset.pointer);
  const failurePolicy = spec.pointer("podFailurePolicy");
  spec.default("podReplacementPolicy", failurePolicy ? "Failed" : "TerminatingOrFailed", unset.pointer);
  spec.default("manualSelector", false, unset.pointer);
  podTemplateSpec(spec.struct("template"));
  podFailurePolicy(failurePolicy);
}

/** SetObjectDefaults_CronJob. */
function cronJob(cj: Place): void {
  const spec = cj.struct("spec");
  if (!spec) return;
  spec.default("concurrencyPolicy", "Allow", unset.string);
  spec.default("suspend", false, unset.pointer);
  spec.default("successfulJobsHistoryLimit", 3, unset.pointer);
  spec.default("failedJobsHistoryLimit", 1, unset.pointer);
  const jobSpec = spec.struct("jobTemplate")?.struct("spec");
  podTemplateSpec(jobSpec?.struct("template"));
  podFailurePolicy(jobSpec?.pointer("podFailurePolicy"));
}

/** The batch/v1 kinds with defaults, by kind. */
export const BATCH_V1: Readonly<Record<string, (object: Place) => void>> = {
  CronJob: cronJob,
  Job: job,
};
