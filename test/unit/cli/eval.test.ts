import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parse as parseYaml } from "yaml";
import type { ResultEntry } from "../../../src/adapters/output/results.ts";
import { flatEntries } from "./eval-json.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";
import {
  DEMO_POLICY,
  demoBinding,
  deployment,
  LABEL_MUTATION,
  NAMESPACE_SELECTOR,
  REPLICA_LIMIT,
  REPLICA_LIMIT_PARAM,
  REQUEST_POLICY,
  TEST_NAMESPACE,
  BROKEN_EXPRESSION,
} from "./policies.ts";

let dir = "";
const path = (name: string) => join(dir, name);

before(async () => {
  dir = await tempTree({
    "demo/policy.yaml": DEMO_POLICY,
    "deny/policy.yaml": DEMO_POLICY,
    "deny/binding.yaml": demoBinding("Deny"),
    "warn/policy.yaml": DEMO_POLICY,
    "warn/binding.yaml": demoBinding("Warn, Audit"),
    "selector/policy.yaml": DEMO_POLICY,
    "selector/binding.yaml": demoBinding("Deny", NAMESPACE_SELECTOR),
    "params/policy.yaml": REPLICA_LIMIT,
    "limit.yaml": REPLICA_LIMIT_PARAM,
    "mutation/policies.yaml": LABEL_MUTATION,
    "request/policies.yaml": REQUEST_POLICY,
    "broken/policy.yaml": BROKEN_EXPRESSION,
    "ns.yaml": TEST_NAMESPACE,
    "big.yaml": deployment(7),
    "small.yaml": deployment(3),
    "team-a.yaml": deployment(7, "team-a"),
    "many.yaml": `${deployment(1, "default", "one")}---\n${deployment(9, "default", "two")}`,
    "list.json": JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "a" }, spec: { replicas: 1 } },
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "b" }, spec: { replicas: 6 } },
      ],
    }),
    "protected.yaml": deployment(1, "default", "protected"),
    "empty.yaml": "# nothing here\n---\n",
    "kindless.yaml": "apiVersion: v1\nmetadata:\n  name: x\n",
    "bad.yaml": "apiVersion: v1\nkind: [Pod\n",
  });
});
after(() => removeTree(dir));

async function evalJson(args: string[]): Promise<{ code: number; entries: ResultEntry[]; stderr: string }> {
  const r = await cli(["eval", "-o", "json", ...args]);
  return { code: r.code, entries: flatEntries(r.stdout), stderr: r.stderr };
}

test("--include-unbound: the docs' replicas policy, unbound, evaluated as if bound with [Deny], and said so", async () => {
  const r = await cli(["eval", "-p", path("demo"), "-r", path("big.yaml"), "--include-unbound"]);
  assert.equal(r.code, 1);
  const lines = r.stdout.split("\n");
  assert.match(lines[0] ?? "", /^RESOURCE\s+POLICY\s+BINDING\s+OUTCOME\s+MESSAGE$/);
  assert.match(
    lines[1] ?? "",
    /^Deployment default\/web\s+demo-policy\.example\.com\s+\(none\)\*\s+fail\s+\[Deny\] failed expression: object\.spec\.replicas <= 5$/,
  );
  assert.match(r.stdout, /\* no binding: evaluated as if bound with validationActions \[Deny\]/);
  assert.match(
    r.stdout,
    /Deployment default\/web: denied: ValidatingAdmissionPolicy 'demo-policy\.example\.com' denied request/,
  );
  assert.match(r.stdout, /1 resource: 0 allowed, 1 denied\n$/);

  const j = await evalJson(["-p", path("demo"), "-r", path("big.yaml"), "--include-unbound"]);
  assert.equal(j.code, 1);
  assert.equal(j.entries.length, 1);
  const e = j.entries[0];
  assert.deepEqual(e?.resource, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace: "default",
    name: "web",
  });
  assert.equal(e?.binding, null);
  assert.equal(e?.outcome, "fail");
  assert.deepEqual(e?.violations, [
    {
      message: "failed expression: object.spec.replicas <= 5",
      reason: "Invalid",
      code: 422,
      action: "Deny",
      expressionIndex: 0,
    },
  ]);
});

test("a passing resource: exit 0", async () => {
  const r = await cli(["eval", "-p", path("deny"), "-r", path("small.yaml")]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /demo-binding-test\.example\.com\s+pass/);
  assert.match(r.stdout, /1 resource: 1 allowed, 0 denied\n$/);
});

test("Warn and Audit actions: a failure that does not deny, exit 0", async () => {
  const j = await evalJson(["-p", path("warn"), "-r", path("big.yaml")]);
  assert.equal(j.code, 0);
  const e = j.entries[0];
  assert.equal(e?.outcome, "fail");
  assert.deepEqual(
    e?.violations.map((v) => v.action),
    ["Warn", "Audit"],
  );
  assert.deepEqual(e?.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com': failed expression: object.spec.replicas <= 5",
  ]);
  const t = await cli(["eval", "-p", path("warn"), "-r", path("big.yaml")]);
  assert.match(t.stdout, /^Warning: Deployment default\/web: Validation failed for /m);
});

test("namespaceSelector: the Namespace comes from --namespace-object or the policy paths", async () => {
  // Offline, an unknown namespace exists with only its automatic name label: the selector does not match.
  const without = await evalJson(["-p", path("selector"), "-r", path("team-a.yaml")]);
  assert.equal(without.code, 0);
  assert.equal(without.entries[0]?.outcome, "skip");
  assert.match(String(without.entries[0]?.reason), /namespaceSelector .* does not match namespace 'team-a'/);

  // The resource names no namespace: the Namespace object supplies it.
  const given = await evalJson([
    "-p",
    path("selector"),
    "-r",
    path("big.yaml"),
    "--namespace-object",
    path("ns.yaml"),
  ]);
  assert.equal(given.entries[0]?.resource.namespace, "team-a");
  assert.equal(given.entries[0]?.outcome, "fail");

  const inPolicies = await evalJson([
    "-p",
    path("selector"),
    "-p",
    path("ns.yaml"),
    "-r",
    path("team-a.yaml"),
  ]);
  assert.equal(inPolicies.entries[0]?.outcome, "fail");

  const otherNamespace = await evalJson([
    "-p",
    path("selector"),
    "-p",
    path("ns.yaml"),
    "-r",
    path("many.yaml"),
    "--namespace-object",
    path("ns.yaml"),
  ]);
  // metadata.namespace wins over the namespace object; 'default' is unknown, so only its name label is assumed.
  assert.deepEqual(
    otherNamespace.entries.map((e) => e.outcome),
    ["skip", "skip"],
  );
});

test("params: from the policy paths or --params; one entry per param", async () => {
  const missing = await evalJson(["-p", path("params"), "-r", path("small.yaml")]);
  assert.equal(missing.code, 1);
  assert.equal(missing.entries[0]?.outcome, "error");
  assert.equal(missing.entries[0]?.errorKind, "param-not-found");

  const j = await evalJson(["-p", path("params"), "--params", path("limit.yaml"), "-r", path("many.yaml")]);
  assert.equal(j.code, 1);
  assert.deepEqual(
    j.entries.map((e) => [e.resource.name, e.param, e.outcome, e.violations[0]?.message]),
    [
      ["one", "default/limit", "pass", undefined],
      ["two", "default/limit", "fail", "replicas must be at most 3"],
    ],
  );
  const t = await cli([
    "eval",
    "-p",
    path("params"),
    "--params",
    path("limit.yaml"),
    "-r",
    path("small.yaml"),
  ]);
  assert.match(t.stdout, /^RESOURCE\s+POLICY\s+BINDING\s+PARAM\s+OUTCOME\s+MESSAGE$/m);
  assert.match(t.stdout, /replicalimit-binding\s+default\/limit\s+pass/);
});

test("multi-document files and Lists: one resource each", async () => {
  const j = await evalJson(["-p", path("deny"), "-r", path("many.yaml"), "-r", path("list.json")]);
  assert.equal(j.code, 1);
  assert.deepEqual(
    j.entries.map((e) => `${e.resource.name}:${e.outcome}`),
    ["one:pass", "two:fail", "a:pass", "b:fail"],
  );
});

test("mutations run first and validations see the mutated object", async () => {
  const j = await evalJson(["-p", path("mutation"), "-r", path("small.yaml")]);
  assert.equal(j.code, 0, JSON.stringify(j.entries, null, 2));
  const [m, v] = j.entries;
  assert.equal(m?.policyKind, "MutatingAdmissionPolicy");
  assert.deepEqual(m?.patch, [{ op: "add", path: "/metadata/labels", value: { team: "platform" } }]);
  // The object was admitted in the default namespace (create.go sets it before admission).
  assert.deepEqual((m?.patched as { metadata?: unknown } | undefined)?.metadata, {
    name: "web",
    namespace: "default",
    labels: { team: "platform" },
  });
  assert.equal(v?.policy, "require-team.example.com");
  assert.equal(v?.outcome, "pass");
  assert.equal("patch" in (v ?? {}), false);

  const t = await cli(["eval", "-p", path("mutation"), "-r", path("small.yaml")]);
  assert.match(t.stdout, /add-team-label-binding\s+pass\s+mutated: 1 operation\n/);
  assert.match(t.stdout, /^ {4}\+ {3}labels:\n {4}\+ {5}team: platform$/m);
});

test("operations: UPDATE with --old-resource, DELETE, user and groups", async () => {
  const update = await evalJson([
    "-p",
    path("request"),
    "-r",
    path("small.yaml"),
    "--old-resource",
    path("big.yaml"),
  ]);
  assert.equal(update.code, 1);
  assert.deepEqual(
    update.entries[0]?.violations.map((v) => v.message),
    ["no scaling down"],
  );
  const scaleUp = await evalJson([
    "-p",
    path("request"),
    "-r",
    path("big.yaml"),
    "--old-resource",
    path("small.yaml"),
  ]);
  assert.equal(scaleUp.code, 0);

  const del = await evalJson(["-p", path("request"), "-r", path("protected.yaml"), "--operation", "delete"]);
  assert.deepEqual(
    del.entries[0]?.violations.map((v) => v.message),
    ["protected may not be deleted"],
  );

  const user = await evalJson(["-p", path("request"), "-r", path("small.yaml"), "--user", "mallory"]);
  assert.deepEqual(
    user.entries[0]?.violations.map((v) => v.message),
    ["not you"],
  );
  const groups = await evalJson(["-p", path("request"), "-r", path("small.yaml"), "--groups", "dev,evil"]);
  assert.equal(groups.code, 1);
  const fine = await evalJson(["-p", path("request"), "-r", path("small.yaml"), "--groups", "dev"]);
  assert.equal(fine.code, 0);
});

test("--old-resource pairs by identity when there are several resources", async () => {
  const r = await cli([
    "eval",
    "-p",
    path("request"),
    "-r",
    path("many.yaml"),
    "--old-resource",
    path("small.yaml"),
  ]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--old-resource has no Deployment 'default\/one'/);
});

test("-r - reads resources from stdin, once", async () => {
  const r = await cli(["eval", "-o", "json", "-p", path("deny"), "-r", "-"], { stdin: deployment(9) });
  assert.equal(r.code, 1);
  assert.deepEqual(
    flatEntries(r.stdout).map((e) => e.outcome),
    ["fail"],
  );
  const twice = await cli(["eval", "-p", path("deny"), "-r", "-", "--old-resource", "-"]);
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, /can be read only once/);
});

test("-o yaml gives the same reports as -o json", async () => {
  const args = ["-p", path("deny"), "-r", path("many.yaml")];
  const y = await cli(["eval", "-o", "yaml", ...args]);
  const j = await cli(["eval", "-o", "json", ...args]);
  assert.deepEqual(parseYaml(y.stdout), JSON.parse(j.stdout));
});

test("--explain: the trace in the table and in JSON", async () => {
  const t = await cli(["eval", "--explain", "-p", path("deny"), "-r", path("big.yaml")]);
  assert.match(t.stdout, /^ {4}validation\[0\]: object\.spec\.replicas <= 5 → false \(cost \d+\)$/m);
  const j = await evalJson(["--explain", "-p", path("deny"), "-r", path("big.yaml")]);
  assert.deepEqual(
    j.entries[0]?.trace?.map((s) => [s.stage, s.value]),
    [["validation", false]],
  );
  const plain = await evalJson(["-p", path("deny"), "-r", path("big.yaml")]);
  assert.equal(plain.entries[0]?.trace, undefined);
});

test("policy files with errors: diagnostics on stderr, nothing evaluated, exit 2", async () => {
  const r = await cli(["eval", "-p", path("broken"), "-r", path("big.yaml")]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    /policy\.yaml:13:44: error: spec\.validations\[0\]\.expression: undeclared reference/,
  );
  assert.match(r.stderr, /nothing was evaluated/);
});

test("bad options and inputs: exit 2 with the reason", async () => {
  const deny = ["-p", path("deny")];
  const big = ["-r", path("big.yaml")];
  const cases: [string[], RegExp][] = [
    [[...big], /missing -p\/--policy/],
    [[...deny], /missing -r\/--resource/],
    [[...deny, ...big, "-o", "xml"], /unknown output format 'xml'/],
    [[...deny, ...big, "--operation", "PATCH"], /unknown operation 'PATCH'/],
    [[...deny, ...big, "--operation", "UPDATE"], /UPDATE needs --old-resource/],
    [
      [...deny, ...big, "--old-resource", path("small.yaml"), "--operation", "CREATE"],
      /--old-resource is only for UPDATE/,
    ],
    [[...deny, "-r", path("kindless.yaml")], /kindless\.yaml: the object has no kind/],
    [[...deny, "-r", path("bad.yaml")], /bad\.yaml:\d+:\d+: not valid YAML or JSON/],
    [[...deny, "-r", path("missing.yaml")], /cannot read .*missing\.yaml/],
    [[...deny, ...big, "--namespace-object", path("big.yaml")], /must be a Namespace/],
    [[...deny, ...big, "extra"], /unexpected argument 'extra'/],
    [[...deny, ...big, "--colour"], /unknown option '--colour'/],
    [[...deny, "-r", path("empty.yaml")], /no resources found in .*empty\.yaml/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(["eval", ...argv]);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message, argv.join(" "));
    assert.match(r.stderr, /usage: celgate eval/, argv.join(" "));
    assert.equal(r.stdout, "");
  }
});
