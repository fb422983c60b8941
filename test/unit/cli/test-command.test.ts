import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { vapBinding, yamlDocs } from "../../helpers/engine.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";
import { deploymentPolicy } from "./policies.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "suites");
const fixture = (p: string) => join(FIXTURES, p);

const replicasPolicy = (expression: string) =>
  yamlDocs(
    deploymentPolicy("bind-policy", ["CREATE"], { validations: [{ expression, message: "too many" }] }),
    // Bound: a suite evaluates only bound policies, as the API server does.
    vapBinding("bind-policy", "bind-policy"),
  );

const suite = (policy: string, replicas: number, allowed: boolean) => `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${policy}]
cases:
  - name: replicas ${replicas}
    object: { apiVersion: apps/v1, kind: Deployment, metadata: { name: d }, spec: { replicas: ${replicas} } }
    expect: { allowed: ${allowed} }
`;

let dir = "";

before(async () => {
  dir = await tempTree({
    "bind/policy.yaml": replicasPolicy("cel.bind(r, object.spec.replicas, r <= 5)"),
    "bind/bind.test.yaml": suite("policy.yaml", 3, true),
    "plain/policy.yaml": replicasPolicy("object.spec.replicas <= 5"),
    "tree/a.test.yaml": suite("../plain/policy.yaml", 9, false),
    "tree/nested/b.test.yml": suite("../../plain/policy.yaml", 1, true),
    "tree/.hidden/c.test.yaml": "not: [a suite",
    "tree/node_modules/d.test.yaml": "not: [a suite",
    "tree/policy.yaml": "this is not read as a suite",
    "empty/readme.md": "nothing here",
  });
});
after(() => removeTree(dir));

function lastLine(text: string): string {
  return text.trimEnd().split("\n").at(-1) ?? "";
}

test("good suites: exit 0 and the plain summary line last", async () => {
  const r = await cli(["test", fixture("good")]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(lastLine(r.stdout), "19 passed, 0 failed");
  assert.match(r.stdout, /^ {2}✓ production \/ deletes \/ deleting is never checked$/m);
  assert.match(r.stdout, /^authorizer checks \(.*authz\.test\.yaml\)$/m);
});

test("a failing case: exit 1, the case marked and explained", async () => {
  const r = await cli(["test", fixture("failing/failing.test.yaml"), "--ascii"]);
  assert.equal(r.code, 1);
  assert.equal(lastLine(r.stdout), "1 passed, 6 failed");
  assert.match(r.stdout, /^ {2}PASS passes$/m);
  assert.match(
    r.stdout,
    /^ {2}FAIL wrong verdict\n {6}at .*failing\.test\.yaml:15:5 \(cases\[1\]\)\n {6}expect\.allowed: expected true, got false\n {6}decision:$/m,
  );
});

test("a broken suite: exit 2, diagnostics with file, line, column and field path on stderr", async () => {
  const r = await cli(["test", fixture("broken/fields.test.yaml")]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /fields\.test\.yaml:16:7: error: cases\[0\]\.expect\.alowed: unknown field 'alowed' in expect; did you mean 'allowed'\? \[TE_SUITE\]/,
  );
  assert.match(r.stderr, /fields\.test\.yaml:23:5: error: cases\[2\]: an UPDATE case needs oldObject/);
  assert.match(r.stdout, /^ {2}! the suite has errors; no case was run$/m);
  assert.equal(lastLine(r.stdout), "0 passed, 0 failed, 1 error");
});

test("every problem of every suite at once, as check reports them, and then no case runs (exit 2)", async () => {
  const r = await cli(["test", fixture("failing"), fixture("broken")]);
  assert.equal(r.code, 2);
  // The four broken suites' problems, each file's all of them: a parse error and an unknown key, a
  // missing object file, a policy that does not compile, a YAML syntax error.
  for (const problem of [
    /fields\.test\.yaml:16:7: error: cases\[0\]\.expect\.alowed: unknown field/,
    /fields\.test\.yaml:27:11: error: cases\[3\]\.name: case name 'typo in expect' is already used/,
    /missing-file\.test\.yaml:11:17: error: cases\[0\]\.objectFile: cannot read .*nope\.yaml: no such file or directory \[TE_SUITE\]/,
    /bad\.yaml:13:44: error: spec\.validations\[0\]\.expression: undeclared reference to 'maxReplicas'/,
    /syntax\.test\.yaml:4:1: error: not valid YAML/,
  ])
    assert.match(r.stderr, problem);
  // No case of the good suite ran: a broken suite is fixed first, as a policy that does not compile.
  assert.doesNotMatch(r.stdout, /wrong verdict/);
  assert.match(r.stdout, /^4 suite files have errors \(see above\); no case was run$/m);
  assert.equal(lastLine(r.stdout), "0 passed, 0 failed, 4 errors");
});

test("a suite with errors still has the files it names checked, in the same run", async () => {
  const tree = await tempTree({
    "policy.yaml": replicasPolicy("object.spec.replicas <= 5"),
    "many.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml, nowhere.yaml]
cases:
  - name: typo
    object: { apiVersion: apps/v1, kind: Deployment, metadata: { name: d } }
    expect: { alowed: true }
  - name: missing object file
    objectFile: nope.yaml
    expect: { allowed: true }
`,
  });
  try {
    const r = await cli(["test", tree]);
    assert.equal(r.code, 2);
    const lines = r.stderr.split("\n").filter((l) => / error: /.test(l));
    assert.deepEqual(
      lines.map((l) => / error: ([^:]+):/.exec(l)?.[1]),
      ["cases[0].expect.alowed", "policies[1]", "cases[1].objectFile"],
    );
  } finally {
    await removeTree(tree);
  }
});

test("policy errors make the suite broken (exit 2), reported like check reports them", async () => {
  const r = await cli(["test", fixture("broken/bad-policy.test.yaml")]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /bad\.yaml:13:44: error: spec\.validations\[0\]\.expression: undeclared reference to 'maxReplicas'/,
  );
});

test("directories are searched for *.test.yaml and *.test.yml, skipping hidden entries and node_modules", async () => {
  const r = await cli(["test", join(dir, "tree")]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lastLine(r.stdout), "2 passed, 0 failed");
  assert.match(r.stdout, /^a \(/m);
  assert.match(r.stdout, /^b \(/m);
});

test("no PATH: the current directory; relative paths against it", async () => {
  const here = await cli(["test"], { cwd: join(dir, "tree") });
  assert.equal(here.code, 0, here.stderr);
  assert.equal(lastLine(here.stdout), "2 passed, 0 failed");
  const rel = await cli(["test", "nested"], { cwd: join(dir, "tree") });
  assert.equal(lastLine(rel.stdout), "1 passed, 0 failed");
});

test("nothing to run: no suites found, or a path that does not exist, is exit 2", async () => {
  const none = await cli(["test", join(dir, "empty")]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /no test suites \(\*\.test\.yaml, \*\.test\.yml\) found in /);
  const missing = await cli(["test", join(dir, "nope")]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read .*nope: no such file or directory/);
});

test("--cel-extras compiles the policies with the extra libraries", async () => {
  const without = await cli(["test", join(dir, "bind")]);
  assert.equal(without.code, 2, "cel.bind is not a Kubernetes function");
  // cel-go's words for a call on an undeclared `cel`, and celgate's hint under them.
  assert.match(without.stderr, /policy\.yaml:\d+:\d+: error: .*undeclared reference to 'cel'/);
  assert.match(without.stderr, /^hint: cel\.bind is not in Kubernetes' CEL environment/m);
  const withBind = await cli(["test", "--cel-extras", "bind", join(dir, "bind")]);
  assert.equal(withBind.code, 0, withBind.stderr);
  const bad = await cli(["test", "--cel-extras", "strings", join(dir, "bind")]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown CEL extra 'strings'/);
});

test("--junit writes the XML report; -o json prints the machine report", async () => {
  const out = join(dir, "report.xml");
  const r = await cli(["test", "-o", "json", "--junit", out, fixture("failing")]);
  assert.equal(r.code, 1);
  const json = JSON.parse(r.stdout) as {
    summary: { passed: number; failed: number; broken: number; skipped: number };
  };
  assert.deepEqual(json.summary, { passed: 1, failed: 6, broken: 0, skipped: 0 });
  const xml = await readFile(out, "utf8");
  assert.match(
    xml,
    /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="celgate test" tests="7" failures="6" errors="0"/,
  );
  assert.equal(xml.match(/<testcase /g)?.length, 7);
  assert.equal(xml.match(/<failure /g)?.length, 6);
  const unwritable = await cli(["test", "--junit", join(dir, "no", "such", "dir", "r.xml"), fixture("good")]);
  assert.equal(unwritable.code, 2);
  assert.match(unwritable.stderr, /cannot write /);
});

test("bad options are usage errors", async () => {
  const yaml = await cli(["test", "-o", "yaml", fixture("good")]);
  assert.equal(yaml.code, 2);
  assert.match(yaml.stderr, /unknown output format 'yaml'; expected text or json/);
  const unknown = await cli(["test", "--explain"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown option '--explain'/);
  const help = await cli(["test", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /usage: celgate test \[PATH\.\.\.\] \[options\]/);
});
