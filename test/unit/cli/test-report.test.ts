/**
 * `celgate test` for people and CI (issue 29 item 12): --run, the compact summary, colour only on a
 * terminal, and --update, which writes a new suite from what happens now.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parse as parseYaml } from "yaml";
import { cli, removeTree, tempTree } from "./fake-io.ts";
import { deployment, LABEL_MUTATION, REPLICA_LIMIT, REPLICA_LIMIT_PARAM } from "./policies.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "suites");
const fixture = (p: string) => join(FIXTURES, p);
const ESC = "\u001b[";

function lastLine(text: string): string {
  return text.trimEnd().split("\n").at(-1) ?? "";
}

function caseLines(text: string): string[] {
  return text.split("\n").filter((l) => /^ {2}(PASS|FAIL|✓|✗) /.test(l));
}

let dir = "";
const path = (name: string) => join(dir, name);

before(async () => {
  dir = await tempTree({
    "policies/replicas.yaml": REPLICA_LIMIT,
    "policies/mutation.yaml": LABEL_MUTATION,
    "params/limit.yaml": REPLICA_LIMIT_PARAM,
    "objects/small.yaml": deployment(2, undefined, "small"),
    "objects/big.yaml": deployment(7, undefined, "big"),
    "objects/two.yaml": `${deployment(1, "default", "one")}---\n${deployment(9, "default", "nine")}`,
    "existing.test.yaml": "# hand-written, keep\n",
  });
});
after(() => removeTree(dir));

test("--run: only the cases whose suite/group/case name matches, the rest counted as skipped", async () => {
  const r = await cli(["test", "--ascii", "--run", "replica limits/production", fixture("good")]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(caseLines(r.stdout), [
    "  PASS production / one replica is too few in prod",
    "  PASS production / a dry run is not checked",
    "  PASS production / deletes / deleting is never checked",
  ]);
  // Suites --run took nothing from are not listed; their cases are counted as skipped.
  assert.doesNotMatch(r.stdout, /^mutation \(/m);
  assert.equal(lastLine(r.stdout), "3 passed, 0 failed, 16 skipped");

  const deep = await cli(["test", "--ascii", "--run", "//deletes/never", fixture("good")]);
  assert.deepEqual(caseLines(deep.stdout), ["  PASS production / deletes / deleting is never checked"]);
  // Spaces are written as '_' in Go's names; either works.
  const underscores = await cli(["test", "--ascii", "--run", "replica_limits/^a_big", fixture("good")]);
  assert.deepEqual(caseLines(underscores.stdout), ["  PASS a big deployment is denied"]);

  const none = await cli(["test", "--run", "no such case", fixture("good")]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /no case matches --run "no such case"/);
  const bad = await cli(["test", "--run", "a/(b", fixture("good")]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /invalid regular expression for element 1 of --run/);
});

test("the summary: failed cases again in short, then passed, failed, errors and skipped counts", async () => {
  const r = await cli(["test", "--ascii", fixture("failing")]);
  assert.equal(r.code, 1);
  const tail = r.stdout.trimEnd().split("\n").slice(-8);
  assert.deepEqual(
    tail.map((l) => l.replace(/ {2}\S+failing\.test\.yaml:\d+:\d+$/, "  <file:line:col>")),
    [
      "6 cases failed:",
      "  FAIL wrong expectations / wrong verdict  <file:line:col>",
      "  FAIL wrong expectations / wrong status  <file:line:col>",
      "  FAIL wrong expectations / wrong annotations and lists  <file:line:col>",
      "  FAIL wrong expectations / wrong mutation  <file:line:col>",
      "  FAIL wrong expectations / wrong patched object  <file:line:col>",
      "  FAIL wrong expectations / wrong patch  <file:line:col>",
      "1 passed, 6 failed",
    ],
  );
});

test("colour only on a terminal, and never with NO_COLOR or --no-color", async () => {
  const tty = await cli(["test", fixture("failing")], { isTTY: true });
  assert.ok(tty.stdout.includes(`${ESC}32m✓${ESC}0m passes`), "a green mark");
  assert.ok(tty.stdout.includes(`${ESC}31m✗${ESC}0m wrong verdict`), "a red mark");
  assert.ok(tty.stdout.includes(`${ESC}31m6 failed${ESC}0m`));
  for (const [what, options, args] of [
    ["piped", {}, []],
    ["NO_COLOR", { isTTY: true, env: { NO_COLOR: "1" } }, []],
    ["--no-color", { isTTY: true }, ["--no-color"]],
  ] as const) {
    const r = await cli(["test", ...args, fixture("failing")], options);
    assert.equal(r.code, 1, what);
    assert.ok(!r.stdout.includes(ESC), `${what}: no escape codes`);
  }
  // An empty NO_COLOR does not count (no-color.org).
  const empty = await cli(["test", fixture("failing")], { isTTY: true, env: { NO_COLOR: "" } });
  assert.ok(empty.stdout.includes(ESC));
  const json = await cli(["test", "-o", "json", fixture("failing")], { isTTY: true });
  assert.ok(!json.stdout.includes(ESC), "JSON is never coloured");
});

test("--update writes a new suite whose expectations are what happens now, and it passes", async () => {
  const suite = path("replicas.test.yaml");
  const r = await cli([
    "test",
    "--update",
    suite,
    "-p",
    path("policies"),
    "--params",
    path("params"),
    "-r",
    path("objects"),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `wrote ${suite}: 4 cases (2 allowed, 2 denied)\n`);
  const written = parseYaml(await readFile(suite, "utf8")) as {
    apiVersion: string;
    kind: string;
    metadata: { name: string };
    policies: string[];
    resources: string[];
    cases: { name: string; objectFile?: string; object?: unknown; expect: Record<string, unknown> }[];
  };
  assert.equal(written.apiVersion, "celgate.dev/v1alpha1");
  assert.equal(written.kind, "PolicyTest");
  assert.equal(written.metadata.name, "replicas");
  assert.deepEqual(written.policies, ["policies"]);
  assert.deepEqual(written.resources, ["params"]);
  assert.deepEqual(
    written.cases.map((c) => [c.name, c.objectFile ?? "(inline)"]),
    [
      ["Deployment big", "objects/big.yaml"],
      ["Deployment small", "objects/small.yaml"],
      ["Deployment one (namespace default)", "(inline)"],
      ["Deployment nine (namespace default)", "(inline)"],
    ],
  );
  const [big, small] = written.cases;
  assert.deepEqual(big?.expect, {
    allowed: false,
    code: 422,
    reason: "Invalid",
    message:
      "ValidatingAdmissionPolicy 'replicalimit.example.com' with binding 'replicalimit-binding' denied request: replicas must be at most 3",
    patch: [{ op: "add", path: "/metadata/labels", value: { team: "platform" } }],
  });
  assert.equal(small?.expect.allowed, true);
  // The suite runs as written, every case passing.
  const run = await cli(["test", "--ascii", suite]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.equal(lastLine(run.stdout), "4 passed, 0 failed");
});

test("--update never overwrites an existing suite without --force", async () => {
  const args = [
    "test",
    "--update",
    path("existing.test.yaml"),
    "-p",
    path("policies"),
    "--params",
    path("params"),
  ];
  const r = await cli([...args, "-r", path("objects/small.yaml")]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /existing\.test\.yaml exists; --force overwrites it/);
  assert.equal(await readFile(path("existing.test.yaml"), "utf8"), "# hand-written, keep\n");
  const forced = await cli([...args, "-r", path("objects/small.yaml"), "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(await readFile(path("existing.test.yaml"), "utf8"), /name: Deployment small/);
  await writeFile(path("existing.test.yaml"), "# hand-written, keep\n");
});

test("--update: bad requests are usage errors and write nothing", async () => {
  const cases: [string[], RegExp][] = [
    [["--update", path("x.test.yaml"), "-r", path("objects")], /--update needs -p\/--policy/],
    [["--update", path("x.test.yaml"), "-p", path("policies")], /--update needs -r\/--resource/],
    [
      ["--update", path("x.yaml"), "-p", path("policies"), "-r", path("objects")],
      /a suite file's name ends in \.test\.yaml or \.test\.yml/,
    ],
    // A policy path that is not there: the suite could not run, so it is not written.
    [
      ["--update", path("x.test.yaml"), "-p", path("nowhere"), "-r", path("objects")],
      /the suite cannot run:\n.*policy path .* not found/,
    ],
    [["-p", path("policies"), fixture("good")], /--policy is for --update/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(["test", ...argv]);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message, argv.join(" "));
  }
  const none = await readFile(path("x.test.yaml"), "utf8").catch(() => undefined);
  assert.equal(none, undefined);
});
