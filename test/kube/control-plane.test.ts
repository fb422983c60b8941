/**
 * The test control plane itself (test/helpers/kube-control-plane.ts), per release built: it runs
 * the version it claims, answers only authenticated and authorized users (RBAC), serves the
 * admission-policy kinds in every API version the fixtures use, writes audit events, and stops
 * without leaving a process or its temp dir behind.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import {
  AUDIT_BODIES_GROUP,
  type ControlPlane,
  kubeReleases,
  startControlPlane,
} from "../helpers/kube-control-plane.ts";

for (const release of kubeReleases().filter((r) => r.built)) {
  void describe(`the control plane of ${release.version}`, () => {
    let plane: ControlPlane;
    before(async () => {
      plane = await startControlPlane({ release });
    });
    after(async () => {
      await plane?.stop();
    });

    void test("reports the version it was built as", async () => {
      const r = await plane.request("GET", "/version");
      assert.equal(r.status, 200);
      assert.equal((r.body as { gitVersion: string }).gitVersion, release.version);
    });

    void test("serves the admission policy kinds in v1, v1beta1 and v1alpha1 (MutatingAdmissionPolicy GA from 1.36)", async () => {
      for (const version of ["v1", "v1beta1", "v1alpha1"]) {
        const r = await plane.request("GET", `/apis/admissionregistration.k8s.io/${version}`);
        assert.equal(r.status, 200, `admissionregistration.k8s.io/${version} is served`);
        const names = (r.body as { resources: { name: string }[] }).resources.map((x) => x.name);
        assert.ok(names.includes("mutatingadmissionpolicies"), `${version} serves mutatingadmissionpolicies`);
        assert.ok(names.includes("mutatingadmissionpolicybindings"), `${version} serves their bindings`);
      }
      // ValidatingAdmissionPolicy v1alpha1 is no longer served from 1.32 (kubernetes#129207).
      const alpha = await plane.request("GET", "/apis/admissionregistration.k8s.io/v1alpha1");
      const alphaNames = (alpha.body as { resources: { name: string }[] }).resources.map((x) => x.name);
      assert.ok(!alphaNames.includes("validatingadmissionpolicies"));
    });

    void test("authorizes by RBAC: a user without a binding is refused, the admin is not", async () => {
      const nobody = plane.issueUser("nobody");
      const refused = await plane.request("GET", "/api/v1/namespaces/default/configmaps", undefined, nobody);
      assert.equal(refused.status, 403);
      assert.match(JSON.stringify(refused.body), /User \\"nobody\\" cannot list resource \\"configmaps\\"/);
      const admin = await plane.request("GET", "/api/v1/namespaces/default/configmaps");
      assert.equal(admin.status, 200);
    });

    void test("writes audit events, with bodies for the audit-bodies group", async () => {
      const watcher = plane.issueUser("auditor", AUDIT_BODIES_GROUP);
      const r = await plane.request("GET", "/api/v1/namespaces", undefined, watcher);
      assert.equal(r.status, 403);
      const events = await plane.readAudit();
      const mine = events.filter(
        (e) => (e.user as { username?: string } | undefined)?.username === "auditor",
      );
      assert.ok(mine.length > 0, "the auditor's request is in the audit log");
      assert.ok(
        mine.every((e) => e.level === "RequestResponse"),
        "logged at RequestResponse",
      );
    });
  });

  void test(`the control plane of ${release.version} stops cleanly: processes gone, temp dir removed`, async () => {
    const plane = await startControlPlane({ release, controllerManager: true });
    const { dir, pids } = plane;
    assert.ok(existsSync(dir));
    assert.equal(pids.length, 3);
    await plane.stop();
    for (const pid of pids)
      assert.throws(() => process.kill(pid, 0), { code: "ESRCH" }, `process ${pid} is gone`);
    assert.ok(!existsSync(dir), "the temp dir is removed");
    await assert.rejects(plane.request("GET", "/readyz"), "nothing answers after stop");
  });
}
