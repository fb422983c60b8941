/**
 * A binding's params, as the generic policy dispatcher collects them: kubernetes staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go (CollectParams), with the
 * cases of plugin/policy/validating/admission_test.go (TestParamRef and testParamRefCase,
 * TestNamespaceParamRefName, TestNamespaceParamRefClusterScopedParamError). The param kinds'
 * scopes come from CustomResourceDefinitions in the policy text, as the test's REST mappings do.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { podRequest, validateText, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

type Doc = Record<string, unknown>;

const crd = (kind: string, plural: string, scope: "Namespaced" | "Cluster"): Doc => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.example.com` },
  spec: {
    group: "example.com",
    scope,
    names: { kind, plural },
    versions: [{ name: "v1", served: true, storage: true }],
  },
});

const CRDS = [
  crd("ParamsConfig", "paramsconfigs", "Namespaced"),
  crd("ClusterScopedParamsConfig", "clusterscopedparamsconfigs", "Cluster"),
];

const NAME = "replicas-test.example.com";
const matching = { doesitmatch: "yes" };
const nonmatching = { doesitmatch: "no" };
const other = { notaffiliated: "no" };

const param = (name: string, namespace: string, labels: Record<string, string>): Doc => ({
  apiVersion: "example.com/v1",
  kind: "ParamsConfig",
  metadata: { name, namespace, labels },
});
const clusterParam = (name: string, labels: Record<string, string>): Doc => ({
  apiVersion: "example.com/v1",
  kind: "ClusterScopedParamsConfig",
  metadata: { name, labels },
});

/** testParamRefCase's library of params "to try to fool the controller". */
const PARAMS: readonly Doc[] = [
  param(NAME, "default", nonmatching),
  param(NAME, "mynamespace", nonmatching),
  param(NAME, "othernamespace", nonmatching),
  param(`${NAME}1`, "default", matching),
  param(`${NAME}1`, "mynamespace", matching),
  param(`${NAME}1`, "othernamespace", matching),
  param(`${NAME}2`, "default", other),
  param(`${NAME}2`, "mynamespace", other),
  param(`${NAME}2`, "othernamespace", other),
  param(`${NAME}3`, "default", other),
  param(`${NAME}3`, "mynamespace", matching),
  param(`${NAME}3`, "othernamespace", matching),
  clusterParam(NAME, matching),
  clusterParam(`${NAME}1`, nonmatching),
  clusterParam(`${NAME}2`, other),
  clusterParam(`${NAME}3`, matching),
  clusterParam(`${NAME}4`, nonmatching),
  clusterParam(`${NAME}5`, other),
];

const EVERYTHING = [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["CREATE"], resources: ["*"] }];

/** A ConfigMap in othernamespace, and a ClusterRole (no namespace): the two requests of the test. */
const namespacedRequest = podRequest(
  { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "some-param", namespace: "othernamespace" } },
  {
    kind: { group: "", version: "v1", kind: "ConfigMap" },
    resource: { group: "", version: "v1", resource: "configmaps" },
    namespace: "othernamespace",
    name: "some-param",
  },
);
const clusterRequest = podRequest(
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "other-param" } },
  {
    kind: { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRole" },
    resource: { group: "rbac.authorization.k8s.io", version: "v1", resource: "clusterroles" },
    namespace: "",
    name: "other-param",
  },
);

interface Case {
  readonly clusterScoped: boolean;
  readonly by: "name" | "selector" | "everything";
  readonly namespaceIsSet: boolean;
  readonly denyNotFound: boolean;
}

function policyText(c: Case, params: readonly Doc[], actions: readonly string[] = ["Deny"]): string {
  const paramRef: Doc = { parameterNotFoundAction: c.denyNotFound ? "Deny" : "Allow" };
  if (c.by === "name") paramRef.name = NAME;
  else paramRef.selector = c.by === "selector" ? { matchLabels: matching } : {};
  if (c.namespaceIsSet) paramRef.namespace = "mynamespace";
  return yamlDocs(
    ...CRDS,
    vap("denypolicy.example.com", {
      failurePolicy: "Fail",
      paramKind: {
        apiVersion: "example.com/v1",
        kind: c.clusterScoped ? "ClusterScopedParamsConfig" : "ParamsConfig",
      },
      matchConstraints: { resourceRules: EVERYTHING },
      validations: [{ expression: "false", message: "Denied by policy" }],
    }),
    vapBinding("denybinding.example.com", "denypolicy.example.com", { paramRef, validationActions: actions }),
    ...params,
  );
}

/** The params testParamRefCase expects a request in `requestNamespace` ("" cluster-scoped) to be evaluated with. */
function expected(c: Case, requestNamespace: string): string[] {
  const out: string[] = [];
  for (const p of PARAMS) {
    const meta = p.metadata as { name: string; namespace?: string; labels: Record<string, string> };
    if ((p.kind === "ClusterScopedParamsConfig") !== c.clusterScoped) continue;
    if (c.by === "name" && meta.name !== NAME) continue;
    const namespace = meta.namespace ?? "";
    if (c.namespaceIsSet && namespace !== "mynamespace") continue;
    if (!c.clusterScoped && !c.namespaceIsSet && namespace !== requestNamespace) continue;
    if (c.by === "selector" && meta.labels.doesitmatch !== "yes") continue;
    out.push(namespace ? `${namespace}/${meta.name}` : meta.name);
  }
  return out.sort();
}

function evaluated(d: AdmissionDecision): string[] {
  return d.results.flatMap((r) => (r.param === undefined ? [] : [r.param])).sort();
}

const CASES: Case[] = [];
for (const clusterScoped of [false, true]) {
  for (const by of ["name", "selector", "everything"] as const) {
    for (const namespaceIsSet of [false, true]) {
      // testParamRefCase skips a cluster-scoped kind with a namespace: its own test below.
      if (clusterScoped && namespaceIsSet) continue;
      for (const denyNotFound of [false, true])
        CASES.push({ clusterScoped, by, namespaceIsSet, denyNotFound });
    }
  }
}

const NAMESPACED_PARAMREF_ERROR =
  "ValidatingAdmissionPolicy 'denypolicy.example.com' with binding 'denybinding.example.com' denied request: failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources";
const NOT_FOUND_ERROR =
  "ValidatingAdmissionPolicy 'denypolicy.example.com' with binding 'denybinding.example.com' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction";

for (const c of CASES) {
  const name = `${c.clusterScoped ? "ClusterScoped" : ""}ParamRef${c.by === "name" ? "WithName" : c.by === "selector" ? "WithLabelSelector" : "WithEverythingSelector"}${c.namespaceIsSet ? "WithNamespace" : ""}${c.denyNotFound ? "DenyNotFound" : "AllowNotFound"}`;
  test(`TestParamRef/${name}: the params a namespaced and a cluster-scoped request are evaluated with`, () => {
    const text = policyText(c, PARAMS);
    const ns = validateText(text, namespacedRequest);
    assert.equal(ns.allowed, false);
    assert.ok(ns.status?.message.endsWith("denied request: Denied by policy"), ns.status?.message);
    const want = expected(c, "othernamespace");
    assert.ok(want.length > 0);
    assert.deepEqual(evaluated(ns), want);

    const cluster = validateText(text, clusterRequest);
    const shouldError = !c.namespaceIsSet && !c.clusterScoped;
    assert.equal(cluster.allowed, false);
    if (shouldError) {
      assert.equal(cluster.status?.message, NAMESPACED_PARAMREF_ERROR);
      assert.deepEqual(evaluated(cluster), []);
    } else {
      assert.deepEqual(evaluated(cluster), expected(c, ""));
    }

    // With every matched param gone, parameterNotFoundAction decides (and no param is evaluated).
    const empty = policyText(c, []);
    for (const [request, label] of [
      [namespacedRequest, "namespaced"],
      [clusterRequest, "cluster-scoped"],
    ] as [AdmissionRequest, string][]) {
      const d = validateText(empty, request);
      assert.deepEqual(evaluated(d), [], label);
      if (request === clusterRequest && shouldError)
        assert.equal(d.status?.message, NAMESPACED_PARAMREF_ERROR);
      else if (c.denyNotFound) assert.equal(d.status?.message, NOT_FOUND_ERROR, label);
      else assert.equal(d.allowed, true, label);
    }
  });
}

test("TestNamespaceParamRefName: a paramRef without a namespace reads the request's own namespace", () => {
  const configMap = (namespace: string): Doc => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: NAME, namespace },
    data: { coolkey: namespace },
  });
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      validations: [{ expression: "false", messageExpression: "string(params.data.coolkey)" }],
    }),
    vapBinding("b", "p", { paramRef: { name: NAME, parameterNotFoundAction: "Deny" } }),
    configMap("default"),
    configMap("mynamespace"),
    configMap("othernamespace"),
  );
  for (const namespace of ["default", "mynamespace", "othernamespace", "default"]) {
    const d = validateText(text, podRequest(null, { namespace }));
    assert.equal(
      d.status?.message,
      `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ${namespace}`,
    );
  }
});

test("TestNamespaceParamRefClusterScopedParamError: paramRef.namespace with a cluster-scoped paramKind is a configuration error", () => {
  // ValidatingAdmissionPolicy itself is the cluster-scoped param kind, as upstream.
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      paramKind: { apiVersion: "admissionregistration.k8s.io/v1beta1", kind: "ValidatingAdmissionPolicy" },
      validations: [{ expression: "true" }],
    }),
    vapBinding("b", "p", {
      paramRef: {
        name: "other-param-to-use-with-no-label.example.com",
        namespace: "mynamespace",
        parameterNotFoundAction: "Deny",
      },
    }),
  );
  const d = validateText(text, podRequest(null));
  assert.equal(
    d.status?.message,
    "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
  );
  assert.equal(d.results[0]?.errorKind, "configuration");
  // Under Ignore a configuration error is dropped (dispatcher.go addConfigError).
  const ignored = validateText(
    text.replace("failurePolicy: Fail", "failurePolicy: Ignore"),
    podRequest(null),
  );
  assert.equal(ignored.allowed, true);
});

test("a configuration error of the paramRef denies under Fail even through a [Warn] or [Audit] binding (dispatcher.go addConfigError)", () => {
  const c: Case = { clusterScoped: false, by: "name", namespaceIsSet: false, denyNotFound: true };
  for (const actions of [["Warn"], ["Audit"]]) {
    const d = validateText(policyText(c, PARAMS, actions), clusterRequest);
    assert.equal(d.allowed, false);
    assert.equal(d.status?.message, NAMESPACED_PARAMREF_ERROR);
    assert.deepEqual(d.warnings, []);
  }
});

test("a namespaced param written without a namespace is stored in default, as kubectl would create it", () => {
  const text = yamlDocs(
    vap("p", {
      failurePolicy: "Fail",
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      validations: [{ expression: "false", messageExpression: "string(params.metadata.namespace)" }],
    }),
    vapBinding("b", "p", { paramRef: { name: "limits", parameterNotFoundAction: "Deny" } }),
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "limits" }, data: {} },
  );
  assert.equal(
    validateText(text, podRequest(null, { namespace: "default" })).status?.message,
    "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: default",
  );
  assert.equal(
    validateText(text, podRequest(null, { namespace: "team-a" })).status?.message,
    `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
  );
});
