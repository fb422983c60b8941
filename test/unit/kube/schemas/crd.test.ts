/**
 * CustomResourceDefinitions read from policy files through the real policy parser (src/policy),
 * their served versions' schemas as the API server publishes them (apiextensions-apiserver
 * pkg/controller/openapi/builder/builder.go), and non-structural schemas reported where they are
 * written, with the rules of apiextensions-apiserver pkg/apiserver/schema/validation.go and
 * listtype/validation.go.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { admissionCheckEnv, checkExpression, formatType } from "../../../../src/cel/check/index.ts";
import { parseCel } from "../../../../src/cel/syntax/parse.ts";
import {
  isCustomResourceDefinition,
  kindCelType,
  kindMergeSchema,
  kindSchema,
  mergeNodeAt,
  mergeStrategy,
  readCustomResourceDefinition,
  type Schema,
  structuralIssues,
} from "../../../../src/kube/schemas/index.ts";
import { parsePolicyText } from "../../../../src/policy/parse.ts";

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: { kind: Widget, plural: widgets }
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer }
                port: { x-kubernetes-int-or-string: true }
                since: { type: string, format: date-time }
                extra: { type: object, x-kubernetes-preserve-unknown-fields: true }
                template:
                  type: object
                  x-kubernetes-embedded-resource: true
                  x-kubernetes-preserve-unknown-fields: true
                servers:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: { type: string }
                      namespace: { type: string }
    - name: v0
      served: false
      storage: false
      schema:
        openAPIV3Schema: { type: object }
`;

function readFromFile(text: string, file = "crds.yaml") {
  const { set, diagnostics } = parsePolicyText(text, file);
  assert.deepEqual(diagnostics, []);
  const res = set.resources.find((r) => isCustomResourceDefinition(r.object));
  assert.ok(res, "the parser keeps the CRD as a resource");
  return readCustomResourceDefinition(res.object, res.source);
}

test("one kind schema per served version; the published root has apiVersion, kind and the whole ObjectMeta", () => {
  const { kinds, diagnostics } = readFromFile(CRD);
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(
    kinds.map((k) => `${k.apiVersion} ${k.kind} ${k.origin}`),
    ["example.com/v1 Widget crd"],
  );
  assert.equal(kindSchema("example.com/v1", "Widget", kinds), kinds[0]);
  assert.equal(kindSchema("example.com/v0", "Widget", kinds), undefined);
});

test("typed custom resource: int-or-string dyn, date-time timestamp, labels typed from ObjectMeta, unknown fields reported", () => {
  const k = readFromFile(CRD).kinds[0]!;
  const t = kindCelType(k, "Widget")!;
  const env = admissionCheckEnv({ object: t.type, oldObject: t.type, schemaMessages: t.messages });
  const check = (e: string) => {
    const r = checkExpression(parseCel(e), env);
    return { type: formatType(r.type), errors: r.diagnostics.map((d) => d.message) };
  };
  assert.equal(check("object.spec.size").type, "int");
  assert.equal(check("object.spec.port").type, "dyn");
  assert.equal(check("object.spec.since").type, "timestamp");
  assert.equal(check("object.metadata.labels").type, "map(string, string)");
  assert.equal(check("object.spec.servers[0].__namespace__").type, "string");
  assert.deepEqual(check("object.spec.sise").errors, ["undefined field 'sise'"]);
  // preserve-unknown-fields object without properties: an object type with no fields.
  assert.deepEqual(check("object.spec.extra.anything").errors, ["undefined field 'anything'"]);
  // An embedded resource gets apiVersion, kind and metadata.name/generateName (WithTypeAndObjectMeta).
  assert.equal(check("object.spec.template.metadata.name").type, "string");
  assert.deepEqual(check("object.spec.template.metadata.labels").errors, ["undefined field 'labels'"]);
});

test("merge metadata of a custom resource: keyed list, deduced preserve-unknown-fields, ObjectMeta from the built-ins", () => {
  const m = kindMergeSchema(readFromFile(CRD).kinds[0]!);
  const at = (...p: (string | number)[]) => mergeStrategy(mergeNodeAt(m, p)!);
  assert.equal(at("spec", "servers"), "map-list");
  assert.equal(at("spec", "extra", "whatever"), "deduced");
  assert.equal(at("metadata", "labels"), "granular-map");
  assert.equal(at("metadata", "finalizers"), "set");
  assert.equal(mergeNodeAt(m, ["spec", "unknown"]), undefined);
});

test("a schema that is not structural: a diagnostic at file:line:col of the fault, and no schema for that version", () => {
  const text = CRD.replace("size: { type: integer }", "size: { description: no type }");
  const { kinds, diagnostics } = readFromFile(text, "bad.yaml");
  assert.deepEqual(kinds, []);
  assert.equal(diagnostics.length, 1);
  const d = diagnostics[0]!;
  assert.equal(d.code, "PE_CRD_SCHEMA");
  assert.equal(d.path, "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type");
  assert.match(d.message, /^Required value: must not be empty for specified object fields/);
  // The nearest written ancestor of the missing `type`: the `size:` mapping.
  const line = text.split("\n").findIndex((l) => l.includes("size: {")) + 1;
  assert.deepEqual(d.location && { file: d.location.file, line: d.location.line }, {
    file: "bad.yaml",
    line,
  });
});

test("validation.go invariants", () => {
  const issues = (s: Schema) => structuralIssues(s).map((i) => `${i.path}: ${i.message}`);
  assert.deepEqual(issues({ type: "object", properties: { a: { type: "string" } } }), []);
  assert.deepEqual(issues({ type: "string" }), ['type: Invalid value: "string": must be object at the root']);
  assert.deepEqual(issues({ properties: {} }), ["type: Required value: must not be empty at the root"]);
  assert.deepEqual(issues({ type: "object", additionalProperties: { type: "string" } }), [
    "additionalProperties: Forbidden: must not be used at the root",
  ]);
  assert.deepEqual(issues({ type: "object", properties: { l: { type: "array" } } }), [
    "properties.l.items: Required value: must be specified",
  ]);
  assert.deepEqual(issues({ type: "object", properties: { l: { type: "array", items: {} } } }), [
    "properties.l.items.type: Required value: must not be empty for specified array items",
  ]);
  // int-or-string and preserve-unknown-fields may go without a type; together they may not.
  assert.deepEqual(
    issues({
      type: "object",
      properties: {
        p: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] },
      },
    }),
    [],
  );
  assert.deepEqual(
    issues({
      type: "object",
      properties: { p: { "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true } },
    }),
    [
      "properties.p.x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true",
    ],
  );
  // A value validation may not carry structure.
  assert.deepEqual(
    issues({
      type: "object",
      properties: { p: { type: "string", anyOf: [{ type: "string" }, { type: "integer" }] } },
    }),
    [
      "properties.p.anyOf[0].type: Forbidden: must be empty to be structural",
      "properties.p.anyOf[1].type: Forbidden: must be empty to be structural",
    ],
  );
  // Embedded resources are objects with properties or preserve-unknown-fields.
  assert.deepEqual(
    issues({ type: "object", properties: { e: { type: "object", "x-kubernetes-embedded-resource": true } } }),
    [
      "properties.e.properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
    ],
  );
  // metadata at the root names name and generateName only.
  assert.deepEqual(
    issues({
      type: "object",
      properties: { metadata: { type: "object", properties: { name: { type: "string", maxLength: 8 } } } },
    }),
    [],
  );
  assert.deepEqual(
    issues({
      type: "object",
      properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } },
    }),
    [
      "properties.metadata: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
    ],
  );
  assert.deepEqual(issues({ type: "object", properties: { r: { $ref: "#/x" } } }).length, 2);
});

test("listtype/validation.go: map keys are required or defaulted scalar properties; set items scalar or atomic", () => {
  const issues = (s: Schema) =>
    structuralIssues({ type: "object", properties: { l: s } }).map((i) => `${i.path}: ${i.message}`);
  const item: Schema = { type: "object", properties: { k: { type: "string" }, o: { type: "object" } } };
  assert.deepEqual(issues({ type: "array", items: item, "x-kubernetes-list-type": "map" }), [
    'properties.l.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is "map"',
  ]);
  assert.deepEqual(
    issues({
      type: "array",
      items: item,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["k"],
    }),
    [
      'properties.l.x-kubernetes-list-map-keys[0]: Invalid value: "k": all map keys must be required or have a default value',
    ],
  );
  assert.deepEqual(
    issues({
      type: "array",
      items: { ...item, required: ["k"] },
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["k"],
    }),
    [],
  );
  assert.deepEqual(issues({ type: "array", items: { type: "object" }, "x-kubernetes-list-type": "set" }), [
    'properties.l.items: Invalid value: must be of scalar type or atomic when x-kubernetes-list-type is "set"',
  ]);
  assert.deepEqual(issues({ type: "string", "x-kubernetes-list-type": "set" }), [
    "properties.l.x-kubernetes-list-type: Invalid value: must only be used if type is array",
  ]);
});

test("only apiextensions.k8s.io/v1 is read; a malformed CRD gives diagnostics and no kinds", () => {
  const v1beta1 = readCustomResourceDefinition({
    apiVersion: "apiextensions.k8s.io/v1beta1",
    kind: "CustomResourceDefinition",
  });
  assert.deepEqual(v1beta1.kinds, []);
  assert.equal(v1beta1.diagnostics[0]?.code, "PE_UNKNOWN_KIND");
  const noGroup = readCustomResourceDefinition({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    spec: {},
  });
  assert.deepEqual(
    noGroup.diagnostics.map((d) => d.path),
    ["spec.group", "spec.names.kind", "spec.versions"],
  );
});
