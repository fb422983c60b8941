/**
 * The networking.k8s.io/v1 kinds' defaults: kubernetes pkg/apis/networking/v1/defaults.go
 * (SetDefaults_NetworkPolicy, SetDefaults_NetworkPolicyPort, SetDefaults_IngressClass) as the
 * generated SetObjectDefaults_* of zz_generated.defaults.go call them. Ingress has no defaults in v1:
 * no defaulting function takes it or any type inside it.
 */
import { type Place, unset } from "./place.ts";

/** SetObjectDefaults_NetworkPolicy. */
function networkPolicy(np: Place): void {
  const spec = np.struct("spec");
  if (!spec) return;
  // Any policy that does not specify policyTypes implies at least "Ingress".
  if (unset.empty(spec.get("policyTypes"))) {
    const egress = spec.get("egress");
    spec.set("policyTypes", Array.isArray(egress) && egress.length > 0 ? ["Ingress", "Egress"] : ["Ingress"]);
  }
  for (const rule of [...spec.items("ingress"), ...spec.items("egress")])
    for (const port of rule.items("ports")) port.default("protocol", "TCP", unset.pointer);
}

/** SetObjectDefaults_IngressClass. */
function ingressClass(ic: Place): void {
  ic.struct("spec")?.pointer("parameters")?.default("scope", "Cluster", unset.pointer);
}

/** The networking.k8s.io/v1 kinds with defaults, by kind. */
export const NETWORKING_V1: Readonly<Record<string, (object: Place) => void>> = {
  IngressClass: ingressClass,
  NetworkPolicy: networkPolicy,
};
