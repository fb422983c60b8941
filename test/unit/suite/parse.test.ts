import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { formatDiagnostic } from "../../../src/errors.ts";
import { parseSuiteText, suiteNameFromFile } from "../../../src/suite/parse.ts";
import type { ObjectCase, Suite } from "../../../src/suite/types.ts";

const FILE = join("suites", "demo.test.yaml");
const HEAD = `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policy.yaml]
`;
const POD = "{ apiVersion: v1, kind: Pod, metadata: { name: p } }";

function parse(text: string): Suite {
  const r = parseSuiteText(text, FILE);
  assert.deepEqual(r.diagnostics.map(formatDiagnostic), []);
  assert.ok(r.suite);
  return r.suite;
}

/** The diagnostics as `line:col path: message`. */
function problems(text: string): string[] {
  const r = parseSuiteText(text, FILE);
  assert.equal(r.suite, undefined, "a suite with errors is not returned");
  return r.diagnostics.map((d) => `${d.location?.line}:${d.location?.column} ${d.path ?? ""}: ${d.message}`);
}

function only(suite: Suite, name: string): ObjectCase {
  const c = suite.cases.find((x) => x.name === name);
  assert.ok(c, `case ${name}: have ${suite.cases.map((x) => x.name).join(", ")}`);
  assert.ok(!c.review, `case ${name} is a reviewFile case`);
  return c;
}

test("a minimal suite: names, paths resolved against the suite file, defaults", () => {
  const s = parse(`${HEAD}cases:
  - name: allowed
    object: ${POD}
    expect: { allowed: true }
`);
  assert.equal(s.name, "demo", "named after the file without metadata.name");
  assert.deepEqual(s.policies, [
    { value: { written: "policy.yaml", resolved: join("suites", "policy.yaml") }, path: "policies[0]" },
  ]);
  assert.deepEqual(s.authorizer, []);
  const c = only(s, "allowed");
  assert.equal(c.operation, "CREATE");
  assert.deepEqual(c.object.value.inline, { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } });
  assert.deepEqual(c.expect, { allowed: true });
  assert.equal(c.expectPaths.allowed, "cases[0].expect.allowed");
  assert.deepEqual(c.location, { file: FILE, line: 5, column: 5 });
});

test("suite names: metadata.name, else the file name", () => {
  assert.equal(
    parse(
      `${HEAD}metadata: { name: my suite }\ncases:\n  - name: a\n    object: ${POD}\n    expect: { allowed: true }\n`,
    ).name,
    "my suite",
  );
  assert.equal(suiteNameFromFile("/a/b/pods.test.yml"), "pods");
});

test("defaults merge under cases and groups nest, the nearest level winning", () => {
  const s = parse(`${HEAD}defaults:
  namespace: team-a
  userInfo: { username: alice, groups: [dev] }
  objectFile: objects/pod.yaml
  expect: { allowed: true, messageMatches: "x", warnings: [] }
cases:
  - name: inherits
  - name: overrides
    object: ${POD}
    userInfo: { username: bob }
    namespace: own
    expect: { message: exact }
  - group: g1
    defaults: { namespace: team-b, expect: { allowed: false } }
    cases:
      - name: in group
      - group: g2
        defaults: { dryRun: true }
        cases:
          - name: deep
            expect: { warningsMatch: ["w"] }
`);
  assert.deepEqual(
    s.cases.map((c) => c.name),
    ["inherits", "overrides", "g1 / in group", "g1 / g2 / deep"],
  );
  const inherits = only(s, "inherits");
  assert.equal(inherits.object.value.file?.resolved, join("suites", "objects", "pod.yaml"));
  assert.equal(inherits.object.path, "defaults.objectFile");
  assert.equal(inherits.namespace, undefined, "a default namespace yields to the object's");
  assert.equal(inherits.defaultNamespace, "team-a");
  assert.deepEqual(inherits.userInfo, { username: "alice", groups: ["dev"] });
  assert.deepEqual(inherits.expect, { allowed: true, messageMatches: "x", warnings: [] });
  assert.equal(inherits.expectPaths.allowed, "defaults.expect.allowed");

  const overrides = only(s, "overrides");
  assert.ok(overrides.object.value.inline, "the case's object replaces the default objectFile");
  assert.deepEqual(overrides.userInfo, { username: "bob", groups: [] }, "userInfo is replaced whole");
  assert.equal(overrides.namespace, "own");
  assert.deepEqual(
    overrides.expect,
    { allowed: true, message: "exact", warnings: [] },
    "message replaces the default messageMatches",
  );

  const inGroup = only(s, "g1 / in group");
  assert.equal(inGroup.defaultNamespace, "team-b");
  assert.equal(inGroup.expect.allowed, false);
  assert.equal(inGroup.expectPaths.allowed, "cases[2].defaults.expect.allowed");
  const deep = only(s, "g1 / g2 / deep");
  assert.equal(deep.dryRun, true);
  assert.deepEqual(deep.expect, { allowed: false, messageMatches: "x", warningsMatch: ["w"] });
  assert.equal(deep.path, "cases[2].cases[1].cases[0]");
});

test("the operation: oldObject makes an UPDATE unless the case names another", () => {
  const s = parse(`${HEAD}defaults:
  operation: CREATE
  object: ${POD}
  expect: { allowed: true }
cases:
  - name: create
  - name: update by oldObject
    oldObject: ${POD}
  - name: explicit delete
    operation: DELETE
  - name: delete by oldObject
    operation: DELETE
    oldObject: ${POD}
  - name: connect
    operation: CONNECT
`);
  assert.equal(only(s, "create").operation, "CREATE");
  const update = only(s, "update by oldObject");
  assert.equal(update.operation, "UPDATE");
  assert.ok(update.oldObject);
  const del = only(s, "explicit delete");
  assert.equal(del.operation, "DELETE");
  assert.equal(del.oldObject, undefined);
  const byOld = only(s, "delete by oldObject");
  assert.equal(byOld.object.path, "cases[3].oldObject", "the case's own oldObject is the deleted object");
  assert.equal(only(s, "connect").operation, "CONNECT");
});

test("every expectation key is read with its type", () => {
  const s = parse(`${HEAD}cases:
  - name: all
    object: ${POD}
    expect:
      allowed: false
      code: 403
      reason: Forbidden
      message: "m"
      messageMatches: "^m$"
      warnings: [a]
      warningsMatch: ["a+"]
      auditAnnotations: { "p/k": v }
      matched: [p1]
      skipped: [p2]
      patched: { apiVersion: v1, kind: Pod }
      patch: [ { op: add, path: /a, value: 1 }, { op: remove, path: /b }, { op: move, from: /c, path: /d } ]
      unchanged: false
`);
  assert.deepEqual(only(s, "all").expect, {
    allowed: false,
    code: 403,
    reason: "Forbidden",
    message: "m",
    messageMatches: "^m$",
    warnings: ["a"],
    warningsMatch: ["a+"],
    auditAnnotations: { "p/k": "v" },
    matched: ["p1"],
    skipped: ["p2"],
    patched: { apiVersion: "v1", kind: "Pod" },
    patch: [
      { op: "add", path: "/a", value: 1 },
      { op: "remove", path: "/b" },
      { op: "move", from: "/c", path: "/d" },
    ],
    unchanged: false,
  });
});

test("request fields: resource, kind, requestName, subResource, userInfo, namespaceObject, dryRun", () => {
  const s = parse(`${HEAD}cases:
  - name: all
    object: ${POD}
    subResource: status
    resource: { group: "", version: v1, resource: pods }
    kind: { group: "", version: v1, kind: Pod }
    requestName: other
    userInfo: { username: u, uid: "1", groups: [g], extra: { scopes: [a, b] } }
    namespaceObject: { apiVersion: v1, kind: Namespace, metadata: { name: ns } }
    namespace: ns
    dryRun: true
    expect: { allowed: true }
`);
  const c = only(s, "all");
  assert.equal(c.subResource, "status");
  assert.deepEqual(c.resource, { group: "", version: "v1", resource: "pods" });
  assert.deepEqual(c.kind, { group: "", version: "v1", kind: "Pod" });
  assert.equal(c.requestName, "other");
  assert.deepEqual(c.userInfo, { username: "u", uid: "1", groups: ["g"], extra: { scopes: ["a", "b"] } });
  assert.equal(c.namespaceObject?.path, "cases[0].namespaceObject");
  assert.equal(c.dryRun, true);
});

test("the authorizer table is read in order", () => {
  const s = parse(`${HEAD}authorizer:
  - { user: alice, verb: delete, group: apps, resource: deployments, namespace: default, name: "*", decision: allow, reason: r }
  - { userGroup: "system:masters", decision: allow }
  - { path: /healthz, verb: get, decision: deny }
  - { decision: no-opinion, subresource: "" }
cases:
  - name: a
    object: ${POD}
    expect: { allowed: true }
`);
  assert.deepEqual(s.authorizer, [
    {
      user: "alice",
      verb: "delete",
      group: "apps",
      resource: "deployments",
      namespace: "default",
      name: "*",
      decision: "allow",
      reason: "r",
    },
    { userGroup: "system:masters", decision: "allow" },
    { path: "/healthz", verb: "get", decision: "deny" },
    { decision: "no-opinion", subresource: "" },
  ]);
});

test("broken suites: each problem at its line and column with its field path", () => {
  const cases: [string, string, string[]][] = [
    ["empty file", "", ["1:1 : the file is empty; expected a PolicyTest document"]],
    [
      "YAML syntax",
      "a: [b\nc: d\n",
      [
        "2:1 : not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]",
      ],
    ],
    [
      "two documents",
      `${HEAD}cases: []\n---\nx: 1\n`,
      ["6:1 : a suite file holds one document; split the suites into files"],
    ],
    ["not a mapping", "- a\n", ["1:1 : expected a mapping, got a list"]],
    [
      "wrong kind",
      "apiVersion: celgate.dev/v1alpha1\nkind: Test\npolicies: [p]\ncases:\n  - name: a\n    object: " +
        POD +
        "\n    expect: { allowed: true }\n",
      [
        '2:7 kind: expected apiVersion: celgate.dev/v1alpha1 and kind: PolicyTest, got string "celgate.dev/v1alpha1" and string "Test"',
      ],
    ],
    [
      "missing policies and cases",
      "apiVersion: celgate.dev/v1alpha1\nkind: PolicyTest\n",
      [
        "1:1 : missing field 'policies': the policy files or directories to test",
        "1:1 : missing field 'cases'",
      ],
    ],
    [
      "empty lists",
      "apiVersion: celgate.dev/v1alpha1\nkind: PolicyTest\npolicies: []\ncases: []\n",
      [
        "3:11 policies: expected at least one policy file or directory",
        "4:8 cases: expected at least one case",
      ],
    ],
    [
      "unknown top-level field",
      `${HEAD}case: []\ncases:\n  - name: a\n    object: ${POD}\n    expect: { allowed: true }\n`,
      ["4:1 case: unknown field 'case' in a PolicyTest; did you mean 'cases'?"],
    ],
    [
      "misspelt expectation",
      `${HEAD}cases:\n  - name: a\n    object: ${POD}\n    expect:\n      alowed: true\n`,
      ["8:7 cases[0].expect.alowed: unknown field 'alowed' in expect; did you mean 'allowed'?"],
    ],
    [
      "missing allowed",
      `${HEAD}cases:\n  - name: a\n    object: ${POD}\n    expect:\n      code: 403\n`,
      ["8:7 cases[0].expect: missing expect.allowed: every case says whether the request is allowed"],
    ],
    [
      "wrong value types",
      `${HEAD}cases:\n  - name: a\n    object: ${POD}\n    dryRun: "no"\n    expect:\n      allowed: yes\n      code: 99\n      warnings: w\n      matched: [1]\n`,
      [
        '7:13 cases[0].dryRun: expected true or false, got string "no"',
        '9:16 cases[0].expect.allowed: expected true or false, got string "yes"',
        "10:13 cases[0].expect.code: expected an HTTP status code (an integer from 100 to 599), got number 99",
        '11:17 cases[0].expect.warnings: expected a list, got string "w"',
        "12:17 cases[0].expect.matched[0]: expected a string, got number 1",
      ],
    ],
    [
      "bad regular expressions",
      `${HEAD}cases:\n  - name: a\n    object: ${POD}\n    expect:\n      allowed: true\n      messageMatches: "a("\n      warningsMatch: ["ok", "[z-a]"]\n`,
      [
        "9:23 cases[0].expect.messageMatches: not a valid regular expression (RE2 syntax, as CEL's matches()): error parsing regexp: missing closing ): `a(`",
        "10:29 cases[0].expect.warningsMatch[1]: not a valid regular expression (RE2 syntax, as CEL's matches()): error parsing regexp: invalid character class range: `z-a`",
      ],
    ],
    [
      "object and objectFile",
      `${HEAD}cases:\n  - name: a\n    object: ${POD}\n    objectFile: x.yaml\n    expect: { allowed: true }\n`,
      ["7:17 cases[0].objectFile: give object or objectFile, not both"],
    ],
    [
      "not a Kubernetes object",
      `${HEAD}cases:\n  - name: a\n    object: { kind: Pod }\n    expect: { allowed: true }\n`,
      ["6:13 cases[0].object: expected a Kubernetes object: apiVersion must be a non-empty string (missing)"],
    ],
    [
      "no object",
      `${HEAD}cases:\n  - name: a\n    expect: { allowed: true }\n`,
      ["5:5 cases[0]: missing object or objectFile: the object the request writes"],
    ],
    [
      "UPDATE without oldObject",
      `${HEAD}cases:\n  - name: a\n    operation: UPDATE\n    object: ${POD}\n    expect: { allowed: true }\n`,
      ["5:5 cases[0]: an UPDATE case needs oldObject or oldObjectFile (the object as stored before)"],
    ],
    [
      "CREATE with oldObject",
      `${HEAD}cases:\n  - name: a\n    operation: CREATE\n    object: ${POD}\n    oldObject: ${POD}\n    expect: { allowed: true }\n`,
      ["8:16 cases[0].oldObject: oldObject is for UPDATE (and DELETE), not CREATE"],
    ],
    [
      "DELETE with both objects",
      `${HEAD}defaults: { object: ${POD}, oldObject: ${POD} }\ncases:\n  - name: a\n    operation: DELETE\n    expect: { allowed: true }\n`,
      ["6:5 cases[0]: a DELETE has only the object being deleted: give object or oldObject, not both"],
    ],
    [
      "unknown operation",
      `${HEAD}cases:\n  - name: a\n    operation: create\n    object: ${POD}\n    expect: { allowed: true }\n`,
      ['6:16 cases[0].operation: expected one of CREATE, UPDATE, DELETE, CONNECT, got string "create"'],
    ],
    [
      "case without a name, duplicate names",
      `${HEAD}cases:\n  - object: ${POD}\n    expect: { allowed: true }\n  - name: a\n    object: ${POD}\n    expect: { allowed: true }\n  - name: a\n    object: ${POD}\n    expect: { allowed: true }\n`,
      [
        "5:5 cases[0]: missing field 'name' (every case needs a name for the report)",
        "10:11 cases[2].name: case name 'a' is already used at cases[1]",
      ],
    ],
    [
      "a request name written as name is the case's name: requestName hint in groups",
      `${HEAD}cases:\n  - group: g\n    name: x\n    cases:\n      - name: a\n        object: ${POD}\n        expect: { allowed: true }\n`,
      [
        "6:5 cases[0].name: unknown field 'name' in a group (a group holds only group, defaults and cases); expected one of group, defaults, cases",
      ],
    ],
    [
      "group without a name or cases",
      `${HEAD}cases:\n  - cases: []\n  - group: g\n`,
      [
        "5:5 cases[0]: a group needs a name: group: <name>",
        "5:12 cases[0].cases: expected at least one case",
        "6:5 cases[1]: missing field 'cases'",
      ],
    ],
    [
      "resource and userInfo shapes",
      `${HEAD}cases:\n  - name: a\n    object: ${POD}\n    resource: { version: v1, resource: pods }\n    userInfo: { groups: [g] }\n    namespaceObject: ${POD}\n    expect: { allowed: true }\n`,
      [
        "7:15 cases[0].resource: missing field 'group' (write group: \"\" for the core group)",
        "8:15 cases[0].userInfo: missing field 'username'",
        "9:22 cases[0].namespaceObject: expected a Namespace (apiVersion: v1, kind: Namespace), got Pod",
      ],
    ],
    [
      "patch operations",
      `${HEAD}cases:\n  - name: a\n    object: ${POD}\n    expect:\n      allowed: true\n      patch: [ { op: upsert, path: /a }, { op: add } ]\n`,
      [
        "9:22 cases[0].expect.patch[0].op: expected op to be one of add, remove, replace, move, copy, test",
        "9:42 cases[0].expect.patch[1]: expected path to be a JSON Pointer string",
      ],
    ],
    [
      "authorizer rules",
      `${HEAD}authorizer:\n  - { user: a, groups: [x], decision: allow }\n  - { verb: get }\n  - { decision: yes }\n  - { path: /x, resource: pods, decision: allow }\ncases:\n  - name: a\n    object: ${POD}\n    expect: { allowed: true }\n`,
      [
        "5:16 authorizer[0].groups: unknown field 'groups' in an authorizer rule; the user's group is userGroup (group is the API group of a resource check)",
        "6:5 authorizer[1]: missing field 'decision' (allow, deny, no-opinion)",
        '7:17 authorizer[2].decision: expected one of allow, deny, no-opinion, got string "yes"',
        "8:13 authorizer[3].path: a rule is for a path (non-resource) check or a resource check, not both: drop path or the group/resource/subresource/namespace/name fields",
      ],
    ],
  ];
  for (const [what, text, want] of cases) assert.deepEqual(problems(text), want, what);
});

test("a user group written as group is a warning, and the suite still parses", () => {
  const r = parseSuiteText(
    `${HEAD}authorizer:\n  - { group: "system:masters", decision: allow }\ncases:\n  - name: a\n    object: ${POD}\n    expect: { allowed: true }\n`,
    FILE,
  );
  assert.ok(r.suite);
  assert.deepEqual(
    r.diagnostics.map((d) => [d.severity, d.code, d.path, d.location?.line]),
    [["warning", "TE_SUITE", "authorizer[0].group", 5]],
  );
  assert.match(r.diagnostics[0]?.message ?? "", /write userGroup/);
});

test("diagnostics carry the TE_SUITE code and the file", () => {
  const r = parseSuiteText(`${HEAD}cases: 3\n`, FILE);
  assert.deepEqual(r.diagnostics.map(formatDiagnostic), [
    `${FILE}:4:8: error: cases: expected a list, got number 3 [TE_SUITE]`,
  ]);
});
