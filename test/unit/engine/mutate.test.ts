/**
 * The mutating phase against the API server's semantics, with real policy YAML:
 * k8s.io/apiserver/pkg/admission/plugin/policy/mutating/{dispatcher.go,patch/json_patch.go,patch/smd.go}.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fastJsonPatch from "fast-json-patch";
import type { AdmissionDecision, PolicyResult } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { map, mapBinding, mutateText, podObject, podRequest, yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

function jsonPatch(expression: string): Doc {
  return { patchType: "JSONPatch", jsonPatch: { expression } };
}

function apply(expression: string): Doc {
  return { patchType: "ApplyConfiguration", applyConfiguration: { expression } };
}

/** Policies `name` bound by `name-binding`, in the order given. */
function policies(...specs: [string, Doc][]): string {
  return yamlDocs(...specs.flatMap(([name, spec]) => [map(name, spec), mapBinding(`${name}-binding`, name)]));
}

/** The decision's patch applied to the request's original object. */
function applied(request: AdmissionRequest, d: AdmissionDecision): unknown {
  const doc = structuredClone(request.object);
  return fastJsonPatch.applyPatch(doc, (d.patch ?? []) as fastJsonPatch.Operation[], true, false).newDocument;
}

function only(d: AdmissionDecision): PolicyResult {
  assert.equal(d.results.length, 1, `expected one result, got ${JSON.stringify(d.results)}`);
  return d.results[0] as PolicyResult;
}

test("JSONPatch: add a label whose key has a '/', with jsonpatch.escapeKey", () => {
  const text = policies([
    "owner",
    {
      mutations: [
        jsonPatch(
          `[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/owner"), value: "team-a"}]`,
        ),
      ],
    },
  ]);
  const request = podRequest(podObject({ containers: [] }, { app: "web" }));
  const d = mutateText(text, request);
  assert.equal(d.allowed, true);
  assert.deepEqual(d.patch, [{ op: "add", path: "/metadata/labels/example.com~1owner", value: "team-a" }]);
  assert.deepEqual(
    d.patchedObject,
    podObject({ containers: [] }, { app: "web", "example.com/owner": "team-a" }),
  );
  assert.deepEqual(applied(request, d), d.patchedObject);
  assert.deepEqual(only(d).patch, d.patch);
  assert.equal(only(d).outcome, "pass");
  // The request's own object is left as it was.
  assert.deepEqual(request.object, podObject({ containers: [] }, { app: "web" }));
});

test("JSONPatch: several operations apply in order (replace, remove, add to a list end)", () => {
  const text = policies([
    "edit",
    {
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "replace", path: "/spec/priority", value: 2},
          JSONPatch{op: "remove", path: "/spec/hostname"},
          JSONPatch{op: "add", path: "/spec/tolerations/-", value: {"key": "gpu", "operator": "Exists"}}
        ]`),
      ],
    },
  ]);
  const request = podRequest(
    podObject({ priority: 5, hostname: "h", tolerations: [{ key: "a", operator: "Exists" }] }),
  );
  const d = mutateText(text, request);
  assert.deepEqual(
    d.patchedObject,
    podObject({
      priority: 2,
      tolerations: [
        { key: "a", operator: "Exists" },
        { key: "gpu", operator: "Exists" },
      ],
    }),
  );
  assert.deepEqual(applied(request, d), d.patchedObject);
});

test("JSONPatch: a failing 'test' operation leaves the object unchanged, without error", {}, () => {
  const text = policies([
    "guarded",
    {
      failurePolicy: "Fail",
      mutations: [
        jsonPatch(`[
            JSONPatch{op: "test", path: "/spec/replicas", value: 1},
            JSONPatch{op: "replace", path: "/spec/replicas", value: 2}
          ]`),
      ],
    },
  ]);
  const d = mutateText(text, podRequest(podObject({ replicas: 5 })));
  assert.equal(d.allowed, true);
  assert.equal(d.patch, undefined);
  assert.equal(only(d).outcome, "pass");
});

test("ApplyConfiguration: labels merge into the existing ones", () => {
  const text = policies([
    "labels",
    { mutations: [apply(`Object{metadata: Object.metadata{labels: {"team": "a", "tier": "web"}}}`)] },
  ]);
  const request = podRequest(podObject({}, { app: "web", tier: "old" }));
  const d = mutateText(text, request);
  assert.deepEqual(d.patchedObject, podObject({}, { app: "web", tier: "web", team: "a" }));
  assert.deepEqual(applied(request, d), d.patchedObject);
});

test("ApplyConfiguration: containers merge by name, others are kept in place", () => {
  const text = policies([
    "image",
    {
      mutations: [
        apply(`Object{spec: Object.spec{containers: [
          Object.spec.containers{name: "sidecar", image: "sidecar:2"},
          Object.spec.containers{name: "extra", image: "extra:1"}
        ]}}`),
      ],
    },
  ]);
  const request = podRequest(
    podObject({
      containers: [
        { name: "app", image: "app:1", ports: [{ containerPort: 80 }] },
        { name: "sidecar", image: "sidecar:1", args: ["-v"] },
      ],
    }),
  );
  const d = mutateText(text, request);
  assert.deepEqual(
    d.patchedObject,
    podObject({
      containers: [
        { name: "app", image: "app:1", ports: [{ containerPort: 80 }] },
        { name: "sidecar", image: "sidecar:2", args: ["-v"] },
        { name: "extra", image: "extra:1" },
      ],
    }),
  );
  assert.deepEqual(applied(request, d), d.patchedObject);
});

test("two policies run in order, the second seeing the first's result; the final patch applies to the original", () => {
  const text = policies(
    ["tier", { mutations: [apply(`Object{metadata: Object.metadata{labels: {"tier": "web"}}}`)] }],
    [
      "annotate",
      {
        mutations: [
          apply(`Object{metadata: Object.metadata{annotations: {"seen-tier": object.metadata.labels.tier}}}`),
        ],
      },
    ],
  );
  const request = podRequest(podObject({}, { app: "web" }));
  const d = mutateText(text, request);
  assert.deepEqual(d.patchedObject, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web",
      namespace: "default",
      labels: { app: "web", tier: "web" },
      annotations: { "seen-tier": "web" },
    },
    spec: {},
  });
  assert.deepEqual(applied(request, d), d.patchedObject);
  assert.deepEqual(
    d.results.map((r) => [r.policy, r.outcome, r.patch]),
    [
      ["tier", "pass", [{ op: "add", path: "/metadata/labels/tier", value: "web" }]],
      ["annotate", "pass", [{ op: "add", path: "/metadata/annotations", value: { "seen-tier": "web" } }]],
    ],
  );
});

test("idempotence: mutating the patched object again yields no patch", () => {
  const text = policies(
    ["labels", { mutations: [apply(`Object{metadata: Object.metadata{labels: {"team": "a"}}}`)] }],
    [
      "owner",
      {
        matchConditions: [{ name: "no-owner", expression: `!("owner" in object.metadata.labels)` }],
        mutations: [jsonPatch(`[JSONPatch{op: "add", path: "/metadata/labels/owner", value: "me"}]`)],
      },
    ],
  );
  const first = mutateText(text, podRequest(podObject({}, { app: "web" })));
  assert.ok(first.patch && first.patch.length === 2, JSON.stringify(first.patch));
  const again = mutateText(text, podRequest(first.patchedObject as Record<string, unknown>));
  assert.equal(again.allowed, true);
  assert.equal(again.patch, undefined);
  assert.equal(again.patchedObject, undefined);
});

for (const reinvocationPolicy of ["IfNeeded", "Never"] as const) {
  test(`reinvocationPolicy ${reinvocationPolicy}: a policy ${reinvocationPolicy === "IfNeeded" ? "is run again and sees" : "does not see"} a later policy's change`, () => {
    const text = policies(
      [
        "count",
        {
          reinvocationPolicy,
          mutations: [
            apply(
              `Object{metadata: Object.metadata{annotations: {"label-count": string(size(object.metadata.labels))}}}`,
            ),
          ],
        },
      ],
      ["add-label", { mutations: [apply(`Object{metadata: Object.metadata{labels: {"team": "a"}}}`)] }],
    );
    const d = mutateText(text, podRequest(podObject({}, { app: "web" })));
    const meta = (
      d.patchedObject as { metadata: { annotations: Record<string, string>; labels: Record<string, string> } }
    ).metadata;
    assert.deepEqual(meta.labels, { app: "web", team: "a" });
    assert.deepEqual(meta.annotations, { "label-count": reinvocationPolicy === "IfNeeded" ? "2" : "1" });
  });
}

test("DELETE is never patched", () => {
  const text = yamlDocs(
    map("p", {
      matchConstraints: {
        resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["*"], resources: ["pods"] }],
      },
      mutations: [apply(`Object{metadata: Object.metadata{labels: {"x": "y"}}}`)],
    }),
    mapBinding("b", "p"),
  );
  const d = mutateText(
    text,
    podRequest(null, { operation: "DELETE", oldObject: podObject({}, { app: "web" }) }),
  );
  assert.equal(d.allowed, true);
  assert.equal(d.patch, undefined);
  assert.deepEqual(d.results, []);
});

test("a request for a MutatingAdmissionPolicy object is never mutated", () => {
  const text = yamlDocs(
    map("p", {
      matchConstraints: {
        resourceRules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"] }],
      },
      mutations: [apply(`Object{metadata: Object.metadata{labels: {"x": "y"}}}`)],
    }),
    mapBinding("b", "p"),
  );
  const request = podRequest(
    {
      apiVersion: "admissionregistration.k8s.io/v1alpha1",
      kind: "MutatingAdmissionPolicy",
      metadata: { name: "q" },
    },
    {
      kind: { group: "admissionregistration.k8s.io", version: "v1alpha1", kind: "MutatingAdmissionPolicy" },
      resource: {
        group: "admissionregistration.k8s.io",
        version: "v1alpha1",
        resource: "mutatingadmissionpolicies",
      },
      namespace: "",
      name: "q",
    },
  );
  const d = mutateText(text, request);
  assert.equal(d.patch, undefined);
  assert.deepEqual(d.results, []);
  // The same wildcard policy does patch an ordinary object.
  assert.deepEqual(mutateText(text, podRequest(podObject())).patch, [
    { op: "add", path: "/metadata/labels", value: { x: "y" } },
  ]);
});

test("matchConditions false: the policy is skipped and nothing is patched", () => {
  const text = policies([
    "p",
    {
      matchConditions: [{ name: "only-web", expression: `object.metadata.labels.app == "web"` }],
      mutations: [apply(`Object{metadata: Object.metadata{labels: {"x": "y"}}}`)],
    },
  ]);
  const d = mutateText(text, podRequest(podObject({}, { app: "db" })));
  assert.equal(d.patch, undefined);
  assert.equal(only(d).outcome, "skip");
});

for (const failurePolicy of ["Fail", "Ignore"] as const) {
  test(`a mutation's runtime error → failurePolicy ${failurePolicy}; later policies still apply`, () => {
    const text = policies(
      [
        "broken",
        {
          failurePolicy,
          mutations: [apply(`Object{metadata: Object.metadata{labels: {"x": object.spec.nope}}}`)],
        },
      ],
      ["fine", { mutations: [apply(`Object{metadata: Object.metadata{labels: {"ok": "yes"}}}`)] }],
    );
    const d = mutateText(text, podRequest(podObject({}, {})));
    assert.equal(d.allowed, failurePolicy === "Ignore");
    assert.deepEqual(
      d.results.map((r) => [r.policy, r.outcome]),
      [
        ["broken", "error"],
        ["fine", "pass"],
      ],
    );
    assert.deepEqual(d.patch, [{ op: "add", path: "/metadata/labels/ok", value: "yes" }]);
  });
}

test("a mutation's runtime error under Fail: the denial is worded as Kubernetes' policy error", {}, () => {
  const expr = `Object{metadata: Object.metadata{labels: {"x": object.spec.nope}}}`;
  const d = mutateText(
    policies(["broken", { failurePolicy: "Fail", mutations: [apply(expr)] }]),
    podRequest(podObject()),
  );
  assert.deepEqual(d.status, {
    code: 403,
    reason: "Invalid",
    message: `policy 'broken' with binding 'broken-binding' denied request: expression '${expr}' resulted in error: no such key: nope`,
  });
});

test("a JSONPatch that cannot apply (remove of a missing path) → failurePolicy Fail denies", () => {
  const text = policies([
    "p",
    {
      failurePolicy: "Fail",
      mutations: [jsonPatch(`[JSONPatch{op: "remove", path: "/metadata/labels/missing"}]`)],
    },
  ]);
  const d = mutateText(text, podRequest(podObject({}, { app: "web" })));
  assert.equal(d.allowed, false);
  assert.equal(only(d).outcome, "error");
  assert.equal(d.patch, undefined);
});

test("params reach mutations: a ConfigMap gives the label value", () => {
  const text = yamlDocs(
    map("p", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      mutations: [apply(`Object{metadata: Object.metadata{labels: {"team": params.data.team}}}`)],
    }),
    mapBinding("b", "p", {
      paramRef: { name: "team", namespace: "default", parameterNotFoundAction: "Deny" },
    }),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "team", namespace: "default" },
      data: { team: "blue" },
    },
  );
  const d = mutateText(text, podRequest(podObject({}, {})));
  assert.deepEqual(d.patch, [{ op: "add", path: "/metadata/labels/team", value: "blue" }]);
  assert.equal(only(d).param, "default/team");
});

test("variables are visible to mutations", () => {
  const text = policies([
    "p",
    {
      variables: [{ name: "image", expression: `object.spec.containers[0].image + "-patched"` }],
      mutations: [
        jsonPatch(`[JSONPatch{op: "replace", path: "/spec/containers/0/image", value: variables.image}]`),
      ],
    },
  ]);
  const d = mutateText(text, podRequest(podObject({ containers: [{ name: "app", image: "app:1" }] })));
  assert.deepEqual(d.patch, [{ op: "replace", path: "/spec/containers/0/image", value: "app:1-patched" }]);
});
