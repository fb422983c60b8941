import assert from "node:assert/strict";
import { test } from "node:test";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import type { NamedRuleWithOperations, Operation } from "../../../src/policy/types.ts";
import { type RuleMismatch, ruleMismatch } from "../../../src/match/rules.ts";

/** A request for `group/version resource[/sub]`, namespaced when `namespace` is given. */
function req(
  gvr: string,
  opts: { op?: Operation; namespace?: string; name?: string; kind?: string } = {},
): AdmissionRequest {
  const [gv = "", res = ""] = gvr.split(" ");
  const [group, version] = gv.includes("/") ? gv.split("/") : ["", gv];
  const [resource = "", subResource] = res.split("/");
  return {
    uid: "u1",
    kind: { group: group ?? "", version: version ?? "", kind: opts.kind ?? "Thing" },
    resource: { group: group ?? "", version: version ?? "", resource },
    ...(subResource === undefined ? {} : { subResource }),
    name: opts.name ?? "obj",
    namespace: opts.namespace ?? "",
    operation: opts.op ?? "CREATE",
    userInfo: { username: "alice", groups: [] },
    object: { metadata: { name: opts.name ?? "obj" } },
    oldObject: null,
    dryRun: false,
    options: null,
  };
}

function rule(over: Partial<NamedRuleWithOperations> = {}): NamedRuleWithOperations {
  return {
    operations: ["*"],
    apiGroups: ["*"],
    apiVersions: ["*"],
    resources: ["*"],
    resourceNames: [],
    scope: "*",
    ...over,
  };
}

const podCreate = req("v1 pods", { namespace: "default", name: "web" });
const podStatus = req("v1 pods/status", { namespace: "default", name: "web", op: "UPDATE" });
const deployScale = req("apps/v1 deployments/scale", { namespace: "default", name: "api", op: "UPDATE" });
const nodeCreate = req("v1 nodes", { name: "node-1" });
// The API server puts a Namespace's own name in the namespace field.
const nsCreate = req("v1 namespaces", { name: "dev", namespace: "dev" });
const nsCreateNoNs = req("v1 namespaces", { name: "dev" });
const generatedName = req("v1 pods", { namespace: "default", name: "" });

const cases: ReadonlyArray<{
  name: string;
  rule: NamedRuleWithOperations;
  request: AdmissionRequest;
  want: RuleMismatch | undefined;
}> = [
  { name: "all wildcards match a pod", rule: rule(), request: podCreate, want: undefined },
  // operations
  {
    name: "operation listed",
    rule: rule({ operations: ["UPDATE", "CREATE"] }),
    request: podCreate,
    want: undefined,
  },
  {
    name: "operation not listed",
    rule: rule({ operations: ["UPDATE", "DELETE"] }),
    request: podCreate,
    want: "operation",
  },
  { name: "no operations", rule: rule({ operations: [] }), request: podCreate, want: "operation" },
  // groups and versions
  {
    name: "core group is empty string",
    rule: rule({ apiGroups: [""] }),
    request: podCreate,
    want: undefined,
  },
  { name: "group mismatch", rule: rule({ apiGroups: ["apps"] }), request: podCreate, want: "apiGroup" },
  {
    name: "apps group",
    rule: rule({ apiGroups: ["apps"], resources: ["*/*"] }),
    request: deployScale,
    want: undefined,
  },
  {
    name: "version listed",
    rule: rule({ apiVersions: ["v1beta1", "v1"] }),
    request: podCreate,
    want: undefined,
  },
  {
    name: "version mismatch",
    rule: rule({ apiVersions: ["v1beta1"] }),
    request: podCreate,
    want: "apiVersion",
  },
  // resources and subresources
  { name: "pods matches pods", rule: rule({ resources: ["pods"] }), request: podCreate, want: undefined },
  {
    name: "pods does not match pods/status",
    rule: rule({ resources: ["pods"] }),
    request: podStatus,
    want: "resource",
  },
  {
    name: "pods/status matches pods/status",
    rule: rule({ resources: ["pods/status"] }),
    request: podStatus,
    want: undefined,
  },
  {
    name: "pods/status does not match pods",
    rule: rule({ resources: ["pods/status"] }),
    request: podCreate,
    want: "resource",
  },
  {
    name: "pods/* matches pods/status",
    rule: rule({ resources: ["pods/*"] }),
    request: podStatus,
    want: undefined,
  },
  {
    // rules.go compares the subresource pattern `*` with "" too, so pods/* also selects pods itself.
    name: "pods/* matches pods itself",
    rule: rule({ resources: ["pods/*"] }),
    request: podCreate,
    want: undefined,
  },
  {
    name: "*/status matches pods/status",
    rule: rule({ resources: ["*/status"] }),
    request: podStatus,
    want: undefined,
  },
  {
    name: "*/status does not match scale",
    rule: rule({ resources: ["*/status"] }),
    request: deployScale,
    want: "resource",
  },
  {
    name: "*/scale matches deployments/scale",
    rule: rule({ resources: ["*/scale"] }),
    request: deployScale,
    want: undefined,
  },
  { name: "* matches pods", rule: rule({ resources: ["*"] }), request: podCreate, want: undefined },
  {
    name: "* does not match subresources",
    rule: rule({ resources: ["*"] }),
    request: podStatus,
    want: "resource",
  },
  {
    name: "*/* matches subresources",
    rule: rule({ resources: ["*/*"] }),
    request: deployScale,
    want: undefined,
  },
  {
    name: "*/* matches main resources",
    rule: rule({ resources: ["*/*"] }),
    request: podCreate,
    want: undefined,
  },
  {
    name: "other resource",
    rule: rule({ resources: ["deployments"] }),
    request: podCreate,
    want: "resource",
  },
  {
    name: "second pattern matches",
    rule: rule({ resources: ["services", "pods"] }),
    request: podCreate,
    want: undefined,
  },
  {
    name: "*/status does not match pods itself",
    rule: rule({ resources: ["*/status"] }),
    request: podCreate,
    want: "resource",
  },
  {
    name: "pods/* does not match other resources",
    rule: rule({ resources: ["pods/*"] }),
    request: deployScale,
    want: "resource",
  },
  // resourceNames
  {
    name: "resourceNames empty = all",
    rule: rule({ resourceNames: [] }),
    request: podCreate,
    want: undefined,
  },
  {
    name: "resourceNames hit",
    rule: rule({ resourceNames: ["db", "web"] }),
    request: podCreate,
    want: undefined,
  },
  {
    name: "resourceNames miss",
    rule: rule({ resourceNames: ["db"] }),
    request: podCreate,
    want: "resourceName",
  },
  {
    name: "generated name misses named rule",
    rule: rule({ resourceNames: ["web"] }),
    request: generatedName,
    want: "resourceName",
  },
  { name: "generated name, unnamed rule", rule: rule(), request: generatedName, want: undefined },
  // scope
  {
    name: "Namespaced: pod in namespace",
    rule: rule({ scope: "Namespaced" }),
    request: podCreate,
    want: undefined,
  },
  { name: "Cluster: pod in namespace", rule: rule({ scope: "Cluster" }), request: podCreate, want: "scope" },
  { name: "Cluster: node", rule: rule({ scope: "Cluster" }), request: nodeCreate, want: undefined },
  { name: "Namespaced: node", rule: rule({ scope: "Namespaced" }), request: nodeCreate, want: "scope" },
  { name: "Cluster: namespace object", rule: rule({ scope: "Cluster" }), request: nsCreate, want: undefined },
  {
    name: "Namespaced: namespace object",
    rule: rule({ scope: "Namespaced" }),
    request: nsCreate,
    want: "scope",
  },
  {
    name: "Cluster: namespace object, empty ns field",
    rule: rule({ scope: "Cluster" }),
    request: nsCreateNoNs,
    want: undefined,
  },
  { name: "*: namespace object", rule: rule({ scope: "*" }), request: nsCreate, want: undefined },
  {
    name: "subresource takes parent scope",
    rule: rule({ scope: "Namespaced", resources: ["*/*"] }),
    request: deployScale,
    want: undefined,
  },
];

for (const c of cases) {
  void test(`rule: ${c.name}`, () => {
    assert.equal(ruleMismatch(c.rule, c.request), c.want);
  });
}

void test("rule: CONNECT and DELETE operations", () => {
  const exec = req("v1 pods/exec", { namespace: "default", name: "web", op: "CONNECT" });
  assert.equal(ruleMismatch(rule({ operations: ["CONNECT"], resources: ["pods/exec"] }), exec), undefined);
  assert.equal(
    ruleMismatch(rule({ operations: ["CREATE", "UPDATE"], resources: ["pods/exec"] }), exec),
    "operation",
  );
  const del = req("v1 pods", { namespace: "default", name: "web", op: "DELETE" });
  assert.equal(ruleMismatch(rule({ operations: ["DELETE"], resources: ["pods"] }), del), undefined);
});
