/**
 * Schema typing with custom resources and params (src/compile/schema-typing.ts): a policy matching
 * one kind a loaded CustomResourceDefinition defines gets `object`/`oldObject` typed from that
 * version's openAPIV3Schema as Kubernetes' SchemaDeclType converts it
 * (staging/src/k8s.io/apiserver/pkg/cel/common/schemas.go, with the published root of
 * apiextensions-apiserver pkg/controller/openapi/builder/builder.go), `params` typed from its
 * paramKind's schema, and an undefined field gets a did-you-mean. All of it warnings: the API
 * server types neither custom resources nor params (admission/plugin/policy/validating/
 * typechecking.go), and accepts such a policy.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type CompiledPolicySet, compilePolicySet } from "../../../src/compile/policy.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import type { ResourceObject } from "../../../src/policy/types.ts";
import { map, vap, yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

const WIDGET_SCHEMA = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        size: { type: "integer" },
        port: { "x-kubernetes-int-or-string": true },
        since: { type: "string", format: "date-time" },
        extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          "x-kubernetes-preserve-unknown-fields": true,
        },
        containers: {
          type: "array",
          items: { type: "object", properties: { name: { type: "string" }, image: { type: "string" } } },
        },
      },
    },
  },
};

function crd(kind: string, plural: string, versions: Doc[], group = "example.com"): Doc {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: { group, names: { kind, plural }, scope: "Namespaced", versions },
  };
}

const version = (name: string, schema: Doc, served = true): Doc => ({
  name,
  served,
  storage: served,
  schema: { openAPIV3Schema: schema },
});

const WIDGETS = crd("Widget", "widgets", [version("v1", WIDGET_SCHEMA)]);
const LIMITS = crd("Limit", "limits", [
  version("v1", { type: "object", properties: { maxSize: { type: "integer" } } }),
]);

function widgetPolicy(expressions: string[], spec: Doc = {}, apiVersion = "v1"): Doc {
  return vap("p", {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: ["example.com"],
          apiVersions: [apiVersion],
          operations: ["CREATE"],
          resources: ["widgets"],
        },
      ],
    },
    validations: expressions.map((expression) => ({ expression })),
    ...spec,
  });
}

function schemaTyped(docs: Doc[], crdDocs: Doc[] = []): CompiledPolicySet {
  const { set, diagnostics } = parsePolicyText(yamlDocs(...docs), "policies.yaml");
  assert.deepEqual(diagnostics, []);
  const crds: ResourceObject[] = [];
  if (crdDocs.length > 0) {
    const read = parsePolicyText(yamlDocs(...crdDocs), "crds.yaml");
    assert.deepEqual(read.diagnostics, []);
    crds.push(...read.set.resources);
  }
  return compilePolicySet(set, { schemaTyping: true, crds });
}

const warnings = (set: CompiledPolicySet) =>
  set.diagnostics.map((d) => [d.severity, d.path, d.message, /hint: (.*)$/.exec(d.detail ?? "")?.[1]]);

test("schemas.go: a CRD among the policy files types object by group, version and plural", () => {
  const exprs = [
    "object.spec.size + 'x' == 'y'",
    "object.spec.containres.size() < 3",
    "object.spec.containers.all(c, c.imag != '')",
    "object.spec.size <= 5 && object.spec.containers.all(c, c.image != '')",
  ];
  const set = schemaTyped([WIDGETS, widgetPolicy(exprs)]);
  assert.deepEqual(warnings(set), [
    [
      "warning",
      "spec.validations[0].expression",
      "found no matching overload for '_+_' applied to '(int, string)'",
      undefined,
    ],
    [
      "warning",
      "spec.validations[1].expression",
      "undefined field 'containres'",
      "did you mean 'containers'?",
    ],
    ["warning", "spec.validations[2].expression", "undefined field 'imag'", "did you mean 'image'?"],
  ]);
  assert.match(set.diagnostics[0]?.detail ?? "", /\(with object typed as Widget from its schema\)$/);
  // The same CRD given apart (`check --crd`) does the same; without it, object stays dyn.
  const apart = schemaTyped([widgetPolicy(exprs)], [WIDGETS]);
  assert.equal(apart.diagnostics.length, 3);
  assert.deepEqual(schemaTyped([widgetPolicy(exprs)]).diagnostics, []);
});

test("schemas.go: int-or-string is dyn, date-time a timestamp; the published root has ObjectMeta (builder.go)", () => {
  const set = schemaTyped([
    WIDGETS,
    widgetPolicy([
      "object.spec.port == 80 || object.spec.port == 'http'",
      "object.spec.since < timestamp('2030-01-01T00:00:00Z')",
      "object.metadata.labels['app'] == 'x' && object.metadata.namespace != 'kube-system'",
      "object.spec.since == 'yesterday'",
    ]),
  ]);
  assert.deepEqual(warnings(set), [
    [
      "warning",
      "spec.validations[3].expression",
      "found no matching overload for '_==_' applied to '(timestamp, string)'",
      undefined,
    ],
  ]);
});

test("schemas.go: preserve-unknown-fields does not expose unknown fields; an embedded resource has apiVersion, kind, metadata.name", () => {
  // "The CEL declaration for objects with XPreserveUnknownFields does not expose unknown fields."
  const set = schemaTyped([
    WIDGETS,
    widgetPolicy([
      "has(object.spec.extra.anything)",
      "object.spec.template.kind == 'Pod' && object.spec.template.metadata.name != ''",
      "object.spec.template.metadata.labels.size() > 0",
    ]),
  ]);
  assert.deepEqual(
    warnings(set).map(([, path, message]) => [path, message]),
    [
      ["spec.validations[0].expression", "undefined field 'anything'"],
      // WithTypeAndObjectMeta gives an embedded resource's metadata name and generateName only.
      ["spec.validations[2].expression", "undefined field 'labels'"],
    ],
  );
});

test("only the version the rule names, when served; another version or kind leaves object dyn", () => {
  const twoVersions = crd("Widget", "widgets", [
    version("v1", WIDGET_SCHEMA),
    version("v2", {
      type: "object",
      properties: { spec: { type: "object", properties: { count: { type: "integer" } } } },
    }),
    version("v0", WIDGET_SCHEMA, false),
  ]);
  const v2 = schemaTyped([twoVersions, widgetPolicy(["object.spec.cont > 1"], {}, "v2")]);
  assert.deepEqual(
    warnings(v2).map(([, , m, h]) => [m, h]),
    [["undefined field 'cont'", "did you mean 'count'?"]],
  );
  // v0 is not served: its objects are never admitted, and its schema types nothing.
  assert.deepEqual(
    schemaTyped([twoVersions, widgetPolicy(["object.spec.sise > 1"], {}, "v0")]).diagnostics,
    [],
  );
  const other = vap("p", {
    matchConstraints: {
      resourceRules: [
        { apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["gadgets"] },
      ],
    },
    validations: [{ expression: "object.spec.sise > 1" }],
  });
  // Untyped; and, the CRD of example.com serving no gadgets, the rule is said to match nothing.
  assert.deepEqual(
    schemaTyped([WIDGETS, other]).diagnostics.map((d) => d.code),
    ["PE_UNKNOWN_RESOURCE"],
  );
});

test("validation.go: a CRD whose schema is not structural is an error (PE_CRD_SCHEMA) and types nothing", () => {
  const bad = crd("Widget", "widgets", [
    version("v1", { type: "object", properties: { spec: { description: "no type" } } }),
  ]);
  const set = schemaTyped([bad, widgetPolicy(["object.spec.anything > 1"])]);
  assert.deepEqual(
    set.diagnostics.map((d) => [d.severity, d.code, d.path, d.location?.file]),
    [
      [
        "error",
        "PE_CRD_SCHEMA",
        "spec.versions[0].schema.openAPIV3Schema.properties.spec.type",
        "policies.yaml",
      ],
    ],
  );
  assert.match(
    set.diagnostics[0]?.message ?? "",
    /^Required value: must not be empty for specified object fields/,
  );
  // Read twice (the same file among the PATHs and given with --crd): reported once.
  const { set: same } = parsePolicyText(yamlDocs(bad, widgetPolicy(["true"])), "policies.yaml");
  const twice = compilePolicySet(same, { schemaTyping: true, crds: same.resources });
  assert.equal(twice.diagnostics.length, 1);
  // Without schema typing (serve, eval) CRDs are not looked at for typing.
  const { set: parsed } = parsePolicyText(yamlDocs(bad, widgetPolicy(["true"])), "policies.yaml");
  assert.deepEqual(compilePolicySet(parsed).diagnostics, []);
});

test("params typed from a loaded CRD's schema (a paramKind kind), with a did-you-mean", () => {
  const policy = widgetPolicy(
    ["object.spec.size <= params.maxSize", "params.maxSiz > 1", "params.maxSize + 'x' == 'y'"],
    {
      paramKind: { apiVersion: "example.com/v1", kind: "Limit" },
    },
  );
  const set = schemaTyped([WIDGETS, LIMITS, policy]);
  assert.deepEqual(warnings(set), [
    ["warning", "spec.validations[1].expression", "undefined field 'maxSiz'", "did you mean 'maxSize'?"],
    [
      "warning",
      "spec.validations[2].expression",
      "found no matching overload for '_+_' applied to '(int, string)'",
      undefined,
    ],
  ]);
  assert.match(
    set.diagnostics[0]?.detail ?? "",
    /\(with object typed as Widget and params typed as Limit from their schemas\)\nhint:/,
  );
  // Without the Limit CRD, params stays dyn (and, with no binding to look params up, no scope warning).
  assert.deepEqual(
    schemaTyped([WIDGETS, policy]).diagnostics.map((d) => d.code),
    [],
  );
});

test("params typed from a built-in paramKind (ConfigMap), object dyn when the rules name no kind", () => {
  const policy = vap("p", {
    matchConstraints: {
      resourceRules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["CREATE"], resources: ["*"] }],
    },
    paramKind: { apiVersion: "v1", kind: "ConfigMap" },
    validations: [
      { expression: "object.spec.anything == params.data['max']" },
      { expression: "params.dat['max'] == '1'" },
      { expression: "params.data['max'] + 1 > 2" },
    ],
  });
  const set = schemaTyped([policy]);
  assert.deepEqual(warnings(set), [
    ["warning", "spec.validations[1].expression", "undefined field 'dat'", "did you mean 'data'?"],
    [
      "warning",
      "spec.validations[2].expression",
      "found no matching overload for '_+_' applied to '(string, int)'",
      undefined,
    ],
  ]);
  assert.match(set.diagnostics[0]?.detail ?? "", /\(with params typed as ConfigMap from its schema\)/);
});

test("did-you-mean on a built-in kind (Pod), a keyword field offered as written", () => {
  const set = schemaTyped([
    vap("p", {
      validations: [
        { expression: "object.spec.containres.size() > 0" },
        { expression: "object.metadata.namespac != 'x'" },
        { expression: "has(object.spec.zzzzzzzzzz)" },
      ],
    }),
  ]);
  assert.deepEqual(
    warnings(set).map(([, , m, h]) => [m, h]),
    [
      ["undefined field 'containres'", "did you mean 'containers'?"],
      ["undefined field 'namespac'", "did you mean 'namespace'?"],
      // Nothing close: no hint.
      ["undefined field 'zzzzzzzzzz'", undefined],
    ],
  );
});

test("the Kubernetes docs' CronTab CRD (tasks/extend-kubernetes/custom-resources/custom-resource-definitions): typed by its schema", () => {
  const cronTab = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "crontabs.stable.example.com" },
    spec: {
      group: "stable.example.com",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: {
                    cronSpec: { type: "string" },
                    image: { type: "string" },
                    replicas: { type: "integer" },
                  },
                },
              },
            },
          },
        },
      ],
      scope: "Namespaced",
      names: { plural: "crontabs", singular: "crontab", kind: "CronTab", shortNames: ["ct"] },
    },
  };
  const policy = vap("crontab-limits", {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: ["stable.example.com"],
          apiVersions: ["v1"],
          operations: ["CREATE", "UPDATE"],
          resources: ["crontabs"],
        },
      ],
    },
    validations: [
      { expression: "object.spec.replicas <= 5 && object.spec.cronSpec.matches('^[0-9*/ ]+$')" },
      { expression: "!has(oldObject.spec.image) || object.spec.image == oldObject.spec.image" },
      { expression: "object.spec.replica <= 5" },
      { expression: "object.spec.image.startsWith(1)" },
    ],
  });
  const set = schemaTyped([cronTab, policy]);
  assert.deepEqual(
    set.diagnostics.map((d) => [d.severity, d.path, d.message, /hint: (.*)$/.exec(d.detail ?? "")?.[1]]),
    [
      ["warning", "spec.validations[2].expression", "undefined field 'replica'", "did you mean 'replicas'?"],
      // Not schema typing's: the API server refuses startsWith(int) with object dyn; the schema pass is not run.
      [
        "error",
        "spec.validations[3].expression",
        "found no matching overload for 'startsWith' applied to 'dyn.(int)'",
        undefined,
      ],
    ],
  );
});

test("a MutatingAdmissionPolicy (never type-checked by the API server) is warned about only where the expression is wrong", () => {
  const variables = [
    // Two path-named types of alike objects: works at run time, so no warning in a MAP.
    "object.spec.containers + object.spec.?initContainers.orValue([])",
    "object.spec.containers[0] == object.spec.initContainers[0]",
    "true ? object.spec.containers : object.spec.initContainers",
    // Really wrong: a misspelt field, an int added to a string.
    "object.spec.containres",
    "object.spec.priority + 'x'",
  ].map((expression, i) => ({ name: `v${i}`, expression }));
  const spec = {
    variables,
    mutations: [
      { patchType: "JSONPatch", jsonPatch: { expression: "[JSONPatch{op: 'test', path: '/a', value: 1}]" } },
    ],
  };
  const set = schemaTyped([map("m", spec)]);
  assert.deepEqual(warnings(set), [
    ["warning", "spec.variables[3].expression", "undefined field 'containres'", "did you mean 'containers'?"],
    [
      "warning",
      "spec.variables[4].expression",
      "found no matching overload for '_+_' applied to '(int, string)'",
      undefined,
    ],
  ]);
  // The same expressions in a ValidatingAdmissionPolicy are warned about, as typechecking.go warns.
  const validating = schemaTyped([vap("p", { variables, validations: [{ expression: "true" }] })]);
  assert.equal(warnings(validating).length, 5);
});
