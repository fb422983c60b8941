/**
 * What `check` refuses and what it lets through, on record against the real API server of each
 * release built (issue 34): server-side dry-run creates of small admission objects, each compared
 * with `celgate check --kubernetes-version X.Y` on the same file (compare.ts), and each server answer
 * asserted, so that a release that changes its mind fails here first.
 *
 * - spec.reinvocationPolicy is required in every MutatingAdmissionPolicy version (validation.go,
 *   validateMutatingAdmissionPolicySpec);
 * - paramRef.parameterNotFoundAction is required (validateParamRef) but defaulted to Deny in
 *   v1alpha1 (v1alpha1/defaults.go, SetDefaults_ParamRef);
 * - a structural error and the CEL errors of one policy are refused together;
 * - an ApplyConfiguration whose type names do not follow the field path is accepted at creation
 *   (the mutation fails when it runs).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { stringify } from "yaml";
import { NEWEST_RELEASE, RELEASES } from "../../src/cel/index.ts";
import { type ControlPlane, kubeReleases, startControlPlane } from "../helpers/kube-control-plane.ts";
import { createObject, type KubeManifest, Resources } from "../helpers/kube-objects.ts";
import { cli } from "../unit/cli/fake-io.ts";
import { type CheckDiagnostic, celgateVerdict, compareVerdicts, serverVerdict } from "./compare.ts";

const GROUP = "admissionregistration.k8s.io";
const RULES = {
  resourceRules: [
    { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
  ],
};
const LABEL = "Object{metadata: Object.metadata{labels: {'a': 'b'}}}";

interface Case {
  readonly manifest: KubeManifest;
  /** The server's causes' fields, in order; empty when it accepts. */
  readonly refusedAt: readonly string[];
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const v of ["v1", "v1beta1", "v1alpha1"]) {
    out.push({
      manifest: {
        apiVersion: `${GROUP}/${v}`,
        kind: "MutatingAdmissionPolicy",
        metadata: { name: `no-reinvocation-${v}` },
        spec: {
          matchConstraints: RULES,
          mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression: LABEL } }],
        },
      },
      refusedAt: ["spec.reinvocationPolicy"],
    });
    out.push({
      manifest: {
        apiVersion: `${GROUP}/${v}`,
        kind: "MutatingAdmissionPolicyBinding",
        metadata: { name: `no-not-found-action-${v}` },
        spec: { policyName: "p", paramRef: { name: "limits" } },
      },
      refusedAt: v === "v1alpha1" ? [] : ["spec.paramRef.parameterNotFoundAction"],
    });
    out.push({
      manifest: {
        apiVersion: `${GROUP}/${v}`,
        kind: "MutatingAdmissionPolicy",
        metadata: { name: `type-off-the-path-${v}` },
        spec: {
          reinvocationPolicy: "Never",
          matchConstraints: RULES,
          mutations: [
            {
              patchType: "ApplyConfiguration",
              applyConfiguration: { expression: "Object{spec: Object.specx{replicas: 3}}" },
            },
          ],
        },
      },
      refusedAt: [],
    });
  }
  out.push({
    manifest: {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: "no-not-found-action-v1" },
      spec: { policyName: "p", validationActions: ["Deny"], paramRef: { name: "limits" } },
    },
    refusedAt: ["spec.paramRef.parameterNotFoundAction"],
  });
  out.push({
    manifest: {
      apiVersion: `${GROUP}/v1`,
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "structural-and-cel" },
      spec: {
        failurePolicy: "Bogus",
        matchConstraints: RULES,
        validations: [{ expression: "objct.spec.replicas < 5" }, { expression: "'a' + 1 == 'a1'" }],
      },
    },
    refusedAt: ["spec.failurePolicy", "spec.validations[0].expression", "spec.validations[1].expression"],
  });
  return out;
}

for (const release of kubeReleases().filter((r) => r.built)) {
  const celgateRelease = RELEASES.includes(release.minor) ? release.minor : NEWEST_RELEASE;
  void describe(`check refuses what kube-apiserver ${release.version} refuses (check --kubernetes-version ${celgateRelease})`, () => {
    let plane: ControlPlane;
    let temp = "";
    before(async () => {
      temp = await mkdtemp(join(tmpdir(), "celgate-refusals-"));
      plane = await startControlPlane({ release });
    });
    after(async () => {
      await plane?.stop();
      if (temp) await rm(temp, { recursive: true, force: true });
    });

    void test("required fields, defaults by version, structural and CEL errors together", async () => {
      const all = cases();
      const file = join(temp, "objects.yaml");
      await writeFile(file, all.map((c) => stringify(c.manifest)).join("---\n"));
      const run = await cli(["check", "-o", "json", "--kubernetes-version", celgateRelease, file]);
      assert.ok(run.code === 0 || run.code === 1, run.stderr);
      const diagnostics = (JSON.parse(run.stdout) as { diagnostics: CheckDiagnostic[] }).diagnostics;
      const resources = new Resources(plane);
      const differences: string[] = [];
      for (const c of all) {
        const { kind, metadata } = c.manifest;
        const name = String(metadata?.name);
        const server = serverVerdict(await createObject(plane, resources, c.manifest, { dryRun: true }));
        assert.deepEqual(
          server.causes.map((x) => x.field),
          c.refusedAt,
          `${String(kind)}/${name}: the server's answer: ${JSON.stringify(server.causes)}`,
        );
        const own = diagnostics.filter((d) => d.object?.kind === kind && d.object?.name === name);
        for (const d of compareVerdicts("refusals", `${String(kind)}/${name}`, server, celgateVerdict(own)))
          differences.push(`${d.object} [${d.aspect}] ${d.field}: server ${d.server}; celgate ${d.celgate}`);
      }
      assert.deepEqual(differences, []);
    });
  });
}
