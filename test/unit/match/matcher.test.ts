import assert from "node:assert/strict";
import { test } from "node:test";
import type { AdmissionRequest, GroupVersionKind, GroupVersionResource } from "../../../src/request/types.ts";
import type {
  LabelSelector,
  MatchResources,
  NamedRuleWithOperations,
  Operation,
} from "../../../src/policy/types.ts";
import {
  isAdmissionConfigurationResource,
  type MatchContext,
  type MatchOutcome,
  matchesResources,
} from "../../../src/match/index.ts";

// ---- request builder -------------------------------------------------------------------------

type Obj = Record<string, unknown>;

function obj(name: string, labels?: Record<string, string>): Obj {
  return { metadata: labels === undefined ? { name } : { name, labels } };
}

interface ReqSpec {
  gvr: GroupVersionResource;
  kind: GroupVersionKind;
  subResource?: string;
  op?: Operation;
  name?: string;
  namespace?: string;
  object?: Obj | null;
  oldObject?: Obj | null;
  requestResource?: GroupVersionResource;
  requestKind?: GroupVersionKind;
  requestSubResource?: string;
}

function request(s: ReqSpec): AdmissionRequest {
  return {
    uid: "uid-1",
    kind: s.kind,
    resource: s.gvr,
    ...(s.subResource === undefined ? {} : { subResource: s.subResource }),
    ...(s.requestResource === undefined ? {} : { requestResource: s.requestResource }),
    ...(s.requestKind === undefined ? {} : { requestKind: s.requestKind }),
    ...(s.requestSubResource === undefined ? {} : { requestSubResource: s.requestSubResource }),
    name: s.name ?? "",
    namespace: s.namespace ?? "",
    operation: s.op ?? "CREATE",
    userInfo: { username: "alice", groups: ["system:authenticated"] },
    object: s.object === undefined ? null : s.object,
    oldObject: s.oldObject === undefined ? null : s.oldObject,
    dryRun: false,
    options: null,
  };
}

const PODS = { group: "", version: "v1", resource: "pods" };
const POD = { group: "", version: "v1", kind: "Pod" };
const NAMESPACES = { group: "", version: "v1", resource: "namespaces" };
const NAMESPACE = { group: "", version: "v1", kind: "Namespace" };

function podCreate(namespace: string, labels?: Record<string, string>): AdmissionRequest {
  return request({ gvr: PODS, kind: POD, name: "web", namespace, object: obj("web", labels) });
}

function podUpdate(namespace: string, oldLabels: Record<string, string>, newLabels: Record<string, string>) {
  return request({
    gvr: PODS,
    kind: POD,
    op: "UPDATE",
    name: "web",
    namespace,
    object: obj("web", newLabels),
    oldObject: obj("web", oldLabels),
  });
}

/** DELETE carries only the oldObject. */
function podDelete(namespace: string, labels?: Record<string, string>): AdmissionRequest {
  return request({
    gvr: PODS,
    kind: POD,
    op: "DELETE",
    name: "web",
    namespace,
    oldObject: obj("web", labels),
  });
}

function namespaceRequest(
  op: Operation,
  name: string,
  labels: Record<string, string> | undefined,
  oldLabels?: Record<string, string>,
): AdmissionRequest {
  return request({
    gvr: NAMESPACES,
    kind: NAMESPACE,
    op,
    name,
    namespace: name,
    object: op === "DELETE" ? null : obj(name, labels),
    oldObject: op === "CREATE" ? null : obj(name, oldLabels ?? labels),
  });
}

function deploymentScale(namespace: string): AdmissionRequest {
  return request({
    gvr: { group: "apps", version: "v1", resource: "deployments" },
    kind: { group: "autoscaling", version: "v1", kind: "Scale" },
    subResource: "scale",
    op: "UPDATE",
    name: "api",
    namespace,
    object: { metadata: { name: "api", labels: { app: "api" } }, spec: { replicas: 3 } },
    oldObject: { metadata: { name: "api", labels: { app: "api" } }, spec: { replicas: 1 } },
  });
}

function nodeCreate(labels?: Record<string, string>): AdmissionRequest {
  return request({
    gvr: { group: "", version: "v1", resource: "nodes" },
    kind: { group: "", version: "v1", kind: "Node" },
    name: "node-1",
    object: obj("node-1", labels),
  });
}

/** A Deployment sent through extensions/v1beta1 and converted to apps/v1. */
function legacyDeployment(): AdmissionRequest {
  return request({
    gvr: { group: "apps", version: "v1", resource: "deployments" },
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    requestResource: { group: "extensions", version: "v1beta1", resource: "deployments" },
    requestKind: { group: "extensions", version: "v1beta1", kind: "Deployment" },
    name: "api",
    namespace: "prod",
    object: obj("api", { app: "api" }),
  });
}

// ---- match criteria builders ----------------------------------------------------------------

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

const podRule = rule({ apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] });
const everything = rule({ resources: ["*/*"] });

function mr(over: Partial<MatchResources> = {}): MatchResources {
  return { resourceRules: [everything], excludeResourceRules: [], matchPolicy: "Equivalent", ...over };
}

function labels(matchLabels: Record<string, string>): LabelSelector {
  return { matchLabels, matchExpressions: [] };
}

function expr(
  key: string,
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist",
  ...values: string[]
): LabelSelector {
  return { matchLabels: {}, matchExpressions: [{ key, operator, values }] };
}

const EMPTY: LabelSelector = { matchLabels: {}, matchExpressions: [] };
const INVALID: LabelSelector = expr("env", "In");

const cluster: Record<string, Record<string, string>> = {
  prod: { env: "prod" },
  dev: { env: "dev" },
  bare: {},
};

const lookedUp: string[] = [];
const ctx: MatchContext = {
  namespaceLabels(name) {
    lookedUp.push(name);
    return cluster[name];
  },
};

// ---- expectations ---------------------------------------------------------------------------

type Want =
  | { matched: true; reason?: string }
  | { notMatched: string }
  | { error: "namespace-not-found" | "invalid-selector" | "invalid-request"; message?: string };

function check(got: MatchOutcome, want: Want): void {
  if ("matched" in want) {
    assert.equal(got.status, "matched", JSON.stringify(got));
    if (want.reason !== undefined && got.status === "matched") assert.equal(got.reason, want.reason);
  } else if ("notMatched" in want) {
    assert.equal(got.status, "not-matched", JSON.stringify(got));
    if (got.status === "not-matched") assert.ok(got.reason.includes(want.notMatched), got.reason);
  } else {
    assert.equal(got.status, "error", JSON.stringify(got));
    if (got.status === "error") {
      assert.equal(got.errorKind, want.error);
      if (want.message !== undefined) assert.equal(got.message, want.message);
    }
  }
}

const cases: ReadonlyArray<{
  name: string;
  mr: MatchResources | undefined;
  req: AdmissionRequest;
  want: Want;
}> = [
  // rules
  { name: "no criteria at all", mr: undefined, req: podCreate("prod"), want: { matched: true } },
  {
    name: "empty resourceRules select everything",
    mr: mr({ resourceRules: [] }),
    req: nodeCreate(),
    want: { matched: true },
  },
  {
    name: "pod rule selects pod create",
    mr: mr({ resourceRules: [podRule] }),
    req: podCreate("prod"),
    want: { matched: true, reason: "matched by resourceRules[0]" },
  },
  {
    name: "second rule reported",
    mr: mr({ resourceRules: [rule({ resources: ["services"] }), podRule] }),
    req: podCreate("prod"),
    want: { matched: true, reason: "matched by resourceRules[1]" },
  },
  {
    name: "pod rule does not select pods/status",
    mr: mr({ resourceRules: [podRule] }),
    req: request({
      gvr: PODS,
      kind: POD,
      subResource: "status",
      op: "UPDATE",
      name: "web",
      namespace: "prod",
    }),
    want: { notMatched: "no resourceRules match UPDATE v1 pods/status 'web' in namespace 'prod'" },
  },
  {
    name: "*/scale selects deployment scale",
    mr: mr({ resourceRules: [rule({ resources: ["*/scale"], operations: ["UPDATE"] })] }),
    req: deploymentScale("prod"),
    want: { matched: true },
  },
  {
    name: "Namespaced rule skips Namespace objects",
    mr: mr({ resourceRules: [rule({ scope: "Namespaced" })] }),
    req: namespaceRequest("CREATE", "team-a", {}),
    want: { notMatched: "no resourceRules match" },
  },
  {
    name: "Cluster rule selects Namespace objects",
    mr: mr({ resourceRules: [rule({ scope: "Cluster" })] }),
    req: namespaceRequest("CREATE", "team-a", {}),
    want: { matched: true },
  },
  // excludes
  {
    name: "excludes win over rules",
    mr: mr({ excludeResourceRules: [podRule] }),
    req: podCreate("prod"),
    want: { notMatched: "excluded by excludeResourceRules[0]" },
  },
  {
    name: "exclude index reported",
    mr: mr({ excludeResourceRules: [rule({ resources: ["nodes"] }), rule({ operations: ["CREATE"] })] }),
    req: podCreate("prod"),
    want: { notMatched: "excluded by excludeResourceRules[1]" },
  },
  {
    name: "exclude for another name does not apply",
    mr: mr({ excludeResourceRules: [rule({ resourceNames: ["db"] })] }),
    req: podCreate("prod"),
    want: { matched: true },
  },
  {
    name: "exclude wins over a namespace lookup error",
    mr: mr({ excludeResourceRules: [podRule], namespaceSelector: labels({ env: "prod" }) }),
    req: podCreate("ghost"),
    want: { notMatched: "excluded by excludeResourceRules[0]" },
  },
  // namespaceSelector
  {
    name: "namespaceSelector matches namespace labels",
    mr: mr({ namespaceSelector: labels({ env: "prod" }) }),
    req: podCreate("prod"),
    want: { matched: true },
  },
  {
    name: "namespaceSelector does not match",
    mr: mr({ namespaceSelector: labels({ env: "prod" }) }),
    req: podCreate("dev"),
    want: { notMatched: "namespaceSelector (env=prod) does not match namespace 'dev'" },
  },
  {
    name: "NotIn namespaceSelector on unlabelled namespace",
    mr: mr({ namespaceSelector: expr("runlevel", "NotIn", "0", "1") }),
    req: podCreate("bare"),
    want: { matched: true },
  },
  {
    name: "unknown namespace is an error",
    mr: mr({ namespaceSelector: labels({ env: "prod" }) }),
    req: podCreate("ghost"),
    want: { error: "namespace-not-found", message: 'namespaces "ghost" not found' },
  },
  {
    name: "unknown namespace with empty selector matches",
    mr: mr({ namespaceSelector: EMPTY }),
    req: podCreate("ghost"),
    want: { matched: true },
  },
  {
    name: "unknown namespace but rules do not match",
    mr: mr({
      resourceRules: [rule({ resources: ["services"] })],
      namespaceSelector: labels({ env: "prod" }),
    }),
    req: podCreate("ghost"),
    want: { notMatched: "no resourceRules match" },
  },
  {
    name: "unknown namespace but objectSelector does not match",
    mr: mr({ namespaceSelector: labels({ env: "prod" }), objectSelector: labels({ app: "db" }) }),
    req: podCreate("ghost", { app: "web" }),
    want: { notMatched: "objectSelector (app=db)" },
  },
  {
    name: "cluster-scoped Node ignores namespaceSelector",
    mr: mr({ namespaceSelector: labels({ env: "prod" }) }),
    req: nodeCreate(),
    want: { matched: true },
  },
  {
    name: "cluster-scoped Node ignores even an invalid namespaceSelector",
    mr: mr({ namespaceSelector: INVALID }),
    req: nodeCreate(),
    want: { matched: true },
  },
  {
    name: "invalid namespaceSelector on a namespaced request",
    mr: mr({ namespaceSelector: INVALID }),
    req: podCreate("prod"),
    want: { error: "invalid-selector" },
  },
  {
    name: "subresource requests use the parent's namespace",
    mr: mr({ namespaceSelector: labels({ env: "dev" }) }),
    req: deploymentScale("dev"),
    want: { matched: true },
  },
  // Namespace objects select on their own labels
  {
    name: "Namespace CREATE uses its own labels (not in cluster yet)",
    mr: mr({ namespaceSelector: labels({ team: "a" }) }),
    req: namespaceRequest("CREATE", "team-a", { team: "a" }),
    want: { matched: true },
  },
  {
    name: "Namespace CREATE whose labels do not match",
    mr: mr({ namespaceSelector: labels({ team: "a" }) }),
    req: namespaceRequest("CREATE", "team-b", { team: "b" }),
    want: { notMatched: "namespaceSelector (team=a) does not match namespace 'team-b'" },
  },
  {
    name: "Namespace UPDATE uses the new labels, not the stored ones",
    mr: mr({ namespaceSelector: labels({ env: "staging" }) }),
    req: namespaceRequest("UPDATE", "dev", { env: "staging" }, { env: "dev" }),
    want: { matched: true },
  },
  {
    name: "Namespace DELETE uses the known namespace",
    mr: mr({ namespaceSelector: labels({ env: "dev" }) }),
    req: { ...namespaceRequest("DELETE", "dev", { env: "other" }) },
    want: { matched: true },
  },
  {
    name: "Namespace DELETE of an unknown namespace falls back to oldObject",
    mr: mr({ namespaceSelector: labels({ env: "qa" }) }),
    req: namespaceRequest("DELETE", "qa", { env: "qa" }),
    want: { matched: true },
  },
  {
    name: "Namespace CREATE without its object",
    mr: mr({ namespaceSelector: labels({ env: "qa" }) }),
    req: { ...namespaceRequest("CREATE", "qa", {}), object: null },
    want: { error: "invalid-request" },
  },
  {
    name: "Namespace subresource UPDATE looks the namespace up",
    mr: mr({ namespaceSelector: labels({ env: "dev" }) }),
    req: { ...namespaceRequest("UPDATE", "dev", { env: "other" }), subResource: "finalize" },
    want: { matched: true },
  },
  // objectSelector
  {
    name: "objectSelector matches object",
    mr: mr({ objectSelector: labels({ app: "web" }) }),
    req: podCreate("prod", { app: "web" }),
    want: { matched: true },
  },
  {
    name: "objectSelector does not match object",
    mr: mr({ objectSelector: labels({ app: "web" }) }),
    req: podCreate("prod", { app: "db" }),
    want: { notMatched: "objectSelector (app=web) matches neither object nor oldObject" },
  },
  {
    name: "objectSelector matched by oldObject only (label removed)",
    mr: mr({ objectSelector: labels({ app: "web" }) }),
    req: podUpdate("prod", { app: "web" }, {}),
    want: { matched: true },
  },
  {
    name: "objectSelector matched by object only (label added)",
    mr: mr({ objectSelector: labels({ app: "web" }) }),
    req: podUpdate("prod", {}, { app: "web" }),
    want: { matched: true },
  },
  {
    name: "DELETE: objectSelector matched by oldObject",
    mr: mr({ objectSelector: labels({ app: "web" }) }),
    req: podDelete("prod", { app: "web" }),
    want: { matched: true },
  },
  {
    name: "DELETE: DoesNotExist matched by unlabelled oldObject",
    mr: mr({ objectSelector: expr("protected", "DoesNotExist") }),
    req: podDelete("prod"),
    want: { matched: true },
  },
  {
    name: "null objects never match a non-empty selector",
    mr: mr({ objectSelector: expr("protected", "DoesNotExist") }),
    req: { ...podDelete("prod"), oldObject: null },
    want: { notMatched: "objectSelector" },
  },
  {
    name: "objects without metadata cannot carry labels",
    mr: mr({ objectSelector: expr("protected", "DoesNotExist") }),
    req: request({
      gvr: PODS,
      kind: { group: "", version: "v1", kind: "PodExecOptions" },
      subResource: "exec",
      op: "CONNECT",
      name: "web",
      namespace: "prod",
      object: { kind: "PodExecOptions", apiVersion: "v1", command: ["sh"] },
    }),
    want: { notMatched: "objectSelector" },
  },
  {
    name: "empty objectSelector matches null objects",
    mr: mr({ objectSelector: EMPTY }),
    req: { ...podDelete("prod"), oldObject: null },
    want: { matched: true },
  },
  {
    name: "cluster-scoped objects still use objectSelector",
    mr: mr({ objectSelector: labels({ pool: "gpu" }) }),
    req: nodeCreate({ pool: "cpu" }),
    want: { notMatched: "objectSelector (pool=gpu)" },
  },
  {
    name: "invalid objectSelector",
    mr: mr({ objectSelector: INVALID }),
    req: podCreate("prod"),
    want: { error: "invalid-selector" },
  },
  {
    name: "invalid objectSelector does not matter when namespaceSelector says no",
    mr: mr({ objectSelector: INVALID, namespaceSelector: labels({ env: "prod" }) }),
    req: podCreate("dev"),
    want: { notMatched: "namespaceSelector" },
  },
  {
    name: "both selectors must match",
    mr: mr({ objectSelector: labels({ app: "web" }), namespaceSelector: labels({ env: "prod" }) }),
    req: podCreate("prod", { app: "web" }),
    want: { matched: true },
  },
  // matchPolicy
  {
    name: "Exact: rule for the original group/version does not match",
    mr: mr({
      matchPolicy: "Exact",
      resourceRules: [rule({ apiGroups: ["extensions"], resources: ["deployments"] })],
    }),
    req: legacyDeployment(),
    want: { notMatched: "no resourceRules match CREATE apps/v1 deployments 'api' in namespace 'prod'" },
  },
  {
    name: "Equivalent: rule for the original group/version matches through requestResource",
    mr: mr({ resourceRules: [rule({ apiGroups: ["extensions"], resources: ["deployments"] })] }),
    req: legacyDeployment(),
    want: {
      matched: true,
      reason:
        "matched by resourceRules[0] (via requestResource extensions/v1beta1 deployments, matchPolicy Equivalent)",
    },
  },
  {
    name: "Equivalent: no rule for either",
    mr: mr({ resourceRules: [rule({ apiGroups: ["batch"] })] }),
    req: legacyDeployment(),
    want: { notMatched: "(nor its requestResource extensions/v1beta1 deployments)" },
  },
  {
    name: "Exact and Equivalent agree when the resource itself matches",
    mr: mr({
      matchPolicy: "Exact",
      resourceRules: [rule({ apiGroups: ["apps"], resources: ["deployments"] })],
    }),
    req: legacyDeployment(),
    want: { matched: true },
  },
  {
    name: "Equivalent applies to excludes too",
    mr: mr({ excludeResourceRules: [rule({ apiGroups: ["extensions"] })] }),
    req: legacyDeployment(),
    want: {
      notMatched: "excluded by excludeResourceRules[0] (via requestResource extensions/v1beta1 deployments",
    },
  },
  {
    name: "Exact excludes ignore requestResource",
    mr: mr({ matchPolicy: "Exact", excludeResourceRules: [rule({ apiGroups: ["extensions"] })] }),
    req: legacyDeployment(),
    want: { matched: true },
  },
  {
    name: "Equivalent keeps the subresource",
    mr: mr({ resourceRules: [rule({ apiGroups: ["extensions"], resources: ["deployments/scale"] })] }),
    req: {
      ...deploymentScale("prod"),
      requestResource: { group: "extensions", version: "v1beta1", resource: "deployments" },
      requestSubResource: "scale",
    },
    want: { matched: true },
  },
  {
    name: "Equivalent with requestResource equal to resource adds nothing",
    mr: mr({ resourceRules: [rule({ apiGroups: ["extensions"] })] }),
    req: { ...podCreate("prod"), requestResource: PODS },
    want: { notMatched: "no resourceRules match CREATE v1 pods 'web' in namespace 'prod'" },
  },
];

for (const c of cases) {
  void test(`matchesResources: ${c.name}`, () => {
    check(matchesResources(c.mr, c.req, ctx), c.want);
  });
}

void test("matchesResources reports the resource and kind the rules matched", () => {
  const eq = matchesResources(
    mr({ resourceRules: [rule({ apiGroups: ["extensions"], resources: ["deployments"] })] }),
    legacyDeployment(),
    ctx,
  );
  assert.equal(eq.status, "matched");
  if (eq.status !== "matched") return;
  assert.equal(eq.equivalent, true);
  assert.deepEqual(eq.resource, { group: "extensions", version: "v1beta1", resource: "deployments" });
  assert.deepEqual(eq.kind, { group: "extensions", version: "v1beta1", kind: "Deployment" });

  const direct = matchesResources(
    mr({ resourceRules: [rule({ resources: ["*/scale"] })] }),
    deploymentScale("prod"),
    ctx,
  );
  assert.equal(direct.status, "matched");
  if (direct.status !== "matched") return;
  assert.equal(direct.equivalent, false);
  assert.equal(direct.subResource, "scale");
  assert.deepEqual(direct.kind, { group: "autoscaling", version: "v1", kind: "Scale" });
});

void test("matchesResources: Namespace CREATE does not look the namespace up", () => {
  lookedUp.length = 0;
  const got = matchesResources(
    mr({ namespaceSelector: labels({ team: "a" }) }),
    namespaceRequest("CREATE", "dev", { team: "a" }),
    ctx,
  );
  assert.equal(got.status, "matched");
  assert.deepEqual(lookedUp, []);
});

void test("matchesResources: Namespace request with an empty namespace field looks up its name", () => {
  lookedUp.length = 0;
  const req = { ...namespaceRequest("DELETE", "dev", { env: "wrong" }), namespace: "" };
  const got = matchesResources(mr({ namespaceSelector: labels({ env: "dev" }) }), req, ctx);
  assert.equal(got.status, "matched");
  assert.deepEqual(lookedUp, ["dev"]);
});

void test("matchesResources: no lookup when rules already decide", () => {
  lookedUp.length = 0;
  const got = matchesResources(
    mr({ resourceRules: [rule({ resources: ["services"] })], namespaceSelector: labels({ env: "prod" }) }),
    podCreate("prod"),
    ctx,
  );
  assert.equal(got.status, "not-matched");
  assert.deepEqual(lookedUp, []);
});

const admissionCases: ReadonlyArray<{
  name: string;
  kind: GroupVersionKind;
  gvr: GroupVersionResource;
  want: boolean;
}> = [
  ...(
    [
      ["ValidatingAdmissionPolicy", "validatingadmissionpolicies"],
      ["ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings"],
      ["MutatingAdmissionPolicy", "mutatingadmissionpolicies"],
      ["MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings"],
      ["ValidatingWebhookConfiguration", "validatingwebhookconfigurations"],
      ["MutatingWebhookConfiguration", "mutatingwebhookconfigurations"],
    ] as const
  ).map(([kind, resource]) => ({
    name: kind,
    kind: { group: "admissionregistration.k8s.io", version: "v1", kind },
    gvr: { group: "admissionregistration.k8s.io", version: "v1", resource },
    want: true,
  })),
  {
    name: "kind alone is enough",
    kind: { group: "admissionregistration.k8s.io", version: "v1beta1", kind: "ValidatingAdmissionPolicy" },
    gvr: { group: "", version: "", resource: "" },
    want: true,
  },
  {
    name: "same kind name in another group",
    kind: { group: "example.com", version: "v1", kind: "ValidatingAdmissionPolicy" },
    gvr: { group: "example.com", version: "v1", resource: "validatingadmissionpolicies" },
    want: false,
  },
  {
    name: "other admissionregistration kinds",
    kind: { group: "admissionregistration.k8s.io", version: "v1", kind: "Something" },
    gvr: { group: "admissionregistration.k8s.io", version: "v1", resource: "somethings" },
    want: false,
  },
  { name: "pods", kind: POD, gvr: PODS, want: false },
];

for (const c of admissionCases) {
  void test(`isAdmissionConfigurationResource: ${c.name}`, () => {
    assert.equal(isAdmissionConfigurationResource(request({ gvr: c.gvr, kind: c.kind, name: "x" })), c.want);
  });
}
