/**
 * The connected path, differential: `celgate serve --kubeconfig` against the real kube-apiserver of
 * each release tools/kube/ builds, running as a ServiceAccount-like user that holds exactly the RBAC
 * `celgate manifests --rbac` prints for its policies (so the RBAC is tested too). The same policies
 * are installed natively on the server, and every verdict celgate gives an AdmissionReview sent
 * over real TLS is compared with the API server's own verdict on the same create (`?dryRun=All`):
 * allowed, the HTTP code, the message.
 *
 * What is compared, with where upstream does it (k8s.io/apiserver/pkg/admission/plugin/policy):
 * - Namespace label changes reaching a namespaceSelector (generic/policy_source.go keeps a Namespace
 *   informer; celgate a Namespace cache by list and watch);
 * - param ConfigMap and custom-resource edits and deletion, `parameterNotFoundAction` Deny and
 *   Allow (generic/policy_dispatcher.go CollectParams);
 * - `authorizer` checks, which the API server answers from its own RBAC authorizer and celgate by
 *   SubjectAccessReviews (apiserver/pkg/cel/library/authz.go), for users with and without rights;
 * - `--policies-from-cluster`: a policy created, updated and deleted on the server is served.
 * Every wait is bounded; a change is awaited on both sides before the verdicts are compared.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import type { ClusterLog } from "../../src/cluster/observe.ts";
import type { TestCertificate } from "../helpers/certs.ts";
import { type ControlPlane, kubeReleases, startControlPlane } from "../helpers/kube-control-plane.ts";
import { Resources } from "../helpers/kube-objects.ts";
import { postReview, startTestWebhook, type TestWebhook, tempDir, waitFor } from "../helpers/webhook.ts";
import {
  apply,
  celgateVerdict,
  createReview,
  deploymentIn,
  nativeVerdict,
  serviceAccountUser,
  type Verdict,
} from "./connected-setup.ts";

/** Bound on a change reaching a decision, on either side (a watch event, an informer). */
const CHANGE_MS = 30_000;

const DEPLOYMENTS = `
  matchConstraints:
    resourceRules:
      - { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] }`;

/** A binding's matchResources for one namespace, so that each case's policies meet only its requests. */
const only = (ns: string) => `
  matchResources:
    namespaceSelector: { matchLabels: { kubernetes.io/metadata.name: ${ns} } }`;

const NAMESPACES = ["celgate", "team-a", "team-b", "team-c", "team-d", "team-e", "team-f", "team-g"]
  .map((name) => `apiVersion: v1\nkind: Namespace\nmetadata: { name: ${name}, labels: { env: dev } }\n`)
  .join("---\n");

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: replicalimits.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { plural: replicalimits, singular: replicalimit, kind: ReplicaLimit, listKind: ReplicaLimitList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                max: { type: integer }
`;

/**
 * Probes of what a policy sees through the cluster: each validation fails with a message that
 * renders one value, and the binding only warns, so every message comes back as a warning
 * (validating/dispatcher.go: "Validation failed for ValidatingAdmissionPolicy ...") and all are
 * compared at once. namespaceObject is the stored Namespace as the API server trims it
 * (CreateNamespaceObject); authorizer checks cover resources, a name, a path, a ServiceAccount,
 * the request's own resource, a field selector and RBAC's reasons.
 */
/** The authorizer checks probed, each a variable (messageExpression cannot name `authorizer`, a variable can). */
const AUTHZ = "authorizer.group('').resource('pods').namespace(object.metadata.namespace)";
const PROBE_VARIABLES: readonly (readonly [string, string])[] = [
  ["listPods", `${AUTHZ}.check('list')`],
  ["deletePods", `${AUTHZ}.check('delete')`],
  [
    "deleteSecrets",
    "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('delete')",
  ],
  ["namedPod", `${AUTHZ}.name('x').check('get')`],
  ["requestResource", "authorizer.requestResource.check('create')"],
  ["healthz", "authorizer.path('/healthz').check('get')"],
  [
    "serviceAccount",
    `authorizer.serviceAccount(object.metadata.namespace, 'builder').group('').resource('pods').namespace(object.metadata.namespace).check('get')`,
  ],
  ["fieldSelector", `${AUTHZ}.fieldSelector('spec.nodeName=n1').check('list')`],
  ["labelSelector", `${AUTHZ}.labelSelector('app=web').check('list')`],
];

// Not probed: `string(namespaceObject.metadata.creationTimestamp)`. The API server types the field
// as a timestamp (admission/plugin/cel/compile.go buildNamespaceType) but binds the Namespace
// schemaless (activation.go SchemalessTypedToVal), so the value is a string and the checked call of
// string(timestamp) fails at run time; celgate gives the string (docs/differences.md).
const PROBES = [
  "'phase ' + namespaceObject.status.phase",
  "'finalizers ' + namespaceObject.spec.finalizers.join(',')",
  "'name label ' + namespaceObject.metadata.labels['kubernetes.io/metadata.name']",
  "'has UID ' + string(has(namespaceObject.metadata.UID))",
  "'has creationTimestamp ' + string(has(namespaceObject.metadata.creationTimestamp))",
  "'has resourceVersion ' + string(has(namespaceObject.metadata.resourceVersion))",
  "'has generation ' + string(has(namespaceObject.metadata.generation))",
  "'has annotations ' + string(has(namespaceObject.metadata.annotations))",
  "'has metadata.finalizers ' + string(has(namespaceObject.metadata.finalizers))",
  ...PROBE_VARIABLES.map(
    ([name]) =>
      `'${name}: allowed ' + string(variables.${name}.allowed()) + ', errored ' + string(variables.${name}.errored()) + ', error ' + variables.${name}.error() + ', reason ' + variables.${name}.reason()`,
  ),
];

/**
 * The authorizer's answers, as validations (where the authorizer is bound): each warns when the
 * answer holds, so which ones warn says what RBAC answered; and whether a reason was given.
 */
const AUTHZ_PROBES: readonly (readonly [string, string])[] = PROBE_VARIABLES.flatMap(([name]) => [
  [`!variables.${name}.allowed()`, `${name} allowed`],
  [`!variables.${name}.errored()`, `${name} errored`],
  [`variables.${name}.reason() == ''`, `${name} gave a reason`],
]);

const PROBE_POLICY = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: probes }
spec:
  failurePolicy: Fail
${DEPLOYMENTS}
  variables:
${PROBE_VARIABLES.map(([name, e]) => `    - name: ${name}\n      expression: ${JSON.stringify(e)}`).join("\n")}
  validations:
${PROBES.map((m) => `    - expression: "false"\n      messageExpression: ${JSON.stringify(m)}`).join("\n")}
${AUTHZ_PROBES.map(([e, m]) => `    - expression: ${JSON.stringify(e)}\n      message: ${JSON.stringify(m)}`).join("\n")}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: probes }
spec:
  policyName: probes
  validationActions: [Warn]
${only("team-g")}
`;

/** The policies celgate serves from its files, installed natively as well. */
const POLICIES = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: prod-replicas }
spec:
  failurePolicy: Fail
${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= 2"
      message: "production runs at most 2 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: prod-replicas }
spec:
  policyName: prod-replicas
  validationActions: [Deny]
  matchResources:
    namespaceSelector: { matchLabels: { env: prod } }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replica-limit }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= int(params.data.max)"
      messageExpression: "'at most ' + params.data.max + ' replicas'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replica-limit-deny }
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef: { name: limits, parameterNotFoundAction: Deny }
${only("team-b")}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replica-limit-allow }
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef: { name: limits, parameterNotFoundAction: Allow }
${only("team-c")}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: crd-limit }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: example.com/v1, kind: ReplicaLimit }
${DEPLOYMENTS}
  validations:
    - expression: "object.spec.replicas <= params.spec.max"
      messageExpression: "'the ReplicaLimit allows ' + string(params.spec.max)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: crd-limit }
spec:
  policyName: crd-limit
  validationActions: [Deny]
  paramRef: { name: limits, parameterNotFoundAction: Deny }
${only("team-d")}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: may-delete-pods }
spec:
  failurePolicy: Fail
${DEPLOYMENTS}
  validations:
    - expression: "authorizer.group('').resource('pods').namespace(object.metadata.namespace).check('delete').allowed()"
      message: "the user may not delete pods here"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: may-delete-pods }
spec:
  policyName: may-delete-pods
  validationActions: [Deny]
${only("team-e")}
---
${PROBE_POLICY}`;

/** What --policies-from-cluster serves: created on the server only. */
const clusterPolicy = (max: number, message: string) => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicy",
  metadata: { name: "cluster-only" },
  spec: {
    failurePolicy: "Fail",
    matchConstraints: {
      resourceRules: [
        { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
      ],
    },
    validations: [{ expression: `object.spec.replicas <= ${max}`, message }],
  },
});

const CLUSTER_BINDING = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: { name: "cluster-only" },
  spec: {
    policyName: "cluster-only",
    validationActions: ["Deny"],
    matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "team-f" } } },
  },
};

const ROLES = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: deployer, namespace: team-e }
rules:
  - { apiGroups: ["apps"], resources: ["deployments"], verbs: ["create"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: pod-deleter, namespace: team-e }
rules:
  - { apiGroups: [""], resources: ["pods"], verbs: ["delete"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: deployers, namespace: team-e }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer }
subjects:
  - { apiGroup: rbac.authorization.k8s.io, kind: User, name: alice }
  - { apiGroup: rbac.authorization.k8s.io, kind: User, name: bob }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: pod-deleters, namespace: team-e }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-deleter }
subjects:
  - { apiGroup: rbac.authorization.k8s.io, kind: User, name: alice }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: pod-worker, namespace: team-g }
rules:
  - { apiGroups: ["apps"], resources: ["deployments"], verbs: ["create"] }
  - { apiGroups: [""], resources: ["pods"], verbs: ["list", "delete"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: pod-workers, namespace: team-g }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-worker }
subjects:
  - { apiGroup: rbac.authorization.k8s.io, kind: User, name: alice }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: pod-reader, namespace: team-g }
rules:
  - { apiGroups: [""], resources: ["pods"], verbs: ["get"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: builder-reads-pods, namespace: team-g }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader }
subjects:
  - { kind: ServiceAccount, name: builder, namespace: team-g }
`;

/** The user the API server sees for a client certificate of issueUser(name): O, and system:authenticated. */
const certUser = (username: string) => ({ username, groups: ["celgate-test", "system:authenticated"] });
const ADMIN = { username: "celgate-admin", groups: ["system:masters", "system:authenticated"] };

interface Side {
  readonly plane: ControlPlane;
  readonly webhook: TestWebhook;
}

/** celgate's and the API server's verdicts on creating `object`, as `user` (admin by default). */
async function verdicts(
  side: Side,
  object: Record<string, unknown>,
  as?: { readonly cert: TestCertificate; readonly name: string },
): Promise<{ celgate: Verdict; native: Verdict }> {
  const ns = (object.metadata as { namespace: string }).namespace;
  const review = createReview(object, as ? certUser(as.name) : ADMIN);
  const [reply, native] = await Promise.all([
    postReview(side.webhook.port, side.webhook.ca, "/validate", review),
    nativeVerdict(side.plane, `/apis/apps/v1/namespaces/${ns}/deployments`, object, as?.cert),
  ]);
  return { celgate: celgateVerdict(reply.response), native };
}

/** Waits (bounded) until both sides' verdicts on `object` are `allowed`, then asserts they agree. */
async function agreeOn(
  side: Side,
  what: string,
  object: Record<string, unknown>,
  allowed: boolean,
  as?: { readonly cert: TestCertificate; readonly name: string },
): Promise<Verdict> {
  const v = await waitFor(
    `${what}: both sides ${allowed ? "allow" : "deny"}`,
    async () => {
      const both = await verdicts(side, object, as);
      return both.celgate.allowed === allowed && both.native.allowed === allowed ? both : undefined;
    },
    CHANGE_MS,
    200,
  );
  assert.deepEqual(v.celgate, v.native, `${what}: celgate's verdict is the API server's`);
  return v.native;
}

async function startServe(
  t: TestContext,
  kubeconfig: string,
  policies: string,
  policiesFromCluster: boolean,
): Promise<TestWebhook & { readonly errors: () => string[] }> {
  const dir = await tempDir(t, "celgate-connected-");
  await mkdir(join(dir, "policies"));
  if (policies !== "") await writeFile(join(dir, "policies", "policies.yaml"), policies);
  await writeFile(join(dir, "kubeconfig"), kubeconfig);
  const lines: string[] = [];
  const line =
    (level: string): ClusterLog["info"] =>
    (fields, message) =>
      lines.push(`${level} ${message} ${JSON.stringify(fields)}`);
  const w = await startTestWebhook(t, {
    policies: [join(dir, "policies")],
    cluster: {
      kubeconfig: join(dir, "kubeconfig"),
      log: { info: line("info"), warn: line("warn"), error: line("error") },
      ...(policiesFromCluster ? { policiesFromCluster: true } : {}),
    },
  });
  const ready = await w.webhook.cluster?.whenReady(CHANGE_MS);
  assert.ok(ready, `serve's caches synced with the RBAC manifests --rbac prints:\n${lines.join("\n")}`);
  // A line at error level means the RBAC fell short somewhere (a forbidden list or watch).
  return { ...w, errors: () => lines.filter((l) => l.startsWith("error")) };
}

async function setLabel(plane: ControlPlane, ns: string, env: string): Promise<void> {
  const r = await plane.request("GET", `/api/v1/namespaces/${ns}`);
  const o = r.body as { metadata: { labels?: Record<string, string> } };
  o.metadata.labels = { ...o.metadata.labels, env };
  const put = await plane.request("PUT", `/api/v1/namespaces/${ns}`, o);
  assert.equal(put.status, 200, JSON.stringify(put.body));
}

async function putObject(plane: ControlPlane, path: string, object: Record<string, unknown>): Promise<void> {
  const name = (object.metadata as { name: string }).name;
  const current = await plane.request("GET", `${path}/${name}`);
  const r =
    current.status === 404
      ? await plane.request("POST", path, object)
      : await plane.request("PUT", `${path}/${name}`, {
          ...object,
          metadata: {
            ...(object.metadata as object),
            resourceVersion: (current.body as { metadata: { resourceVersion: string } }).metadata
              .resourceVersion,
          },
        });
  assert.ok(r.status === 200 || r.status === 201, `${path}/${name}: ${r.status} ${JSON.stringify(r.body)}`);
}

async function remove(plane: ControlPlane, path: string): Promise<void> {
  const r = await plane.request("DELETE", path);
  assert.ok(r.status === 200 || r.status === 202, `DELETE ${path}: ${r.status} ${JSON.stringify(r.body)}`);
}

for (const release of kubeReleases().filter((r) => r.built)) {
  void test(`serve --kubeconfig against kube-apiserver ${release.version}, as a ServiceAccount with the RBAC manifests --rbac prints`, async (t) => {
    const plane = await startControlPlane({ release });
    t.after(() => plane.stop());
    const resources = new Resources(plane);
    await apply(plane, resources, `${NAMESPACES}---\n${CRD}---\n${ROLES}`);
    await waitFor(
      "the CRD served",
      async () => ((await plane.request("GET", "/apis/example.com/v1")).status === 200 ? true : undefined),
      CHANGE_MS,
      200,
    );
    let compared = 0;
    const agree = async (...args: Parameters<typeof agreeOn>) => {
      compared++;
      return agreeOn(...args);
    };

    await t.test(
      "--policies-from-cluster: a policy created, updated and deleted on the server is served",
      async (t) => {
        const sa = await serviceAccountUser(plane, resources, "celgate", "celgate-cluster", [
          "--policies-from-cluster",
        ]);
        const webhook = await startServe(t, sa.kubeconfig, "", true);
        const side = { plane, webhook };
        const object = deploymentIn("team-f", "web", 5);
        await agree(side, "no cluster policy yet", object, true);
        const base = "/apis/admissionregistration.k8s.io/v1";
        await putObject(
          plane,
          `${base}/validatingadmissionpolicies`,
          clusterPolicy(1, "the cluster says at most 1"),
        );
        await putObject(plane, `${base}/validatingadmissionpolicybindings`, CLUSTER_BINDING);
        const denied = await agree(side, "created", object, false);
        assert.match(denied.message ?? "", /the cluster says at most 1/);
        await putObject(
          plane,
          `${base}/validatingadmissionpolicies`,
          clusterPolicy(9, "the cluster says at most 9"),
        );
        await agree(side, "updated to allow", object, true);
        await putObject(
          plane,
          `${base}/validatingadmissionpolicies`,
          clusterPolicy(3, "the cluster says at most 3"),
        );
        const again = await agree(side, "updated to deny with another message", object, false);
        assert.match(again.message ?? "", /the cluster says at most 3/);
        await remove(plane, `${base}/validatingadmissionpolicybindings/cluster-only`);
        await agree(side, "binding deleted", object, true);
        await remove(plane, `${base}/validatingadmissionpolicies/cluster-only`);
        assert.deepEqual(webhook.errors(), [], "no cluster errors");
      },
    );

    // The file policies, from here on, are installed natively too.
    const sa = await serviceAccountUser(plane, resources, "celgate", "celgate", [
      "--policies",
      await policyDir(t),
    ]);
    const webhook = await startServe(t, sa.kubeconfig, POLICIES, false);
    // The user is no admin: what the RBAC does not grant is refused.
    const secrets = await plane.request("GET", "/api/v1/secrets", undefined, sa.user);
    assert.equal(secrets.status, 403, "serve's user may not list Secrets");
    await apply(plane, resources, POLICIES);
    const side = { plane, webhook };

    await t.test("a Namespace label change reaches the decision, both ways", async () => {
      const object = deploymentIn("team-a", "web", 5);
      await agree(side, "dev: not selected", object, true);
      await setLabel(plane, "team-a", "prod");
      const denied = await agree(side, "labelled prod", object, false);
      assert.match(denied.message ?? "", /production runs at most 2 replicas/);
      await setLabel(plane, "team-a", "dev");
      await agree(side, "labelled dev again", object, true);
    });

    await t.test("a param ConfigMap edited and deleted; parameterNotFoundAction Deny and Allow", async () => {
      const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
      const limits = (ns: string, max: string) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "limits", namespace: ns },
        data: { max },
      });
      const b = deploymentIn("team-b", "web", 5);
      const c = deploymentIn("team-c", "web", 5);
      const missing = await agree(side, "Deny: no param yet", b, false);
      assert.match(
        missing.message ?? "",
        /no params found for policy binding with `Deny` parameterNotFoundAction/,
      );
      await agree(side, "Allow: no param", c, true);
      await putObject(plane, cms("team-b"), limits("team-b", "3"));
      const three = await agree(side, "param max 3", b, false);
      assert.match(three.message ?? "", /at most 3 replicas/);
      await putObject(plane, cms("team-b"), limits("team-b", "10"));
      await agree(side, "param edited to 10", b, true);
      await remove(plane, `${cms("team-b")}/limits`);
      await agree(side, "param deleted", b, false);
      await putObject(plane, cms("team-c"), limits("team-c", "1"));
      await agree(side, "Allow binding, param created", c, false);
    });

    await t.test("a custom-resource param created and edited", async () => {
      const path = "/apis/example.com/v1/namespaces/team-d/replicalimits";
      const limit = (max: number) => ({
        apiVersion: "example.com/v1",
        kind: "ReplicaLimit",
        metadata: { name: "limits", namespace: "team-d" },
        spec: { max },
      });
      const d = deploymentIn("team-d", "web", 5);
      await agree(side, "no ReplicaLimit yet", d, false);
      await putObject(plane, path, limit(2));
      const two = await agree(side, "ReplicaLimit 2", d, false);
      assert.match(two.message ?? "", /the ReplicaLimit allows 2/);
      await putObject(plane, path, limit(9));
      await agree(side, "ReplicaLimit 9", d, true);
    });

    await t.test(
      "authorizer checks answered by real RBAC, for a user with and one without the right",
      async () => {
        const e = deploymentIn("team-e", "web", 1);
        const alice = { cert: plane.issueUser("alice"), name: "alice" };
        const bob = { cert: plane.issueUser("bob"), name: "bob" };
        await agree(side, "alice may delete pods", e, true, alice);
        const denied = await agree(side, "bob may not", e, false, bob);
        assert.match(denied.message ?? "", /the user may not delete pods here/);
        // The admin (system:masters) may do anything.
        await agree(side, "the admin", e, true);
      },
    );

    await t.test(
      "probes: namespaceObject and authorizer answers, rendered as warnings, are the API server's",
      async () => {
        const g = deploymentIn("team-g", "web", 1);
        const alice = { cert: plane.issueUser("alice"), name: "alice" };
        for (const as of [alice, undefined]) {
          const v = await agree(side, `probes as ${as?.name ?? "the admin"}`, g, true, as);
          // Each namespaceObject probe is its own warning; every authorizer probe falls back to the same
          // "failed expression: false" (the variables' checks fail where no authorizer is bound).
          const namespaceProbes = PROBES.length - PROBE_VARIABLES.length;
          const answered = v.warnings.filter((w) => / (allowed|errored|gave a reason)$/.test(w)).length;
          assert.ok(answered > 0, "some authorizer probes held");
          assert.equal(
            v.warnings.length,
            namespaceProbes + 1 + answered,
            `every probe answered:\n${v.warnings.join("\n")}`,
          );
        }
      },
    );

    assert.deepEqual(webhook.errors(), [], "no cluster errors");
    t.diagnostic(
      `${release.version}: ${compared} verdicts compared, celgate and the API server agreed on each`,
    );
  });
}

/** A directory holding POLICIES, for `manifests --rbac --policies`. */
async function policyDir(t: TestContext): Promise<string> {
  const dir = await tempDir(t, "celgate-connected-rbac-");
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  return dir;
}
