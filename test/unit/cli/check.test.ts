import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";
import { BROKEN_EXPRESSION, DEMO_POLICY, demoBinding, TEST_NAMESPACE } from "./policies.ts";

/**
 * Unknown names in expressions: a misspelt variable, a variable used before it is defined (the API
 * server compiles variables in order, each seeing only those before it: staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/cel/composition.go), and a misspelt admission variable.
 */
const NAMES_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: names.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  variables:
    - name: early
      expression: "variables.replicas > 1"
    - name: replicas
      expression: "object.spec.replicas"
  validations:
    - expression: "variables.replicsa <= 5"
    - expression: "objcet.spec.replicas <= 5"
    - expression: "variables.nothing <= 5"
`;

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
    "empty/README.md": "no policies here",
    "params-only/ns.yaml": TEST_NAMESPACE,
    "broken-binding/policy.yaml": DEMO_POLICY,
    "broken-binding/binding.yaml": demoBinding(
      "Deny",
      "  matchResources:\n    namespaceSelector:\n      matchExpressions: [{ key: env, operator: Bogus }]\n",
    ),
    "twice/a.yaml": DEMO_POLICY,
    "twice/b.yaml": DEMO_POLICY,
    "twice/binding.yaml": demoBinding("Deny"),
    "names/policy.yaml": NAMES_POLICY,
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
      // At the faulty sub-expression (column 44), not at the start of the value (column 19).
      `${file}:13:44: error: spec.validations[0].expression: undeclared reference to 'maxReplicas' (in container '') [PE_CEL_UNKNOWN_IDENT]\n` +
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
    [["check", "--strcit", "x"], /unknown option '--strcit'; did you mean '--strict'\?/],
    [["check", "--cel-extras", "regex", "x"], /unknown CEL extra 'regex'/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message);
    assert.match(r.stderr, /usage: celgate check/);
  }
});

test("a path that holds no policy or binding is a warning; --strict makes it fail", async () => {
  const r = await cli(["check", path("good"), path("empty")]);
  assert.equal(r.code, 0);
  assert.match(
    r.stdout,
    /^warning: .*empty holds no ValidatingAdmissionPolicy, MutatingAdmissionPolicy or binding \[PE_NO_POLICIES\]$/m,
  );
  assert.match(r.stdout, /1 policy, 1 binding, 1 problem \(0 errors, 1 warning\)\n$/);
  const strict = await cli(["check", "--strict", path("good"), path("empty")]);
  assert.equal(strict.code, 1);
  assert.equal((await cli(["check", "--strict", path("good")])).code, 0);
  // A directory of other objects (a Namespace) holds no policy either.
  const other = await cli(["check", "-o", "json", path("params-only")]);
  assert.deepEqual(
    (JSON.parse(other.stdout) as { diagnostics: { code: string; severity: string }[] }).diagnostics,
    [
      {
        code: "PE_NO_POLICIES",
        severity: "warning",
        message: `${path("params-only")} holds no ValidatingAdmissionPolicy, MutatingAdmissionPolicy or binding`,
      },
    ],
  );
  // A path that does not exist is already an error; it is not reported twice.
  const missing = await cli(["check", path("nope")]);
  assert.equal(missing.code, 1);
  assert.doesNotMatch(missing.stdout, /PE_NO_POLICIES/);
});

test("a policy whose binding has errors is not called unbound: the note names the broken binding", async () => {
  const r = await cli(["check", path("broken-binding")]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /binding\.yaml:\d+:\d+: error: spec\.matchResources\.namespaceSelector/);
  assert.doesNotMatch(r.stdout, /no binding/);
  assert.match(
    r.stdout,
    /policy\.yaml:4:\d+: note: ValidatingAdmissionPolicy 'demo-policy\.example\.com': not enforced: its binding 'demo-binding-test\.example\.com' has errors\n/,
  );
  // Two policies of one name: a duplicate error, and neither is said to have no binding.
  const twice = await cli(["check", path("twice")]);
  assert.equal(twice.code, 1);
  assert.match(twice.stdout, /PE_DUPLICATE/);
  assert.doesNotMatch(twice.stdout, /no binding/);
});

test("unknown names in expressions keep cel-go's words and get a hint under the caret", async () => {
  const r = await cli(["check", path("names")]);
  assert.equal(r.code, 1);
  const blocks = r.stdout.split(/\n(?=\/)/);
  const block = (path: string) => blocks.find((b) => b.includes(`error: ${path}:`)) ?? "";
  assert.match(
    block("spec.validations[0].expression"),
    // `variables` is a message type (Kubernetes composition.go): cel-go reports an undefined field.
    /undefined field 'replicsa' \[PE_CEL_UNKNOWN_IDENT\]\n.*\n.*\n.*\nhint: did you mean 'variables\.replicas'\?$/m,
  );
  assert.match(
    block("spec.variables[0].expression"),
    /^hint: 'variables\.replicas' is defined at spec\.variables\[1\]; a variable can use only the ones before it$/m,
  );
  assert.match(block("spec.validations[1].expression"), /^hint: did you mean 'object'\?$/m);
  assert.match(
    block("spec.validations[2].expression"),
    /^hint: the policy's variables are 'early', 'replicas'$/m,
  );
  // eval reports the same hints before it refuses to evaluate.
  const e = await cli(["eval", "-p", path("names"), "-r", path("names/policy.yaml")]);
  assert.equal(e.code, 2);
  assert.match(e.stderr, /^hint: did you mean 'variables\.replicas'\?$/m);
});
