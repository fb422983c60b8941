/**
 * The real executable's output for people (issue 29 items 11-13): through pipes it is plain and
 * whole; on a real terminal (a pseudo-terminal from util-linux `script`) it is fitted to the width
 * and coloured. Also the exit codes of `check --strict`, `test --run` and `eval --write-mutated`.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = "src/adapters/cli/bin.ts";
/** Starting node with tsx takes about a second here; leave room for a slow CI machine. */
const TIMEOUT_MS = 30_000;
const ESC = "\u001b[";

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function celgate(args: readonly string[], env: Record<string, string> = {}): Promise<Finished> {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "", ...env },
    timeout: TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function quote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** Whether util-linux `script` can give the command a terminal here. */
const HAS_SCRIPT = spawnSync("script", ["-qec", "true", "/dev/null"], { timeout: 5_000 }).status === 0;

/** Runs celgate on a pseudo-terminal `columns` wide; what it wrote, with the terminal's CRLFs as LF. */
function onTerminal(args: readonly string[], columns: number): Promise<Finished> {
  const command = `stty cols ${columns} rows 50; ${quote(process.execPath)} --import tsx ${BIN} ${args.map(quote).join(" ")}`;
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "", TERM: "dumb" },
    timeout: TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: stdout.replace(/\r\n/g, "\n"), stderr: "" }));
  });
}

const POD = `apiVersion: v1
kind: Pod
metadata: { name: web }
spec:
  containers: [{ name: app, image: nginx, securityContext: { privileged: true } }]
`;

let dir = "";

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "celgate-e2e-"));
  await writeFile(join(dir, "pod.yaml"), POD);
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("eval through a pipe: whole lines, no colour, skipped policies counted", {
  timeout: TIMEOUT_MS,
}, async () => {
  const r = await celgate(["eval", "-p", "policies", "-r", join(dir, "pod.yaml")]);
  assert.equal(r.code, 1);
  assert.ok(!r.stdout.includes(ESC));
  assert.match(
    r.stdout,
    /^\(\d+ skipped results not shown: the policies do not apply; --show-skipped lists them\)$/m,
  );
  assert.match(r.stdout, /^Pod default\/web: denied: ValidatingAdmissionPolicy '.*' denied request: .*$/m);
  assert.match(r.stdout, /always-pull-images\.celgate\.dev \(reinvoked\)/);
  // The longest message stays on one line.
  assert.ok(r.stdout.split("\n").some((l) => l.length > 200));
});

test("eval on a terminal: every line fits its width", {
  timeout: TIMEOUT_MS,
  skip: !HAS_SCRIPT,
}, async () => {
  const r = await onTerminal(["eval", "-p", "policies", "-r", join(dir, "pod.yaml")], 72);
  assert.equal(r.code, 1, r.stdout);
  const lines = r.stdout.trimEnd().split("\n");
  assert.ok(lines.length > 10, r.stdout);
  assert.deepEqual(
    lines.filter((l) => l.length > 72),
    [],
  );
  assert.match(r.stdout, /^Pod default\/web:$/m, "grouped under the resource when the table is too wide");
});

test("test on a terminal is coloured, through a pipe it is not", {
  timeout: TIMEOUT_MS,
  skip: !HAS_SCRIPT,
}, async () => {
  const suite = "test/fixtures/suites/good/replicas.test.yaml";
  const tty = await onTerminal(["test", suite], 100);
  assert.equal(tty.code, 0, tty.stdout);
  assert.ok(tty.stdout.includes(`${ESC}32m✓${ESC}0m a big deployment is denied`), tty.stdout);
  const piped = await celgate(["test", suite]);
  assert.ok(!piped.stdout.includes(ESC));
  const noColor = await onTerminal(["test", "--no-color", suite], 100);
  assert.ok(!noColor.stdout.includes(ESC));
});

test("test --run picks cases; check --strict fails on a path with no policy", {
  timeout: TIMEOUT_MS * 2,
}, async () => {
  const run = await celgate([
    "test",
    "--ascii",
    "--run",
    "replica limits/production/deletes/never",
    "test/fixtures/suites/good",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^ {2}PASS production \/ deletes \/ deleting is never checked$/m);
  assert.match(run.stdout, /^1 passed, 0 failed, 18 skipped$/m);

  const empty = await celgate(["check", "policies", dir]);
  assert.equal(empty.code, 0);
  assert.match(
    empty.stdout,
    /warning: .* holds no ValidatingAdmissionPolicy, MutatingAdmissionPolicy or binding \[PE_NO_POLICIES\]/,
  );
  const strict = await celgate(["check", "--strict", "policies", dir]);
  assert.equal(strict.code, 1);
  const typo = await celgate(["check", "--stirct", "policies"]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /unknown option '--stirct'; did you mean '--strict'\?/);
});

test("eval --write-mutated writes the mutated Pod", { timeout: TIMEOUT_MS }, async () => {
  const out = join(dir, "out");
  const r = await celgate(["eval", "-p", "policies", "-r", join(dir, "pod.yaml"), "--write-mutated", out]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /wrote 1 object to /);
  assert.deepEqual(await readdir(out), ["pod_default_web.yaml"]);
});
