/**
 * The API server's defaults, applied again after each mutation: kubernetes staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/policy/mutating/dispatcher.go (`dispatchOne` runs
 * `o.GetObjectDefaulter().Default` on each mutation's result, before the next mutation) and
 * plugin/webhook/mutating/dispatcher.go (the same after a webhook's patch). The next mutation, the
 * next policy and the validating policies see the defaulted object, and the patch reaches it. The
 * offline commands ask for it (`defaults: true`); the webhook does not, the API server defaulting
 * the object it patches itself.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePolicySet } from "../../../src/compile/policy.ts";
import { admit } from "../../../src/engine/admit.ts";
import { contextFromSet } from "../../../src/engine/context.ts";
import { decide } from "../../../src/engine/decision.ts";
import type { AdmissionDecision, AdmitOptions } from "../../../src/engine/types.ts";
import { withDefaults } from "../../../src/kube/defaults/index.ts";
import { parsePolicyText } from "../../../src/policy/parse.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { applyJsonPatch, type PatchOperation } from "../../helpers/json-patch.ts";
import {
  FAR,
  map,
  mapBinding,
  podObject,
  podRequest,
  vap,
  vapBinding,
  yamlDocs,
} from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

const ADD_SIDECAR = {
  patchType: "ApplyConfiguration",
  applyConfiguration: {
    expression:
      "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'proxy', image: 'proxy:1.0', ports: [Object.spec.containers.ports{containerPort: 8080}]}]}}",
  },
};

/** The pod the API server sends: defaulted. */
const pod = () =>
  podRequest(withDefaults(podObject({ containers: [{ name: "app", image: "app:1" }] })).object);

function chain(
  text: string,
  request: AdmissionRequest,
  options: Partial<AdmitOptions> = {},
): AdmissionDecision {
  const { set } = parsePolicyText(text, "t.yaml");
  const compiled = compilePolicySet(set);
  return decide(
    admit(compiled, request, contextFromSet(compiled), { deadline: FAR(), defaults: true, ...options }),
  );
}

const proxyOf = (d: AdmissionDecision) =>
  ((d.patchedObject as { spec: { containers: Doc[] } }).spec.containers as Doc[]).find(
    (c) => c.name === "proxy",
  );

test("a container a mutation adds gets its defaults, and the patch takes the request's object there", () => {
  const request = pod();
  const d = chain(yamlDocs(map("m", { mutations: [ADD_SIDECAR] }), mapBinding("mb", "m")), request);
  assert.deepEqual(proxyOf(d), {
    name: "proxy",
    image: "proxy:1.0",
    ports: [{ containerPort: 8080, protocol: "TCP" }],
    imagePullPolicy: "IfNotPresent",
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
  });
  const patched = applyJsonPatch(request.object, (d.patch ?? []) as PatchOperation[]);
  assert.deepEqual(patched, d.patchedObject);
  // The pod was defaulted already: only the new container's defaults are added.
  assert.deepEqual(
    (d.patch ?? []).slice(1).map((op) => op.path),
    [
      "/spec/containers/1/imagePullPolicy",
      "/spec/containers/1/terminationMessagePath",
      "/spec/containers/1/terminationMessagePolicy",
      "/spec/containers/1/ports/0/protocol",
    ],
  );
});

test("the next mutation and the validating policies read the defaults of what the first added", () => {
  const text = yamlDocs(
    map("m", {
      mutations: [
        ADD_SIDECAR,
        {
          patchType: "ApplyConfiguration",
          applyConfiguration: {
            // Reads the default the first mutation's container got: an error without it.
            expression:
              "Object{metadata: Object.metadata{labels: {'pull': object.spec.containers.filter(c, c.name == 'proxy')[0].imagePullPolicy}}}",
          },
        },
      ],
    }),
    mapBinding("mb", "m"),
    vap("v", {
      validations: [{ expression: "object.spec.containers.all(c, c.terminationMessagePolicy == 'File')" }],
    }),
    vapBinding("vb", "v"),
  );
  const d = chain(text, pod());
  assert.equal(d.allowed, true, JSON.stringify(d.status));
  assert.equal(((d.patchedObject as Doc).metadata as { labels: Doc }).labels.pull, "IfNotPresent");
});

test("a parent the defaults make is added whole, and defaults inside what a mutation wrote fold into its operation", () => {
  // Recreate has no rollingUpdate; switched to RollingUpdate, SetDefaults_Deployment makes it.
  const deployment = withDefaults({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default" },
    spec: {
      strategy: { type: "Recreate" },
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "app", image: "app:1" }] },
      },
    },
  }).object;
  const request = podRequest(deployment, {
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    resource: { group: "apps", version: "v1", resource: "deployments" },
  });
  const jsonPatch = (expression: string) =>
    yamlDocs(
      map("m", {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
          ],
        },
        mutations: [{ patchType: "JSONPatch", jsonPatch: { expression } }],
      }),
      mapBinding("mb", "m"),
    );
  const rolling = chain(
    jsonPatch("[JSONPatch{op: 'replace', path: '/spec/strategy/type', value: 'RollingUpdate'}]"),
    request,
  );
  assert.deepEqual(rolling.patch, [
    { op: "replace", path: "/spec/strategy/type", value: "RollingUpdate" },
    { op: "add", path: "/spec/strategy/rollingUpdate", value: { maxUnavailable: "25%", maxSurge: "25%" } },
  ]);
  // A map the mutation wrote whole takes its defaults into the same operation (patch.ts folds them).
  const whole = chain(
    jsonPatch("[JSONPatch{op: 'replace', path: '/spec/strategy', value: {'type': 'RollingUpdate'}}]"),
    request,
  );
  assert.deepEqual(whole.patch, [
    {
      op: "replace",
      path: "/spec/strategy",
      value: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
    },
  ]);
  for (const d of [rolling, whole])
    assert.deepEqual(applyJsonPatch(request.object, (d.patch ?? []) as PatchOperation[]), d.patchedObject);
});

test("without defaults (--no-defaults, defaulting: false), the mutation's result is left as it is", () => {
  const d = chain(yamlDocs(map("m", { mutations: [ADD_SIDECAR] }), mapBinding("mb", "m")), pod(), {
    defaults: false,
  });
  assert.deepEqual(proxyOf(d), { name: "proxy", image: "proxy:1.0", ports: [{ containerPort: 8080 }] });
  assert.equal(d.patch?.length, 1);
});

test("a kind without defaults is not touched; an unchanged object is not defaulted", () => {
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "default" } };
  const text = yamlDocs(
    map("m", {
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps", "pods"] },
        ],
      },
      mutations: [
        {
          patchType: "ApplyConfiguration",
          applyConfiguration: { expression: "Object{metadata: Object.metadata{labels: {'x': 'y'}}}" },
        },
      ],
    }),
    mapBinding("mb", "m"),
  );
  const request = podRequest(cm, {
    kind: { group: "", version: "v1", kind: "ConfigMap" },
    resource: { group: "", version: "v1", resource: "configmaps" },
    name: "c",
  });
  assert.deepEqual(chain(text, request).patch, [{ op: "add", path: "/metadata/labels", value: { x: "y" } }]);
  // The pod already carries every label: no change, so nothing is defaulted (the undefaulted pod stays so).
  const bare = podRequest(podObject({ containers: [{ name: "app", image: "app:1" }] }, { x: "y" }));
  assert.equal(chain(text, bare).patch, undefined);
});

test("the webhook's phase leaves it to the API server: without `defaults`, no defaults after a mutation", () => {
  const { set } = parsePolicyText(
    yamlDocs(map("m", { mutations: [ADD_SIDECAR] }), mapBinding("mb", "m")),
    "t.yaml",
  );
  const compiled = compilePolicySet(set);
  const d = decide(admit(compiled, pod(), contextFromSet(compiled), { deadline: FAR(), phase: "mutate" }));
  assert.equal(d.patch?.length, 1);
});
