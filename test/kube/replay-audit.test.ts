/**
 * Differential, `celgate replay` on a real API server's audit log (issue 35 item 3): a
 * ValidatingAdmissionPolicy enforced natively by kube-apiserver decides a user's ConfigMap
 * creates, updates and deletes, logged at the RequestResponse level; each event, turned into the
 * AdmissionRequest the API server built for it (src/adapters/cli/replay/audit.ts, after
 * CreateV1AdmissionReview in kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go),
 * is answered by the same policy in celgate: the same allow or deny, and for a denial the API
 * server's message ends with celgate's. The update that shrinks a ConfigMap reads `oldObject`,
 * which the event does not hold: it comes from the earlier event's stored object.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Answerer } from "../../src/adapters/cli/replay/answer.ts";
import { readSources } from "../../src/adapters/cli/replay/sources.ts";
import { compilePolicySet } from "../../src/compile/policy.ts";
import { KindScopes } from "../../src/kube/scope.ts";
import { loadPolicyPaths } from "../../src/sources/files.ts";
import {
  AUDIT_BODIES_GROUP,
  type ControlPlane,
  kubeReleases,
  startControlPlane,
} from "../helpers/kube-control-plane.ts";
import { waitFor } from "../helpers/kube-objects.ts";

const POLICY = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicy",
  metadata: { name: "configmap-rules" },
  spec: {
    failurePolicy: "Fail",
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["CREATE", "UPDATE", "DELETE"],
          resources: ["configmaps"],
        },
      ],
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "replay" } },
    },
    validations: [
      {
        expression: "request.operation == 'DELETE' || !has(object.data) || !('forbidden' in object.data)",
        messageExpression: "'no forbidden key in ' + request.name",
      },
      {
        expression:
          "request.operation != 'UPDATE' || !has(oldObject.data) || (has(object.data) && object.data.size() >= oldObject.data.size())",
        message: "a ConfigMap may not lose keys",
      },
      {
        expression:
          "request.operation != 'DELETE' || !has(oldObject.metadata.labels) || !('keep' in oldObject.metadata.labels)",
        message: "kept ConfigMaps are not deleted",
      },
    ],
  },
};

const BINDING = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: { name: "configmap-rules" },
  spec: { policyName: "configmap-rules", validationActions: ["Deny"] },
};

const cm = (name: string, data: Record<string, string>, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "replay", ...(labels ? { labels } : {}) },
  data,
});

for (const release of kubeReleases().filter((r) => r.built)) {
  void describe(`replay of ${release.version}'s audit log`, () => {
    let plane: ControlPlane;
    let dir: string;
    before(async () => {
      plane = await startControlPlane({ release });
      dir = await mkdtemp(join(tmpdir(), "celgate-replay-audit-"));
    });
    after(async () => {
      await plane?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    void test("celgate answers each logged request as the API server did", async () => {
      const admin = (method: string, path: string, body?: unknown) => plane.request(method, path, body);
      assert.equal(
        (
          await admin("POST", "/api/v1/namespaces", {
            apiVersion: "v1",
            kind: "Namespace",
            metadata: { name: "replay" },
          })
        ).status,
        201,
      );
      const binding = {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "replay-audit" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "Group", name: AUDIT_BODIES_GROUP, apiGroup: "rbac.authorization.k8s.io" }],
      };
      assert.equal(
        (await admin("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)).status,
        201,
      );
      const policies = "/apis/admissionregistration.k8s.io/v1";
      assert.equal((await admin("POST", `${policies}/validatingadmissionpolicies`, POLICY)).status, 201);
      assert.equal(
        (await admin("POST", `${policies}/validatingadmissionpolicybindings`, BINDING)).status,
        201,
      );
      const base = "/api/v1/namespaces/replay/configmaps";
      // The policy is enforced once the API server's informers have it: a dry-run create that it refuses.
      await waitFor(
        "the policy enforced",
        () => admin("POST", `${base}?dryRun=All`, cm("probe", { forbidden: "x" })),
        (r) => r.status === 422,
      );

      const user = plane.issueUser("replayer", AUDIT_BODIES_GROUP);
      const as = (method: string, path: string, body?: unknown) => plane.request(method, path, body, user);
      const statuses = [
        (await as("POST", base, cm("a", { one: "1", two: "2" }))).status,
        (await as("POST", base, cm("b", { forbidden: "x" }))).status,
        (await as("PUT", `${base}/a`, cm("a", { one: "1", two: "2", three: "3" }))).status,
        (await as("PUT", `${base}/a`, cm("a", { one: "1" }))).status,
        (await as("PUT", `${base}/a`, cm("a", { one: "1", two: "2", three: "3", forbidden: "y" }))).status,
        (await as("POST", base, cm("k", { x: "1" }, { keep: "yes" }))).status,
        (await as("DELETE", `${base}/k`)).status,
        (await as("DELETE", `${base}/a`)).status,
      ];
      assert.deepEqual(statuses, [201, 422, 200, 422, 422, 201, 422, 200]);

      const events = (await plane.readAudit()).filter(
        (e) => (e.user as { username?: string } | undefined)?.username === "replayer",
      );
      const file = join(dir, "audit.log");
      await writeFile(file, `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
      const policyDir = join(dir, "policies");
      await mkdir(policyDir);
      await writeFile(
        join(policyDir, "p.json"),
        JSON.stringify({ apiVersion: "v1", kind: "List", items: [POLICY, BINDING] }),
      );
      const loaded = await loadPolicyPaths([policyDir]);
      assert.deepEqual(loaded.diagnostics, []);
      const answerer = new Answerer(compilePolicySet(loaded.set, {}));

      const byId = new Map(events.map((e) => [e.auditID as string, e]));
      const compared: string[] = [];
      const skipped: string[] = [];
      for await (const ev of readSources([file], KindScopes.BUILT_IN)) {
        if (ev.kind === "problem") assert.fail(`${ev.where}: ${ev.message}`);
        if (ev.kind === "skip") {
          skipped.push(ev.reason);
          continue;
        }
        const event = byId.get(ev.item.request.uid) as Record<string, unknown>;
        const status = event.responseStatus as { code: number; message?: string };
        const answer = answerer.answer(ev.item).decision;
        const what = `${event.verb} ${(event.objectRef as { name: string }).name} (${status.code})`;
        assert.equal(
          answer.allowed,
          status.code < 400,
          `${what}: celgate answered ${JSON.stringify(answer)}`,
        );
        if (!answer.allowed) {
          assert.equal(answer.code, status.code, what);
          assert.ok(
            status.message?.endsWith(answer.message ?? "(none)"),
            `${what}: ${status.message} / ${answer.message}`,
          );
        }
        compared.push(what);
      }
      // Every request was compared: the lists of the informers and the watch are not the user's.
      assert.deepEqual(compared, [
        "create a (201)",
        "create b (422)",
        "update a (200)",
        "update a (422)",
        "update a (422)",
        "create k (201)",
        "delete k (422)",
        "delete a (200)",
      ]);
      assert.deepEqual(skipped, []);
    });
  });
}
