import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";
import { BROKEN_EXPRESSION, DEMO_POLICY, demoBinding } from "./policies.ts";

let dir = "";
const path = (name: string) => join(dir, name);

before(async () => {
  dir = await tempTree({
    "good/policy.yaml": DEMO_POLICY,
    "good/binding.yaml": demoBinding("Deny"),
    "unbound/policy.yaml": DEMO_POLICY,
    "broken/policy.yaml": BROKEN_EXPRESSION,
    "bind/policy.yaml": DEMO_POLICY.replace(
      '"object.spec.replicas <= 5"',
      '"cel.bind(r, object.spec.replicas, r <= 5)"',
    ),
  });
});
after(() => removeTree(dir));

test("a clean policy set: summary only, exit 0", async () => {
  const r = await cli(["check", path("good")]);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, "1 policy, 1 binding, 0 problems\n");
});

test("a policy without a binding is noted as not enforced, exit 0", async () => {
  const r = await cli(["check", path("unbound/policy.yaml")]);
  assert.equal(r.code, 0);
  assert.match(
    r.stdout,
    /policy\.yaml:4:\d+: note: ValidatingAdmissionPolicy 'demo-policy\.example\.com': loaded and checked, not enforced: no binding\n/,
  );
  assert.match(r.stdout, /1 policy, 0 bindings, 0 problems\n$/);
});

test("an expression that does not compile: located diagnostic with caret, exit 1", async () => {
  const file = path("broken/policy.yaml");
  const r = await cli(["check", file]);
  assert.equal(r.code, 1);
  assert.ok(
    r.stdout.startsWith(
      `${file}:13:19: error: spec.validations[0].expression: undeclared reference to 'maxReplicas' (in container '') [PE_CEL_UNKNOWN_IDENT]\n` +
        "ERROR: <input>:1:25: undeclared reference to 'maxReplicas' (in container '')\n" +
        " | object.spec.replicas <= maxReplicas\n" +
        " | ........................^\n",
    ),
    r.stdout,
  );
  assert.match(r.stdout, /1 policy, 0 bindings, 1 problem \(1 error, 0 warnings\)\n/);
});

test("-o json: the report as data", async () => {
  const r = await cli(["check", "-o", "json", path("broken"), path("good/binding.yaml")]);
  assert.equal(r.code, 1);
  const report = JSON.parse(r.stdout) as {
    files: string[];
    policies: number;
    bindings: number;
    errors: number;
    diagnostics: { code: string; path: string; location: { line: number } }[];
    unbound: { name: string; note: string }[];
  };
  assert.equal(report.files.length, 2);
  assert.equal(report.policies, 1);
  // The dangling binding is a warning (it is inert, as in the API server), the CEL problem an error.
  assert.equal(report.errors, 1);
  assert.deepEqual(report.diagnostics.map((d) => d.code).sort(), [
    "PE_CEL_UNKNOWN_IDENT",
    "PE_UNKNOWN_POLICY",
  ]);
  assert.deepEqual(
    report.unbound.map((u) => u.name),
    ["broken.example.com"],
  );
});

test("--cel-extras compiles policies with the extra libraries", async () => {
  const without = await cli(["check", path("bind")]);
  assert.equal(without.code, 1);
  assert.match(without.stdout, /spec\.validations\[0\]\.expression/);
  const withBind = await cli(["check", "--cel-extras", "bind", path("bind")]);
  assert.equal(withBind.code, 0, withBind.stdout);
});

test("an unreadable path is a problem, exit 1", async () => {
  const r = await cli(["check", path("nope.yaml")]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /nope\.yaml:1:1: error: cannot read .*\[PE_IO\]/);
});

test("bad options: exit 2", async () => {
  const cases: [string[], RegExp][] = [
    [["check"], /missing the policy files/],
    [["check", "-o", "yaml", "x"], /unknown output format 'yaml'/],
    [["check", "--strict", "x"], /unknown option '--strict'/],
    [["check", "--cel-extras", "regex", "x"], /unknown CEL extra 'regex'/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message);
    assert.match(r.stderr, /usage: celgate check/);
  }
});
