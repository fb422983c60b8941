/**
 * The core/v1 defaults of a pod and of every pod template: kubernetes pkg/apis/core/v1/defaults.go
 * (SetDefaults_Pod, SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_Volume, ...) walked in
 * the order the generated SetObjectDefaults_Pod and SetObjectDefaults_PodTemplate of
 * zz_generated.defaults.go walk them, with the `+default` markers of k8s.io/api core/v1/types.go.
 *
 * Not modelled: SetDefaults_ResourceList (quantities rounded up to milli-units; values are left as
 * written) and the pod-level resource defaults of the PodLevelResources feature (defaultPodRequests,
 * defaultPodLimits, defaultHugePagePodLimits), which sum container quantities and apply only when
 * `spec.resources` is set.
 */
import { defaultPullPolicy } from "./image.ts";
import { type Place, unset } from "./place.ts";

/** v1.SecretVolumeSourceDefaultMode and its ConfigMap, DownwardAPI and Projected twins: 0644. */
const VOLUME_DEFAULT_MODE = 0o644;

/** SetDefaults_HTTPGetAction. */
function httpGetAction(action: Place | undefined): void {
  if (!action) return;
  action.default("path", "/", unset.string);
  action.default("scheme", "HTTP", unset.string);
}

/** SetDefaults_Probe, then its handlers: httpGet, and grpc's `+default=""` service. */
function probe(p: Place | undefined): void {
  if (!p) return;
  p.default("timeoutSeconds", 1, unset.integer);
  p.default("periodSeconds", 10, unset.integer);
  p.default("successThreshold", 1, unset.integer);
  p.default("failureThreshold", 3, unset.integer);
  httpGetAction(p.pointer("httpGet"));
  p.pointer("grpc")?.default("service", "", unset.pointer);
}

/** SetDefaults_Container, then the container's ports, env, probes and lifecycle hooks. */
function container(c: Place): void {
  const image = c.get("image");
  c.default("imagePullPolicy", defaultPullPolicy(typeof image === "string" ? image : ""), unset.string);
  c.default("terminationMessagePath", "/dev/termination-log", unset.string);
  c.default("terminationMessagePolicy", "File", unset.string);
  // ContainerPort.Protocol: +default="TCP".
  for (const port of c.items("ports")) port.default("protocol", "TCP", unset.string);
  for (const env of c.items("env")) {
    const from = env.pointer("valueFrom");
    from?.pointer("fieldRef")?.default("apiVersion", "v1", unset.string); // SetDefaults_ObjectFieldSelector
    from?.pointer("fileKeyRef")?.default("optional", false, unset.pointer); // FileKeySelector.Optional: +default=false
  }
  probe(c.pointer("livenessProbe"));
  probe(c.pointer("readinessProbe"));
  probe(c.pointer("startupProbe"));
  const lifecycle = c.pointer("lifecycle");
  httpGetAction(lifecycle?.pointer("postStart")?.pointer("httpGet"));
  httpGetAction(lifecycle?.pointer("preStop")?.pointer("httpGet"));
}

/** SetDefaults_PersistentVolumeClaimSpec. */
export function persistentVolumeClaimSpec(spec: Place | undefined): void {
  spec?.default("volumeMode", "Filesystem", unset.pointer);
}

/** The volume sources' defaults: functions of defaults.go and `+default` markers of types.go. */
function volumeSources(v: Place): void {
  v.pointer("hostPath")?.default("type", "", unset.pointer); // SetDefaults_HostPathVolumeSource: HostPathUnset
  v.pointer("secret")?.default("defaultMode", VOLUME_DEFAULT_MODE, unset.pointer);
  v.pointer("iscsi")?.default("iscsiInterface", "default", unset.string);
  const rbd = v.pointer("rbd");
  rbd?.default("pool", "rbd", unset.string);
  rbd?.default("user", "admin", unset.string);
  rbd?.default("keyring", "/etc/ceph/keyring", unset.string);
  const downwardAPI = v.pointer("downwardAPI");
  downwardAPI?.default("defaultMode", VOLUME_DEFAULT_MODE, unset.pointer);
  for (const item of downwardAPI?.items("items") ?? [])
    item.pointer("fieldRef")?.default("apiVersion", "v1", unset.string);
  v.pointer("configMap")?.default("defaultMode", VOLUME_DEFAULT_MODE, unset.pointer);
  const azureDisk = v.pointer("azureDisk");
  azureDisk?.default("cachingMode", "ReadWrite", unset.pointer);
  azureDisk?.default("fsType", "ext4", unset.pointer);
  azureDisk?.default("readOnly", false, unset.pointer);
  azureDisk?.default("kind", "Shared", unset.pointer);
  const projected = v.pointer("projected");
  projected?.default("defaultMode", VOLUME_DEFAULT_MODE, unset.pointer);
  for (const source of projected?.items("sources") ?? []) {
    for (const item of source.pointer("downwardAPI")?.items("items") ?? [])
      item.pointer("fieldRef")?.default("apiVersion", "v1", unset.string);
    source.pointer("serviceAccountToken")?.default("expirationSeconds", 3600, unset.pointer);
  }
  const scaleIO = v.pointer("scaleIO");
  scaleIO?.default("storageMode", "ThinProvisioned", unset.string);
  scaleIO?.default("fsType", "xfs", unset.string);
  persistentVolumeClaimSpec(v.pointer("ephemeral")?.pointer("volumeClaimTemplate")?.struct("spec"));
}

/**
 * SetDefaults_Volume: a volume without a source is an emptyDir (every VolumeSource field is a
 * pointer, so "no source" is no field but the name); an image volume without a pull policy gets the
 * one its tag implies (ImageVolume, on by default since 1.33).
 */
function volume(v: Place): void {
  if (!v.keys().some((key) => key !== "name" && v.get(key) !== null)) v.set("emptyDir", {});
  const image = v.pointer("image");
  if (image && unset.string(image.get("pullPolicy"))) {
    const reference = image.get("reference");
    image.set("pullPolicy", defaultPullPolicy(typeof reference === "string" ? reference : ""));
  }
  volumeSources(v);
}

/**
 * SetDefaults_PodSpec, then every volume and container: what SetObjectDefaults_PodTemplate (and every
 * workload's generated defaulter) does to a pod template's spec.
 */
export function podSpec(spec: Place | undefined): void {
  if (!spec) return;
  // `serviceAccount` is the deprecated alias of `serviceAccountName`: the two are made equal, the
  // latter winning (1.37 moved this from conversion into SetDefaults_PodSpec).
  const name = spec.get("serviceAccountName");
  const alias = spec.get("serviceAccount");
  if (unset.string(name) && !unset.string(alias)) spec.set("serviceAccountName", alias);
  const synced = spec.get("serviceAccountName");
  if (!unset.string(synced) && alias !== synced) spec.set("serviceAccount", synced);
  spec.default("dnsPolicy", "ClusterFirst", unset.string);
  spec.default("restartPolicy", "Always", unset.string);
  spec.default("securityContext", {}, unset.pointer);
  spec.default("terminationGracePeriodSeconds", 30, unset.pointer);
  spec.default("schedulerName", "default-scheduler", unset.string);
  for (const v of spec.items("volumes")) volume(v);
  for (const c of spec.items("initContainers")) container(c);
  for (const c of spec.items("containers")) container(c);
  for (const c of spec.items("ephemeralContainers")) container(c);
}

/** A pod template (`spec.template` of every workload): its spec's defaults; its metadata has none. */
export function podTemplateSpec(template: Place | undefined): void {
  podSpec(template?.struct("spec"));
}

/** SetDefaults_Pod's container part: a limit without a request gives the request its value. */
function requestsFromLimits(c: Place): void {
  const resources = c.pointer("resources");
  const limits = resources?.pointer("limits");
  const requests = resources?.struct("requests");
  if (!limits || !requests) return;
  for (const key of limits.keys()) if (requests.get(key) === undefined) requests.set(key, limits.get(key));
}

/** With host networking, every container port's hostPort defaults to its containerPort (defaultHostNetworkPorts). */
function hostNetworkPorts(c: Place): void {
  for (const port of c.items("ports")) {
    const containerPort = port.get("containerPort");
    // A zero hostPort is what Go writes when containerPort is zero too; it serializes as nothing.
    if (typeof containerPort === "number" && containerPort !== 0)
      port.default("hostPort", containerPort, unset.integer);
  }
}

/**
 * SetDefaults_PodStatus (1.37): `podIP` and `podIPs` kept in agreement, `podIP` winning when both
 * are written and differ.
 */
function podStatus(status: Place | undefined): void {
  if (!status) return;
  const ip = status.get("podIP");
  const ips = status.get("podIPs");
  const hasIP = typeof ip === "string" && ip !== "";
  const hasIPs = Array.isArray(ips) && ips.length > 0;
  const first = hasIPs ? (ips[0] as { ip?: unknown } | null)?.ip : undefined;
  if (hasIP && (!hasIPs || first !== ip)) status.set("podIPs", [{ ip }]);
  else if (!hasIP && hasIPs && typeof first === "string" && first !== "") status.set("podIP", first);
}

/** SetObjectDefaults_Pod: SetDefaults_Pod, then the pod spec's defaults, then the status's. */
export function pod(p: Place): void {
  const spec = p.struct("spec");
  if (!spec) return;
  // Enforced on a Pod, not on a pod template (SetDefaults_Pod, 1.37).
  const grace = spec.get("terminationGracePeriodSeconds");
  if (typeof grace === "number" && grace < 0) spec.set("terminationGracePeriodSeconds", 1);
  for (const c of spec.items("containers")) requestsFromLimits(c);
  for (const c of spec.items("initContainers")) requestsFromLimits(c);
  spec.default("enableServiceLinks", true, unset.pointer);
  if (spec.get("hostNetwork") === true) {
    for (const c of spec.items("containers")) hostNetworkPorts(c);
    for (const c of spec.items("initContainers")) hostNetworkPorts(c);
  }
  podSpec(spec);
  podStatus(p.pointer("status"));
}
