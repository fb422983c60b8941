/**
 * networking.k8s.io/v1 defaults (kubernetes pkg/apis/networking/v1/defaults.go: SetDefaults_NetworkPolicy,
 * SetDefaults_NetworkPolicyPort, SetDefaults_IngressClass) and the kinds with none: Ingress
 * (networking/v1 has no defaulter for it) and PodDisruptionBudget (pkg/apis/policy/v1 has no
 * defaults.go and no zz_generated.defaults.go).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasDefaults, withDefaults } from "../../../src/kube/defaults/index.ts";

type Json = Record<string, unknown>;

const policy = (spec: Json) => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
  metadata: { name: "n" },
  spec,
});

test("SetDefaults_NetworkPolicy: policyTypes Ingress, plus Egress when there are egress rules", () => {
  const ingressOnly = withDefaults(policy({ podSelector: {} })).object.spec as Json;
  assert.deepEqual(ingressOnly.policyTypes, ["Ingress"]);
  const both = withDefaults(policy({ podSelector: {}, egress: [{ to: [] }] })).object.spec as Json;
  assert.deepEqual(both.policyTypes, ["Ingress", "Egress"]);
  const given = withDefaults(policy({ podSelector: {}, policyTypes: ["Egress"] })).object.spec as Json;
  assert.deepEqual(given.policyTypes, ["Egress"]);
});

test("SetDefaults_NetworkPolicyPort: protocol TCP on ingress and egress ports", () => {
  const spec = withDefaults(
    policy({
      podSelector: {},
      ingress: [{ ports: [{ port: 80 }, { port: 53, protocol: "UDP" }] }],
      egress: [{ ports: [{ port: 443 }] }],
    }),
  ).object.spec as Json;
  assert.deepEqual(spec.ingress, [
    {
      ports: [
        { port: 80, protocol: "TCP" },
        { port: 53, protocol: "UDP" },
      ],
    },
  ]);
  assert.deepEqual(spec.egress, [{ ports: [{ port: 443, protocol: "TCP" }] }]);
});

test("SetDefaults_IngressClass: parameters' scope Cluster", () => {
  const spec = withDefaults({
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    spec: { controller: "x", parameters: { kind: "P", name: "p" } },
  }).object.spec as Json;
  assert.deepEqual(spec.parameters, { kind: "P", name: "p", scope: "Cluster" });
});

test("Ingress and PodDisruptionBudget have no defaults: admission sees them as sent", () => {
  const ingress = {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "i" },
    spec: {
      rules: [
        { http: { paths: [{ path: "/", backend: { service: { name: "s", port: { number: 80 } } } }] } },
      ],
    },
  };
  assert.deepEqual(withDefaults(ingress), { object: ingress, defaulted: [] });
  const pdb = {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: "p" },
    spec: { minAvailable: 1 },
  };
  assert.deepEqual(withDefaults(pdb), { object: pdb, defaulted: [] });
  assert.equal(hasDefaults("networking.k8s.io/v1", "Ingress"), false);
  assert.equal(hasDefaults("policy/v1", "PodDisruptionBudget"), false);
});
