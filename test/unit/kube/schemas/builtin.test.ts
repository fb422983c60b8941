/**
 * The generated built-in schemas (src/kube/schemas/data, from k8s.io/client-go v0.37.2): that they
 * load, lazily, and carry what typing and merging read. Expected values are those of client-go
 * v0.36.3 applyconfigurations/internal/internal.go (merge markers) and applyconfigurations/*
 * (field Go types), and of k8s.io/apimachinery v0.37.2 for the hand-written schemas.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import * as schemas from "../../../../src/kube/schemas/index.ts";
import { deref, type Schema } from "../../../../src/kube/schemas/schema.ts";

const { builtinDefinition, builtinKindSchema, builtinKinds, builtinSchemasLoaded } = schemas;

/** A property of a definition, references followed. */
function at(schema: Schema, ...path: string[]): Schema {
  let s = schema;
  for (const p of path) {
    const r = deref(s, builtinDefinition, new Set());
    assert.ok(r, `reference at ${p}`);
    const next =
      p === "[]" ? r.schema.items : p === "*" ? r.schema.additionalProperties : r.schema.properties?.[p];
    assert.ok(next && typeof next === "object", `no ${p} in ${path.join(".")}`);
    s = next;
  }
  return deref(s, builtinDefinition, new Set())?.schema ?? s;
}

// This file's process has read nothing yet: node's test runner gives each file its own process.
test("the data is read on first use, not when the module loads", () => {
  assert.equal(builtinSchemasLoaded(), false);
  assert.ok(builtinKindSchema("apps/v1", "Deployment"));
  assert.equal(builtinSchemasLoaded(), true);
});

test("source and release: client-go v0.37.2, Kubernetes 1.37", () => {
  assert.equal(schemas.BUILTIN_SCHEMAS_RELEASE, "1.37");
  assert.match(schemas.builtinSchemasSource(), /k8s\.io\/client-go v0\.37\.2 \(Kubernetes v1\.37\.2\)/);
});

test("kinds of every group the brief names are there", () => {
  const have = new Set(builtinKinds().map((k) => `${k.apiVersion}/${k.kind}`));
  for (const k of [
    "v1/Pod",
    "v1/ConfigMap",
    "v1/Namespace",
    "apps/v1/Deployment",
    "batch/v1/CronJob",
    "networking.k8s.io/v1/NetworkPolicy",
    "policy/v1/PodDisruptionBudget",
    "rbac.authorization.k8s.io/v1/ClusterRole",
    "autoscaling/v2/HorizontalPodAutoscaler",
    "storage.k8s.io/v1/StorageClass",
    "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
    "coordination.k8s.io/v1/Lease",
    "certificates.k8s.io/v1/CertificateSigningRequest",
    "scheduling.k8s.io/v1/PriorityClass",
    "node.k8s.io/v1/RuntimeClass",
    "discovery.k8s.io/v1/EndpointSlice",
    "events.k8s.io/v1/Event",
  ])
    assert.ok(have.has(k), k);
  // List kinds have ListMeta, not ObjectMeta, and are not object kinds.
  assert.equal(builtinKindSchema("apps/v1", "DeploymentList"), undefined);
  assert.equal(builtinKindSchema("example.com/v1", "Widget"), undefined);
});

test("formats: Deployment.spec.replicas int32, ObjectMeta.generation int64 (client-go *int32, *int64)", () => {
  const d = builtinKindSchema("apps/v1", "Deployment")!.schema;
  assert.deepEqual(at(d, "spec", "replicas"), { type: "integer", format: "int32" });
  assert.deepEqual(at(d, "metadata", "generation"), { type: "integer", format: "int64" });
  assert.deepEqual(at(d, "spec", "paused"), { type: "boolean" });
});

test("Secret.data is a map of byte strings (Go map[string][]byte)", () => {
  const s = builtinKindSchema("v1", "Secret")!.schema;
  assert.deepEqual(at(s, "data", "*"), { type: "string", format: "byte" });
  assert.deepEqual(at(s, "stringData", "*"), { type: "string" });
});

test("Pod.spec.containers is a list-map keyed by name; ports by containerPort and protocol", () => {
  const p = builtinKindSchema("v1", "Pod")!.schema;
  const containers = at(p, "spec", "containers");
  assert.equal(containers["x-kubernetes-list-type"], "map");
  assert.deepEqual(containers["x-kubernetes-list-map-keys"], ["name"]);
  const ports = at(p, "spec", "containers", "[]", "ports");
  assert.deepEqual(ports["x-kubernetes-list-map-keys"], ["containerPort", "protocol"]);
  // The key the API server defaults: protocol falls back to TCP (internal.go `default: TCP`).
  assert.equal(at(p, "spec", "containers", "[]", "ports", "[]", "protocol").default, "TCP");
});

test("LabelSelector is atomic; its matchExpressions an atomic list", () => {
  const sel = builtinDefinition("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")!;
  assert.equal(sel["x-kubernetes-map-type"], "atomic");
  assert.equal(sel.properties?.matchExpressions?.["x-kubernetes-list-type"], "atomic");
  assert.equal(
    at(builtinKindSchema("apps/v1", "Deployment")!.schema, "spec", "selector")["x-kubernetes-map-type"],
    "atomic",
  );
});

test("hand-written schemas of apimachinery v0.37.2: Time, MicroTime, IntOrString, Quantity, RawExtension", () => {
  // time.go, micro_time.go: OpenAPISchemaType string, OpenAPISchemaFormat date-time.
  assert.deepEqual(builtinDefinition("io.k8s.apimachinery.pkg.apis.meta.v1.Time"), {
    type: "string",
    format: "date-time",
  });
  assert.deepEqual(builtinDefinition("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"), {
    type: "string",
    format: "date-time",
  });
  // intstr.go: format int-or-string, OpenAPIV3OneOfTypes integer, string (v3 has no type).
  const ios = builtinDefinition("io.k8s.apimachinery.pkg.util.intstr.IntOrString")!;
  assert.equal(ios.format, "int-or-string");
  assert.equal(ios.type, undefined);
  // quantity.go: OpenAPIV3OneOfTypes string, number; format "" (v3 has no type).
  const q = builtinDefinition("io.k8s.apimachinery.pkg.api.resource.Quantity")!;
  assert.equal(q.type, undefined);
  assert.deepEqual(q.oneOf, [{ type: "string" }, { type: "number" }]);
  assert.deepEqual(builtinDefinition("io.k8s.apimachinery.pkg.runtime.RawExtension"), { type: "object" });
});

test("every integer has a format, every reference a definition", () => {
  const missing: string[] = [];
  const walk = (s: Schema | boolean | undefined, where: string): void => {
    if (s === undefined || typeof s === "boolean") return;
    if (s.type === "integer" && s.format !== "int32" && s.format !== "int64")
      missing.push(`${where}: integer`);
    if (s.$ref !== undefined && builtinDefinition(s.$ref) === undefined) missing.push(`${where}: ${s.$ref}`);
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${where}.${k}`);
    walk(s.items, `${where}[]`);
    walk(s.additionalProperties, `${where}.*`);
  };
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const def = builtinDefinition(name);
    walk(def, name);
    JSON.stringify(def, (k, v) => {
      if (k === "$ref" && typeof v === "string") visit(v);
      return v;
    });
  };
  for (const { apiVersion, kind } of builtinKinds()) {
    const root = builtinKindSchema(apiVersion, kind)!.schema;
    JSON.stringify(root, (k, v) => {
      if (k === "$ref" && typeof v === "string") visit(v);
      return v;
    });
  }
  for (const { apiVersion, kind } of builtinKinds()) walk(builtinKindSchema(apiVersion, kind)!.schema, kind);
  assert.deepEqual(missing, []);
  assert.ok(seen.size > 500, `${seen.size} definitions reached`);
});
