/**
 * The core/v1 ("" group) kinds' defaults: kubernetes pkg/apis/core/v1/defaults.go and the generated
 * SetObjectDefaults_* of zz_generated.defaults.go, with the `+default` markers of k8s.io/api
 * core/v1/types.go. Pods and pod templates are in core-pod.ts.
 */
import { persistentVolumeClaimSpec, pod, podTemplateSpec } from "./core-pod.ts";
import { isObject, type Place, unset } from "./place.ts";

/** v1.LabelMetadataName. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

/** v1.DefaultClientIPServiceAffinitySeconds: three hours. */
const CLIENT_IP_AFFINITY_SECONDS = 10800;

/** pkg/api/v1/service.ExternallyAccessible. */
function externallyAccessible(spec: Place, type: unknown): boolean {
  const externalIPs = spec.get("externalIPs");
  return (
    type === "LoadBalancer" ||
    type === "NodePort" ||
    (type === "ClusterIP" && Array.isArray(externalIPs) && externalIPs.length > 0)
  );
}

/** SetDefaults_Service, then ServicePort.Protocol's `+default="TCP"` (SetObjectDefaults_Service). */
function service(svc: Place): void {
  const spec = svc.struct("spec");
  if (!spec) return;
  spec.default("sessionAffinity", "None", unset.string);
  const affinity = spec.get("sessionAffinity");
  if (affinity === "None") spec.remove("sessionAffinityConfig");
  if (affinity === "ClientIP") {
    const timeout = spec.pointer("sessionAffinityConfig")?.pointer("clientIP")?.get("timeoutSeconds");
    if (unset.pointer(timeout))
      spec.set("sessionAffinityConfig", { clientIP: { timeoutSeconds: CLIENT_IP_AFFINITY_SECONDS } });
  }
  spec.default("type", "ClusterIP", unset.string);
  for (const port of spec.items("ports")) {
    port.default("protocol", "TCP", unset.string);
    // TargetPort == intstr.FromInt32(0) || TargetPort == intstr.FromString(""): the port itself.
    const target = port.get("targetPort");
    if (target === undefined || target === null || target === 0 || target === "") {
      const number = port.get("port");
      port.set("targetPort", typeof number === "number" && Number.isInteger(number) ? number : 0);
    }
  }
  const type = spec.get("type");
  if (externallyAccessible(spec, type)) spec.default("externalTrafficPolicy", "Cluster", unset.string);
  if (type === "NodePort" || type === "LoadBalancer" || type === "ClusterIP")
    spec.default("internalTrafficPolicy", "Cluster", unset.pointer);
  if (type === "LoadBalancer") {
    spec.default("allocateLoadBalancerNodePorts", true, unset.pointer);
    for (const ingress of svc.struct("status")?.struct("loadBalancer")?.items("ingress") ?? []) {
      const ip = ingress.get("ip");
      if (typeof ip === "string" && ip !== "") ingress.default("ipMode", "VIP", unset.pointer);
    }
  }
}

/**
 * SetDefaults_Namespace: a named namespace carries its name as the `kubernetes.io/metadata.name`
 * label, whatever the label said before (the namespace strategy's PrepareForCreate and Canonicalize,
 * pkg/registry/core/namespace/strategy.go, keep it so); then SetDefaults_NamespaceStatus.
 */
function namespace(ns: Place): void {
  const name = ns.pointer("metadata")?.get("name");
  if (typeof name === "string" && name !== "") {
    const labels = ns.struct("metadata")?.struct("labels");
    if (labels && labels.get(NAMESPACE_NAME_LABEL) !== name) labels.set(NAMESPACE_NAME_LABEL, name);
  }
  ns.struct("status")?.default("phase", "Active", unset.string);
}

/** SetDefaults_Secret. */
function secret(s: Place): void {
  s.default("type", "Opaque", unset.string);
}

/**
 * SetDefaults_ConfigMap makes a nil `data` an empty map, which the API server then serializes as no
 * field at all (`json:"data,omitempty"`): admission sees the ConfigMap as it was sent.
 */
function configMap(_: Place): void {}

/**
 * SetDefaults_ReplicationController: the template's labels become the selector and the labels when
 * those are empty; `replicas` is `+default=1` (`minReadySeconds`' `+default=0` is the zero value).
 */
function replicationController(rc: Place): void {
  const spec = rc.struct("spec");
  if (!spec) return;
  const template = spec.pointer("template");
  const labels = template?.pointer("metadata")?.get("labels");
  // An empty map would be copied as an empty map, which serializes as nothing.
  if (isObject(labels) && Object.keys(labels).length > 0) {
    if (unset.empty(spec.get("selector"))) spec.set("selector", structuredClone(labels));
    const metadata = rc.struct("metadata");
    if (metadata && unset.empty(metadata.get("labels"))) metadata.set("labels", structuredClone(labels));
  }
  spec.default("replicas", 1, unset.pointer);
  podTemplateSpec(template);
}

/** SetObjectDefaults_PodTemplate: the template's spec. */
function podTemplate(t: Place): void {
  podTemplateSpec(t.struct("template"));
}

/** SetDefaults_PersistentVolumeClaim and SetDefaults_PersistentVolumeClaimSpec. */
export function persistentVolumeClaim(pvc: Place): void {
  pvc.struct("status")?.default("phase", "Pending", unset.string);
  persistentVolumeClaimSpec(pvc.struct("spec"));
}

/** SetDefaults_Endpoints. */
function endpoints(ep: Place): void {
  for (const subset of ep.items("subsets"))
    for (const port of subset.items("ports")) port.default("protocol", "TCP", unset.string);
}

/** The core/v1 kinds with defaults, by kind. */
export const CORE_V1: Readonly<Record<string, (object: Place) => void>> = {
  ConfigMap: configMap,
  Endpoints: endpoints,
  Namespace: namespace,
  PersistentVolumeClaim: persistentVolumeClaim,
  Pod: pod,
  PodTemplate: podTemplate,
  ReplicationController: replicationController,
  Secret: secret,
  Service: service,
};
