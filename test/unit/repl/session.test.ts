import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ReplSession } from "../../../src/adapters/repl/session.ts";
import { cli, removeTree, tempTree } from "../cli/fake-io.ts";

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: prod
  labels: {app: web}
spec:
  containers:
    - name: app
      image: registry.io/app:1.0
    - name: sidecar
      image: evil/proxy:latest
      securityContext:
        privileged: true
`;

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: no-privileged
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["pods"]
  validations:
    - expression: "object.spec.containers.all(c, !has(c.securityContext) || c.securityContext.privileged != true)"
      message: no privileged containers
`;

const REVIEW = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "1",
    kind: { group: "", version: "v1", kind: "Pod" },
    resource: { group: "", version: "v1", resource: "pods" },
    name: "web",
    namespace: "prod",
    operation: "UPDATE",
    userInfo: { username: "bob", groups: ["admins"] },
    object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [] } },
    oldObject: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web" },
      spec: { containers: [{ name: "x" }] },
    },
  },
});

let dir = "";
before(async () => {
  dir = await tempTree({
    "pod.yaml": POD,
    "policy.yaml": POLICY,
    "broken.yaml": POLICY.replace("object.spec.containers.all(", "object.spec.containers.all(c"),
    "review.json": REVIEW,
    "request.json": JSON.stringify(JSON.parse(REVIEW).request),
    "params.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits}\ndata: {max: '3'}\n",
    "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: production}}\n",
    "two.yaml": "a: 1\n---\nb: 2\n",
  });
});
after(() => removeTree(dir));

/** Runs inputs in a fresh session; returns each reply's text, prefixed with `!` when it failed. */
async function session(...inputs: string[]): Promise<string[]> {
  const s = new ReplSession({ cwd: dir });
  const out: string[] = [];
  for (const i of inputs) {
    const r = await s.handle(i);
    out.push(`${r.error ? "!" : ""}${r.text}`);
  }
  return out;
}

test("expressions show their value and type; errors show a caret", async () => {
  // [1, 2.5] mixes int and double: the REPL checks as the API server does (homogeneous literals).
  assert.deepEqual(await session("1 + 2", "'a' + 'b'", "[1.0, 2.5]"), [
    "3 (int)",
    '"ab" (string)',
    "[\n  1,\n  2.5\n] (list)",
  ]);
  const [mixed] = await session("[1, 2.5]");
  assert.equal(mixed, "!ERROR: <input>:1:5: expected type 'int' but found 'double'\n | [1, 2.5]\n | ....^");
  const [bad] = await session("1 + 'a'");
  assert.equal(
    bad,
    "!ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | 1 + 'a'\n | ..^",
  );
});

test("blank input and comments do nothing", async () => {
  assert.deepEqual(await session("", "   ", "// note", "# note"), ["", "", "", ""]);
});

test(":object binds object and builds the request the API server would send", async () => {
  const out = await session(
    ":object pod.yaml",
    "object.metadata.name",
    "request.operation",
    "request.kind.kind + ' ' + request.resource.resource + ' ' + request.namespace",
    "oldObject",
    ":op update",
    "request.operation",
    ":op DELETE",
    "[dyn(object == null), oldObject.metadata.name]",
  );
  assert.deepEqual(out, [
    "object: Pod prod/web",
    '"web" (string)',
    '"CREATE" (string)',
    '"Pod pods prod" (string)',
    "null (null_type)",
    "request.operation: UPDATE",
    '"UPDATE" (string)',
    "request.operation: DELETE",
    '[\n  true,\n  "web"\n] (list)',
  ]);
});

test(":object and :old together make an UPDATE", async () => {
  const out = await session(":object pod.yaml", ":old pod.yaml", "request.operation");
  assert.equal(out[2], '"UPDATE" (string)');
});

test(":request takes an AdmissionReview or a bare request, with its objects", async () => {
  for (const file of ["review.json", "request.json"]) {
    const out = await session(
      `:request ${file}`,
      "[dyn(request.userInfo.username), dyn(request.operation), dyn(size(object.spec.containers)), dyn(size(oldObject.spec.containers))]",
    );
    assert.deepEqual(out, [
      "request, object, oldObject: UPDATE Pod prod/web by bob",
      '[\n  "bob",\n  "UPDATE",\n  0,\n  1\n] (list)',
    ]);
  }
  const [bad] = await session(":request pod.yaml");
  assert.match(bad ?? "", /^!pod.yaml: not an AdmissionReview or AdmissionRequest: request.uid: required$/);
});

test(":user and :op shape request.userInfo and request.operation", async () => {
  assert.deepEqual(
    await session(
      ":user alice --groups dev,ops",
      "request.userInfo.groups",
      ":user",
      ":user a b",
      ":op PATCH",
    ),
    [
      "request.userInfo: alice [dev, ops]",
      '[\n  "dev",\n  "ops"\n] (list)',
      "!usage: :user NAME [--groups G1,G2]",
      "!give one user name; usage: :user NAME [--groups G1,G2]",
      "!unknown operation 'PATCH'; expected CREATE, UPDATE, DELETE, CONNECT",
    ],
  );
  const out = await session(":object pod.yaml", ":user alice --groups=dev", "request.userInfo.username");
  assert.equal(out[2], '"alice" (string)');
});

test(":params and :namespace bind params and namespaceObject", async () => {
  const out = await session(
    ":params params.yaml",
    ":namespace ns.yaml",
    "int(params.data.max) + 1",
    "namespaceObject.metadata.labels.env",
  );
  assert.deepEqual(out, [
    "params: ConfigMap limits",
    "namespaceObject: Namespace prod",
    "4 (int)",
    '"production" (string)',
  ]);
});

test("loading problems are errors that name the file", async () => {
  const out = await session(":object missing.yaml", ":object two.yaml", ":object");
  assert.match(out[0] ?? "", /^!cannot read missing.yaml: ENOENT/);
  assert.equal(out[1], "!two.yaml: expected one YAML or JSON document, found 2");
  assert.equal(out[2], "!give a file name");
});

test(":let binds a name, also as variables.NAME, for later expressions", async () => {
  const out = await session(
    ":let n = 20 + 1",
    "n * 2",
    "variables.n",
    ":let xs = [n,\n n]",
    "xs.size()",
    ":let in = 1",
    ":let object = 1",
    ":let bad = 1 / 0",
    ":let nothing",
  );
  assert.deepEqual(out, [
    "n = 21 (int)",
    "42 (int)",
    "21 (int)",
    "xs = [\n  21,\n  21\n] (list)",
    "2 (int)",
    "!'in' is a reserved word",
    "!'object' is an admission variable; load it with :object FILE",
    "!ERROR: <input>:1:3: division by zero\n | 1 / 0\n | ..^",
    "!usage: :let NAME = EXPRESSION",
  ]);
});

test(":cost gives the cost of the last expression", async () => {
  const out = await session(":cost", "[1, 2, 3].all(x, x > 0)", ":cost");
  assert.equal(out[0], "!no expression evaluated yet");
  assert.match(
    out[2] ?? "",
    /^\d+ \(cost of \[1, 2, 3\]\.all\(x, x > 0\); Kubernetes allows 1,000,000 per expression\)$/,
  );
});

test(":explain gives the reasons a false expression is false", async () => {
  const out = await session(
    ":explain",
    ":object pod.yaml",
    "object.spec.containers.all(c, !has(c.securityContext) || c.securityContext.privileged != true)",
    ":explain",
    "1 == 1",
    ":explain",
  );
  assert.equal(out[0], "!nothing evaluated yet");
  assert.equal(out[2], "false (bool)");
  assert.match(
    out[3] ?? "",
    /^object\.spec\.containers\.all\(c, .*\) → false \(cost \d+\)\n {2}because containers\[1\] \(name: "sidecar"\): c\.securityContext\.privileged != true is false: c\.securityContext\.privileged = true$/,
  );
  assert.match(out[5] ?? "", /^1 == 1 → true \(cost \d+\)$/);
});

test(":policy evaluates policies against the context; :explain shows the trace", async () => {
  // POLICY has no binding: evaluated, as if bound with [Deny], only with --include-unbound.
  const out = await session(
    ":policy policy.yaml",
    ":object pod.yaml",
    ":policy --include-unbound policy.yaml",
    ":explain",
    ":policy --include-unbound",
  );
  assert.match(out[0] ?? "", /^!no request to evaluate: load a Kubernetes object/);
  assert.match(
    out[2] ?? "",
    /^RESOURCE +POLICY +BINDING +OUTCOME +MESSAGE\nPod prod\/web +no-privileged +\(none\)\* +fail +\[Deny\] no privileged containers/,
  );
  assert.match(
    out[2] ?? "",
    /Pod prod\/web: denied: ValidatingAdmissionPolicy 'no-privileged' denied request: no privileged containers/,
  );
  assert.match(out[3] ?? "", /validation\[0\]: object\.spec\.containers\.all\(.*\) → false \(cost \d+\)/);
  assert.equal(out[4], out[2], ":policy without a path evaluates the last policies again");
  const [, bound] = await session(":object pod.yaml", ":policy policy.yaml");
  assert.match(
    bound ?? "",
    /^note: 1 policy no binding names is not evaluated \(as in the API server\): no-privileged/,
  );
  assert.match(bound ?? "", /Pod prod\/web: allowed/);
});

test(":policy reports policy files with errors and evaluates nothing", async () => {
  const out = await session(":object pod.yaml", ":policy broken.yaml", ":policy");
  assert.match(
    out[1] ?? "",
    /^!.*broken\.yaml.*\n[\s\S]*the policy files have errors; nothing was evaluated$/,
  );
  assert.equal(out[2], "!usage: :policy PATH (a policy file or a directory of them)");
});

test(":vars lists what is bound; :reset unbinds it", async () => {
  const out = await session(":object pod.yaml", ":let n = 1", ":vars", ":reset", ":vars");
  assert.equal(
    out[2],
    [
      "object           Pod prod/web (from pod.yaml)",
      "oldObject        null",
      "request          CREATE Pod prod/web by celgate [system:authenticated]",
      "params           null",
      "namespaceObject  null",
      "n                1 (int)",
    ].join("\n"),
  );
  assert.equal(
    out[4],
    "object           null\noldObject        null\nrequest          null\nparams           null\nnamespaceObject  null",
  );
});

test(":help lists every command; unknown commands are errors; :quit quits", async () => {
  const s = new ReplSession({ cwd: dir });
  const help = await s.handle(":help");
  for (const c of [
    "object",
    "old",
    "request",
    "params",
    "namespace",
    "op",
    "user",
    "let",
    "policy",
    "explain",
    "cost",
    "vars",
    "help",
    "quit",
  ])
    assert.match(help.text, new RegExp(`^  :${c}\\b`, "m"), c);
  assert.deepEqual(await s.handle(":frob"), {
    text: "unknown command ':frob'; :help lists the commands",
    error: true,
  });
  assert.equal((await s.handle(":quit")).quit, true);
  assert.equal((await s.handle(":q")).quit, true);
});

test("celgate repl with piped input: results on stdout, errors on stderr, exit 1 when any failed", async () => {
  const ok = await cli(["repl"], { stdin: "1 + 2\n[1,\n 2].size()\n:let x = 3\nx\n", cwd: dir });
  assert.deepEqual(ok, { code: 0, stdout: "3 (int)\n2 (int)\nx = 3 (int)\n3 (int)\n", stderr: "" });
  const bad = await cli(["repl"], { stdin: "1 +\n:object pod.yaml\nobject.kind\n:quit\n2\n", cwd: dir });
  assert.equal(bad.code, 1);
  assert.equal(bad.stdout, 'object: Pod prod/web\n"Pod" (string)\n');
  assert.match(bad.stderr, /^ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>'/);
});

test("celgate repl options preload the context; a bad file is a usage error", async () => {
  const r = await cli(["repl", "--object", "pod.yaml", "--cel-extras", "math"], {
    stdin: "math.greatest([1, size(object.spec.containers)])\n",
    cwd: dir,
  });
  assert.deepEqual(r, { code: 0, stdout: "2 (int)\n", stderr: "" });
  const bad = await cli(["repl", "--object", "nope.yaml"], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^celgate repl: cannot read nope.yaml/);
  const extras = await cli(["repl", "--cel-extras", "frob"], { cwd: dir });
  assert.equal(extras.code, 2);
  assert.match(extras.stderr, /unknown CEL extra 'frob'/);
});

test(":review binds a saved AdmissionReview as serve would see it; what serve refuses it refuses with the same reason", async () => {
  const out = await session(
    ":review review.json",
    // One type per list literal (the homogeneous literal validator): each element as dyn.
    "[dyn(request.userInfo.username), dyn(request.operation), dyn(request.namespace), dyn(size(oldObject.spec.containers))]",
    ":review request.json",
  );
  assert.deepEqual(out.slice(0, 2), [
    "request, object, oldObject: UPDATE Pod prod/web by bob",
    '[\n  "bob",\n  "UPDATE",\n  "prod",\n  1\n] (list)',
  ]);
  // A bare request is not a review: serve answers it with 400 (its `kind` is the request's GVK).
  assert.equal(
    out[2],
    '!request.json: an AdmissionReview that serve refuses (HTTP 400): kind: expected "AdmissionReview", got object',
  );
});

test(":policy gives eval's verdict on the same object: namespaces no file defines exist (require-labels' namespaceSelector)", async () => {
  const policy = new URL("../../../policies/require-labels.yaml", import.meta.url).pathname;
  const pod =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: app:1}]}\n";
  const tree = await tempTree({ "pod.yaml": pod });
  try {
    const s = new ReplSession({ cwd: tree });
    await s.handle(":object pod.yaml");
    const repl = (await s.handle(`:policy ${policy}`)).text;
    const evaluated = await cli(["eval", "-p", policy, "-r", join(tree, "pod.yaml")]);
    assert.equal(evaluated.code, 1);
    assert.match(
      repl ?? "",
      /Pod default\/web +require-labels\.celgate\.dev .* fail +\[Deny\] Pod web is missing required labels/,
    );
    assert.equal(`${repl}\n`, evaluated.stdout);
  } finally {
    await removeTree(tree);
  }
});

test(":namespace binds namespaceObject as the API server builds it; a Namespace's own requests see null", async () => {
  const out = await session(
    ":namespace ns.yaml",
    "namespaceObject.metadata.labels",
    // The declared Namespace type has no kind (BuildNamespaceType); the value has none either.
    "has(dyn(namespaceObject).kind)",
    ":object pod.yaml",
    "namespaceObject.status.phase",
    ":object ns.yaml",
    "[dyn(request.namespace), dyn(namespaceObject)]",
  );
  assert.deepEqual(out, [
    "namespaceObject: Namespace prod",
    '{\n  "env": "production",\n  "kubernetes.io/metadata.name": "prod"\n} (map)',
    "false (bool)",
    "object: Pod prod/web",
    '"Active" (string)',
    "object: Namespace prod",
    '[\n  "prod",\n  null\n] (list)',
  ]);
});

test("repl --env mutating: Object{...}, JSONPatch{...} and jsonpatch.escapeKey, declared only for mutations", async () => {
  const mutating = new ReplSession({ cwd: ".", context: "mutating" });
  const escaped = await mutating.handle("jsonpatch.escapeKey('a/b')");
  assert.equal(escaped.error, false, escaped.text);
  assert.match(escaped.text, /"a~1b" \(string\)/);
  const patch = await mutating.handle("[JSONPatch{op: 'add', path: '/a', value: 1}].size()");
  assert.match(patch.text, /1 \(int\)/);
  const validating = await new ReplSession({ cwd: "." }).handle("jsonpatch.escapeKey('a/b')");
  assert.equal(validating.error, true);
  assert.match(validating.text, /undeclared reference to 'jsonpatch'/);
  const match = await new ReplSession({ cwd: ".", context: "match" }).handle("params");
  assert.match(match.text, /undeclared reference to 'params'/);
  const bad = await cli(["repl", "--env", "nope"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown environment 'nope'/);
});
