/**
 * Merge metadata: kube-openapi pkg/schemaconv (openapi.go parseSchema/parseObject/parseList,
 * smd.go convertPrimitive/getListElementRelationship/getMapElementRelationship) and the defaults of
 * structured-merge-diff schema/elements.go, one rule per test; then the built-in kinds against
 * what client-go v0.37.2 applyconfigurations/internal/internal.go says of them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type KindSchema,
  kindMergeSchema,
  kindSchema,
  type MergeNode,
  mergeNodeAt,
  mergeStrategy,
  type Schema,
} from "../../../../src/kube/schemas/index.ts";

function root(schema: Schema, defs: Record<string, Schema> = {}): MergeNode {
  const k: KindSchema = {
    apiVersion: "example.com/v1",
    kind: "Widget",
    schema,
    definition: (n) => defs[n],
    origin: "crd",
  };
  return kindMergeSchema(k);
}

function strategyAt(n: MergeNode, ...path: (string | number)[]): string {
  const at = mergeNodeAt(n, path);
  return at === undefined ? "<none>" : mergeStrategy(at);
}

const obj = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: "object",
  properties,
  ...extra,
});

test("getListElementRelationship: list-type atomic, set, map with keys; no marker is atomic", () => {
  const n = root(
    obj({
      a: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "atomic" },
      s: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
      m: {
        type: "array",
        items: obj({ name: { type: "string" } }),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      },
      plain: { type: "array", items: { type: "string" } },
    }),
  );
  assert.equal(strategyAt(n, "a"), "atomic-list");
  assert.equal(strategyAt(n, "s"), "set");
  assert.equal(strategyAt(n, "m"), "map-list");
  assert.deepEqual((mergeNodeAt(n, ["m"]) as { keys: readonly string[] }).keys, ["name"]);
  assert.equal(strategyAt(n, "plain"), "atomic-list");
  assert.equal(strategyAt(n, "m", 3, "name"), "scalar");
});

test("getListElementRelationship: without a list type, patch-strategy merge with a key is a map-list, without one a set", () => {
  const n = root(
    obj({
      keyed: {
        type: "array",
        items: obj({ k: { type: "string" } }),
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": "k",
      },
      set: { type: "array", items: { type: "string" }, "x-kubernetes-patch-strategy": "merge" },
      retain: { type: "array", items: { type: "string" }, "x-kubernetes-patch-strategy": "retainKeys" },
    }),
  );
  assert.equal(strategyAt(n, "keyed"), "map-list");
  assert.equal(strategyAt(n, "set"), "set");
  assert.equal(strategyAt(n, "retain"), "atomic-list");
});

test("getMapElementRelationship: map-type atomic or granular; unset is separable (elements.go default)", () => {
  const n = root(
    obj({
      atomicStruct: obj({ x: { type: "string" } }, { "x-kubernetes-map-type": "atomic" }),
      struct: obj({ x: { type: "string" } }),
      atomicMap: {
        type: "object",
        additionalProperties: { type: "string" },
        "x-kubernetes-map-type": "atomic",
      },
      map: { type: "object", additionalProperties: { type: "string" } },
      granular: {
        type: "object",
        additionalProperties: { type: "string" },
        "x-kubernetes-map-type": "granular",
      },
    }),
  );
  assert.equal(strategyAt(n), "granular-struct");
  assert.equal(strategyAt(n, "atomicStruct"), "atomic-struct");
  assert.equal(strategyAt(n, "struct"), "granular-struct");
  assert.equal(strategyAt(n, "atomicMap"), "atomic-map");
  assert.equal(strategyAt(n, "map"), "granular-map");
  assert.equal(strategyAt(n, "granular"), "granular-map");
  assert.equal(strategyAt(n, "map", "anykey"), "scalar");
});

test("parseObject: unknown fields of a struct are not allowed; with no properties, additionalProperties true or preserve-unknown-fields they are deduced", () => {
  const n = root(
    obj({
      closed: obj({ x: { type: "string" } }),
      empty: { type: "object" },
      open: obj({ x: { type: "string" } }, { additionalProperties: true }),
      preserved: obj({ x: obj({ y: { type: "string" } }) }, { "x-kubernetes-preserve-unknown-fields": true }),
    }),
  );
  assert.equal(mergeNodeAt(n, ["closed", "typo"]), undefined);
  assert.equal(strategyAt(n, "empty", "anything"), "deduced");
  assert.equal(strategyAt(n, "open", "anything"), "deduced");
  assert.equal(strategyAt(n, "preserved", "anything"), "deduced");
  // preserve-unknown-fields holds for the whole subtree (visitSpec sets it for descendants).
  assert.equal(strategyAt(n, "preserved", "x", "other"), "deduced");
  assert.equal(mergeNodeAt(n, ["typo"]), undefined);
});

test("parseSchema: no type is untyped (value decides); convertPrimitive: date-time and int-or-string strings are untyped scalars", () => {
  const n = root(
    obj({
      ios: { "x-kubernetes-int-or-string": true },
      any: { "x-kubernetes-preserve-unknown-fields": true },
      when: { type: "string", format: "date-time" },
      raw: { type: "string", format: "byte" },
      n: { type: "number" },
    }),
  );
  assert.equal(strategyAt(n, "ios"), "deduced");
  assert.equal(strategyAt(n, "any", "k"), "deduced");
  assert.equal(strategyAt(n, "any", 0), "deduced");
  assert.deepEqual(mergeNodeAt(n, ["when"]), { kind: "scalar", scalar: "untyped" });
  assert.deepEqual(mergeNodeAt(n, ["raw"]), { kind: "scalar", scalar: "string" });
  assert.deepEqual(mergeNodeAt(n, ["n"]), { kind: "scalar", scalar: "numeric" });
});

test("makeOpenAPIRef: a map-type beside a $ref overrides the named type's relationship for that field only", () => {
  const defs = { Sel: obj({ a: { type: "string" } }) };
  const n = root(
    obj({
      plain: { $ref: "Sel" },
      atomic: { allOf: [{ $ref: "#/components/schemas/Sel" }], "x-kubernetes-map-type": "atomic" },
    }),
    defs,
  );
  assert.equal(strategyAt(n, "plain"), "granular-struct");
  assert.equal(strategyAt(n, "atomic"), "atomic-struct");
});

test("ToSchemaFromOpenAPI: resource.Quantity is an untyped scalar, runtime.RawExtension untyped and atomic", () => {
  const n = root(
    obj({
      q: { $ref: "io.k8s.apimachinery.pkg.api.resource.Quantity" },
      r: { $ref: "io.k8s.apimachinery.pkg.runtime.RawExtension" },
    }),
  );
  assert.deepEqual(mergeNodeAt(n, ["q"]), { kind: "scalar", scalar: "untyped" });
  const r = mergeNodeAt(n, ["r"]);
  assert.equal(r?.kind, "untyped");
  assert.equal(r?.kind === "untyped" ? r.map.relationship : "", "atomic");
});

test("built-in kinds as client-go v0.37.2 internal.go has them", () => {
  const deploy = kindMergeSchema(kindSchema("apps/v1", "Deployment")!);
  assert.equal(strategyAt(deploy, "spec", "selector"), "atomic-struct");
  assert.equal(strategyAt(deploy, "spec", "template", "spec", "containers"), "map-list");
  assert.equal(strategyAt(deploy, "spec", "template", "spec", "containers", 0, "ports"), "map-list");
  const ports = mergeNodeAt(deploy, ["spec", "template", "spec", "containers", 0, "ports"]);
  assert.deepEqual(ports?.kind === "list" ? ports.keys : [], ["containerPort", "protocol"]);
  const port = mergeNodeAt(deploy, ["spec", "template", "spec", "containers", 0, "ports", 0]);
  assert.equal(port?.kind === "map" ? port.fieldDefault("protocol") : undefined, "TCP");
  assert.equal(strategyAt(deploy, "spec", "template", "spec", "containers", 0, "args"), "atomic-list");
  assert.equal(strategyAt(deploy, "metadata", "finalizers"), "set");
  assert.equal(strategyAt(deploy, "metadata", "labels"), "granular-map");
  assert.equal(strategyAt(deploy, "metadata", "ownerReferences"), "map-list");
  assert.equal(strategyAt(deploy, "spec", "template", "spec", "nodeSelector"), "atomic-map");
  assert.equal(
    strategyAt(deploy, "spec", "template", "spec", "containers", 0, "resources", "limits"),
    "granular-map",
  );
  assert.equal(strategyAt(deploy, "spec", "template", "spec", "tolerations"), "atomic-list");
  assert.equal(mergeNodeAt(deploy, ["spec", "replicaz"]), undefined);
  assert.equal(strategyAt(deploy, "spec", "strategy", "rollingUpdate", "maxSurge"), "deduced");
  const np = kindMergeSchema(kindSchema("networking.k8s.io/v1", "NetworkPolicy")!);
  assert.equal(strategyAt(np, "spec", "podSelector"), "atomic-struct");
  assert.equal(strategyAt(np, "spec", "ingress"), "atomic-list");
});
