/**
 * The REPL binds objects loaded from files as admission sees them: in the request's namespace and
 * with the API server's defaults (`--no-defaults` to see them as written); a loaded AdmissionReview
 * is bound as the API server sent it.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { complete } from "../../../src/adapters/repl/complete.ts";
import { ReplSession } from "../../../src/adapters/repl/session.ts";
import { cli, removeTree, tempTree } from "../cli/fake-io.ts";

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers: [{name: app, image: nginx}]
`;

let dir = "";
before(async () => {
  dir = await tempTree({
    "deploy.yaml": DEPLOYMENT,
    "old-in-prod.yaml":
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\nspec: {replicas: 2}\n",
    "review.json": JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "1",
        kind: { group: "apps", version: "v1", kind: "Deployment" },
        resource: { group: "apps", version: "v1", resource: "deployments" },
        name: "web",
        namespace: "prod",
        operation: "CREATE",
        userInfo: { username: "bob" },
        object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: {} },
      },
    }),
  });
});
after(() => removeTree(dir));

async function session(defaults?: boolean): Promise<ReplSession> {
  const s = new ReplSession({ cwd: dir, ...(defaults === undefined ? {} : { defaults }) });
  const r = await s.handle(":object deploy.yaml");
  assert.equal(r.error, false, r.text);
  return s;
}

test("an object from a file is bound with the API server's defaults and the request's namespace", async () => {
  const s = await session();
  assert.deepEqual(await s.handle("object.spec.replicas"), { text: "1 (int)", error: false });
  assert.deepEqual(await s.handle("object.spec.template.spec.containers[0].imagePullPolicy"), {
    text: '"Always" (string)',
    error: false,
  });
  assert.deepEqual(await s.handle("object.metadata.namespace"), { text: '"default" (string)', error: false });
  // Completion offers the defaulted fields: they are in the object the policies see.
  const [hits] = complete(s, "object.spec.re");
  assert.deepEqual(hits, ["replicas", "revisionHistoryLimit"]);
});

test("defaults off: the manifest as written", async () => {
  const s = await session(false);
  const r = await s.handle("object.spec.replicas");
  assert.equal(r.error, true);
  assert.match(r.text, /no such key: replicas/);
});

test("a loaded AdmissionReview is bound as the API server sent it", async () => {
  const s = new ReplSession({ cwd: dir });
  await s.handle(":request review.json");
  assert.deepEqual(await s.handle("has(object.spec.replicas)"), { text: "false (bool)", error: false });
});

test("an old object naming another namespace is an error, as the API server's 400", async () => {
  const s = await session();
  await s.handle(":old old-in-prod.yaml");
  const r = await s.handle("object.spec.replicas");
  assert.equal(r.error, true);
  assert.match(r.text, /^the old object names namespace 'prod' but the request is for namespace 'default'/);
  const p = await s.handle(":policy deploy.yaml");
  assert.equal(p.error, true);
  assert.match(p.text, /the old object names namespace 'prod'/);
});

test("celgate repl --no-defaults, and its help", async () => {
  const on = await cli(["repl", "--object", "deploy.yaml"], { cwd: dir, stdin: "object.spec.replicas\n" });
  assert.equal(on.code, 0, on.stderr);
  assert.equal(on.stdout, "1 (int)\n");
  const off = await cli(["repl", "--object", "deploy.yaml", "--no-defaults"], {
    cwd: dir,
    stdin: "object.spec.replicas\n",
  });
  assert.equal(off.code, 1);
  assert.match(off.stderr, /no such key: replicas/);
  const help = await cli(["repl", "--help"]);
  assert.match(help.stdout, /--no-defaults {2,}bind objects as written/);
});
