import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { formatDiagnostic } from "../../../src/errors.ts";
import { fileSuiteReader, type SuiteReader } from "../../../src/sources/suites.ts";
import { jsonEqual } from "../../../src/engine/mutate.ts";
import { parseSuiteText } from "../../../src/suite/parse.ts";
import {
  type CaseActual,
  type CaseResult,
  compare,
  runSuite,
  runSuiteFile,
  type SuiteResult,
} from "../../../src/suite/run.ts";
import type { SuiteCase } from "../../../src/suite/types.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "suites");

async function run(rel: string): Promise<SuiteResult> {
  return runSuiteFile(join(FIXTURES, rel), fileSuiteReader);
}

function byName(s: SuiteResult, name: string): CaseResult {
  const c = s.cases.find((x) => x.name === name);
  assert.ok(c, `no case ${name}`);
  return c;
}

function failures(c: CaseResult): string[] {
  return c.mismatches.map((m) => m.key);
}

test("the good fixture suites pass, every case", async () => {
  for (const file of ["good/replicas.test.yaml", "good/authz.test.yaml", "good/mutation.test.yaml"]) {
    const s = await run(file);
    assert.equal(s.broken, false, `${file}: ${s.diagnostics.map(formatDiagnostic).join("\n")}`);
    assert.ok(s.cases.length >= 4, file);
    for (const c of s.cases) assert.deepEqual(c.mismatches, [], `${file}: ${c.name}`);
  }
});

test("the requests: operation, namespace precedence, user, dryRun, kind and resource", async () => {
  const s = await run("good/replicas.test.yaml");
  const small = byName(s, "a small deployment is allowed");
  assert.deepEqual(small.resource, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace: "default",
    name: "web",
  });
  assert.deepEqual(small.actual.matched, ["replica-limit", "no-latest"]);
  const prod = byName(s, "production / one replica is too few in prod");
  assert.equal(prod.resource.namespace, "prod", "a group's default namespace");
  const staging = byName(s, "a namespace object from the case selects the policy");
  assert.equal(staging.resource.namespace, "staging");
  assert.deepEqual(staging.actual.status, {
    code: 422,
    reason: "Invalid",
    message:
      "ValidatingAdmissionPolicy 'prod-min-replicas' with binding 'prod-min-replicas' denied request: production deployments need at least 2 replicas",
  });
  const del = byName(s, "production / deletes / deleting is never checked");
  assert.equal(del.actual.patched, null, "a DELETE has no object after mutation");
  assert.equal(del.original !== null, true);
});

test("the authorizer table answers the policies' checks, and they are recorded", async () => {
  const s = await run("good/authz.test.yaml");
  const alice = byName(s, "alice may delete in team-a");
  assert.deepEqual(
    alice.authorizerChecks.map((c) => [
      c.attributes.verb,
      c.attributes.group,
      c.attributes.resource,
      c.attributes.namespace,
      c.attributes.name ?? "",
      c.answer.decision,
      c.rule,
    ]),
    [
      ["delete", "", "pods", "team-a", "", "allow", 0],
      ["delete", "apps", "deployments", "team-a", "web", "allow", 2],
    ],
  );
  const teamB = byName(s, "alice may not delete in team-b (no rule matched)");
  assert.equal(teamB.actual.allowed, false);
  assert.equal(teamB.authorizerChecks[0]?.rule, undefined);
  const carol = byName(s, "path checks / carol may get /healthz/ready");
  assert.deepEqual(
    carol.authorizerChecks.map((c) => [c.attributes.path, c.answer.decision]),
    [["/healthz/ready", "allow"]],
  );
});

test("mutation cases: patched is the object after mutation, patch the JSON Patch from the original", async () => {
  const s = await run("good/mutation.test.yaml");
  assert.equal(s.name, "mutation", "named after the file");
  const c = byName(s, "the label is added and then validated");
  assert.deepEqual(c.actual.patch, [{ op: "add", path: "/metadata/labels", value: { team: "platform" } }]);
  assert.deepEqual((c.actual.patched as { metadata: unknown }).metadata, {
    name: "p",
    namespace: "default",
    labels: { team: "platform" },
  });
  assert.deepEqual(byName(s, "a pod with a team is left alone").actual.patch, []);
});

test("the failing fixture: each wrong expectation is reported with expected and actual", async () => {
  const s = await run("failing/failing.test.yaml");
  assert.equal(s.broken, false);
  const want: Record<string, string[]> = {
    passes: [],
    "wrong verdict": ["allowed"],
    "wrong status": ["code", "reason", "message", "messageMatches"],
    "wrong annotations and lists": ["warnings", "warningsMatch", "auditAnnotations", "matched", "skipped"],
    "wrong mutation": ["unchanged"],
    "wrong patched object": ["patched"],
    "wrong patch": ["patch"],
  };
  assert.deepEqual(Object.fromEntries(s.cases.map((c) => [c.name, failures(c)])), want);
  const status = byName(s, "wrong status").mismatches;
  assert.deepEqual(status[0], { key: "code", path: "cases[2].expect.code", expected: 422, actual: 403 });
  const verdict = byName(s, "wrong verdict");
  assert.ok(
    verdict.results.some((r) => r.trace.length > 0),
    "results keep the explain trace",
  );
  assert.ok(
    verdict.results.some((r) => r.trace.some((t) => t.value !== undefined)),
    "traces hold values",
  );
});

function suiteCase(expect: SuiteCase["expect"]): SuiteCase {
  return {
    name: "c",
    namePath: ["c"],
    path: "cases[0]",
    location: { file: "f", line: 1, column: 1 },
    operation: "CREATE",
    object: { value: { inline: {} }, path: "cases[0].object" },
    expect,
    expectPaths: {},
  };
}

const DENIED: CaseActual = {
  allowed: false,
  status: { code: 403, reason: "Forbidden", message: "policy p denied request: too many replicas" },
  warnings: ["w1: careful", "w2: latest tag"],
  auditAnnotations: { "p/a": "1", "p/b": "2" },
  matched: ["p", "q"],
  skipped: ["r"],
  patch: [{ op: "add", path: "/x", value: 1 }],
  patched: { x: 1, y: { z: [1, 2] } },
};
const ALLOWED: CaseActual = {
  allowed: true,
  warnings: [],
  auditAnnotations: {},
  matched: [],
  skipped: [],
  patch: [],
  patched: { a: 1 },
};

test("compare: every expectation key, holding and not holding", () => {
  const cases: [string, SuiteCase["expect"], CaseActual, string[]][] = [
    ["allowed holds", { allowed: false }, DENIED, []],
    ["allowed fails", { allowed: true }, DENIED, ["allowed"]],
    ["code", { code: 403 }, DENIED, []],
    ["code differs", { code: 422 }, DENIED, ["code"]],
    ["code when allowed", { code: 403 }, ALLOWED, ["code"]],
    ["reason", { reason: "Forbidden" }, DENIED, []],
    ["reason differs", { reason: "Invalid" }, DENIED, ["reason"]],
    ["message exact", { message: "policy p denied request: too many replicas" }, DENIED, []],
    ["message is exact, not a substring", { message: "too many replicas" }, DENIED, ["message"]],
    ["message when allowed", { message: "" }, ALLOWED, ["message"]],
    ["messageMatches searches", { messageMatches: "too many" }, DENIED, []],
    ["messageMatches anchored", { messageMatches: "^too" }, DENIED, ["messageMatches"]],
    ["messageMatches when allowed", { messageMatches: ".*" }, ALLOWED, ["messageMatches"]],
    ["warnings in any order", { warnings: ["w2: latest tag", "w1: careful"] }, DENIED, []],
    ["warnings must all be listed", { warnings: ["w1: careful"] }, DENIED, ["warnings"]],
    ["no warnings", { warnings: [] }, ALLOWED, []],
    ["warningsMatch: each pattern matches some warning", { warningsMatch: ["latest", "^w1"] }, DENIED, []],
    [
      "warningsMatch: a pattern matching none",
      { warningsMatch: ["latest", "nope"] },
      DENIED,
      ["warningsMatch"],
    ],
    ["auditAnnotations subset", { auditAnnotations: { "p/a": "1" } }, DENIED, []],
    ["auditAnnotations value differs", { auditAnnotations: { "p/a": "2" } }, DENIED, ["auditAnnotations"]],
    ["auditAnnotations key missing", { auditAnnotations: { "p/c": "1" } }, DENIED, ["auditAnnotations"]],
    ["matched as a set", { matched: ["q", "p", "p"] }, DENIED, []],
    ["matched missing one", { matched: ["p"] }, DENIED, ["matched"]],
    ["skipped", { skipped: ["r"] }, DENIED, []],
    ["skipped empty", { skipped: [] }, DENIED, ["skipped"]],
    ["patched deep-equal, key order free", { patched: { y: { z: [1, 2] }, x: 1 } }, DENIED, []],
    ["patched list order matters", { patched: { x: 1, y: { z: [2, 1] } } }, DENIED, ["patched"]],
    ["patched extra key", { patched: { x: 1, y: { z: [1, 2] }, w: null } }, DENIED, ["patched"]],
    ["patch exact", { patch: [{ op: "add", path: "/x", value: 1 }] }, DENIED, []],
    ["patch differs", { patch: [{ op: "add", path: "/x", value: "1" }] }, DENIED, ["patch"]],
    ["unchanged true", { unchanged: true }, ALLOWED, []],
    ["unchanged true but changed", { unchanged: true }, DENIED, ["unchanged"]],
    ["unchanged false", { unchanged: false }, DENIED, []],
    ["unchanged false but not changed", { unchanged: false }, ALLOWED, ["unchanged"]],
    ["keys not given are not checked", {}, DENIED, []],
    [
      "several at once, in key order",
      { unchanged: true, allowed: true, code: 200 },
      DENIED,
      ["allowed", "code", "unchanged"],
    ],
  ];
  for (const [what, expect, actual, want] of cases)
    assert.deepEqual(
      compare(suiteCase(expect), actual).map((m) => m.key),
      want,
      what,
    );
});

test("compare: the mismatch names where the expectation is written and explains itself", () => {
  const c = {
    ...suiteCase({ warningsMatch: ["a", "b"] }),
    expectPaths: { warningsMatch: "defaults.expect.warningsMatch" },
  };
  assert.deepEqual(compare(c, { ...ALLOWED, warnings: ["a"] }), [
    {
      key: "warningsMatch",
      path: "defaults.expect.warningsMatch",
      expected: ["a", "b"],
      actual: ["a"],
      note: 'no warning matches "b"',
    },
  ]);
});

test("jsonEqual", () => {
  assert.ok(jsonEqual({ a: [1, { b: null }] }, { a: [1, { b: null }] }));
  assert.ok(!jsonEqual({ a: 1 }, { a: "1" }));
  assert.ok(!jsonEqual([1], { 0: 1 }));
  assert.ok(!jsonEqual(null, {}));
});

/** A reader over in-memory files; policies are loaded from disk only in the fixture tests. */
function memoryReader(files: Record<string, string>): SuiteReader {
  return {
    readText: async (p) =>
      p in files ? { ok: true, value: files[p] ?? "" } : { ok: false, error: "no such file or directory" },
    exists: async (p) => p in files || fileSuiteReader.exists(p),
    loadPolicies: (paths) => fileSuiteReader.loadPolicies(paths),
  };
}

const POLICY = join(FIXTURES, "good", "policies", "labels.yaml");

async function runText(text: string, extra: Record<string, string> = {}): Promise<SuiteResult> {
  const file = join(FIXTURES, "mem.test.yaml");
  return runSuiteFile(file, memoryReader({ [file]: text, ...extra }));
}

function located(s: SuiteResult): string[] {
  return s.diagnostics.map((d) => `${d.location?.line}:${d.location?.column} ${d.path ?? ""}: ${d.message}`);
}

test("broken at load: missing policy paths, object files, and objects that are not Kubernetes objects", async () => {
  const s = await runText(
    `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [nowhere/policy.yaml]
cases:
  - name: a
    objectFile: pod.yaml
    expect: { allowed: true }
`,
  );
  assert.equal(s.broken, true);
  // Every problem in one run: the missing policy path does not hide the missing object file.
  assert.deepEqual(located(s), [
    `3:12 policies[0]: policy path 'nowhere/policy.yaml' not found (looked for ${join(FIXTURES, "nowhere", "policy.yaml")})`,
    `6:17 cases[0].objectFile: cannot read ${join(FIXTURES, "pod.yaml")}: no such file or directory`,
  ]);

  const t = await runText(
    `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${POLICY}]
cases:
  - name: a
    objectFile: missing.yaml
    expect: { allowed: true }
  - name: b
    objectFile: two.yaml
    expect: { allowed: true }
  - name: c
    objectFile: bad.yaml
    expect: { allowed: true }
  - name: d
    objectFile: kindless.yaml
    expect: { allowed: true }
`,
    {
      [join(FIXTURES, "two.yaml")]: "a: 1\n---\nb: 2\n",
      [join(FIXTURES, "bad.yaml")]: "a: [1\n",
      [join(FIXTURES, "kindless.yaml")]: "apiVersion: v1\n",
    },
  );
  assert.equal(t.broken, true);
  assert.deepEqual(located(t), [
    `6:17 cases[0].objectFile: cannot read ${join(FIXTURES, "missing.yaml")}: no such file or directory`,
    `9:17 cases[1].objectFile: ${join(FIXTURES, "two.yaml")}: expected one YAML or JSON document, found 2`,
    `12:17 cases[2].objectFile: ${join(FIXTURES, "bad.yaml")}:2:1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]`,
    `15:17 cases[3].objectFile: ${join(FIXTURES, "kindless.yaml")}: the object has no kind`,
  ]);
});

test("broken at load: a namespaceObject that is not the request's namespace", async () => {
  const s = await runText(`apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${POLICY}]
cases:
  - name: a
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, namespace: team-b } }
    namespaceObject: { apiVersion: v1, kind: Namespace, metadata: { name: team-a } }
    expect: { allowed: true }
`);
  assert.deepEqual(located(s), [
    "7:22 cases[0].namespaceObject: namespaceObject is 'team-a' but the request's namespace is 'team-b'",
  ]);
});

test("broken at load: a policy path holding no policies", async () => {
  const s = await runText(`apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${join(FIXTURES, "good", "params")}]
cases:
  - name: a
    object: { apiVersion: v1, kind: Pod, metadata: { name: p } }
    expect: { allowed: true }
`);
  assert.equal(s.broken, true);
  assert.match(
    located(s)[0] ?? "",
    /^3:11 policies: no ValidatingAdmissionPolicy or MutatingAdmissionPolicy found in /,
  );
});

test("broken suite files: unreadable, policy errors", async () => {
  const missing = await runSuiteFile(join(FIXTURES, "none.test.yaml"), fileSuiteReader);
  assert.equal(missing.broken, true);
  assert.match(
    missing.diagnostics[0]?.message ?? "",
    /cannot read the suite file: no such file or directory/,
  );
  const bad = await run("broken/bad-policy.test.yaml");
  assert.equal(bad.broken, true);
  assert.deepEqual(
    bad.diagnostics.map((d) => [d.code, d.location?.line]),
    [["PE_CEL_UNKNOWN_IDENT", 13]],
  );
  assert.deepEqual(bad.cases, []);
});

test("a case's inline namespaceObject and the object's own namespace", async () => {
  const s = await runText(`apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${POLICY}]
defaults:
  namespace: fallback
  expect: { allowed: true }
cases:
  - name: object namespace wins over defaults
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, namespace: mine, labels: { team: platform } } }
  - name: defaults fill in
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, labels: { team: platform } } }
  - name: namespaceObject fills in before defaults
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, labels: { team: platform } } }
    namespaceObject: { apiVersion: v1, kind: Namespace, metadata: { name: nso } }
  - name: the case's namespace names an object without one
    namespace: forced
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, labels: { team: platform } } }
  - name: cluster-scoped objects have no namespace
    object: { apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: { name: r, namespace: mine } }
`);
  assert.deepEqual(located(s), []);
  assert.deepEqual(
    s.cases.map((c) => c.resource.namespace),
    ["mine", "fallback", "nso", "forced", ""],
  );
  // The object is admitted in the request's namespace (EnsureObjectNamespaceMatchesRequestNamespace,
  // apiserver registry/rest/meta.go); a cluster-scoped object loses the one it named.
  assert.deepEqual(
    s.cases.map((c) => (c.actual.patched as { metadata: { namespace?: string } }).metadata.namespace),
    ["mine", "fallback", "nso", "forced", undefined],
  );
});

test("a case whose namespace differs from its object's is an input error, as the API server's 400 BadRequest", async () => {
  const s = await runText(`apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${POLICY}]
cases:
  - name: the object says another namespace
    namespace: forced
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, namespace: mine, labels: { team: platform } } }
    expect: { allowed: true }
`);
  assert.equal(s.broken, true);
  assert.deepEqual(located(s), [
    "7:13 cases[0].object: the object names namespace 'mine' but the request is for namespace 'forced': the API server rejects this before admission (400 BadRequest: the namespace of the provided object does not match the namespace sent on the request)",
  ]);
});

test("runSuite runs a parsed suite with the given reader", async () => {
  const file = join(FIXTURES, "inline.test.yaml");
  const parsed = parseSuiteText(
    `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${POLICY}]
cases:
  - name: denied without the team
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, labels: { team: x } } }
    requestName: renamed
    expect: { allowed: false, messageMatches: "platform team" }
`,
    file,
  );
  assert.ok(parsed.suite);
  const r = await runSuite(parsed.suite, fileSuiteReader);
  assert.equal(r.cases[0]?.passed, true);
  assert.equal(r.cases[0]?.resource.name, "renamed");
});

test("policies in resources files are not evaluated, and the suite says so", async () => {
  const s = await runText(`apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [${POLICY}]
resources: [${join(FIXTURES, "good", "policies", "authz.yaml")}]
cases:
  - name: a
    object: { apiVersion: v1, kind: Pod, metadata: { name: p, labels: { team: x } } }
    expect: { allowed: false, matched: [require-team], skipped: [team-label] }
`);
  assert.equal(s.broken, false);
  assert.deepEqual(
    s.diagnostics.map((d) => [d.severity, d.path, d.message]),
    [
      [
        "warning",
        "resources",
        "the resources files hold 4 policies and bindings, which are not evaluated; list those files under policies",
      ],
    ],
  );
  assert.equal(s.cases[0]?.passed, true);
});
