/** The real executable: `node --import tsx src/adapters/cli/bin.ts`, through real pipes and exit codes. */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = "src/adapters/cli/bin.ts";
/** Starting node with tsx takes about a second here; leave room for a slow CI machine. */
const TIMEOUT_MS = 20_000;

function start(args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ["--import", "tsx", BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    timeout: TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
}

interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function finish(child: ChildProcessWithoutNullStreams): Promise<Finished> {
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

async function celgate(args: readonly string[], stdin = ""): Promise<Finished> {
  const child = start(args);
  const done = finish(child);
  child.stdin.end(stdin);
  return done;
}

test("--version", { timeout: TIMEOUT_MS }, async () => {
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  const r = await celgate(["--version"]);
  assert.equal(r.signal, null);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `celgate ${pkg.version}\n`);
});

test("expr: value and type on stdout, errors on stderr with exit codes", {
  timeout: TIMEOUT_MS * 3,
}, async () => {
  const ok = await celgate(["expr", "[1, 2].map(x, x * 10)"]);
  assert.equal(ok.code, 0);
  assert.equal(ok.stdout, "[\n  10,\n  20\n] (list)\n");

  const bad = await celgate(["expr", "nope"]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^ERROR: <input>:1:1: undeclared reference to 'nope'/);

  const usage = await celgate(["expr", "--nope", "1"]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /unknown option '--nope'/);
});

test("expr --batch: JSON lines in, JSON lines out, in order", { timeout: TIMEOUT_MS }, async () => {
  const input = [
    '{"expr": "x * 2", "vars": {"x": 21}}',
    "{oops",
    '{"expr": "1 / 0"}',
    "{\"expr\": \"'a' + 'b'\"}",
  ];
  const r = await celgate(["expr", "--batch"], `${input.join("\n")}\n`);
  assert.equal(r.code, 0);
  const lines = r.stdout
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(lines.length, 4);
  assert.deepEqual(lines[0], { value: 42, type: "int" });
  assert.equal(lines[1]?.stage, "input");
  assert.deepEqual(lines[2], { error: "division by zero", stage: "eval" });
  assert.deepEqual(lines[3], { value: "ab", type: "string" });
});

test("expr --batch answers each line before stdin closes (co-process use)", {
  timeout: TIMEOUT_MS,
}, async () => {
  const child = start(["expr", "--batch"]);
  const done = finish(child);
  const answers: string[] = [];
  let buffered = "";
  let waiting: (() => void) | undefined;
  child.stdout.on("data", (d: string) => {
    buffered += d;
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      answers.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf("\n");
    }
    waiting?.();
  });
  const nextAnswer = async (count: number): Promise<string> => {
    while (answers.length < count) await new Promise<void>((resolve) => (waiting = resolve));
    return answers[count - 1] ?? "";
  };
  child.stdin.write('{"expr": "1 + 1"}\n');
  assert.deepEqual(JSON.parse(await nextAnswer(1)), { value: 2, type: "int" });
  child.stdin.write('{"expr": "size(\'abc\')"}\n');
  assert.deepEqual(JSON.parse(await nextAnswer(2)), { value: 3, type: "int" });
  child.stdin.end();
  const r = await done;
  assert.equal(r.code, 0);
});

test("eval --include-unbound: the docs' demo policy denies 7 replicas, exit 1", {
  timeout: TIMEOUT_MS,
}, async () => {
  // The demo policy has no binding: evaluated, as if bound with [Deny], only when asked.
  const child = start([
    "eval",
    "-o",
    "json",
    "-p",
    "test/fixtures/policies/good/demo-policy.yaml",
    "-r",
    "-",
    "--include-unbound",
  ]);
  const done = finish(child);
  child.stdin.end("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 7}\n");
  const r = await done;
  assert.equal(r.code, 1, r.stderr);
  const reports = JSON.parse(r.stdout) as {
    decision: { allowed: boolean; status?: { code: number } };
    results: { outcome: string; binding: unknown }[];
  }[];
  assert.deepEqual(
    reports.map((e) => [e.decision.allowed, e.decision.status?.code]),
    [[false, 422]],
  );
  assert.deepEqual(
    reports.flatMap((e) => e.results.map((x) => [x.outcome, x.binding])),
    [["fail", null]],
  );
});
