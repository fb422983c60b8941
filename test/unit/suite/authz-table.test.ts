import assert from "node:assert/strict";
import { test } from "node:test";
import type { AuthorizationAttributes } from "../../../src/cel/library/authz.ts";
import {
  type AuthorizerCheck,
  type AuthorizerRule,
  describeCheck,
  NO_RULE_REASON,
  ruleMatches,
  tableAuthorizer,
} from "../../../src/cel/library/authz-table.ts";
import { evaluate } from "../../../src/cel/index.ts";
import { AuthorizerValue } from "../../../src/cel/library/authz.ts";

const alice = { user: "alice", groups: ["dev", "system:authenticated"] };
const deletePods: AuthorizationAttributes = {
  ...alice,
  verb: "delete",
  group: "",
  resource: "pods",
  namespace: "team-a",
  name: "web",
};
const healthz: AuthorizationAttributes = { ...alice, verb: "get", path: "/healthz/ready" };

test("a rule matches when every field it names matches; omitted fields and * match anything", () => {
  const cases: [string, Omit<AuthorizerRule, "decision">, AuthorizationAttributes, boolean][] = [
    ["empty rule", {}, deletePods, true],
    ["user", { user: "alice" }, deletePods, true],
    ["other user", { user: "bob" }, deletePods, false],
    ["user *", { user: "*" }, deletePods, true],
    ["userGroup", { userGroup: "dev" }, deletePods, true],
    ["userGroup not held", { userGroup: "system:masters" }, deletePods, false],
    ["verb", { verb: "delete" }, deletePods, true],
    ["other verb", { verb: "get" }, deletePods, false],
    ["core group as empty string", { group: "" }, deletePods, true],
    ["other group", { group: "apps" }, deletePods, false],
    ["resource", { resource: "pods" }, deletePods, true],
    ["namespace", { namespace: "team-a" }, deletePods, true],
    ["other namespace", { namespace: "team-b" }, deletePods, false],
    ["cluster-scoped rule vs namespaced check", { namespace: "" }, deletePods, false],
    ["name *", { name: "*" }, deletePods, true],
    ["subresource omitted matches any", { resource: "pods" }, { ...deletePods, subresource: "exec" }, true],
    ["subresource empty matches none", { subresource: "" }, { ...deletePods, subresource: "exec" }, false],
    ["subresource", { subresource: "exec" }, { ...deletePods, subresource: "exec" }, true],
    [
      "unset attribute is the empty string",
      { namespace: "" },
      { ...alice, verb: "list", resource: "nodes" },
      true,
    ],
    ["path rule vs resource check", { path: "/healthz" }, deletePods, false],
    ["resource rule vs path check", { resource: "pods" }, healthz, false],
    ["exact path", { path: "/healthz/ready" }, healthz, true],
    ["path prefix", { path: "/healthz/*" }, healthz, true],
    ["other path prefix", { path: "/metrics*" }, healthz, false],
    ["verb-only rule vs path check", { verb: "get" }, healthz, true],
  ];
  for (const [what, rule, attrs, want] of cases)
    assert.equal(ruleMatches({ ...rule, decision: "allow" }, attrs), want, what);
});

test("the first matching rule decides; no match is no-opinion with 'no rule matched'", () => {
  const seen: AuthorizerCheck[] = [];
  const backend = tableAuthorizer(
    [
      { user: "alice", resource: "pods", decision: "deny", reason: "first" },
      { user: "alice", decision: "allow", reason: "second" },
    ],
    (c) => seen.push(c),
  );
  assert.deepEqual(backend.authorize(deletePods), { decision: "deny", reason: "first" });
  assert.deepEqual(backend.authorize(healthz), { decision: "allow", reason: "second" });
  assert.deepEqual(backend.authorize({ ...deletePods, user: "bob" }), {
    decision: "no-opinion",
    reason: NO_RULE_REASON,
  });
  assert.deepEqual(
    seen.map((s) => [s.answer.decision, s.rule]),
    [
      ["deny", 0],
      ["allow", 1],
      ["no-opinion", undefined],
    ],
  );
});

test("a rule without a reason answers with an empty reason", () => {
  assert.deepEqual(tableAuthorizer([{ decision: "allow" }]).authorize(deletePods), {
    decision: "allow",
    reason: "",
  });
});

test("checks read as people say them", () => {
  assert.equal(describeCheck(deletePods), "alice delete pods 'web' in namespace 'team-a'");
  assert.equal(
    describeCheck({ ...alice, verb: "update", group: "apps", resource: "deployments", subresource: "scale" }),
    "alice update apps/deployments/scale",
  );
  assert.equal(describeCheck(healthz), "alice get /healthz/ready");
});

test("through CEL: the authorizer library asks the table", () => {
  const backend = tableAuthorizer([
    {
      user: "alice",
      verb: "delete",
      group: "",
      resource: "pods",
      namespace: "team-a",
      decision: "allow",
      reason: "ok",
    },
    { path: "/healthz", decision: "deny", reason: "no probes" },
  ]);
  const authorizer = new AuthorizerValue(backend, "alice", ["dev"]);
  const cases: [string, unknown][] = [
    ["authorizer.group('').resource('pods').namespace('team-a').check('delete').allowed()", true],
    ["authorizer.group('').resource('pods').namespace('team-b').check('delete').allowed()", false],
    ["authorizer.group('').resource('pods').namespace('team-b').check('delete').reason()", NO_RULE_REASON],
    ["authorizer.group('').resource('pods').namespace('team-a').check('delete').reason()", "ok"],
    ["authorizer.path('/healthz').check('get').allowed()", false],
    ["authorizer.path('/healthz').check('get').reason()", "no probes"],
    [
      "authorizer.serviceAccount('team-a', 'bot').group('').resource('pods').namespace('team-a').check('delete').allowed()",
      false,
    ],
  ];
  for (const [expr, want] of cases) {
    const r = evaluate(expr, { authorizer });
    assert.ok(r.ok, `${expr}: ${r.ok ? "" : r.error}`);
    assert.equal(r.value, want, expr);
  }
});
