/**
 * What `celgate eval` prints for people and for tools (issue 29 item 11): skipped rows hidden unless
 * asked for, the table fitted to a terminal, a verdict line per resource, the reinvocation pass
 * labelled, the per-resource decision in JSON, and `--write-mutated`.
 */
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parse as parseYaml } from "yaml";
import type { ResourceReport } from "../../../src/adapters/output/entries.ts";
import { map, mapBinding, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";
import { deployment, deploymentPolicy, REPLICA_LIMIT } from "./policies.ts";

const apply = (expression: string) => ({
  patchType: "ApplyConfiguration",
  applyConfiguration: { expression },
});

/**
 * Two mutating policies, the first with reinvocationPolicy IfNeeded: the second adds a label after
 * the first counted them, so the API server runs the first again (kubernetes staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/policy/mutating/reinvocationcontext.go; engine/mutating.ts).
 */
const MUTATIONS = yamlDocs(
  map("count-labels", {
    reinvocationPolicy: "IfNeeded",
    mutations: [
      apply(
        `Object{metadata: Object.metadata{annotations: {"label-count": string(size(object.metadata.labels))}}}`,
      ),
    ],
  }),
  mapBinding("count-labels", "count-labels"),
  map("add-team", { mutations: [apply(`Object{metadata: Object.metadata{labels: {"team": "a"}}}`)] }),
  mapBinding("add-team", "add-team"),
);

/** Warns about a missing owner label, annotates, and one policy that never applies to Pods. */
const VALIDATIONS = yamlDocs(
  vap("owner-label", {
    validations: [
      {
        expression: "'owner' in object.metadata.labels",
        message:
          "pods should name their owner in the 'owner' label so that whoever runs the cluster knows whom to ask",
      },
    ],
    auditAnnotations: [{ key: "checked", valueExpression: "'owner-label'" }],
  }),
  vapBinding("owner-label", "owner-label", { validationActions: ["Warn", "Audit"] }),
  deploymentPolicy("deployments-only", ["CREATE"], { validations: [{ expression: "true" }] }),
  vapBinding("deployments-only", "deployments-only"),
);

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: { app: web }
spec:
  containers: [{ name: app, image: "nginx:1.27" }]
`;

let dir = "";
const path = (name: string) => join(dir, name);

before(async () => {
  dir = await tempTree({
    "policies/mutations.yaml": MUTATIONS,
    "policies/validations.yaml": VALIDATIONS,
    "pod.yaml": POD,
    "pods.yaml": `${POD}---\n${POD.replace("name: web", "name: api").replace("labels: { app: web }", "labels: { app: api, owner: me }")}`,
    "params/policy.yaml": REPLICA_LIMIT,
    "params/elsewhere.yaml": `apiVersion: rules.example.com/v1
kind: ReplicaLimit
metadata: { name: limit, namespace: prod }
maxReplicas: 3
`,
    "small.yaml": deployment(2),
  });
});
after(() => removeTree(dir));

const evalArgs = (...more: string[]) => ["eval", "-p", path("policies"), "-r", path("pod.yaml"), ...more];

test("skipped policies are hidden from the table unless --show-skipped, and the count is said", async () => {
  const r = await cli(evalArgs());
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /deployments-only/);
  assert.match(
    r.stdout,
    /^\(1 skipped result not shown: the policy does not apply; --show-skipped lists them\)$/m,
  );
  const all = await cli(evalArgs("--show-skipped"));
  assert.match(all.stdout, /deployments-only\s+skip\s+matchConstraints: no resourceRules match/);
  assert.doesNotMatch(all.stdout, /not shown/);
  // Tools get every result whatever the flag.
  const json = JSON.parse((await cli(evalArgs("-o", "json"))).stdout) as ResourceReport[];
  assert.deepEqual(
    json[0]?.results.filter((e) => e.outcome === "skip").map((e) => e.policy),
    ["deployments-only"],
  );
});

test("the reinvocation pass of a mutating policy is labelled, in the table and in JSON", async () => {
  const r = await cli(evalArgs());
  const rows = r.stdout.split("\n").filter((l) => l.startsWith("Pod default/web  "));
  assert.deepEqual(
    rows.map((l) => l.split(/\s{2,}/)[1]),
    ["count-labels", "add-team", "count-labels (reinvoked)", "owner-label"],
  );
  const json = JSON.parse((await cli(evalArgs("-o", "json"))).stdout) as ResourceReport[];
  const results = json[0]?.results ?? [];
  assert.deepEqual(
    results.map((e) => [e.policy, e.reinvocation ?? false]),
    [
      ["count-labels", false],
      ["add-team", false],
      ["count-labels", true],
      ["owner-label", false],
      ["deployments-only", false],
    ],
  );
  // The reinvocation saw the label the second policy added.
  assert.deepEqual(results[2]?.patch, [
    { op: "replace", path: "/metadata/annotations/label-count", value: "2" },
  ]);
});

test("a verdict line per resource: allowed or denied, warnings, patched", async () => {
  const r = await cli(["eval", "-p", path("policies"), "-r", path("pods.yaml")]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Pod default\/web: allowed \(1 warning, patched: 2 operations\)$/m);
  assert.match(r.stdout, /^Pod default\/api: allowed \(patched: 2 operations\)$/m);
  assert.match(r.stdout, /\n2 resources: 2 allowed, 0 denied\n$/);
  const denied = await cli(["eval", "-p", path("params/policy.yaml"), "-r", path("small.yaml")]);
  assert.equal(denied.code, 1);
  assert.match(
    denied.stdout,
    /^Deployment default\/web: denied: ValidatingAdmissionPolicy 'replicalimit\.example\.com' with binding 'replicalimit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction \(1 evaluation error\)$/m,
  );
});

test("-o json: the decision per resource, as the API server would answer, then every result", async () => {
  const r = await cli(evalArgs("-o", "json"));
  const [report] = JSON.parse(r.stdout) as ResourceReport[];
  assert.deepEqual(report?.resource, { apiVersion: "v1", kind: "Pod", namespace: "default", name: "web" });
  const d = report?.decision;
  assert.equal(d?.allowed, true);
  assert.equal(d?.status, undefined);
  assert.deepEqual(d?.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'owner-label' with binding 'owner-label': pods should name their owner in the 'owner' label so that whoever runs the cluster knows whom to ask",
  ]);
  assert.equal(d?.auditAnnotations["owner-label/checked"], "owner-label");
  assert.match(
    d?.auditAnnotations["validation.policy.admission.k8s.io/validation_failure"] ?? "",
    /owner-label/,
  );
  assert.deepEqual(
    d?.patch?.map((op) => op.path),
    ["/metadata/annotations", "/metadata/labels/team"],
  );

  const denied = await cli([
    "eval",
    "-o",
    "json",
    "-p",
    path("params/policy.yaml"),
    "-r",
    path("small.yaml"),
  ]);
  const [dr] = JSON.parse(denied.stdout) as ResourceReport[];
  assert.deepEqual(dr?.decision.status, {
    code: 422,
    reason: "Invalid",
    message:
      "ValidatingAdmissionPolicy 'replicalimit.example.com' with binding 'replicalimit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
  });
  assert.equal(dr?.decision.patch, undefined);
});

test("on a terminal the table fits its width; piped, JSON and YAML lines stay whole", async () => {
  const long =
    "pods should name their owner in the 'owner' label so that whoever runs the cluster knows whom to ask";
  for (const columns of [100, 60]) {
    const r = await cli(evalArgs(), { isTTY: true, columns });
    assert.equal(r.code, 0);
    const lines = r.stdout.trimEnd().split("\n");
    const over = lines.filter((l) => l.length > columns);
    assert.deepEqual(over, [], `lines over ${columns} columns`);
    // Wrapped, not cut: every word of the message is still there, in order.
    const words = r.stdout.split(/\s+/).join(" ");
    assert.ok(words.includes(long.split(" ").join(" ")), `${columns}: the whole message`);
  }
  // Narrower than the wide table: rows grouped under their resource.
  const narrow = await cli(evalArgs(), { isTTY: true, columns: 60 });
  assert.match(narrow.stdout, /^Pod default\/web:\n {2}POLICY +OUTCOME +MESSAGE$/m);
  // $COLUMNS when the terminal does not say.
  const env = await cli(evalArgs(), { isTTY: true, env: { COLUMNS: "70" } });
  assert.ok(env.stdout.split("\n").every((l) => l.length <= 70));

  const piped = await cli(evalArgs());
  assert.ok(piped.stdout.split("\n").some((l) => l.endsWith(long) && l.length > 100));
  for (const format of ["json", "yaml"]) {
    const r = await cli(evalArgs("-o", format), { isTTY: true, columns: 40 });
    assert.ok(r.stdout.includes(long), format);
  }
});

test("--write-mutated writes each resource as admission leaves it, one predictably named file each", async () => {
  const out = path("out");
  const r = await cli(["eval", "-p", path("policies"), "-r", path("pods.yaml"), "--write-mutated", out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /wrote 2 objects to /);
  assert.deepEqual((await readdir(out)).sort(), ["pod_default_api.yaml", "pod_default_web.yaml"]);
  const web = parseYaml(await readFile(join(out, "pod_default_web.yaml"), "utf8")) as {
    metadata: Record<string, unknown>;
    spec: { containers: { imagePullPolicy?: string }[] };
  };
  assert.deepEqual(web.metadata, {
    name: "web",
    labels: { app: "web", team: "a" },
    namespace: "default",
    annotations: { "label-count": "2" },
  });
  // As admission saw it: with the API server's defaults.
  assert.equal(web.spec.containers[0]?.imagePullPolicy, "IfNotPresent");
  // Written again, the same files: the run is repeatable.
  const again = await cli(["eval", "-p", path("policies"), "-r", path("pods.yaml"), "--write-mutated", out]);
  assert.equal(again.code, 0, again.stderr);
});

test("--write-mutated never overwrites an input file, and writes nothing then", async () => {
  const inputDir = await tempTree({ "pod_default_web.yaml": POD });
  try {
    const before = await readFile(join(inputDir, "pod_default_web.yaml"), "utf8");
    const r = await cli([
      "eval",
      "-p",
      path("policies"),
      "-r",
      join(inputDir, "pod_default_web.yaml"),
      "--write-mutated",
      inputDir,
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /pod_default_web\.yaml is one of the input files; refusing to overwrite it/);
    assert.equal(await readFile(join(inputDir, "pod_default_web.yaml"), "utf8"), before);
    // A policy file is an input too.
    await writeFile(join(inputDir, "pod_default_web.yaml"), MUTATIONS);
    const policyClash = await cli([
      "eval",
      "-p",
      join(inputDir, "pod_default_web.yaml"),
      "-r",
      path("pod.yaml"),
      "--write-mutated",
      inputDir,
    ]);
    assert.equal(policyClash.code, 2);
    assert.equal(await readFile(join(inputDir, "pod_default_web.yaml"), "utf8"), MUTATIONS);
  } finally {
    await removeTree(inputDir);
  }
  const del = await cli(evalArgs("--operation", "DELETE", "--write-mutated", path("del")));
  assert.equal(del.code, 2);
  assert.match(del.stderr, /--write-mutated writes the objects of CREATE and UPDATE, not DELETE/);
});

test("a param not found says what was looked up and where one of that name is (issue 29 item 14)", async () => {
  const r = await cli([
    "eval",
    "-o",
    "json",
    "-p",
    path("params/policy.yaml"),
    "--params",
    path("params/elsewhere.yaml"),
    "-r",
    path("small.yaml"),
  ]);
  assert.equal(r.code, 1);
  const [report] = JSON.parse(r.stdout) as ResourceReport[];
  const e = report?.results[0];
  assert.equal(e?.errorKind, "param-not-found");
  assert.equal(
    e?.error,
    "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction: looked up ReplicaLimit default/limit (rules.example.com/v1); one of that name is in namespace prod",
  );
  // The denial keeps the API server's words (staging/src/k8s.io/apiserver/pkg/admission/plugin/
  // policy/generic/policy_dispatcher.go, CollectParams): the lookup detail is not sent to clients.
  assert.equal(
    report?.decision.status?.message,
    "ValidatingAdmissionPolicy 'replicalimit.example.com' with binding 'replicalimit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
  );
  // The table shows the detail once, not the bare denial again under it.
  const t = await cli([
    "eval",
    "-p",
    path("params/policy.yaml"),
    "--params",
    path("params/elsewhere.yaml"),
    "-r",
    path("small.yaml"),
  ]);
  assert.match(
    t.stdout,
    /error +\[Deny\] failed to configure binding: .*looked up ReplicaLimit default\/limit/,
  );
  assert.doesNotMatch(t.stdout, /^ {4}\[Deny\] failed to configure binding/m);
});
