import assert from "node:assert/strict";
import { test } from "node:test";
import { LATEST_KUBERNETES } from "../../../src/cel/check/index.ts";
import {
  arrivalNote,
  compareReleases,
  DEFAULT_RELEASE,
  isPreview,
  NEWEST_RELEASE,
  newExpressionEnvironment,
  OLDEST_RELEASE,
  parseRelease,
  RELEASES,
  releaseModel,
  servesApiVersion,
} from "../../../src/cel/index.ts";
import { DEFAULTS_RELEASE } from "../../../src/kube/defaults/index.ts";
import { BUILTIN_SCHEMAS_RELEASE } from "../../../src/kube/schemas/index.ts";

void test("one default release for the whole package (1.37): checker, built-in schemas and defaults follow it; 1.38 a preview", () => {
  assert.equal(DEFAULT_RELEASE, "1.37");
  assert.equal(NEWEST_RELEASE, "1.38");
  assert.equal(LATEST_KUBERNETES, DEFAULT_RELEASE);
  assert.equal(BUILTIN_SCHEMAS_RELEASE, DEFAULT_RELEASE);
  assert.equal(DEFAULTS_RELEASE, DEFAULT_RELEASE);
  assert.deepEqual(RELEASES, ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37", "1.38"]);
  assert.equal(RELEASES[0], OLDEST_RELEASE);
  assert.equal(isPreview("1.38"), true);
  assert.equal(isPreview("1.37"), false);
  assert.equal(releaseModel().release, "1.37");
  assert.equal(releaseModel("1.38").preview, true);
});

void test("parseRelease: X.Y, v-prefixed and patch releases; others name the range", () => {
  assert.deepEqual(parseRelease("1.33"), { ok: true, value: "1.33" });
  assert.deepEqual(parseRelease("v1.31"), { ok: true, value: "1.31" });
  assert.deepEqual(parseRelease("1.34.2"), { ok: true, value: "1.34" });
  const bad = parseRelease("latest");
  assert.equal(bad.ok, false);
  assert.match(
    !bad.ok ? bad.error : "",
    /'latest' is not a Kubernetes release; expected X\.Y, one of 1\.30 to 1\.38 \(1\.38 a preview\)/,
  );
  const old = parseRelease("1.29");
  assert.match(!old.ok ? old.error : "", /Kubernetes 1\.29 is not modelled; celgate models 1\.30 to 1\.38/);
  assert.deepEqual(parseRelease("1.38"), { ok: true, value: "1.38" });
  assert.deepEqual(parseRelease("v1.38.0"), { ok: true, value: "1.38" });
  assert.equal(parseRelease("1.39").ok, false);
  assert.equal(parseRelease("1.3").ok, false, "1.3 is older than 1.30, not the same release");
  assert.ok(compareReleases("1.30", "1.4") > 0, "minors compare as numbers");
});

// environment/base.go DefaultCompatibilityVersion is the binary's MinCompatibilityVersion, one
// minor below it (component-base/compatibility/version.go binaryVersion.SubtractMinor(1); a
// constant one below in 1.31's base.go). environment.go: NewExpressions holds only options
// introduced at or before that version; StoredExpressions holds all the binary knows.
void test("base.go/environment.go: new expressions compile against the previous minor, stored ones against the release", () => {
  for (const r of RELEASES) {
    const m = releaseModel(r);
    assert.equal(m.storedExpressions, r);
    assert.equal(
      compareReleases(m.release, m.newExpressions),
      1,
      `${r} compiles new expressions one minor back`,
    );
  }
  assert.equal(newExpressionEnvironment("1.34"), "1.33");
  assert.equal(newExpressionEnvironment(), "1.36");
  // base.go: library.SemverLib IntroducedVersion 1.33.
  assert.equal(arrivalNote("1.33"), "arrives in 1.33 (usable in new expressions from 1.34)");
  assert.throws(() => releaseModel("1.29"), /not modelled/);
});

// pkg/features/kube_features.go MutatingAdmissionPolicy: alpha 1.32 and beta 1.34, both off by
// default; GA in 1.36 (KEP-3962). admissionregistration/v1alpha1 prerelease lifecycle: the
// ValidatingAdmissionPolicy v1alpha1 kinds are no longer served from 1.32; v1beta1's from 1.34.
void test("kube_features.go MutatingAdmissionPolicy gate: which policy API versions each release serves", () => {
  assert.deepEqual(servesApiVersion("1.33", "mutating", "v1beta1"), { served: "no", versions: ["v1alpha1"] });
  assert.deepEqual(servesApiVersion("1.31", "mutating", "v1alpha1"), { served: "no", versions: [] });
  const alpha = servesApiVersion("1.32", "mutating", "v1alpha1");
  assert.equal(alpha.served, "off-by-default");
  assert.match(alpha.served === "off-by-default" ? alpha.enable : "", /MutatingAdmissionPolicy feature gate/);
  assert.equal(servesApiVersion("1.34", "mutating", "v1beta1").served, "off-by-default");
  assert.equal(servesApiVersion("1.35", "mutating", "v1").served, "no");
  assert.equal(servesApiVersion("1.36", "mutating", "v1").served, "yes");
  assert.equal(releaseModel("1.35").mutatingPolicyByDefault, false);
  assert.equal(releaseModel("1.36").mutatingPolicyByDefault, true);
  assert.equal(servesApiVersion("1.30", "validating", "v1").served, "yes");
  assert.equal(servesApiVersion("1.31", "validating", "v1alpha1").served, "off-by-default");
  assert.equal(servesApiVersion("1.32", "validating", "v1alpha1").served, "no");
  // v1beta1's prerelease lifecycle removes the validating kinds in 1.34 (APILifecycleRemoved).
  assert.equal(servesApiVersion("1.33", "validating", "v1beta1").served, "off-by-default");
  assert.equal(servesApiVersion("1.34", "validating", "v1beta1").served, "no");
  // MutatingAdmissionPolicy v1beta1: introduced 1.34, removed 1.40; v1alpha1: 1.36's and 1.37's
  // lifecycle files remove it in 1.38, 1.38.0-beta.0's own no longer do (deprecated 1.35, no removal).
  assert.equal(servesApiVersion("1.37", "mutating", "v1beta1").served, "off-by-default");
  assert.equal(servesApiVersion("1.38", "mutating", "v1beta1").served, "off-by-default");
  assert.equal(servesApiVersion("1.38", "mutating", "v1alpha1").served, "off-by-default");
  assert.equal(servesApiVersion("1.38", "mutating", "v1").served, "yes");
  assert.equal(servesApiVersion("1.38", "validating", "v1beta1").served, "no");
});

// cel-go v0.29 (vendored by 1.37.2) dropped overloads.IntToDuration from common/stdlib/standard.go:
// a cel-go change, so it follows the release itself, in new and stored expressions alike.
void test("cel-go v0.29 (1.37): duration(int) is no longer declared, from 1.37 on", () => {
  assert.deepEqual(releaseModel("1.36").binaryRemovedOverloads, []);
  assert.deepEqual(releaseModel("1.37").binaryRemovedOverloads, ["int64_to_duration"]);
  assert.deepEqual(releaseModel("1.38").binaryRemovedOverloads, ["int64_to_duration"]);
});

// pkg/features/kube_features.go ManifestBasedAdmissionControlConfig: alpha (off) 1.36, beta (on)
// 1.37; pkg/apis/admissionregistration/validation/static_suffix.go and each strategy's Validate /
// WarningsOnCreate.
void test("KEP-5793: names ending in .static.k8s.io warned at 1.36, refused from 1.37", () => {
  assert.equal(releaseModel("1.35").staticNames, "allowed");
  assert.equal(releaseModel("1.36").staticNames, "warning");
  assert.equal(releaseModel("1.37").staticNames, "refused");
  assert.equal(releaseModel("1.38").staticNames, "refused");
});

void test("run-time switches: indexOf past the end (cel-go v0.22, 1.32), optional v2 (1.33), AuthzSelectors (base.go 1.31, gate on in 1.32)", () => {
  const at = (r: string) => releaseModel(r).runtime;
  assert.equal(at("1.31").indexOfPastEndIsMinusOne, false);
  assert.equal(at("1.32").indexOfPastEndIsMinusOne, true);
  assert.equal(at("1.32").optionalVersion, 1);
  assert.equal(at("1.33").optionalVersion, 2);
  assert.equal(at("1.30").authzSelectors, "none");
  // environment.go filterAndBuildOpts: a FeatureEnabled option is left out of NewExpressions
  // while its gate is off (AuthorizeWithSelectors alpha, off, in 1.31); StoredExpressions ignores the gate.
  assert.equal(at("1.31").authzSelectors, "stored");
  assert.equal(at("1.32").authzSelectors, "new");
});
