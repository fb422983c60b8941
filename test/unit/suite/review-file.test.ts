/**
 * A test case's `reviewFile`: a saved AdmissionReview evaluated as `serve` evaluates it (the same
 * request, no offline defaulting), decoded by the webhook's codec through `celgate test`, so a review
 * serve refuses makes the suite broken with serve's reason.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { decodeSavedReview } from "../../../src/adapters/admission/saved.ts";
import { formatDiagnostic } from "../../../src/errors.ts";
import { fileSuiteReader } from "../../../src/sources/suites.ts";
import { runSuiteFile } from "../../../src/suite/run.ts";
import { cli, removeTree, tempTree } from "../cli/fake-io.ts";

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: as-sent}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["*"], resources: ["pods"]}]
  validations:
    - expression: "request.userInfo.username == 'bob' && request.dryRun && !has(object.spec.dnsPolicy)"
      messageExpression: "'saw ' + request.namespace + '/' + request.userInfo.username + ' ' + request.operation"
    - expression: "namespaceObject.metadata.?labels[?'env'].orValue('') != 'frozen'"
      message: frozen
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: as-sent}
spec: {policyName: as-sent, validationActions: [Deny]}
`;

const review = (request: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "r-1",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      name: "web",
      namespace: "team-b",
      operation: "UPDATE",
      userInfo: { username: "bob", groups: ["admins"] },
      object: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "a", image: "a:1" }] },
      },
      oldObject: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "a", image: "a:1" }] },
      },
      dryRun: true,
      ...request,
    },
  });

const SUITE = `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
defaults:
  # A request's fields in defaults yield to a review: it gives the whole request.
  operation: CREATE
  objectFile: pod.yaml
  userInfo: {username: alice}
cases:
  - name: the review's own request
    reviewFile: review.json
    expect: {allowed: true, matched: [as-sent]}
  - name: another user, as the review says
    reviewFile: eve.json
    expect: {allowed: false, message: "ValidatingAdmissionPolicy 'as-sent' with binding 'as-sent' denied request: saw team-b/eve UPDATE"}
  - name: a namespaceObject for the review's namespace
    reviewFile: review.json
    namespaceObject: {apiVersion: v1, kind: Namespace, metadata: {name: team-b, labels: {env: frozen}}}
    expect: {allowed: false, messageMatches: "frozen$"}
  - name: a plain case beside them
    expect: {allowed: false, messageMatches: "saw default/alice CREATE"}
`;

let dir = "";
before(async () => {
  dir = await tempTree({
    "policy.yaml": POLICY,
    "pod.yaml":
      "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: a:1}]}\n",
    "review.json": review(),
    "eve.json": review({ userInfo: { username: "eve" } }),
    "no-uid.json": review({ uid: "" }),
    "good.test.yaml": SUITE,
    "refused.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: refused
    reviewFile: no-uid.json
    expect: {allowed: true}
`,
    "mixed.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: both
    reviewFile: review.json
    objectFile: pod.yaml
    userInfo: {username: x}
    expect: {allowed: true}
`,
  });
});
after(() => removeTree(dir));

test("reviewFile cases evaluate the review's request as it is; defaults' request fields yield to it", async () => {
  const s = await runSuiteFile(join(dir, "good.test.yaml"), fileSuiteReader, {
    decodeReview: decodeSavedReview,
  });
  assert.equal(s.broken, false, s.diagnostics.map(formatDiagnostic).join("\n"));
  for (const c of s.cases) assert.deepEqual(c.mismatches, [], c.name);
  const first = s.cases[0];
  assert.deepEqual(first?.resource, { apiVersion: "v1", kind: "Pod", namespace: "team-b", name: "web" });
  assert.deepEqual(first?.defaulted, []);
  // Through the command, which gives the runner the webhook's codec.
  const r = await cli(["test", "--ascii", join(dir, "good.test.yaml")]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
});

test("a review serve refuses breaks the suite with serve's reason", async () => {
  const s = await runSuiteFile(join(dir, "refused.test.yaml"), fileSuiteReader, {
    decodeReview: decodeSavedReview,
  });
  assert.equal(s.broken, true);
  assert.deepEqual(
    s.diagnostics.map((d) => [d.path, d.message]),
    [
      [
        "cases[0].reviewFile",
        "no-uid.json: an AdmissionReview that serve refuses (HTTP 400): request.uid: required",
      ],
    ],
  );
  // A runner without the codec cannot read reviews, and says so.
  const without = await runSuiteFile(join(dir, "good.test.yaml"), fileSuiteReader);
  assert.equal(without.broken, true);
  assert.match(
    without.diagnostics[0]?.message ?? "",
    /reviewFile cases need a runner that reads AdmissionReviews/,
  );
});

test("a case that gives reviewFile and request fields of its own is an error", async () => {
  const s = await runSuiteFile(join(dir, "mixed.test.yaml"), fileSuiteReader, {
    decodeReview: decodeSavedReview,
  });
  assert.equal(s.broken, true);
  assert.deepEqual(
    s.diagnostics.map((d) => [d.path, d.message]),
    [
      ["cases[0].objectFile", "reviewFile gives the whole request: drop objectFile"],
      ["cases[0].userInfo", "reviewFile gives the whole request: drop userInfo"],
    ],
  );
});

test("a namespaceObject on a case about a Namespace is not used, and the suite says so", async () => {
  const tree = await tempTree({
    "policy.yaml": POLICY,
    "ns.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: creating a Namespace
    object: {apiVersion: v1, kind: Namespace, metadata: {name: team-b}}
    namespaceObject: {apiVersion: v1, kind: Namespace, metadata: {name: team-b}}
    expect: {allowed: true}
`,
  });
  try {
    const s = await runSuiteFile(join(tree, "ns.test.yaml"), fileSuiteReader);
    assert.equal(s.broken, false);
    assert.deepEqual(
      s.diagnostics.map((d) => [d.severity, d.message]),
      [
        [
          "warning",
          "namespaceObject is not used: a request on a Namespace has a null namespaceObject, as in the API server",
        ],
      ],
    );
    // Reported as eval reports it: a Namespace is not inside one.
    assert.deepEqual(s.cases[0]?.resource, {
      apiVersion: "v1",
      kind: "Namespace",
      namespace: "",
      name: "team-b",
    });
  } finally {
    await removeTree(tree);
  }
});

test("a saved review in YAML with more than 100 alias uses is read; an alias bomb breaks the suite with a located reason, not a crash", async () => {
  const labels = ["kind: Pod", "apiVersion: v1", "metadata:", "  name: web", "  labels: &l {a: b}"];
  const uses = Array.from({ length: 150 }, (_, i) => `    k${i}: *l`).join("\n");
  const yamlReview = `apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: r-1
  kind: {group: "", version: v1, kind: Pod}
  resource: {group: "", version: v1, resource: pods}
  name: web
  namespace: team-b
  operation: CREATE
  userInfo: {username: bob}
  dryRun: true
  object:
${labels.map((l) => `    ${l}`).join("\n")}
    spec:
      containers: [{name: a, image: "a:1"}]
    annotations:
${uses}
`;
  const bomb = `${yamlReview}\nx: &x0 [a, a, a, a, a, a, a, a, a, a]\n${Array.from({ length: 8 }, (_, i) => `x${i + 1}: &x${i + 1} [${Array(10).fill(`*x${i}`).join(", ")}]`).join("\n")}\n`;
  const tree = await tempTree({
    "policy.yaml": POLICY,
    "many.yaml": yamlReview,
    "bomb.yaml": bomb,
    "s.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: many aliases
    reviewFile: many.yaml
    expect: {allowed: true, matched: [as-sent]}
`,
    "b.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
cases:
  - name: bomb
    reviewFile: bomb.yaml
    expect: {allowed: true}
`,
  });
  try {
    const s = await runSuiteFile(join(tree, "s.test.yaml"), fileSuiteReader, {
      decodeReview: decodeSavedReview,
    });
    assert.equal(s.broken, false, s.diagnostics.map(formatDiagnostic).join("\n"));
    assert.deepEqual(s.cases[0]?.mismatches, []);
    const b = await runSuiteFile(join(tree, "b.test.yaml"), fileSuiteReader, {
      decodeReview: decodeSavedReview,
    });
    assert.equal(b.broken, true);
    assert.match(b.diagnostics[0]?.message ?? "", /^bomb\.yaml: the document's aliases expand too far/);
  } finally {
    await removeTree(tree);
  }
});
