/**
 * `--kubernetes-version X.Y` on check, eval, test, serve and repl, and `check --matrix`: the release
 * reaches compilation, a policy API version the release does not serve is reported
 * (pkg/features/kube_features.go MutatingAdmissionPolicy: alpha 1.32, beta 1.34), and a bad release
 * is a usage error naming the modelled range.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ReplSession } from "../../../src/adapters/repl/session.ts";
import { startTestWebhook } from "../../helpers/webhook.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";
import { DEMO_POLICY, demoBinding, deployment, LABEL_MUTATION } from "./policies.ts";

let dir = "";
const path = (name: string) => join(dir, name);

const SUITE = `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policies.yaml]
cases:
  - name: labelled
    object: { apiVersion: apps/v1, kind: Deployment, metadata: { name: d }, spec: { replicas: 1 } }
    expect: { allowed: true }
`;

before(async () => {
  dir = await tempTree({
    "vap/policy.yaml": DEMO_POLICY,
    "vap/binding.yaml": demoBinding("Deny"),
    // MutatingAdmissionPolicy v1beta1 (and its binding), and a v1 validating policy.
    "map/policies.yaml": LABEL_MUTATION,
    "map/label.test.yaml": SUITE,
    "small.yaml": deployment(3),
  });
});
after(() => removeTree(dir));

const COMMANDS: readonly (readonly string[])[] = [
  ["check", "x.yaml"],
  ["eval", "-p", "x.yaml", "-r", "y.yaml"],
  ["test", "x.test.yaml"],
  ["serve", "--policies", "x"],
  ["repl"],
];

test("every command that compiles policies takes --kubernetes-version, and says the range and default in --help", async () => {
  for (const [name] of COMMANDS) {
    const r = await cli(["help", name ?? ""]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /--kubernetes-version X\.Y/, `${name} --help`);
    assert.match(r.stdout, /1\.30 to 1\.38;\s+default\s+1\.37/, `${name} --help`);
  }
});

test("a release that is not X.Y, or not modelled, is a usage error naming the range (exit 2), before any work", async () => {
  for (const args of COMMANDS) {
    for (const bad of ["latest", "1.29"]) {
      const r = await cli([...args, "--kubernetes-version", bad]);
      assert.equal(r.code, 2, `${args[0]} --kubernetes-version ${bad}`);
      assert.match(r.stderr, /--kubernetes-version: .*1\.30 to 1\.38/, `${args[0]}: ${r.stderr}`);
    }
  }
});

test("check: MutatingAdmissionPolicy v1beta1 on 1.33 is an error at the apiVersion, on 1.35 a warning, exit 1 then 0", async () => {
  const old = await cli(["check", "--kubernetes-version", "1.33", path("map")]);
  assert.equal(old.code, 1);
  assert.match(
    old.stdout,
    /policies\.yaml:1:13: error: apiVersion: Kubernetes 1\.33 does not serve MutatingAdmissionPolicy v1beta1 \(from 1\.34\); it serves v1alpha1 \[PE_FIELD_VALUE\]/,
  );
  assert.match(old.stdout, /does not serve MutatingAdmissionPolicyBinding v1beta1/);
  const gated = await cli(["check", "--kubernetes-version", "v1.35.1", path("map")]);
  assert.equal(gated.code, 0);
  assert.match(
    gated.stdout,
    /warning: apiVersion: Kubernetes 1\.35 serves MutatingAdmissionPolicy v1beta1 only with/,
  );
  assert.equal((await cli(["check", "--kubernetes-version", "1.35", "--strict", path("map")])).code, 1);
  // Without the flag nothing changes: every version celgate reads is accepted.
  const plain = await cli(["check", path("map")]);
  assert.equal(plain.code, 0);
  assert.doesNotMatch(plain.stdout, /apiVersion/);
});

test("eval and test compile for the release: the same policies are input errors on 1.33 (exit 2)", async () => {
  const evalOld = await cli([
    "eval",
    "-p",
    path("map/policies.yaml"),
    "-r",
    path("small.yaml"),
    "--kubernetes-version",
    "1.33",
  ]);
  assert.equal(evalOld.code, 2);
  assert.match(evalOld.stderr, /Kubernetes 1\.33 does not serve MutatingAdmissionPolicy v1beta1/);
  const evalNew = await cli(["eval", "-p", path("map/policies.yaml"), "-r", path("small.yaml")]);
  assert.equal(evalNew.code, 0);
  const testOld = await cli(["test", path("map"), "--kubernetes-version", "1.33"]);
  assert.equal(testOld.code, 2);
  assert.match(testOld.stderr, /Kubernetes 1\.33 does not serve MutatingAdmissionPolicy v1beta1/);
  assert.equal((await cli(["test", path("map"), "--kubernetes-version", "1.34"])).code, 0);
});

test("check --matrix: per policy the oldest and newest accepting release, ok/warn/no per release, and why", async () => {
  const r = await cli(["check", "--matrix", path("map"), path("vap")]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.match(
    lines[0] ?? "",
    /^POLICY\s+1\.30\s+1\.31\s+1\.32\s+1\.33\s+1\.34\s+1\.35\s+1\.36\s+1\.37\s+1\.38\s+OLDEST\s+NEWEST$/,
  );
  const row = (name: string) => (lines.find((l) => l.includes(`/${name} `)) ?? "").split(/\s+/);
  assert.deepEqual(row("add-team-label.example.com").slice(1), [
    "no",
    "no",
    "no",
    "no",
    "warn",
    "warn",
    "warn",
    "warn",
    "warn",
    "1.34",
    "1.38",
  ]);
  assert.deepEqual(row("demo-policy.example.com").slice(1), [
    "ok",
    "ok",
    "ok",
    "ok",
    "ok",
    "ok",
    "ok",
    "ok",
    "ok",
    "1.30",
    "1.38",
  ]);
  assert.match(
    r.stdout,
    /MutatingAdmissionPolicy\/add-team-label\.example\.com: at 1\.33: error: apiVersion: Kubernetes 1\.33 does not serve MutatingAdmissionPolicy v1beta1/,
  );
  assert.match(
    r.stdout,
    /3 policies over Kubernetes 1\.30 to 1\.38 \(1\.38: a preview, from a pre-release\)\n$/,
  );
});

test("check --matrix -o json: the releases, and per policy oldest, newest and each release's verdict", async () => {
  const r = await cli(["check", "--matrix", "-o", "json", path("map")]);
  assert.equal(r.code, 0);
  const doc = JSON.parse(r.stdout) as {
    releases: string[];
    policies: {
      kind: string;
      name: string;
      oldest: string | null;
      newest: string | null;
      releases: Record<string, { accepted: boolean; problems: { severity: string; message: string }[] }>;
    }[];
  };
  assert.deepEqual(doc.releases, ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37", "1.38"]);
  const m = doc.policies.find((p) => p.kind === "MutatingAdmissionPolicy");
  assert.equal(m?.oldest, "1.34");
  assert.equal(m?.newest, "1.38");
  assert.equal(m?.releases["1.33"]?.accepted, false);
  assert.deepEqual(
    m?.releases["1.34"]?.problems.map((p) => p.severity),
    ["warning", "warning"],
    "the policy's and its binding's",
  );
});

test("check --matrix: a policy no release accepts exits 1; --matrix with --kubernetes-version is a usage error", async () => {
  const broken = await tempTree({
    "p.yaml": DEMO_POLICY.replace("admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1alpha1"),
  });
  try {
    // ValidatingAdmissionPolicy v1alpha1 is served (behind --runtime-config) only until 1.31.
    const r = await cli(["check", "--matrix", broken]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /warn\s+warn\s+no\s+no\s+no\s+no\s+no\s+no\s+no\s+1\.30\s+1\.31/);
  } finally {
    await removeTree(broken);
  }
  const both = await cli(["check", "--matrix", "--kubernetes-version", "1.33", path("map")]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--matrix checks every release/);
});

test("serve: the release reaches the webhook's policy store, which reports what that release would refuse", async (t) => {
  const old = await startTestWebhook(t, { policies: [path("map")], kubernetesVersion: "1.33" });
  assert.ok(
    old.logs.some((l) =>
      /error: apiVersion: Kubernetes 1\.33 does not serve MutatingAdmissionPolicy v1beta1/.test(l),
    ),
    old.logs.join("\n"),
  );
  const current = await startTestWebhook(t, { policies: [path("map")] });
  assert.ok(!current.logs.some((l) => l.includes("apiVersion")), current.logs.join("\n"));
});

test("repl: :policy compiles for the session's release", async () => {
  const run = async (kubernetesVersion?: string) => {
    const session = new ReplSession({
      cwd: dir,
      ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
    });
    assert.equal((await session.handle(":object small.yaml")).error ?? false, false);
    return session.handle(":policy map/policies.yaml");
  };
  const old = await run("1.33");
  assert.match(old.text, /Kubernetes 1\.33 does not serve MutatingAdmissionPolicy v1beta1/);
  assert.doesNotMatch((await run()).text, /does not serve/);
});

// environment/base.go: library.SemverLib IntroducedVersion 1.33; new expressions compile against
// the previous minor (DefaultCompatibilityVersion), so the 1.33 API server still refuses them.
const SEMVER_POLICY = DEMO_POLICY.replace(
  '"object.spec.replicas <= 5"',
  "\"!has(object.metadata.labels) || !('version' in object.metadata.labels) || isSemver(object.metadata.labels.version)\"",
);

test("check --kubernetes-version 1.30 names each expression that would not compile there and why", async () => {
  const semver = await tempTree({ "p.yaml": SEMVER_POLICY });
  try {
    assert.ok(SEMVER_POLICY.includes("isSemver"), "the fixture uses semver");
    const old = await cli(["check", "--kubernetes-version", "1.30", semver]);
    assert.equal(old.code, 1);
    assert.match(
      old.stdout,
      /p\.yaml:\d+:\d+: error: spec\.validations\[0\]\.expression: undeclared reference to 'isSemver' \(in container ''\): `isSemver` arrives in 1\.33 \(usable in new expressions from 1\.34\) \[PE_CEL_UNKNOWN_FUNCTION\]/,
    );
    assert.equal((await cli(["check", "--kubernetes-version", "1.33", semver])).code, 1);
    assert.equal((await cli(["check", "--kubernetes-version", "1.34", semver])).code, 0);
    assert.equal((await cli(["check", semver])).code, 0);
    // serve --dry-run reports as check does, for the same release.
    const dry = await cli(["serve", "--policies", semver, "--dry-run", "--kubernetes-version", "1.30"]);
    assert.equal(dry.code, 1);
    assert.match(dry.stdout, /`isSemver` arrives in 1\.33/);
    const matrix = await cli(["check", "--matrix", semver]);
    assert.match(matrix.stdout, /no\s+no\s+no\s+no\s+ok\s+ok\s+ok\s+ok\s+ok\s+1\.34\s+1\.38/);
    assert.match(
      matrix.stdout,
      /at 1\.33: error: .*`isSemver` arrives in 1\.33 \(usable in new expressions from 1\.34\)/,
    );
  } finally {
    await removeTree(semver);
  }
});

// Macros come with their library, as cel-go's parser expands only its environment's macros:
// ext/comprehensions.go's (base.go TwoVarComprehensions, IntroducedVersion 1.32, so in new
// expressions from 1.33) and ext/lists.go's sortBy (base.go ext.Lists(ListsVersion(3)), 1.34).
test("check --matrix: two-variable comprehensions and sortBy are refused where their library is missing", async () => {
  const two = await tempTree({
    "p.yaml": DEMO_POLICY.replace(
      /expression: .*$/m,
      `expression: "object.metadata.labels.all(k, v, v != '') && [1].transformList(i, x, x + 1) == [2]"`,
    ),
    "s.yaml": DEMO_POLICY.replace(/expression: .*$/m, `expression: "[2, 1].sortBy(x, x) == [1, 2]"`),
  });
  try {
    const matrix = await cli(["check", "--matrix", join(two, "p.yaml")]);
    assert.match(matrix.stdout, /no\s+no\s+no\s+ok\s+ok\s+ok\s+ok\s+ok\s+ok\s+1\.33\s+1\.38/, matrix.stdout);
    assert.match(
      matrix.stdout,
      /at 1\.32: error: .*undeclared reference to 'all' \(in container ''\): `all` with two variables arrives in 1\.32 \(usable in new expressions from 1\.33\)/,
    );
    const sorted = await cli(["check", "--matrix", join(two, "s.yaml")]);
    assert.match(sorted.stdout, /no\s+no\s+no\s+no\s+no\s+ok\s+ok\s+ok\s+ok\s+1\.35\s+1\.38/, sorted.stdout);
  } finally {
    await removeTree(two);
  }
});

// k8s.io/apiserver v0.37.2 environment/base.go: library.Lists(ListsVersion(1)) (includes) is
// IntroducedVersion 1.37, so a new expression has it from 1.38 (the preview, whose compatibility
// version is 1.37); cel-go v0.29 (1.37) no longer declares duration(int).
test("1.37 and the 1.38 preview: includes arrives in 1.37 for new expressions from 1.38; duration(int) is gone from 1.37", async () => {
  const tree = await tempTree({
    "inc.yaml": DEMO_POLICY.replace(/expression: .*$/m, `expression: "['a', 'b'].includes('a')"`),
    "dur.yaml": DEMO_POLICY.replace(/expression: .*$/m, `expression: "duration(7) > duration('1s')"`),
  });
  try {
    const inc = await cli(["check", "--matrix", join(tree, "inc.yaml")]);
    assert.match(inc.stdout, /no\s+no\s+no\s+no\s+no\s+no\s+no\s+no\s+ok\s+1\.38\s+1\.38/, inc.stdout);
    assert.match(
      inc.stdout,
      /at 1\.37: error: .*`includes` arrives in 1\.37 \(usable in new expressions from 1\.38\)/,
    );
    const at136 = await cli(["check", "--kubernetes-version", "1.36", join(tree, "dur.yaml")]);
    assert.match(at136.stdout, /invalid duration argument/);
    const at137 = await cli(["check", "--kubernetes-version", "1.37", join(tree, "dur.yaml")]);
    assert.match(at137.stdout, /found no matching overload for 'duration' applied to '\(int\)'/);
  } finally {
    await removeTree(tree);
  }
});

test("repl: expressions are checked as the session's release checks a new one", async () => {
  const old = new ReplSession({ cwd: dir, kubernetesVersion: "1.33" });
  const r = await old.handle("isSemver('1.2.3')");
  assert.equal(r.error, true);
  assert.match(r.text, /undeclared reference to 'isSemver'/);
  const current = new ReplSession({ cwd: dir });
  assert.match((await current.handle("isSemver('1.2.3')")).text, /^true/);
});
