/**
 * `celgate audit --kubeconfig` against the real kube-apiserver of each release tools/kube/ builds:
 *
 * - its findings on Pods stored on the server (Namespaces, a param ConfigMap and, for `authorizer`
 *   checks, SubjectAccessReviews answered by real RBAC, all from the server) are compared, Pod by
 *   Pod, with what the API server itself does when the same policies are installed natively and the
 *   same Pod is created again (`?dryRun=All`, as the audited user): a `fail` of a Deny binding is a
 *   denial with the same message, a `warn` of a Warn binding is the API server's warning
 *   (validating/dispatcher.go: "Validation failed for ValidatingAdmissionPolicy ..."), a mutation's
 *   `warn` is the patch the API server applies, a pass is an admission;
 * - the reports it prints (`-o policyreport`, `-o openreports`) are created on the server with
 *   their projects' CRDs installed (report-crds.ts) and `fieldValidation=Strict`, so that a field the
 *   schema does not know, or a value it refuses, fails.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { type ControlPlane, kubeReleases, startControlPlane } from "../helpers/kube-control-plane.ts";
import { Resources } from "../helpers/kube-objects.ts";
import { tempDir, waitFor } from "../helpers/webhook.ts";
import { cli } from "../unit/cli/fake-io.ts";
import { apply, manifestsOf } from "./connected-setup.ts";
import { REPORT_CRD_SOURCES, reportCrds } from "./report-crds.ts";

const PODS_ON_CREATE = `
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }`;

const POLICIES = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: no-latest }
spec:
  failurePolicy: Fail
${PODS_ON_CREATE}
  validations:
    - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
      message: "an image is :latest"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: no-latest }
spec:
  policyName: no-latest
  validationActions: [Deny]
  matchResources:
    namespaceSelector: { matchLabels: { env: prod } }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: max-containers }
spec:
  failurePolicy: Fail
  paramKind: { apiVersion: v1, kind: ConfigMap }
${PODS_ON_CREATE}
  validations:
    - expression: "size(object.spec.containers) <= int(params.data.max)"
      message: "too many containers"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: max-containers }
spec:
  policyName: max-containers
  validationActions: [Warn]
  paramRef: { name: limits, namespace: config, parameterNotFoundAction: Deny }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: may-delete-pods }
spec:
  failurePolicy: Fail
${PODS_ON_CREATE}
  validations:
    - expression: "authorizer.group('').resource('pods').namespace(object.metadata.namespace).check('delete').allowed()"
      message: "the user may not delete pods here"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: may-delete-pods }
spec: { policyName: may-delete-pods, validationActions: [Deny] }
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: add-team-label }
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
${PODS_ON_CREATE}
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: "has(object.metadata.labels) && 'team' in object.metadata.labels ? [] : [JSONPatch{op: 'add', path: '/metadata/labels', value: {'team': 'unknown'}}]"
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: add-team-label }
spec: { policyName: add-team-label }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ns-owner }
spec:
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["namespaces"] }
  validations:
    - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
      message: "no owner"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ns-owner }
spec: { policyName: ns-owner, validationActions: [Audit] }
`;

const NAMESPACES = [
  ["prod", "env: prod, owner: a"],
  ["dev", "env: dev"],
  ["config", "env: config, owner: b"],
]
  .map(
    ([name, labels]) => `apiVersion: v1
kind: Namespace
metadata: { name: ${name}, labels: { ${labels} } }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: default, namespace: ${name} }
`,
  )
  .join("---\n");

/** The auditor's rights: create Pods anywhere it audits, delete them only in prod. */
const RBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: pod-creator }
rules:
  - { apiGroups: [""], resources: ["pods"], verbs: ["create"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: auditor-creates-pods }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pod-creator }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: auditor }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: pod-deleter, namespace: prod }
rules:
  - { apiGroups: [""], resources: ["pods"], verbs: ["delete"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: auditor-deletes-pods, namespace: prod }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-deleter }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: auditor }]
`;

type Labels = Record<string, string> | undefined;

function pod(name: string, namespace: string, images: readonly string[], labels: Labels) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) },
  };
}

/** The Pods stored, and so audited: every combination the policies tell apart. */
const PODS = [
  pod("latest", "prod", ["nginx:latest"], { team: "x" }),
  pod("pinned", "prod", ["nginx:1.27"], { team: "x" }),
  pod("two", "prod", ["nginx:1.27", "sidecar:1"], undefined),
  pod("latest-dev", "dev", ["nginx:latest"], { team: "x" }),
  pod("pinned-dev", "dev", ["nginx:1.27"], undefined),
];

interface Finding {
  readonly resource: { readonly name: string; readonly namespace?: string };
  readonly policy: string;
  readonly result: string;
  readonly message: string;
  readonly patch?: readonly { op: string; path: string; value?: unknown }[];
}

/** What the API server does on the create of `p` (renamed: the stored one exists) as the auditor. */
async function native(
  plane: ControlPlane,
  p: ReturnType<typeof pod>,
  auditor: Parameters<ControlPlane["request"]>[3],
) {
  const copy = { ...p, metadata: { ...p.metadata, name: `${p.metadata.name}-again` } };
  const r = await plane.request(
    "POST",
    `/api/v1/namespaces/${p.metadata.namespace}/pods?dryRun=All`,
    copy,
    auditor,
  );
  const body = r.body as { message?: string; metadata?: { labels?: Record<string, string> } };
  return {
    status: r.status,
    message: body.message ?? "",
    labels: body.metadata?.labels,
    warnings: r.warnings,
  };
}

for (const release of kubeReleases().filter((r) => r.built)) {
  void test(`audit --kubeconfig against kube-apiserver ${release.version}: findings as the API server decides; reports accepted by the CRDs of ${REPORT_CRD_SOURCES}`, async (t) => {
    const crds = reportCrds();
    const plane = await startControlPlane({ release });
    t.after(() => plane.stop());
    const resources = new Resources(plane);
    await apply(plane, resources, `${NAMESPACES}---\n${RBAC}`);
    await apply(
      plane,
      resources,
      "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: limits, namespace: config }\ndata: { max: '1' }\n",
    );
    for (const p of PODS) await apply(plane, resources, JSON.stringify(p));
    await apply(plane, resources, [...crds.policyreport, ...crds.openreports].join("\n---\n"));

    const dir = await tempDir(t, "celgate-kube-audit-");
    await mkdir(join(dir, "policies"));
    await writeFile(join(dir, "policies", "policies.yaml"), POLICIES);
    const audit = (output: string) =>
      cli(
        [
          "audit",
          "-p",
          join(dir, "policies"),
          "--kubeconfig",
          plane.kubeconfig,
          "--user",
          "auditor",
          "--groups",
          "celgate-test,system:authenticated",
          "--page-size",
          "2",
          "-o",
          output,
        ],
        { cwd: dir },
      );

    const run = await audit("json");
    assert.equal(run.code, 1, `fails: exit 1\n${run.stderr}`);
    const data = JSON.parse(run.stdout) as { objects: number; findings: Finding[] };
    // Pods and Namespaces (ns-owner); the API server's own Namespaces (default, kube-system, ...) too.
    assert.ok(data.objects >= PODS.length + 3, `objects audited: ${data.objects}`);

    // The same policies, natively: each Pod created again as the auditor, compared with its findings.
    await apply(plane, resources, POLICIES);
    const auditor = plane.issueUser("auditor");
    let compared = 0;
    for (const p of PODS) {
      const mine = data.findings.filter(
        (f) => f.resource.name === p.metadata.name && f.resource.namespace === p.metadata.namespace,
      );
      const fail = mine.find((f) => f.result === "fail");
      const warns = mine.filter((f) => f.result === "warn" && f.policy !== "add-team-label");
      const patched = mine.find((f) => f.policy === "add-team-label");
      assert.deepEqual(
        mine.filter((f) => f.result === "error"),
        [],
        `${p.metadata.name}: no errors`,
      );
      // The API server's policy informers catch up with the policies just created (bounded).
      const got = await waitFor(
        `${p.metadata.name}: the native policies in force`,
        async () => {
          const n = await native(plane, p, auditor);
          return (fail === undefined) === (n.status === 201) ? n : undefined;
        },
        30_000,
        200,
      );
      compared++;
      const where = `${p.metadata.namespace}/${p.metadata.name}`;
      if (fail !== undefined) {
        assert.equal(got.status, 422, where);
        assert.ok(
          got.message.endsWith(
            `ValidatingAdmissionPolicy '${fail.policy}' with binding '${fail.policy}' denied request: ${fail.message}`,
          ),
          `${where}: the API server's denial is the first fail's (${got.message})`,
        );
        continue;
      }
      assert.deepEqual(
        got.warnings.filter((w) => w.startsWith("Validation failed")),
        warns.map(
          (f) =>
            `Validation failed for ValidatingAdmissionPolicy '${f.policy}' with binding '${f.policy}': ${f.message}`,
        ),
        `${where}: a Warn binding's warn is the API server's warning`,
      );
      assert.equal(got.labels?.team, patched ? "unknown" : p.metadata.labels?.team, `${where}: the mutation`);
      if (patched)
        assert.deepEqual(patched.patch, [
          { op: "add", path: "/metadata/labels", value: { team: "unknown" } },
        ]);
    }
    t.diagnostic(`${release.version}: ${compared} Pods' findings compared with the API server's decisions`);

    for (const format of ["policyreport", "openreports"]) {
      const r = await audit(format);
      assert.equal(r.code, 1, r.stderr);
      const reports = manifestsOf(r.stdout).flatMap(
        (l) => (l.items as Record<string, unknown>[] | undefined) ?? [],
      );
      assert.ok(reports.length >= 2, `${format}: a namespaced and a cluster report`);
      const results = reports.flatMap((x) => (x.results as { result: string }[] | undefined) ?? []);
      assert.ok(
        ["pass", "fail", "warn"].every((k) => results.some((x) => x.result === k)),
        `${format}: passes, fails and warns among the results written`,
      );
      for (const report of reports) {
        const m = report.metadata as { name: string; namespace?: string };
        const where = await resources.of(report as never);
        assert.ok(where, `${format}: ${String(report.apiVersion)} ${String(report.kind)} is served`);
        const created = await plane.request("POST", `${where.collection}?fieldValidation=Strict`, report);
        assert.equal(
          created.status,
          201,
          `${format} ${String(report.kind)} ${m.namespace ?? ""}/${m.name}: ${JSON.stringify(created.body)}`,
        );
        assert.deepEqual(created.warnings, [], `${format}: no warnings`);
        const stored = created.body as { results?: unknown[]; summary?: unknown };
        assert.deepEqual(stored.results, report.results, `${format}: the results stored as written`);
        assert.deepEqual(stored.summary, report.summary, `${format}: the summary stored as written`);
      }
    }
  });
}
