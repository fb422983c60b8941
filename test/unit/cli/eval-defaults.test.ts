/**
 * `celgate eval` on the request the API server builds: the object in the request's namespace and
 * with the API server's defaults (on by default, `--no-defaults` to see the manifest as written),
 * end to end through the command, with the two examples of issue 26: the Kubernetes tutorial
 * "Explore Validating and Mutating Admission Policies" (kubernetes/website
 * content/en/docs/tutorials/cluster-management/admission-policies.md) on a Namespace and a
 * Deployment created without the fields its policies read.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ResultEntry } from "../../../src/adapters/output/results.ts";
import { flatEntries } from "./eval-json.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "engine");
const BASELINE = join(FIXTURES, "tutorial-default-pod-security-baseline.yaml");
const MIN_REPLICAS = join(FIXTURES, "tutorial-vap-min-replicas.yaml");
const DEMO = join(FIXTURES, "vap-demo-replicas.yaml");

let dir = "";
const path = (name: string) => join(dir, name);

before(async () => {
  dir = await tempTree({
    // `kubectl create ns example` sends a Namespace with a name and nothing else.
    "example.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n",
    "privileged.yaml":
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: another-example\n  labels:\n    pod-security.kubernetes.io/enforce: privileged\n",
    "web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`,
    "web-in-prod.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec: {replicas: 3}
`,
    "label-policy.yaml": `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: label.example.com}
spec:
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces]}
  validations:
    - expression: "object.metadata.labels['kubernetes.io/metadata.name'] != 'example'"
`,
    "role.yaml":
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, namespace: team-a}\nrules: []\n",
    "names-policy.yaml": `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: where.example.com}
spec:
  matchConstraints:
    resourceRules:
      - {apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}
  validations:
    - expression: "false"
      messageExpression: "'namespace=' + object.metadata.?namespace.orValue('(none)') + ' request=' + request.?namespace.orValue('(absent)')"
`,
  });
});
after(() => removeTree(dir));

async function evalJson(args: string[]): Promise<{ code: number; entries: ResultEntry[]; stderr: string }> {
  const r = await cli(["eval", "-o", "json", ...args]);
  return { code: r.code, entries: flatEntries(r.stdout), stderr: r.stderr };
}

test("tutorial: default-pod-security-baseline labels `kubectl create ns example`, reading the label the API server adds", async () => {
  const j = await evalJson(["-p", BASELINE, "-r", path("example.yaml")]);
  assert.equal(j.code, 0, JSON.stringify(j.entries, null, 2));
  const [m] = j.entries;
  assert.equal(m?.outcome, "pass");
  assert.deepEqual(m?.patch, [
    { op: "add", path: "/metadata/labels/pod-security.kubernetes.io~1enforce", value: "baseline" },
  ]);
  assert.deepEqual((m?.patched as { metadata?: unknown } | undefined)?.metadata, {
    name: "example",
    labels: { "kubernetes.io/metadata.name": "example", "pod-security.kubernetes.io/enforce": "baseline" },
  });
});

test("tutorial: without the API server's defaults the same Namespace fails with `no such key: labels`", async () => {
  const j = await evalJson(["-p", BASELINE, "-r", path("example.yaml"), "--no-defaults"]);
  assert.equal(j.code, 1);
  assert.equal(j.entries[0]?.outcome, "error");
  assert.match(j.entries[0]?.error ?? "", /no such key: labels/);
});

test("tutorial: a Namespace that sets its own level is left alone", async () => {
  const j = await evalJson(["-p", BASELINE, "-r", path("privileged.yaml")]);
  assert.equal(j.code, 0);
  assert.equal(j.entries[0]?.outcome, "skip");
  assert.match(j.entries[0]?.reason ?? "", /no-existing-pod-security-label/);
});

test("tutorial: enforce-multiple-replicas-deployments denies a Deployment created without replicas (defaulted to 1)", async () => {
  const r = await cli(["eval", "-p", MIN_REPLICAS, "-r", path("web.yaml")]);
  assert.equal(r.code, 1);
  assert.match(
    r.stdout,
    /Deployment default\/web: denied: ValidatingAdmissionPolicy 'enforce-multiple-replicas-deployments' with binding 'enforce-multiple-replicas-deployments-binding' denied request: failed expression: object\.spec\.replicas >= 2\n/,
  );
  const raw = await evalJson(["-p", MIN_REPLICAS, "-r", path("web.yaml"), "--no-defaults"]);
  assert.equal(raw.entries[0]?.outcome, "error");
  assert.match(raw.entries[0]?.error ?? "", /no such key: replicas/);
});

test("docs: the replicas ≤ 5 demo policy admits a Deployment without replicas, which the API server makes 1", async () => {
  const j = await evalJson(["-p", DEMO, "-r", path("web.yaml")]);
  assert.equal(j.code, 0, JSON.stringify(j.entries, null, 2));
  assert.deepEqual(
    j.entries.map((e) => `${e.binding}:${e.outcome}`),
    ["demo-binding-test.example.com:pass"],
  );
  const raw = await evalJson(["-p", DEMO, "-r", path("web.yaml"), "--no-defaults"]);
  assert.equal(raw.code, 1);
});

test("--explain lists the defaulted fields and says which failed expression names one", async () => {
  const r = await cli(["eval", "-p", MIN_REPLICAS, "-r", path("web.yaml"), "--explain"]);
  assert.match(r.stdout, /^ {6}names a field the API server defaulted: object\.spec\.replicas = 1$/m);
  assert.match(r.stdout, /^Deployment default\/web: the API server's defaults set:$/m);
  for (const line of [
    "    object.spec.replicas = 1",
    '    object.spec.strategy.type = "RollingUpdate"',
    "    object.spec.template.spec.terminationGracePeriodSeconds = 30",
    '    object.spec.template.spec.containers[0].imagePullPolicy = "IfNotPresent"',
  ])
    assert.ok(r.stdout.split("\n").includes(line), line);
  const j = await evalJson(["-p", MIN_REPLICAS, "-r", path("web.yaml"), "--explain"]);
  assert.deepEqual(j.entries[0]?.defaulted?.[0], { path: "object.spec.replicas", value: 1 });
  // Without --explain, or with --no-defaults, there is nothing to list.
  const plain = await cli(["eval", "-p", MIN_REPLICAS, "-r", path("web.yaml")]);
  assert.doesNotMatch(plain.stdout, /defaults set/);
  const raw = await cli(["eval", "-p", MIN_REPLICAS, "-r", path("web.yaml"), "--explain", "--no-defaults"]);
  assert.doesNotMatch(raw.stdout, /defaults set|defaulted/);
});

test("--explain's hint finds a defaulted map key named in quotes", async () => {
  const r = await cli([
    "eval",
    "-p",
    path("label-policy.yaml"),
    "-r",
    path("example.yaml"),
    "--explain",
    "--include-unbound",
  ]);
  assert.equal(r.code, 1);
  assert.match(
    r.stdout,
    /^ {6}names a field the API server defaulted: object\.metadata\.labels\["kubernetes\.io\/metadata\.name"\] = "example"$/m,
  );
});

test("the object carries the request's namespace; a cluster-scoped object's own is cleared (create.go, meta.go)", async () => {
  const j = await evalJson([
    "-p",
    path("names-policy.yaml"),
    "-r",
    path("web.yaml"),
    "-r",
    path("role.yaml"),
    "--include-unbound",
  ]);
  assert.deepEqual(
    j.entries.map((e) => e.violations[0]?.message),
    // A cluster-scoped request has no namespace key at all (engine/prepare.ts requestValue).
    ["namespace=default request=default", "namespace=(none) request=(absent)"],
  );
  assert.deepEqual(
    j.entries.map((e) => `${e.resource.kind} ${e.resource.namespace}`),
    ["Deployment default", "ClusterRole "],
  );
});

test("an old object in another namespace than the request's is bad input (exit 2), as the API server's 400", async () => {
  const r = await cli([
    "eval",
    "-p",
    MIN_REPLICAS,
    "-r",
    path("web.yaml"),
    "--old-resource",
    path("web-in-prod.yaml"),
  ]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /web\.yaml: the old object names namespace 'prod' but the request is for namespace 'default': the API server rejects this before admission \(400 BadRequest: the namespace of the provided object does not match the namespace sent on the request\)/,
  );
});

test("--help documents defaulting and --no-defaults", async () => {
  const r = await cli(["eval", "--help"]);
  assert.match(r.stdout, /--no-defaults {2,}evaluate the manifests as written/);
  assert.match(r.stdout, /defaults the API server applies \(Kubernetes 1\.37\)/);
});
