/**
 * JSONPatch mutations as the API server applies them, through the engine with real policy YAML:
 * kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/
 * json_patch.go and json_patch_test.go (TestJSONPatch, each case by its upstream name), the
 * gopkg.in/evanphx/json-patch.v4 rules it applies them with (evanphx/json-patch patch_test.go),
 * and the strict decoding of the patched object into its Go type.
 *
 * Every accepted patch is replayed on the request's object by an independent RFC 6902 applier
 * (test/helpers/json-patch.ts), which must give the object the engine made.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { toCel } from "../../../src/cel/index.ts";
import { kindMergeOf } from "../../../src/engine/kind-schemas.ts";
import { applyMutation } from "../../../src/engine/mutate.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { map, mapBinding, mutateText, podRequest, yamlDocs } from "../../helpers/engine.ts";
import { applyJsonPatch } from "../../helpers/json-patch.ts";

type Doc = Record<string, unknown>;

const DEPLOYMENTS = {
  resourceRules: [
    { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
  ],
};

function deployment(spec: Doc, metadata: Doc = {}): Doc {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "d", namespace: "default", ...metadata },
    spec,
  };
}

function request(object: Doc): AdmissionRequest {
  return podRequest(object, {
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    resource: { group: "apps", version: "v1", resource: "deployments" },
    name: "d",
  });
}

/** One JSONPatch policy `p` (bound by `b`) for deployments. */
function policy(expression: string, failurePolicy: "Fail" | "Ignore" = "Fail"): string {
  return yamlDocs(
    map("p", {
      failurePolicy,
      matchConstraints: DEPLOYMENTS,
      mutations: [{ patchType: "JSONPatch", jsonPatch: { expression } }],
    }),
    mapBinding("b", "p"),
  );
}

/** The decision, checked: its patch replays on the request's object to the object it reports. */
function run(expression: string, object: Doc, failurePolicy: "Fail" | "Ignore" = "Fail"): AdmissionDecision {
  const req = request(object);
  const d = mutateText(policy(expression, failurePolicy), req);
  if (d.patch !== undefined)
    assert.deepEqual(applyJsonPatch(structuredClone(object), d.patch), d.patchedObject, "patch replays");
  assert.deepEqual(req.object, object, "the request's object is left as it came");
  return d;
}

/** The object after the policy ran (the request's own when it made no change). */
function result(d: AdmissionDecision, object: Doc): unknown {
  assert.equal(d.allowed, true, JSON.stringify(d.status));
  return d.patchedObject ?? object;
}

const containers = (names: string[]) => ({
  template: { spec: { containers: names.map((name) => ({ name })) } },
});

// ---- json_patch_test.go TestJSONPatch ----------------------------------------------------------

interface Case {
  readonly name: string;
  readonly expression: string;
  readonly object: Doc;
  readonly expected: Doc;
}

const CASES: readonly Case[] = [
  {
    name: "jsonPatch with false test operation",
    expression: `[JSONPatch{op: "test", path: "/spec/replicas", value: 100}, JSONPatch{op: "replace", path: "/spec/replicas", value: 3}]`,
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 1 }),
  },
  {
    name: "jsonPatch with true test operation",
    expression: `[JSONPatch{op: "test", path: "/spec/replicas", value: 1}, JSONPatch{op: "replace", path: "/spec/replicas", value: 3}]`,
    object: deployment({ replicas: 1 }),
    expected: deployment({ replicas: 3 }),
  },
  {
    name: "jsonPatch remove to unset field",
    expression: `[JSONPatch{op: "remove", path: "/spec/replicas"}]`,
    object: deployment({ replicas: 1 }),
    expected: deployment({}),
  },
  {
    name: "jsonPatch remove map entry by key",
    expression: `[JSONPatch{op: "remove", path: "/metadata/labels/y"}]`,
    object: deployment({}, { labels: { x: "1", y: "1" } }),
    expected: deployment({}, { labels: { x: "1" } }),
  },
  {
    name: "jsonPatch remove element in list",
    expression: `[JSONPatch{op: "remove", path: "/spec/template/spec/containers/1"}]`,
    object: deployment(containers(["a", "b", "c"])),
    expected: deployment(containers(["a", "c"])),
  },
  {
    name: "jsonPatch copy map entry by key",
    expression: `[JSONPatch{op: "copy", from: "/metadata/labels/x", path: "/metadata/labels/y"}]`,
    object: deployment({}, { labels: { x: "1" } }),
    expected: deployment({}, { labels: { x: "1", y: "1" } }),
  },
  {
    name: "jsonPatch copy first element to end of list",
    expression: `[JSONPatch{op: "copy", from: "/spec/template/spec/containers/0", path: "/spec/template/spec/containers/-"}]`,
    object: deployment(containers(["a", "b", "c"])),
    expected: deployment(containers(["a", "b", "c", "a"])),
  },
  {
    name: "jsonPatch move map entry by key",
    expression: `[JSONPatch{op: "move", from: "/metadata/labels/x", path: "/metadata/labels/y"}]`,
    object: deployment({}, { labels: { x: "1" } }),
    expected: deployment({}, { labels: { y: "1" } }),
  },
  {
    name: "jsonPatch move first element to end of list",
    expression: `[JSONPatch{op: "move", from: "/spec/template/spec/containers/0", path: "/spec/template/spec/containers/-"}]`,
    object: deployment(containers(["a", "b", "c"])),
    expected: deployment(containers(["b", "c", "a"])),
  },
  {
    name: "jsonPatch add map entry by key and value",
    expression: `[JSONPatch{op: "add", path: "/metadata/labels/x", value: "2"}]`,
    object: deployment({}, { labels: { y: "1" } }),
    expected: deployment({}, { labels: { y: "1", x: "2" } }),
  },
  {
    name: "jsonPatch add map value to field",
    expression: `[JSONPatch{op: "add", path: "/metadata/labels", value: {"y": "2"}}]`,
    object: deployment({}),
    expected: deployment({}, { labels: { y: "2" } }),
  },
  {
    name: "jsonPatch add map to existing map (performs a replacement)",
    expression: `[JSONPatch{op: "add", path: "/metadata/labels", value: {"y": "2"}}]`,
    object: deployment({}, { labels: { x: "1" } }),
    expected: deployment({}, { labels: { y: "2" } }),
  },
  {
    name: "jsonPatch add to start of list",
    expression: `[JSONPatch{op: "add", path: "/spec/template/spec/containers/0", value: {"name": "x"}}]`,
    object: deployment(containers(["a"])),
    expected: deployment(containers(["x", "a"])),
  },
  {
    name: "jsonPatch add to end of list",
    expression: `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: {"name": "x"}}]`,
    object: deployment(containers(["a"])),
    expected: deployment(containers(["a", "x"])),
  },
  {
    // evanphx/json-patch.v4 replaces a missing member by adding it; an RFC 6902 applier refuses.
    name: "jsonPatch replace key in map (a missing key is added)",
    expression: `[JSONPatch{op: "replace", path: "/metadata/labels/x", value: "2"}]`,
    object: deployment({}, { labels: { y: "1" } }),
    expected: deployment({}, { labels: { y: "1", x: "2" } }),
  },
  {
    name: "jsonPatch replace map value of unset field (adds the field value)",
    expression: `[JSONPatch{op: "replace", path: "/metadata/labels", value: {"y": "2"}}]`,
    object: deployment({}),
    expected: deployment({}, { labels: { y: "2" } }),
  },
  {
    name: "jsonPatch replace map value of set field",
    expression: `[JSONPatch{op: "replace", path: "/metadata/labels", value: {"y": "2"}}]`,
    object: deployment({}, { labels: { x: "1" } }),
    expected: deployment({}, { labels: { y: "2" } }),
  },
  {
    name: "jsonPatch replace first element in list",
    expression: `[JSONPatch{op: "replace", path: "/spec/template/spec/containers/0", value: {"name": "x"}}]`,
    object: deployment(containers(["a"])),
    expected: deployment(containers(["x"])),
  },
  {
    name: "jsonPatch add map entry by key and value (an Object value at /spec)",
    expression: `[JSONPatch{op: "add", path: "/spec", value: Object.spec{selector: Object.spec.selector{}, replicas: 10}}]`,
    object: deployment({}),
    expected: deployment({ selector: {}, replicas: 10 }),
  },
  {
    name: "JSONPatch key escaping",
    expression: `[
      JSONPatch{op: "add", path: "/metadata/labels", value: {}},
      JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("k8s.io/x~y"), value: "true"}
    ]`,
    object: deployment({}, { labels: {} }),
    expected: deployment({}, { labels: { "k8s.io/x~y": "true" } }),
  },
  {
    name: "jsonPatch with CEL initializer",
    expression: `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{
      name: "x",
      ports: [Object.spec.template.spec.containers.ports{containerPort: 8080}]
    }}]`,
    object: deployment(containers(["a"])),
    expected: deployment({
      template: { spec: { containers: [{ name: "a" }, { name: "x", ports: [{ containerPort: 8080 }] }] } },
    }),
  },
];

for (const c of CASES) {
  test(`json_patch_test.go: ${c.name}`, () => {
    assert.deepEqual(result(run(c.expression, c.object), c.object), c.expected);
  });
}

test("json_patch_test.go: jsonPatch replace end of list with - not allowed", () => {
  const d = run(
    `[JSONPatch{op: "replace", path: "/spec/template/spec/containers/-", value: {"name": "x"}}]`,
    deployment(containers(["a"])),
  );
  assert.equal(
    d.status?.message,
    "policy 'p' with binding 'b' denied request: JSON Patch: replace operation does not apply: doc is missing key: /spec/template/spec/containers/-: missing value",
  );
  assert.equal(d.results[0]?.errorKind, "runtime");
});

test("json_patch_test.go: the same failure under failurePolicy Ignore admits unchanged", () => {
  const d = run(`[JSONPatch{op: "remove", path: "/metadata/labels/missing"}]`, deployment({}), "Ignore");
  assert.equal(d.allowed, true);
  assert.equal(d.patch, undefined);
  assert.equal(d.results[0]?.outcome, "error");
});

// ---- the patched object must decode into its Go type ---------------------------------------------

/**
 * json_patch.go decodes the patched JSON with the strict serializer and returns any error as an
 * apierrors.NewInternalError, a StatusError: mutating/dispatcher.go returns it before failurePolicy
 * is looked at, so the request fails with 500 even under Ignore, and no later policy runs.
 */
function internalError(d: AdmissionDecision, message: string): void {
  assert.equal(d.allowed, false);
  assert.deepEqual(d.status, {
    code: 500,
    reason: "InternalError",
    message: `Internal error occurred: ${message}`,
  });
  assert.equal(d.patch, undefined);
  assert.equal(d.results[0]?.errorKind, "internal");
}

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`json_patch_test.go "jsonPatch invalid CEL initializer field": an unknown field is a strict decoding error (failurePolicy ${failurePolicy})`, () => {
    // Upstream's expression: Object initializers (a map literal mixing a string and a list would
    // be refused by the homogeneous literal validator, cel-go cel/validator.go).
    const d = run(
      `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{name: "x", ports: [Object.spec.template.spec.containers.ports{containerPortZ: 8080}]}}]`,
      deployment(containers(["a"])),
      failurePolicy,
    );
    internalError(
      d,
      'strict decoding error: unknown field "spec.template.spec.containers[1].ports[0].containerPortZ"',
    );
  });
}

test("an unknown field the patch adds at its path is reported with its path (spec.invalidField)", () => {
  internalError(
    run(`[JSONPatch{op: "add", path: "/spec/invalidField", value: "x"}]`, deployment({ replicas: 1 })),
    'strict decoding error: unknown field "spec.invalidField"',
  );
});

// Map literals of mixed value types are written with dyn() values: Kubernetes' homogeneous aggregate
// literal validator refuses them otherwise (cel-go cel/validator.go).
test("a value of the wrong type is the decoder's UnmarshalTypeError, struct and field path named", () => {
  internalError(
    run(`[JSONPatch{op: "replace", path: "/spec/replicas", value: "3"}]`, deployment({ replicas: 1 })),
    "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
  );
  internalError(
    run(`[JSONPatch{op: "replace", path: "/spec/replicas", value: 1.5}]`, deployment({ replicas: 1 })),
    "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
  );
  // Map values add no field to the path; list indices neither.
  internalError(
    run(`[JSONPatch{op: "add", path: "/metadata/labels/a", value: 1}]`, deployment({}, { labels: {} })),
    "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
  );
  internalError(
    run(
      `[JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: {"name": dyn("x"), "image": dyn(true)}}]`,
      deployment(containers(["a"])),
    ),
    "json: cannot unmarshal bool into Go struct field Container.spec.template.spec.containers.image of type string",
  );
  internalError(
    run(`[JSONPatch{op: "add", path: "/spec/template", value: "x"}]`, deployment({})),
    "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec",
  );
});

test("a type error wins over unknown fields; custom UnmarshalJSON errors win over both", () => {
  internalError(
    run(
      `[JSONPatch{op: "add", path: "/spec/x", value: 1}, JSONPatch{op: "replace", path: "/spec/replicas", value: "1"}]`,
      deployment({ replicas: 1 }),
    ),
    "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
  );
  internalError(
    run(
      `[JSONPatch{op: "replace", path: "/spec/replicas", value: "1"},
        JSONPatch{op: "add", path: "/spec/template/spec/containers/0/resources", value: {"limits": {"cpu": "lots"}}}]`,
      deployment(containers(["a"])),
    ),
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  );
  internalError(
    run(
      `[JSONPatch{op: "add", path: "/spec/strategy", value: {"rollingUpdate": {"maxSurge": true}}}]`,
      deployment({}),
    ),
    "json: cannot unmarshal bool into Go value of type int32",
  );
});

test("values of the right types decode: quantities, int-or-string, null anywhere", () => {
  const object = deployment(containers(["a"]));
  const d = run(
    `[JSONPatch{op: "add", path: "/spec/template/spec/containers/0/resources", value: {"limits": {"cpu": dyn("500m"), "memory": dyn(1e9)}}},
      JSONPatch{op: "add", path: "/spec/strategy", value: {"rollingUpdate": {"maxSurge": dyn("25%"), "maxUnavailable": dyn(1)}}},
      JSONPatch{op: "add", path: "/spec/paused", value: null}]`,
    object,
  );
  assert.equal(d.allowed, true, JSON.stringify(d.status));
});

test("an InternalError ends the mutating phase: the policies after it do not run", () => {
  const text = yamlDocs(
    map("bad", {
      failurePolicy: "Ignore",
      matchConstraints: DEPLOYMENTS,
      mutations: [
        {
          patchType: "JSONPatch",
          jsonPatch: { expression: `[JSONPatch{op: "add", path: "/spec/nope", value: 1}]` },
        },
      ],
    }),
    mapBinding("bad", "bad"),
    map("later", {
      matchConstraints: DEPLOYMENTS,
      mutations: [
        {
          patchType: "JSONPatch",
          jsonPatch: { expression: `[JSONPatch{op: "add", path: "/metadata/labels", value: {"a": "b"}}]` },
        },
      ],
    }),
    mapBinding("later", "later"),
  );
  const d = mutateText(text, request(deployment({})));
  assert.deepEqual(
    d.results.map((r) => [r.policy, r.outcome]),
    [["bad", "error"]],
  );
  assert.equal(d.status?.code, 500);
});

test("a custom resource's JSON Patch is not decoded against a schema (upstream decodes it unstructured)", () => {
  const text = yamlDocs(
    map("p", {
      matchConstraints: {
        resourceRules: [
          { apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"] },
        ],
      },
      mutations: [
        {
          patchType: "JSONPatch",
          jsonPatch: { expression: `[JSONPatch{op: "add", path: "/spec/anything", value: 1}]` },
        },
      ],
    }),
    mapBinding("b", "p"),
  );
  const object = {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "w", namespace: "default" },
    spec: {},
  };
  const d = mutateText(
    text,
    podRequest(object, {
      kind: { group: "example.com", version: "v1", kind: "Widget" },
      resource: { group: "example.com", version: "v1", resource: "widgets" },
      name: "w",
    }),
  );
  assert.equal(d.allowed, true);
  assert.deepEqual(d.patch, [{ op: "add", path: "/spec/anything", value: 1 }]);
});

// ---- gopkg.in/evanphx/json-patch.v4 rules (patch_test.go), through applyMutation -------------------

const DEPLOYMENT = kindMergeOf({ group: "apps", version: "v1", kind: "Deployment" });

function patch(object: Doc, ops: readonly Doc[]) {
  return applyMutation(object, "JSONPatch", toCel(ops), DEPLOYMENT);
}

test("evanphx v4: negative indices count from the end; add at -1 appends", () => {
  const object = deployment(containers(["a", "b", "c"]));
  const remove = patch(object, [{ op: "remove", path: "/spec/template/spec/containers/-2" }]);
  assert.ok(remove.ok);
  assert.deepEqual(remove.value.object, deployment(containers(["a", "c"])));
  // The operation the webhook sends names the index itself.
  assert.deepEqual(remove.value.ops, [{ op: "remove", path: "/spec/template/spec/containers/1" }]);
  const add = patch(object, [{ op: "add", path: "/spec/template/spec/containers/-1", value: { name: "x" } }]);
  assert.ok(add.ok);
  assert.deepEqual(add.value.object, deployment(containers(["a", "b", "c", "x"])));
  assert.deepEqual(add.value.ops, [
    { op: "add", path: "/spec/template/spec/containers/3", value: { name: "x" } },
  ]);
  const tooSmall = patch(object, [
    { op: "add", path: "/spec/template/spec/containers/-5", value: { name: "x" } },
  ]);
  assert.deepEqual(tooSmall, {
    ok: false,
    error: {
      kind: "runtime",
      message:
        "JSON Patch: error in add for path: '/spec/template/spec/containers/-5': Unable to access invalid index: -5: invalid index referenced",
    },
  });
});

test("evanphx v4: a path not starting with '/' drops its first token; an index that is not one", () => {
  const object = deployment({ replicas: 1 });
  const r = patch(object, [{ op: "replace", path: "spec/replicas", value: 2 }]);
  // "spec/replicas" splits into ["spec", "replicas"]: the root's member "replicas", unknown to a Deployment.
  assert.deepEqual(r, {
    ok: false,
    error: {
      kind: "internal",
      message: 'Internal error occurred: strict decoding error: unknown field "replicas"',
    },
  });
  const notIndex = patch(deployment(containers(["a"])), [
    { op: "add", path: "/spec/template/spec/containers/x", value: { name: "b" } },
  ]);
  assert.deepEqual(notIndex, {
    ok: false,
    error: {
      kind: "runtime",
      message:
        "JSON Patch: error in add for path: '/spec/template/spec/containers/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax",
    },
  });
});

test("evanphx v4: copy of a missing member adds null; move and copy keep what they read", () => {
  const object = deployment({ replicas: 1 }, { labels: { a: "1" } });
  const copied = patch(object, [{ op: "copy", from: "/metadata/labels/zz", path: "/metadata/labels/b" }]);
  assert.ok(copied.ok);
  assert.deepEqual((copied.value.object.metadata as Doc).labels, { a: "1", b: null });
  assert.deepEqual(copied.value.ops, [{ op: "add", path: "/metadata/labels/b", value: null }]);
  const moved = patch(object, [{ op: "move", from: "/metadata/labels/a", path: "/metadata/annotations" }]);
  assert.deepEqual(moved, {
    ok: false,
    error: {
      kind: "internal",
      message:
        "Internal error occurred: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.annotations of type map[string]string",
    },
  });
});

test("evanphx v4 test: null members are nil nodes; a null value equals an empty object or list", () => {
  const object = deployment({ replicas: 1, paused: null, template: { metadata: {} } }, { labels: {} });
  const outcome = (ops: readonly Doc[]) => {
    const r = patch(object, [...ops, { op: "replace", path: "/spec/replicas", value: 9 }]);
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    return r.value.ops.length > 0 ? "applied" : "test failed";
  };
  // A missing member: a test with a value fails (json_patch.go always writes the value it has).
  assert.equal(outcome([{ op: "test", path: "/spec/missing", value: null }]), "test failed");
  assert.equal(outcome([{ op: "test", path: "/spec/missing" }]), "applied");
  // A null member reads as missing.
  assert.equal(outcome([{ op: "test", path: "/spec/paused", value: null }]), "test failed");
  // An empty object equals null; an object with members does not.
  assert.equal(outcome([{ op: "test", path: "/metadata/labels", value: null }]), "applied");
  assert.equal(outcome([{ op: "test", path: "/spec", value: null }]), "test failed");
  assert.equal(outcome([{ op: "test", path: "/spec/template", value: { metadata: {} } }]), "applied");
  // A test without a value on a present member fails.
  assert.equal(outcome([{ op: "test", path: "/spec/replicas" }]), "test failed");
  // A pointer through a null is missing: an error, not a failed test.
  const through = patch(object, [{ op: "test", path: "/spec/paused/x", value: 1 }]);
  assert.deepEqual(through, {
    ok: false,
    error: {
      kind: "runtime",
      message: "JSON Patch: test operation does not apply: is missing path: /spec/paused/x: missing value",
    },
  });
});

test("evanphx v4: errors of each operation, as upstream words them", () => {
  const object = deployment(containers(["a"]), { labels: { a: "1" } });
  const cases: readonly [Doc, string][] = [
    [
      { op: "remove", path: "/spec/template/spec/containers/3" },
      "error in remove for path: '/spec/template/spec/containers/3': Unable to access invalid index: 3: invalid index referenced",
    ],
    [
      { op: "replace", path: "/spec/template/spec/containers/1", value: {} },
      "replace operation does not apply: doc is missing key: /spec/template/spec/containers/1: missing value",
    ],
    [
      { op: "replace", path: "/nope/x", value: 1 },
      "replace operation does not apply: doc is missing path: /nope/x: missing value",
    ],
    [
      { op: "move", path: "/metadata/labels/b" },
      "move operation failed to decode from: operation, missing from field: missing value",
    ],
    [
      { op: "move", from: "/nope/a", path: "/metadata/labels/b" },
      "move operation does not apply: doc is missing from path: /nope/a: missing value",
    ],
    [
      { op: "move", from: "/metadata/labels/a", path: "/nope/b" },
      "move operation does not apply: doc is missing destination path: /nope/b: missing value",
    ],
    [
      { op: "copy", from: "/spec/template/spec/containers/4", path: "/metadata/labels/b" },
      "error in copy for from: '/spec/template/spec/containers/4': Unable to access invalid index: 4: invalid index referenced",
    ],
    [
      { op: "copy", from: "/metadata/labels/a", path: "/spec/template/spec/containers/9" },
      "error while adding value during copy: Unable to access invalid index: 9: invalid index referenced",
    ],
    [
      { op: "test", path: "/spec/template/spec/containers/7", value: 1 },
      "error in test for path: '/spec/template/spec/containers/7': Unable to access invalid index: 7: invalid index referenced",
    ],
    [{ op: "replace", path: "", value: "x" }, "replace operation value must be object or array: %!w(<nil>)"],
  ];
  for (const [op, message] of cases)
    assert.deepEqual(
      patch(object, [op]),
      { ok: false, error: { kind: "runtime", message: `JSON Patch: ${message}` } },
      JSON.stringify(op),
    );
});
