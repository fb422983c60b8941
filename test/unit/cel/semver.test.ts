import assert from "node:assert/strict";
import { test } from "node:test";
import { celCompare, celEquals } from "../../../src/cel/runtime/equality.ts";
import { type SemverValue, semverLibrary } from "../../../src/cel/library/semver.ts";
import type { CelValue } from "../../../src/cel/runtime/values.ts";
import { errorOf, evaluate, libraryHarness } from "../../helpers/library.ts";

const { call } = libraryHarness(semverLibrary);

const semver = (s: string): SemverValue => call("semver", "string_to_semver", s) as SemverValue;
const semverN = (s: string, normalize: boolean): SemverValue =>
  call("semver", "string_bool_to_semver", s, normalize) as SemverValue;

test("semver() parses strict semantic versions", () => {
  const cases: [input: string, major: bigint, minor: bigint, patch: bigint, printed: string][] = [
    ["1.2.3", 1n, 2n, 3n, "1.2.3"],
    ["0.1.0-alpha.1", 0n, 1n, 0n, "0.1.0-alpha.1"],
    ["1.2.3-beta.1+build.1", 1n, 2n, 3n, "1.2.3-beta.1+build.1"],
    ["1.0.0+20130313144700", 1n, 0n, 0n, "1.0.0+20130313144700"],
    ["1.0.0-x-y.0.a-b", 1n, 0n, 0n, "1.0.0-x-y.0.a-b"],
    ["18446744073709551615.0.0", 18446744073709551615n, 0n, 0n, "18446744073709551615.0.0"],
  ];
  for (const [input, major, minor, patch, printed] of cases) {
    const v = semver(input);
    assert.equal(v.celType, "kubernetes.Semver");
    assert.equal(v.toString(), printed, input);
    assert.equal(v.toJSON(), printed, input);
    assert.equal(call("major", "semver_major", v), major < 2n ** 63n ? major : major - 2n ** 64n, input);
    assert.equal(call("minor", "semver_minor", v), minor, input);
    assert.equal(call("patch", "semver_patch", v), patch, input);
  }
});

const invalid: readonly [input: string, message: string][] = [
  ["", "Version string empty"],
  ["v1.0", "No Major.Minor.Patch elements found"],
  ["1", "No Major.Minor.Patch elements found"],
  ["1.1", "No Major.Minor.Patch elements found"],
  ["v1.0.0", 'Invalid character(s) found in major number "v1"'],
  [" 1.0.0", 'Invalid character(s) found in major number " 1"'],
  ["1. 0.0", 'Invalid character(s) found in minor number " 0"'],
  ["1.0.0 ", 'Invalid character(s) found in patch number "0 "'],
  ["01.01.01", 'Major number must not contain leading zeroes "01"'],
  ["1.01.1", 'Minor number must not contain leading zeroes "01"'],
  ["1.1.01", 'Patch number must not contain leading zeroes "01"'],
  ["hello", "No Major.Minor.Patch elements found"],
  [".1.1", 'strconv.ParseUint: parsing "": invalid syntax'],
  ["18446744073709551616.0.0", 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
  ["1.0.0-", "Prerelease is empty"],
  ["1.0.0-a..b", "Prerelease is empty"],
  ["1.0.0-01", 'Numeric PreRelease version must not contain leading zeroes "01"'],
  ["1.0.0-a_b", 'Invalid character(s) found in prerelease "a_b"'],
  ["1.0.0+", "Build meta data is empty"],
  ["1.0.0+a_b", 'Invalid character(s) found in build meta data "a_b"'],
];

test("semver() rejects what blang/semver rejects, with its messages", () => {
  for (const [input, message] of invalid) {
    assert.equal(
      errorOf(() => semver(input)),
      message,
      JSON.stringify(input),
    );
  }
});

test("normalization drops a leading v, leading zeros, and fills minor and patch", () => {
  const cases: [string, string][] = [
    ["v1.0.0", "1.0.0"],
    ["1.0", "1.0.0"],
    ["1", "1.0.0"],
    ["v1", "1.0.0"],
    ["01.01.01", "1.1.1"],
    ["v01.01", "1.1.0"],
    ["00.000.0", "0.0.0"],
    ["1.2.3-beta.1", "1.2.3-beta.1"],
    ["1.2.00-alpha", "1.2.0-alpha"],
  ];
  for (const [input, printed] of cases) {
    assert.equal(semverN(input, true).toString(), printed, input);
    assert.equal(call("isSemver", "is_semver_string_bool", input, true), true, input);
  }
  // Without normalization the two-argument form is the strict parse.
  assert.equal(
    errorOf(() => semverN("v1.0.0", false)),
    'Invalid character(s) found in major number "v1"',
  );
  const badNormalized: [string, string][] = [
    // Filled out to ".0.0", whose empty major number Go's ParseUint refuses.
    ["", 'strconv.ParseUint: parsing "": invalid syntax'],
    ["1.0-alpha", "short version cannot contain PreRelease/Build meta data"],
    ["1+build", "short version cannot contain PreRelease/Build meta data"],
    // A part not starting with a digit gets a "0" put in front, which shows in the message.
    [" 1.0.0", 'Invalid character(s) found in major number "0 1"'],
    ["1. 0.0", 'Invalid character(s) found in minor number "0 0"'],
    ["1.0.0 ", 'Invalid character(s) found in patch number "0 "'],
    ["vv1.0.0", 'Invalid character(s) found in major number "0v1"'],
  ];
  for (const [input, message] of badNormalized) {
    assert.equal(
      errorOf(() => semverN(input, true)),
      message,
      JSON.stringify(input),
    );
    assert.equal(call("isSemver", "is_semver_string_bool", input, true), false, input);
  }
});

test("isSemver() is true exactly when semver() succeeds", () => {
  const isSemver = (s: string) => call("isSemver", "is_semver_string", s);
  for (const s of ["1.2.3", "1.2.3-beta.1+build.1", "0.0.0"]) assert.equal(isSemver(s), true, s);
  for (const [input] of invalid) assert.equal(isSemver(input), false, input);
});

test("ordering follows semver precedence; build metadata is ignored", () => {
  const ordered = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.2.3",
    "1.10.0",
    "2.0.0",
  ];
  for (let i = 0; i < ordered.length; i++) {
    for (let j = 0; j < ordered.length; j++) {
      const a = semver(ordered[i] as string);
      const b = semver(ordered[j] as string);
      const want = Math.sign(i - j);
      const label = `${ordered[i]} vs ${ordered[j]}`;
      assert.equal(call("compareTo", "semver_compare_to", a, b), BigInt(want), label);
      assert.equal(call("isLessThan", "semver_is_less_than", a, b), want === -1, label);
      assert.equal(call("isGreaterThan", "semver_is_greater_than", a, b), want === 1, label);
      assert.equal(celCompare(a, b), want, label);
      assert.equal(celEquals(a, b), want === 0, label);
    }
  }
  assert.ok(celEquals(semver("1.0.0+a"), semver("1.0.0+b")));
  assert.ok(celEquals(semverN("v01.01", true), semver("1.1.0")));
  assert.equal(celEquals(semver("1.2.3"), semver("1.0.0")), false);
  assert.equal(celEquals(semver("1.2.3"), "1.2.3"), false);
});

test("semver expressions evaluate end to end", () => {
  const cases: [string, CelValue][] = [
    [`semver("1.2.3").major()`, 1n],
    [`semver("1.2.3").minor()`, 2n],
    [`semver("1.2.3").patch()`, 3n],
    [`semver("v01.01", true) == semver("1.1.0")`, true],
    [`semver("1.0.0").isLessThan(semver("1.2.3"))`, true],
    [`semver("1.2.3").compareTo(semver("1.0.0"))`, 1n],
    [`isSemver("1.0.0 ")`, false],
    [`isSemver("1", true)`, true],
  ];
  for (const [expr, want] of cases) {
    const r = evaluate(expr);
    assert.ok(r.ok, `${expr}: ${r.ok ? "" : r.error}`);
    assert.equal(r.value, want, expr);
  }
  const bad = evaluate(`semver("v1.0")`);
  assert.ok(!bad.ok && bad.error === "No Major.Minor.Patch elements found");
});
