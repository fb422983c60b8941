import assert from "node:assert/strict";
import { test } from "node:test";
import { unavailableAt } from "../../../../src/cel/check/index.ts";
import { arrivalNote, checkEnvironment } from "../../../../src/cel/index.ts";

// environment/base.go: library.SemverLib IntroducedVersion 1.33, library.IP/CIDR 1.30; a new
// expression compiles against the previous minor (DefaultCompatibilityVersion).
void test("base.go IntroducedVersion: a library is usable in new expressions one minor after it arrives", () => {
  assert.equal(
    unavailableAt("semver", "1.30"),
    "`semver` arrives in 1.33 (usable in new expressions from 1.34)",
  );
  assert.equal(
    unavailableAt("isSemver", "1.33"),
    "`isSemver` arrives in 1.33 (usable in new expressions from 1.34)",
  );
  assert.equal(unavailableAt("semver", "1.34"), undefined);
  assert.equal(unavailableAt("ip", "1.30"), "`ip` arrives in 1.30 (usable in new expressions from 1.31)");
  assert.equal(unavailableAt("cidr", "1.31"), undefined);
});

// base.go enables cel.OptionalTypes() unversioned: version 2 comes with the cel-go 1.33 vendors.
void test("optional v2 (first, last) follows the vendored cel-go: in new expressions from 1.33 itself", () => {
  assert.deepEqual(checkEnvironment("1.33"), {
    kubernetesVersion: "1.32",
    withLibraries: ["optional.v2"],
    withoutOverloads: [],
  });
  assert.deepEqual(checkEnvironment("1.32"), {
    kubernetesVersion: "1.31",
    withLibraries: [],
    withoutOverloads: [],
  });
  assert.deepEqual(checkEnvironment("1.37").withoutOverloads, ["int64_to_duration"]);
  assert.equal(arrivalNote("1.33", "optional.v2"), "arrives in 1.33");
  assert.equal(
    arrivalNote("1.33", "kubernetes.Semver"),
    "arrives in 1.33 (usable in new expressions from 1.34)",
  );
});

// ext/comprehensions.go's macros come with the library (base.go TwoVarComprehensions, 1.32);
// ext/lists.go's sortBy with lists v2+ (base.go ext.Lists(ListsVersion(3)), 1.34).
void test("a macro of a library the release lacks: when it arrives", () => {
  assert.equal(
    unavailableAt("all", "1.32"),
    "`all` with two variables arrives in 1.32 (usable in new expressions from 1.33)",
  );
  assert.equal(
    unavailableAt("transformList", "1.30"),
    "`transformList` arrives in 1.32 (usable in new expressions from 1.33)",
  );
  assert.equal(unavailableAt("all", "1.33"), undefined);
  assert.equal(
    unavailableAt("sortBy", "1.34"),
    "`sortBy` arrives in 1.34 (usable in new expressions from 1.35)",
  );
  assert.equal(unavailableAt("sortBy", "1.35"), undefined);
});

void test("a name no Kubernetes library declares, or one every release has, gets no note", () => {
  assert.equal(unavailableAt("nosuchfunction", "1.30"), undefined);
  assert.equal(unavailableAt("size", "1.30"), undefined);
  assert.equal(unavailableAt("math.greatest", "1.30"), undefined, "an extra, not a Kubernetes library");
  assert.equal(unavailableAt("jsonpatch.escapeKey", "1.30"), undefined, "MutatingAdmissionPolicy's own");
});
