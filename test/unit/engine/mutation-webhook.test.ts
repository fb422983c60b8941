/**
 * MAP mutations through the real webhook: the server over TLS on 127.0.0.1, a real admitter built
 * from policy YAML, AdmissionReview JSON in and out. What the API server would do with the reply:
 * apply the base64 JSON Patch to the object (the independent RFC 6902 applier here), or refuse the
 * request with the status. Upstream: kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/
 * policy/mutating/patch/smd.go and json_patch.go, mutating/dispatcher.go.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createAdmitter } from "../../../src/adapters/server/admitter.ts";
import { compileText, map, mapBinding, yamlDocs } from "../../helpers/engine.ts";
import { json, send } from "../../helpers/https.ts";
import { applyJsonPatch } from "../../helpers/json-patch.ts";
import { serverCert, startServer } from "../server/fakes.ts";

type Doc = Record<string, unknown>;

const ca = serverCert.cert;

const DEPLOYMENTS = {
  resourceRules: [
    { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
  ],
};

const OBJECT: Doc = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "team-a", labels: { app: "web" } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        containers: [
          { name: "app", image: "shop:1", env: [{ name: "A", value: "1" }] },
          { name: "log", image: "log:1" },
        ],
      },
    },
  },
};

function review(uid: string): Doc {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      resource: { group: "apps", version: "v1", resource: "deployments" },
      name: "web",
      namespace: "team-a",
      operation: "CREATE",
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      object: OBJECT,
      oldObject: null,
      dryRun: false,
    },
  };
}

const POLICIES = yamlDocs(
  map("env", {
    failurePolicy: "Fail",
    matchConstraints: DEPLOYMENTS,
    mutations: [
      {
        patchType: "ApplyConfiguration",
        applyConfiguration: {
          expression: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
            containers: [Object.spec.template.spec.containers{name: "app", env: [Object.spec.template.spec.containers.env{name: "B", value: "2"}]}]}}}}`,
        },
      },
    ],
  }),
  mapBinding("env", "env"),
  map("undecodable", {
    failurePolicy: "Ignore",
    matchConstraints: DEPLOYMENTS,
    matchConditions: [{ name: "labelled", expression: `object.metadata.labels.app == "broken"` }],
    mutations: [
      {
        patchType: "JSONPatch",
        jsonPatch: { expression: `[JSONPatch{op: "add", path: "/spec/invalidField", value: 1}]` },
      },
    ],
  }),
  mapBinding("undecodable", "undecodable"),
);

async function started(t: Parameters<typeof startServer>[0]) {
  const admitter = createAdmitter(compileText(POLICIES));
  return (await startServer(t, { admitter: () => admitter })).port;
}

void test("an ApplyConfiguration's patch merges env by name into the container named app, and replays", async (t) => {
  const port = await started(t);
  const res = await send({ port, ca, path: "/mutate", body: review("m-1") });
  assert.equal(res.status, 200, res.body);
  const response = json(res).response as Doc;
  assert.equal(response.allowed, true, JSON.stringify(response));
  assert.equal(response.patchType, "JSONPatch");
  const patch = JSON.parse(Buffer.from(String(response.patch), "base64").toString("utf8"));
  assert.deepEqual(patch, [
    { op: "add", path: "/spec/template/spec/containers/0/env/1", value: { name: "B", value: "2" } },
  ]);
  const patched = applyJsonPatch(structuredClone(OBJECT), patch) as Doc;
  assert.deepEqual(((patched.spec as Doc).template as { spec: { containers: unknown[] } }).spec.containers, [
    {
      name: "app",
      image: "shop:1",
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ],
    },
    { name: "log", image: "log:1" },
  ]);
});

void test("a JSON Patch whose result a Deployment cannot decode is a 500, even on the Ignore path", async (t) => {
  const port = await started(t);
  const body = review("m-2");
  const object = structuredClone(OBJECT);
  (object.metadata as Doc).labels = { app: "broken" };
  (body.request as Doc).object = object;
  const res = await send({ port, ca, path: "/mutate/ignore", body });
  assert.equal(res.status, 200, res.body);
  assert.deepEqual(json(res).response, {
    uid: "m-2",
    allowed: false,
    status: {
      code: 500,
      reason: "InternalError",
      message: 'Internal error occurred: strict decoding error: unknown field "spec.invalidField"',
    },
  });
});
