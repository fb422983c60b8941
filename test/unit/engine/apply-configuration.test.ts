/**
 * ApplyConfiguration mutations as the API server merges them with structured-merge-diff:
 * kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/smd.go and
 * smd_test.go (TestApplyConfiguration, each case by its upstream name),
 * test/integration/apiserver/cel/mutatingadmissionpolicy_test.go, and sigs.k8s.io/
 * structured-merge-diff/v6 typed/merge_test.go (the merge itself, on its own schemas).
 *
 * Every merge's operations are replayed on the object by an independent RFC 6902 applier
 * (test/helpers/json-patch.ts), which must give the merged object.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { toCel } from "../../../src/cel/index.ts";
import { type KindMerge, kindMergeOf } from "../../../src/engine/kind-schemas.ts";
import { applyMutation } from "../../../src/engine/mutate.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import { type KindSchema, kindMergeSchema, type Schema } from "../../../src/kube/schemas/index.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { map, mapBinding, mutateText, podObject, podRequest, yamlDocs } from "../../helpers/engine.ts";
import { applyJsonPatch } from "../../helpers/json-patch.ts";
import { seededRandom } from "../../helpers/random.ts";

type Doc = Record<string, unknown>;

const DEPLOYMENTS = {
  resourceRules: [
    {
      apiGroups: ["apps"],
      apiVersions: ["v1"],
      operations: ["CREATE", "UPDATE"],
      resources: ["deployments"],
    },
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

function deploymentRequest(object: Doc, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return podRequest(object, {
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    resource: { group: "apps", version: "v1", resource: "deployments" },
    name: "d",
    ...overrides,
  });
}

function policy(expression: string, spec: Doc = {}): string {
  return yamlDocs(
    map("p", {
      failurePolicy: "Fail",
      matchConstraints: DEPLOYMENTS,
      mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression } }],
      ...spec,
    }),
    mapBinding("b", "p"),
  );
}

/** Runs the policy text on the request; the patch must replay on the request's object. */
function run(text: string, req: AdmissionRequest): AdmissionDecision {
  const d = mutateText(text, req);
  if (d.patch !== undefined)
    assert.deepEqual(applyJsonPatch(structuredClone(req.object), d.patch), d.patchedObject, "patch replays");
  return d;
}

function merged(d: AdmissionDecision, req: AdmissionRequest): unknown {
  assert.equal(d.allowed, true, JSON.stringify(d.status));
  return d.patchedObject ?? req.object;
}

const POD = kindMergeOf({ group: "", version: "v1", kind: "Pod" });
const DEPLOYMENT = kindMergeOf({ group: "apps", version: "v1", kind: "Deployment" });

/** applyMutation on JSON, with the replay check. */
function apply(object: Doc, config: Doc, kind: KindMerge) {
  const r = applyMutation(object, "ApplyConfiguration", toCel(config), kind);
  if (r.ok)
    assert.deepEqual(applyJsonPatch(structuredClone(object), r.value.ops), r.value.object, "ops replay");
  return r;
}

function failed(r: ReturnType<typeof apply>): string {
  assert.equal(r.ok, false, "the mutation was expected to fail");
  return r.ok ? "" : r.error.message;
}

// ---- smd_test.go TestApplyConfiguration ----------------------------------------------------------

test("smd_test.go: apply configuration add to listType=map", () => {
  const req = deploymentRequest(deployment({ template: { spec: { volumes: [{ name: "x" }] } } }));
  const d = run(
    policy(`Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
      volumes: [Object.spec.template.spec.volumes{name: "y"}]}}}}`),
    req,
  );
  assert.deepEqual(
    merged(d, req),
    deployment({ template: { spec: { volumes: [{ name: "x" }, { name: "y" }] } } }),
  );
  assert.deepEqual(d.patch, [{ op: "add", path: "/spec/template/spec/volumes/1", value: { name: "y" } }]);
});

test("smd_test.go: apply configuration update listType=map entry", () => {
  const req = deploymentRequest(
    deployment({ template: { spec: { volumes: [{ name: "x" }, { name: "y" }] } } }),
  );
  const d = run(
    policy(`Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
      volumes: [Object.spec.template.spec.volumes{name: "y", hostPath: Object.spec.template.spec.volumes.hostPath{path: "a"}}]}}}}`),
    req,
  );
  assert.deepEqual(
    merged(d, req),
    deployment({ template: { spec: { volumes: [{ name: "x" }, { name: "y", hostPath: { path: "a" } }] } } }),
  );
  assert.deepEqual(d.patch, [
    { op: "add", path: "/spec/template/spec/volumes/1/hostPath", value: { path: "a" } },
  ]);
});

test("smd_test.go: apply configuration with conditionals", () => {
  const req = deploymentRequest(deployment({ replicas: 2 }));
  const d = run(
    policy(
      `Object{spec: Object.spec{replicas: object.spec.replicas % 2 == 0 ? object.spec.replicas + 1 : object.spec.replicas}}`,
    ),
    req,
  );
  assert.deepEqual(merged(d, req), deployment({ replicas: 3 }));
});

test("smd_test.go: apply configuration with old object", () => {
  const req = deploymentRequest(deployment({ replicas: 1 }), {
    operation: "UPDATE",
    oldObject: deployment({ replicas: 2 }),
  });
  const d = run(
    policy(
      `Object{spec: Object.spec{replicas: oldObject.spec.replicas % 2 == 0 ? oldObject.spec.replicas + 1 : oldObject.spec.replicas}}`,
    ),
    req,
  );
  assert.deepEqual(merged(d, req), deployment({ replicas: 3 }));
});

test("smd_test.go: complex apply configuration initialization", () => {
  const req = deploymentRequest(deployment({}));
  const d = run(
    policy(`Object{spec: Object.spec{
      replicas: 1,
      template: Object.spec.template{
        metadata: Object.spec.template.metadata{labels: {"app": "nginx"}},
        spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{
          name: "nginx",
          image: "nginx:1.14.2",
          ports: [Object.spec.template.spec.containers.ports{containerPort: 80}],
          resources: Object.spec.template.spec.containers.resources{limits: {"cpu": "128M"}}
        }]}
      }
    }}`),
    req,
  );
  assert.deepEqual(
    merged(d, req),
    deployment({
      replicas: 1,
      template: {
        metadata: { labels: { app: "nginx" } },
        spec: {
          containers: [
            {
              name: "nginx",
              image: "nginx:1.14.2",
              ports: [{ containerPort: 80 }],
              resources: { limits: { cpu: "128M" } },
            },
          ],
        },
      },
    }),
  );
});

test("smd_test.go: apply configuration with change to atomic is refused (error, not a merge)", () => {
  const req = deploymentRequest(deployment({ replicas: 1 }));
  const d = run(
    policy(`Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"l": "v"}}}}`),
    req,
  );
  assert.equal(d.allowed, false);
  assert.equal(
    d.status?.message,
    "policy 'p' with binding 'b' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector",
  );
  assert.equal(d.results[0]?.errorKind, "runtime");
});

test("smd_test.go: apply configuration with invalid field name", () => {
  assert.equal(
    failed(apply(deployment({ replicas: 1 }), { spec: { replicasx: 1 } }, DEPLOYMENT)),
    "error applying patch: failed to convert patch object to typed object: .spec.replicasx: field not declared in schema",
  );
});

// ---- what SMD reads as not typed, and what it refuses -----------------------------------------

test("findAtomics reports every atomic the configuration sets, inside atomics too, in order", () => {
  const config = {
    spec: {
      selector: { matchLabels: { a: "b" }, matchExpressions: [{ key: "k", operator: "In", values: ["v"] }] },
      template: {
        spec: { nodeSelector: { disk: "ssd" }, tolerations: [], containers: [{ name: "c", args: ["x"] }] },
      },
    },
  };
  assert.equal(
    failed(apply(deployment({}), config, DEPLOYMENT)),
    "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: " +
      ".spec.selector, .spec.selector.matchExpressions, .spec.selector.matchExpressions[0].values, " +
      ".spec.template.spec.nodeSelector, .spec.template.spec.tolerations, .spec.template.spec.containers[0].args",
  );
  // A null atomic is no value of it: not refused, and it clears the field.
  const cleared = apply(
    deployment({ selector: { matchLabels: { a: "b" } } }),
    { spec: { selector: null } },
    DEPLOYMENT,
  );
  assert.ok(cleared.ok);
  assert.deepEqual(cleared.value.object, deployment({}));
  assert.deepEqual(cleared.value.ops, [{ op: "remove", path: "/spec/selector" }]);
});

test("typed/validate.go: wrong scalars, shapes and keyed-list elements, with SMD's error texts", () => {
  const pod = podObject({ containers: [{ name: "app" }] });
  const cases: readonly [Doc, string][] = [
    [{ spec: { priority: "high" } }, ".spec.priority: expected numeric (int or float), got string"],
    [{ spec: { hostname: 1 } }, ".spec.hostname: expected string, got &value.valueUnstructured{Value:1}"],
    [{ spec: { hostNetwork: "yes" } }, ".spec.hostNetwork: expected boolean, got &{yes}"],
    [{ spec: { containers: { name: "x" } } }, ".spec.containers: expected list, got &{map[name:x]}"],
    [{ metadata: { labels: ["a"] } }, ".metadata.labels: expected map, got &{[a]}"],
    [
      { spec: { containers: ["x"] } },
      ".spec.containers: element 0: associative list with keys may not have non-map elements",
    ],
    [
      { spec: { containers: [null] } },
      ".spec.containers: element 0: associative list with keys may not have a null element",
    ],
    [
      { metadata: { finalizers: [{ a: 1 }] } },
      ".metadata.finalizers: element 0: associative list without keys has an element that's a map type",
    ],
    [
      { metadata: { finalizers: [null] } },
      ".metadata.finalizers: element 0: associative list without keys has an element that's an explicit null",
    ],
    [
      { spec: { containers: [{ name: "a" }, { name: "a" }] } },
      '.spec.containers: duplicate entries for key [name="a"]',
    ],
    [
      { spec: { containers: [{ name: "a", image: 1 }], priority: "x" } },
      'errors:\n  .spec.containers[name="a"].image: expected string, got &value.valueUnstructured{Value:1}\n  .spec.priority: expected numeric (int or float), got string',
    ],
  ];
  for (const [config, errs] of cases)
    assert.equal(
      failed(apply(pod, config, POD)),
      `error applying patch: failed to convert patch object to typed object: ${errs}`,
      JSON.stringify(config),
    ); // Every key of a built-in list has a default ("" for a name): a container without one is keyed name="".
  assert.ok(apply(pod, { spec: { containers: [{ image: "x" }] } }, POD).ok);
  assert.equal(
    failed(apply({}, { list: [{ value: {} }] }, ASSOCIATIVE)),
    'error applying patch: failed to convert patch object to typed object: .list: element 0: associative list with keys has an element that omits all key fields ["key" "id"] (and doesn\'t have default values for any key fields)',
  );
});

test("the object is read as typed too, without AllowDuplicates: duplicate keys it brings fail the merge", () => {
  // smd.go converts the live object with ObjectToTyped and no options; duplicate env names pass the
  // Pod's decoding (and even its validation), so they reach the merge, which refuses them.
  const pod = podObject({
    containers: [
      {
        name: "app",
        env: [
          { name: "X", value: "1" },
          { name: "X", value: "2" },
        ],
      },
    ],
  });
  assert.equal(
    failed(apply(pod, { metadata: { labels: { a: "b" } } }, POD)),
    'error applying patch: failed to convert original object to typed object: .spec.containers[name="app"].env: duplicate entries for key [name="X"]',
  );
  // What decoding drops or refuses (an unknown field, a wrong type) cannot be in a request's object: not looked for.
  const odd = podObject({ containers: [{ name: "app" }], replicas: 3 });
  assert.ok(apply(odd, { metadata: { labels: { a: "b" } } }, POD).ok);
});

// ---- integration test: failurePolicy, status conditions, custom resources ----------------------

test("mutatingadmissionpolicy_test.go 'failure policy ignore': an invalid configuration leaves the object", () => {
  const endpoints = {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "test-configmap", namespace: "default" },
  };
  const req = podRequest(endpoints, {
    kind: { group: "", version: "v1", kind: "Endpoints" },
    resource: { group: "", version: "v1", resource: "endpoints" },
    name: "test-configmap",
  });
  // `dyn`: the label value is only known to be wrong at run time, as in upstream's runtime check.
  const text = (failurePolicy: string) =>
    yamlDocs(
      map("p", {
        failurePolicy,
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["*"], resources: ["endpoints"] },
          ],
        },
        mutations: [
          {
            patchType: "ApplyConfiguration",
            applyConfiguration: { expression: `Object{metadata: Object.metadata{labels: dyn({"a": 1})}}` },
          },
        ],
      }),
      mapBinding("b", "p"),
    );
  const ignored = run(text("Ignore"), req);
  assert.equal(ignored.allowed, true);
  assert.equal(ignored.patch, undefined);
  const denied = run(text("Fail"), req);
  assert.equal(
    denied.status?.message,
    "policy 'p' with binding 'b' denied request: error applying patch: failed to convert patch object to typed object: .metadata.labels.a: expected string, got &value.valueUnstructured{Value:1}",
  );
  // The integration test's own configuration: Endpoints has no `spec`.
  assert.equal(
    failed(
      apply(endpoints, { spec: { invalidField: "invalid apply configuration" } }, kindMergeOf(req.kind)),
    ),
    "error applying patch: failed to convert patch object to typed object: .spec: field not declared in schema",
  );
});

test("mutatingadmissionpolicy_test.go 'mutate status subresource': a condition merges by its type", () => {
  const ns = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "test-namespace" },
    status: { conditions: [{ type: "NamespaceDeletionContentFailure", status: "Unknown" }] },
  };
  const r = apply(
    ns,
    { status: { conditions: [{ type: "NamespaceDeletionContentFailure", message: "mutated" }] } },
    kindMergeOf({ group: "", version: "v1", kind: "Namespace" }),
  );
  assert.ok(r.ok);
  assert.deepEqual((r.value.object.status as Doc).conditions, [
    { type: "NamespaceDeletionContentFailure", status: "Unknown", message: "mutated" },
  ]);
  assert.deepEqual(r.value.ops, [{ op: "add", path: "/status/conditions/0/message", value: "mutated" }]);
});

const PANDA_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "pandas.awesome.bears.com" },
  spec: {
    group: "awesome.bears.com",
    names: { kind: "Panda", plural: "pandas" },
    scope: "Cluster",
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
                  tags: { type: "array", items: { type: "string" } },
                  bamboo: {
                    type: "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    items: {
                      type: "object",
                      required: ["name"],
                      properties: { name: { type: "string" }, size: { type: "integer" } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

function pandaText(expression: string): string {
  return yamlDocs(
    map("p", {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          { apiGroups: ["awesome.bears.com"], apiVersions: ["v1"], operations: ["*"], resources: ["pandas"] },
        ],
      },
      mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression } }],
    }),
    mapBinding("b", "p"),
    PANDA_CRD,
  );
}

function pandaRequest(spec: Doc): AdmissionRequest {
  return podRequest(
    { apiVersion: "awesome.bears.com/v1", kind: "Panda", metadata: { name: "v1-bears" }, spec },
    {
      kind: { group: "awesome.bears.com", version: "v1", kind: "Panda" },
      resource: { group: "awesome.bears.com", version: "v1", resource: "pandas" },
      namespace: "",
      name: "v1-bears",
    },
  );
}

test("Test_MutatingAdmissionPolicy_CustomResources: a CRD among the policy files gives the merge its schema", () => {
  const req = pandaRequest({ bamboo: [{ name: "a", size: 1 }, { name: "c" }] });
  const d = run(
    pandaText(
      `Object{metadata: Object.metadata{labels: {"mutated-panda": "true"}}, spec: Object.spec{bamboo: [Object.spec.bamboo{name: "a", size: 2}, Object.spec.bamboo{name: "b"}]}}`,
    ),
    req,
  );
  assert.deepEqual(merged(d, req), {
    apiVersion: "awesome.bears.com/v1",
    kind: "Panda",
    metadata: { name: "v1-bears", labels: { "mutated-panda": "true" } },
    // Merged by name: "c" stays (as a deduced, atomic list it would be replaced).
    spec: { bamboo: [{ name: "a", size: 2 }, { name: "c" }, { name: "b" }] },
  });
  // A list without a list type is atomic: refused, as for built-in kinds.
  const refused = run(pandaText(`Object{spec: Object.spec{tags: ["x"]}}`), pandaRequest({}));
  assert.match(refused.status?.message ?? "", /may not mutate atomic arrays, maps or structs: \.spec\.tags$/);
});

// ---- key defaults, sets, order, nulls (typed/helpers.go, typed/merge.go) ---------------------------

test("a key left out takes the schema's default: a port without protocol is the TCP port", () => {
  const pod = podObject({
    containers: [{ name: "app", ports: [{ containerPort: 80, protocol: "TCP", name: "web" }] }],
  });
  const r = apply(
    pod,
    {
      spec: {
        containers: [
          {
            name: "app",
            ports: [
              { containerPort: 80, name: "http" },
              { containerPort: 80, protocol: "UDP" },
            ],
          },
        ],
      },
    },
    POD,
  );
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.deepEqual(((r.value.object.spec as Doc).containers as Doc[])[0]?.ports, [
    { containerPort: 80, protocol: "TCP", name: "http" },
    { containerPort: 80, protocol: "UDP" },
  ]);
  // Both keys left out on both sides: containerPort's default (0) and protocol's (TCP) make them one port.
  const zero = apply(
    podObject({ containers: [{ name: "app", ports: [{ name: "a" }] }] }),
    {
      spec: { containers: [{ name: "app", ports: [{ hostPort: 1 }] }] },
    },
    POD,
  );
  assert.ok(zero.ok);
  assert.deepEqual(((zero.value.object.spec as Doc).containers as Doc[])[0]?.ports, [
    { name: "a", hostPort: 1 },
  ]);
});

test("finalizers merge as a set; labels and annotations key by key; a struct field set to null is left out", () => {
  const pod = podObject({ containers: [{ name: "app" }], priority: 3 }, { a: "1" });
  (pod.metadata as Doc).finalizers = ["x"];
  const r = apply(
    pod,
    {
      metadata: { finalizers: ["y", "x"], labels: { b: "2" }, annotations: { n: "v" } },
      spec: { priority: null },
    },
    POD,
  );
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.deepEqual(r.value.object.metadata, {
    name: "web",
    namespace: "default",
    labels: { a: "1", b: "2" },
    finalizers: ["y", "x"],
    annotations: { n: "v" },
  });
  assert.equal(Object.hasOwn(r.value.object.spec as Doc, "priority"), false);
});

test("a null configuration map keeps a non-empty granular map; it clears an empty one", () => {
  const keep = apply(podObject({ containers: [] }, { a: "1" }), { metadata: { labels: null } }, POD);
  assert.ok(keep.ok);
  assert.deepEqual(keep.value.ops, []);
  const clear = apply(podObject({ containers: [] }, {}), { metadata: { labels: null } }, POD);
  assert.ok(clear.ok);
  assert.deepEqual(clear.value.ops, [{ op: "remove", path: "/metadata/labels" }]);
});

test("shared elements the configuration lists in another order are reordered: the list is replaced", () => {
  const pod = podObject({ containers: [{ name: "a" }, { name: "b" }, { name: "c" }] });
  const r = apply(pod, { spec: { containers: [{ name: "c", image: "x" }, { name: "a" }] } }, POD);
  assert.ok(r.ok);
  assert.deepEqual((r.value.object.spec as Doc).containers, [
    { name: "b" },
    { name: "c", image: "x" },
    { name: "a" },
  ]);
  assert.deepEqual(r.value.ops, [
    {
      op: "replace",
      path: "/spec/containers",
      value: [{ name: "b" }, { name: "c", image: "x" }, { name: "a" }],
    },
  ]);
});

test("a kind without a known schema merges as SMD deduces: maps key by key, lists replaced, nothing refused", () => {
  const none = kindMergeOf({ group: "example.com", version: "v1", kind: "Unknown" });
  assert.equal(none.schema, undefined);
  const object = {
    apiVersion: "example.com/v1",
    kind: "Unknown",
    metadata: { name: "u", labels: { a: "1" } },
    spec: { list: [{ name: "a", x: 1 }], n: 1 },
  };
  const r = apply(
    object,
    { metadata: { labels: { b: "2" } }, spec: { list: [{ name: "a", y: 2 }], other: { z: 1 } } },
    none,
  );
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.deepEqual(r.value.object, {
    apiVersion: "example.com/v1",
    kind: "Unknown",
    metadata: { name: "u", labels: { a: "1", b: "2" } },
    spec: { list: [{ name: "a", y: 2 }], n: 1, other: { z: 1 } },
  });
});

// ---- typed/merge_test.go, on its own schemas ---------------------------------------------------

function kindOf(schema: Schema): KindMerge {
  const k: KindSchema = {
    apiVersion: "example.com/v1",
    kind: "T",
    origin: "crd",
    definition: () => undefined,
    schema,
  };
  return { root: kindMergeSchema(k), schema: k };
}

const STRING_SET: Schema = { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } };

const GRAB_BAG = kindOf({
  type: "object",
  properties: {
    numeric: { type: "number" },
    string: { type: "string" },
    bool: { type: "boolean" },
    setStr: STRING_SET,
    setBool: { type: "array", "x-kubernetes-list-type": "set", items: { type: "boolean" } },
    setNumeric: { type: "array", "x-kubernetes-list-type": "set", items: { type: "number" } },
  },
});

const ASSOCIATIVE = kindOf({
  type: "object",
  properties: {
    list: {
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["key", "id"],
      items: {
        type: "object",
        properties: {
          key: { type: "string" },
          id: { type: "number" },
          value: { type: "object", additionalProperties: { type: "string" } },
          bv: { type: "boolean" },
          nv: { type: "number" },
        },
      },
    },
    atomicList: { type: "array", "x-kubernetes-list-type": "atomic", items: { type: "string" } },
  },
});

const NESTED = kindOf({
  type: "object",
  properties: {
    map: { type: "object", additionalProperties: { type: "object", "x-kubernetes-map-type": "atomic" } },
    struct: {
      type: "object",
      properties: { value: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    },
    list: { type: "array", "x-kubernetes-list-type": "atomic", items: { type: "string" } },
  },
});

/** [lhs, rhs, out] as merge_test.go writes them (those that validate without AllowDuplicates). */
const TRIPLETS: readonly [string, KindMerge, string, string, string][] = [
  ["struct grab bag", GRAB_BAG, `{"numeric":1}`, `{"numeric":3.14159}`, `{"numeric":3.14159}`],
  ["struct grab bag", GRAB_BAG, `{"numeric":3.14159}`, `{"numeric":1}`, `{"numeric":1}`],
  ["struct grab bag", GRAB_BAG, `{"string":"aoeu"}`, `{"bool":true}`, `{"string":"aoeu","bool":true}`],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c"]}`,
    `{"setStr":["a","b"]}`,
    `{"setStr":["a","b","c"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b"]}`,
    `{"setStr":["a","b","c"]}`,
    `{"setStr":["a","b","c"]}`,
  ],
  ["struct grab bag", GRAB_BAG, `{"setStr":["a","b","c"]}`, `{"setStr":[]}`, `{"setStr":["a","b","c"]}`],
  ["struct grab bag", GRAB_BAG, `{"setStr":[]}`, `{"setStr":["a","b","c"]}`, `{"setStr":["a","b","c"]}`],
  ["struct grab bag", GRAB_BAG, `{"setStr":["a","b"]}`, `{"setStr":["b","a"]}`, `{"setStr":["b","a"]}`],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c"]}`,
    `{"setStr":["d","e","f"]}`,
    `{"setStr":["a","b","c","d","e","f"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c"]}`,
    `{"setStr":["c","d","e","f"]}`,
    `{"setStr":["a","b","c","d","e","f"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c","g","f"]}`,
    `{"setStr":["c","d","e","f"]}`,
    `{"setStr":["a","b","c","g","d","e","f"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c"]}`,
    `{"setStr":["d","e","f","x","y","z"]}`,
    `{"setStr":["a","b","c","d","e","f","x","y","z"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["c","d","e","f"]}`,
    `{"setStr":["a","c","e"]}`,
    `{"setStr":["a","c","d","e","f"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c","x","y","z"]}`,
    `{"setStr":["d","e","f"]}`,
    `{"setStr":["a","b","c","x","y","z","d","e","f"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c","x","y","z"]}`,
    `{"setStr":["d","e","f","x","y","z"]}`,
    `{"setStr":["a","b","c","d","e","f","x","y","z"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["c","a","g","f"]}`,
    `{"setStr":["c","f","a","g"]}`,
    `{"setStr":["c","f","a","g"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c","d"]}`,
    `{"setStr":["d","e","f","a"]}`,
    `{"setStr":["b","c","d","e","f","a"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["c","d","e","f","g","h","i","j"]}`,
    `{"setStr":["2","h","3","e","4","k","l"]}`,
    `{"setStr":["c","d","f","g","2","h","i","j","3","e","4","k","l"]}`,
  ],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setStr":["a","b","c","d","e","f","g","h","i","j"]}`,
    `{"setStr":["1","b","2","h","3","e","4","k","l"]}`,
    `{"setStr":["a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l"]}`,
  ],
  ["struct grab bag", GRAB_BAG, `{"setBool":[true]}`, `{"setBool":[false]}`, `{"setBool":[true, false]}`],
  [
    "struct grab bag",
    GRAB_BAG,
    `{"setNumeric":[1,2,3.14159]}`,
    `{"setNumeric":[1,2,3]}`,
    `{"setNumeric":[1,2,3.14159,3]}`,
  ],
  [
    "associative list",
    ASSOCIATIVE,
    `{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}`,
    `{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}`,
    `{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}`,
  ],
  [
    "associative list",
    ASSOCIATIVE,
    `{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}`,
    `{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}`,
    `{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}`,
  ],
  [
    "associative list",
    ASSOCIATIVE,
    `{"list":[{"key":"a","id":1},{"key":"b","id":1}]}`,
    `{"list":[{"key":"a","id":1},{"key":"a","id":2}]}`,
    `{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":2}]}`,
  ],
  [
    "associative list",
    ASSOCIATIVE,
    `{"list":[{"key":"b","id":2}]}`,
    `{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}`,
    `{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}`,
  ],
  [
    "associative list",
    ASSOCIATIVE,
    `{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}`,
    `{"list":[{"key":"c","id":3},{"key":"b","id":2}]}`,
    `{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}`,
  ],
  [
    "associative list",
    ASSOCIATIVE,
    `{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}`,
    `{"list":[{"key":"c","id":3},{"key":"a","id":1}]}`,
    `{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}`,
  ],
  [
    "associative list",
    ASSOCIATIVE,
    `{"atomicList":["a","a","a"]}`,
    `{"atomicList":null}`,
    `{"atomicList":null}`,
  ],
  ["associative list", ASSOCIATIVE, `{"atomicList":["a","b","c"]}`, `{"atomicList":[]}`, `{"atomicList":[]}`],
  [
    "associative list",
    ASSOCIATIVE,
    `{"atomicList":["a","a","a"]}`,
    `{"atomicList":["a","a"]}`,
    `{"atomicList":["a","a"]}`,
  ],
  ["null/empty map", NESTED, `{}`, `{"map":{}}`, `{"map":{}}`],
  ["null/empty map", NESTED, `{}`, `{"map":null}`, `{"map":null}`],
  ["null/empty map", NESTED, `{"map":null}`, `{"map":{}}`, `{"map":{}}`],
  ["null/empty map", NESTED, `{"map":{}}`, `{"map":null}`, `{"map":null}`],
  ["null/empty struct", NESTED, `{}`, `{"struct":{}}`, `{"struct":{}}`],
  ["null/empty struct", NESTED, `{"struct":{}}`, `{"struct":null}`, `{"struct":null}`],
  ["null/empty list", NESTED, `{}`, `{"list":[]}`, `{"list":[]}`],
  ["null/empty list", NESTED, `{"list":[]}`, `{"list":null}`, `{"list":null}`],
  ["null/empty list", NESTED, `{"list":null}`, `{"list":[]}`, `{"list":[]}`],
];

test("typed/merge_test.go TestMerge: the merged value, element order included", () => {
  for (const [name, kind, lhs, rhs, out] of TRIPLETS) {
    // The merge is the same whatever findAtomics would say of the configuration; it is called directly.
    const r = applyMutation(JSON.parse(lhs), "ApplyConfiguration", toCel(JSON.parse(rhs)), {
      root: kind.root,
      schema: undefined,
    });
    assert.ok(r.ok, `${name}: ${r.ok ? "" : r.error.message}`);
    assert.deepEqual(r.value.object, JSON.parse(out), `${name}: ${lhs} + ${rhs}`);
    assert.deepEqual(
      applyJsonPatch(JSON.parse(lhs), r.value.ops),
      JSON.parse(out),
      `${name}: ops of ${lhs} + ${rhs}`,
    );
  }
});

test("typed/merge_test.go's duplicates in the object: the MAP reads the object without AllowDuplicates", () => {
  assert.equal(
    failed(apply({ setStr: ["a", "b", "b"] }, { setStr: ["c"] }, GRAB_BAG)),
    'error applying patch: failed to convert original object to typed object: .setStr: duplicate entries for key [="b"]',
  );
  assert.equal(
    failed(
      apply(
        {
          list: [
            { key: "a", id: 1, nv: 1 },
            { key: "a", id: 1, nv: 2 },
          ],
        },
        {},
        ASSOCIATIVE,
      ),
    ),
    'error applying patch: failed to convert original object to typed object: .list: duplicate entries for key [id=1,key="a"]',
  );
});

// ---- property: merges of typed Pods replay and settle --------------------------------------------

test("seeded Pod merges: the operations replay to the merged object, and merging again changes nothing", () => {
  const r = seededRandom(20260517);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const names = ["a", "b", "c", "d"];
  const container = (): Doc => {
    const c: Doc = { name: pick(names) };
    if (r() < 0.5) c.image = pick(["x:1", "y:2"]);
    if (r() < 0.4)
      c.env = [...new Set([pick(names), pick(names)])].map((name) => ({ name, value: pick(["1", "2"]) }));
    if (r() < 0.3)
      c.ports = [
        { containerPort: pick([80, 443]), ...(r() < 0.5 ? { protocol: pick(["TCP", "UDP"]) } : {}) },
      ];
    return c;
  };
  const containers = (): Doc[] => {
    const byName = new Map<string, Doc>();
    for (let i = Math.floor(r() * 4); i > 0; i--) {
      const c = container();
      byName.set(c.name as string, c);
    }
    return [...byName.values()];
  };
  const labels = (): Record<string, string> =>
    Object.fromEntries(names.filter(() => r() < 0.4).map((n) => [n, pick(["1", "2"])]));
  let changes = 0;
  for (let n = 0; n < 300; n++) {
    const object = podObject({ containers: containers() }, labels());
    const config: Doc = { metadata: { labels: labels() }, spec: { containers: containers() } };
    if (r() < 0.3) (config.metadata as Doc).finalizers = [pick(names)];
    const first = apply(object, config, POD);
    assert.ok(
      first.ok,
      first.ok ? "" : `${first.error.message} for ${JSON.stringify(object)} + ${JSON.stringify(config)}`,
    );
    if (first.value.ops.length > 0) changes++;
    const again = apply(first.value.object, config, POD);
    assert.ok(again.ok);
    assert.deepEqual(
      again.value.ops,
      [],
      `merging ${JSON.stringify(config)} again into ${JSON.stringify(first.value.object)}`,
    );
  }
  assert.ok(changes > 200, `${changes} merges changed the object`);
});
