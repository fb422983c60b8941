/**
 * Schema → CEL type, rule by rule, as k8s.io/apiserver/pkg/cel/common/schemas.go SchemaDeclType
 * and cel/types.go (DeclType, MaybeAssignTypeName, DeclTypeProvider) convert them; and typed
 * checking of the brief's expressions through the real checker (src/cel/check) as Kubernetes'
 * admission type checking runs it (admission/plugin/policy/validating/typechecking.go).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { admissionCheckEnv, checkExpression, formatType } from "../../../../src/cel/check/index.ts";
import { parseCel } from "../../../../src/cel/syntax/parse.ts";
import {
  assignTypeNames,
  celTypeOf,
  type DeclType,
  type KindSchema,
  kindCelType,
  kindSchema,
  messageTypesOf,
  type Schema,
  schemaDeclType,
} from "../../../../src/kube/schemas/index.ts";

const none = () => undefined;

function typeOf(s: Schema, root = false): string {
  const d = schemaDeclType(s, root, none);
  return d === undefined ? "<none>" : formatType(celTypeOf(assignTypeNames(d, "T")));
}

function fields(d: DeclType | undefined): string[] {
  assert.equal(d?.kind, "object");
  return d.kind === "object" ? [...d.fields.keys()].sort() : [];
}

test("schemas.go: integer → int, number → double, boolean → bool, string → string", () => {
  assert.equal(typeOf({ type: "integer", format: "int32" }), "int");
  assert.equal(typeOf({ type: "number" }), "double");
  assert.equal(typeOf({ type: "boolean" }), "bool");
  assert.equal(typeOf({ type: "string" }), "string");
});

test("schemas.go: string formats byte → bytes, duration → duration, date and date-time → timestamp", () => {
  assert.equal(typeOf({ type: "string", format: "byte" }), "bytes");
  assert.equal(typeOf({ type: "string", format: "duration" }), "duration");
  assert.equal(typeOf({ type: "string", format: "date" }), "timestamp");
  assert.equal(typeOf({ type: "string", format: "date-time" }), "timestamp");
  assert.equal(typeOf({ type: "string", format: "uuid" }), "string");
});

test("schemas.go: x-kubernetes-int-or-string (or format int-or-string) is dyn, before its type is looked at", () => {
  assert.equal(typeOf({ "x-kubernetes-int-or-string": true }), "dyn");
  assert.equal(typeOf({ type: "string", format: "int-or-string" }), "dyn");
  assert.equal(
    typeOf({ "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] }),
    "dyn",
  );
});

test("schemas.go: no type (Quantity's oneOf, preserve-unknown-fields alone) has no CEL type at all", () => {
  assert.equal(typeOf({ oneOf: [{ type: "string" }, { type: "number" }] }), "<none>");
  assert.equal(typeOf({ "x-kubernetes-preserve-unknown-fields": true }), "<none>");
  // ... and the field holding it is not declared; a list or map of it has no type either.
  const d = schemaDeclType(
    { type: "object", properties: { a: { type: "string" }, q: { oneOf: [{ type: "string" }] } } },
    false,
    none,
  );
  assert.deepEqual(fields(d), ["a"]);
  assert.equal(typeOf({ type: "array", items: { "x-kubernetes-preserve-unknown-fields": true } }), "<none>");
  assert.equal(typeOf({ type: "array" }), "<none>");
  assert.equal(typeOf({ type: "object", additionalProperties: { oneOf: [] } }), "<none>");
});

test("schemas.go: arrays are lists, additionalProperties maps with string keys", () => {
  assert.equal(typeOf({ type: "array", items: { type: "integer" } }), "list(int)");
  assert.equal(typeOf({ type: "object", additionalProperties: { type: "string" } }), "map(string, string)");
  // additionalProperties wins over properties; `true` (no schema) does not make a map.
  assert.equal(
    typeOf({
      type: "object",
      properties: { a: { type: "string" } },
      additionalProperties: { type: "integer" },
    }),
    "map(string, int)",
  );
  assert.deepEqual(
    fields(
      schemaDeclType(
        { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
        false,
        none,
      ),
    ),
    ["a"],
  );
});

test("schemas.go: preserve-unknown-fields with properties exposes the properties only", () => {
  const d = schemaDeclType(
    { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { a: { type: "string" } } },
    false,
    none,
  );
  assert.deepEqual(fields(d), ["a"]);
});

test("schemas.go: property names are escaped; a name that cannot be escaped is left out", () => {
  const d = schemaDeclType(
    {
      type: "object",
      properties: {
        namespace: { type: "string" },
        "a.b": { type: "string" },
        "x-y": { type: "string" },
        "9lives": { type: "string" },
        "with space": { type: "string" },
      },
    },
    false,
    none,
  );
  assert.deepEqual(fields(d), ["__namespace__", "a__dot__b", "x__dash__y"]);
});

test("WithTypeAndObjectMeta: a resource root and an embedded resource get kind, apiVersion, metadata.name/generateName", () => {
  const root = schemaDeclType({ type: "object", properties: { spec: { type: "object" } } }, true, none);
  assert.deepEqual(fields(root), ["apiVersion", "kind", "metadata", "spec"]);
  const meta = root?.kind === "object" ? root.fields.get("metadata") : undefined;
  assert.deepEqual(fields(meta), ["generateName", "name"]);
  const embedded = schemaDeclType(
    {
      type: "object",
      properties: {
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          "x-kubernetes-preserve-unknown-fields": true,
        },
      },
    },
    false,
    none,
  );
  const template = embedded?.kind === "object" ? embedded.fields.get("template") : undefined;
  assert.deepEqual(fields(template), ["apiVersion", "kind", "metadata"]);
  // Not a resource root: nothing added.
  assert.deepEqual(fields(schemaDeclType({ type: "object", properties: {} }, false, none)), []);
});

test("MaybeAssignTypeName: objects are named by path, .@idx for list items, .@elem for map values", () => {
  const d = schemaDeclType(
    {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            items: { type: "array", items: { type: "object", properties: { n: { type: "integer" } } } },
            byName: {
              type: "object",
              additionalProperties: { type: "object", properties: { v: { type: "string" } } },
            },
          },
        },
      },
    },
    false,
    none,
  )!;
  const named = assignTypeNames(d, "Widget");
  const names = messageTypesOf(named).map((m) => m.name);
  assert.deepEqual(names.sort(), [
    "Widget",
    "Widget.spec",
    "Widget.spec.byName.@elem",
    "Widget.spec.items.@idx",
  ]);
  assert.equal(formatType(celTypeOf(named)), "Widget");
});

function checkAgainst(k: KindSchema, expr: string, recognizeKeywordAsFieldName = false) {
  const t = kindCelType(k, "Deployment", { recognizeKeywordAsFieldName })!;
  const env = admissionCheckEnv({ object: t.type, oldObject: t.type, schemaMessages: t.messages });
  const r = checkExpression(parseCel(expr), env);
  return { type: formatType(r.type), errors: r.diagnostics.map((d) => d.message) };
}

test("typed Deployment: the brief's three faults are reported, correct expressions pass", () => {
  const k = kindSchema("apps/v1", "Deployment")!;
  assert.deepEqual(checkAgainst(k, "object.spec.replicas + 'x'").errors, [
    "found no matching overload for '_+_' applied to '(int, string)'",
  ]);
  assert.deepEqual(checkAgainst(k, "object.spec.containres").errors, ["undefined field 'containres'"]);
  assert.deepEqual(checkAgainst(k, "object.metadata.labels.size() > '1'").errors, [
    "found no matching overload for '_>_' applied to '(int, string)'",
  ]);
  assert.deepEqual(checkAgainst(k, "object.spec.replicas <= 5 && oldObject.spec.replicas >= 0"), {
    type: "bool",
    errors: [],
  });
  assert.equal(checkAgainst(k, "object.spec.template.spec.containers.map(c, c.image)").type, "list(string)");
  assert.equal(checkAgainst(k, "object.metadata.creationTimestamp").type, "timestamp");
  assert.equal(checkAgainst(k, "object.spec.strategy.rollingUpdate.maxSurge").type, "dyn");
  assert.equal(checkAgainst(k, "object.spec.template.spec.containers[0].ports[0].containerPort").type, "int");
});

test("typed Deployment: metadata.namespace is `__namespace__`; DeclTypeProvider finds `namespace` only when asked", () => {
  const k = kindSchema("apps/v1", "Deployment")!;
  // Kubernetes' admission type checking does not call SetRecognizeKeywordAsFieldName.
  assert.deepEqual(checkAgainst(k, "object.metadata.namespace").errors, ["undefined field 'namespace'"]);
  assert.equal(checkAgainst(k, "object.metadata.__namespace__").type, "string");
  assert.deepEqual(checkAgainst(k, "object.metadata.namespace", true), { type: "string", errors: [] });
});

test("typed Deployment: resources.limits (a map of Quantity, no type in OpenAPI v3) is not declared", () => {
  const k = kindSchema("apps/v1", "Deployment")!;
  assert.deepEqual(checkAgainst(k, "object.spec.template.spec.containers[0].resources.limits").errors, [
    "undefined field 'limits'",
  ]);
  assert.equal(
    checkAgainst(k, "object.spec.template.spec.containers[0].resources.claims").type,
    "list(Deployment.spec.template.spec.containers.@idx.resources.claims.@idx)",
  );
});

test("a Secret's data is map(string, bytes); a RawExtension an object with no fields", () => {
  const s = kindCelType(kindSchema("v1", "Secret")!, "Secret")!;
  const secret = s.messages.find((m) => m.name === "Secret")!;
  assert.equal(formatType(secret.field("data")!), "map(string, bytes)");
  const cr = kindCelType(kindSchema("apps/v1", "ControllerRevision")!, "CR")!;
  assert.equal(formatType(cr.messages.find((m) => m.name === "CR")!.field("data")!), "CR.data");
  assert.equal(cr.messages.find((m) => m.name === "CR.data")!.field("x"), undefined);
});
