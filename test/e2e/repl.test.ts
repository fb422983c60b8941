/**
 * `celgate repl` as a person meets it: through a pipe (a script), and on a pseudo-terminal driven
 * with keystrokes (tab completion, multi-line input, history across sessions). The terminal is
 * util-linux `script`, which runs the command on a pty and relays our stdin to it.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = "src/adapters/cli/bin.ts";
/** Starting node with tsx takes about a second here; leave room for a slow CI machine. */
const TIMEOUT_MS = 20_000;

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: prod}
spec:
  containers:
    - {name: app, image: "registry.io/app:1.0"}
    - {name: sidecar, image: "evil/proxy:latest", securityContext: {privileged: true}}
`;

let dir = "";
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "celgate-repl-"));
  await writeFile(join(dir, "pod.yaml"), POD);
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function collect(
  child: ChildProcessWithoutNullStreams,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
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
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("piped: each result on stdout, no prompt, errors on stderr and exit 1", {
  timeout: TIMEOUT_MS,
}, async () => {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "repl", "--object", join(dir, "pod.yaml")], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", CELGATE_HISTORY: "" },
    timeout: TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  const done = collect(child);
  child.stdin.end(
    [
      "object.spec.containers.map(c, c.name)",
      "object.spec.containers.all(c,",
      "  !has(c.securityContext) || c.securityContext.privileged != true)",
      ":explain",
      "object.spec.nope",
      "",
    ].join("\n"),
  );
  const r = await done;
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout.replace(/\(cost \d+\)/g, "(cost N)"),
    [
      '[\n  "app",\n  "sidecar"\n] (list)',
      "false (bool)",
      "object.spec.containers.all(c, !has(c.securityContext) || c.securityContext.privileged != true) → false (cost N)",
      '  because containers[1] (name: "sidecar"): c.securityContext.privileged != true is false: c.securityContext.privileged = true',
      "",
    ].join("\n"),
  );
  assert.equal(r.stderr, "ERROR: <input>:1:12: no such key: nope\n | object.spec.nope\n | ...........^\n");
});

const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

/** What a person sees: the terminal's output without cursor movement codes and carriage returns. */
function screen(raw: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are what we strip
  return raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");
}

/** A REPL on a pseudo-terminal: type keys, wait for what appears. */
class Terminal {
  private raw = "";
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly closed: Promise<number | null>;
  private waiters: (() => void)[] = [];

  constructor(args: readonly string[], env: Record<string, string>) {
    const command = [process.execPath, "--import", "tsx", BIN, ...args].map((a) => `'${a}'`).join(" ");
    this.child = spawn("script", ["-qfc", command, "/dev/null"], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1", TERM: "xterm", ...env },
      timeout: TIMEOUT_MS,
      killSignal: "SIGKILL",
    });
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.raw += d;
      for (const w of this.waiters) w();
    });
    this.closed = new Promise((resolve, reject) => {
      this.child.on("error", reject);
      this.child.on("close", (code) => resolve(code));
    });
  }

  get text(): string {
    return screen(this.raw);
  }

  /** Resolves once the screen, after position `from`, matches; rejects after a few seconds. */
  waitFor(pattern: RegExp, from = 0): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const seen = this.text.slice(from);
        if (pattern.test(seen)) {
          this.waiters = this.waiters.filter((w) => w !== check);
          clearTimeout(timer);
          resolve(seen);
        }
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`timed out waiting for ${pattern}; the screen shows:\n${this.text}`));
      }, 8_000);
      this.waiters.push(check);
      check();
    });
  }

  /** Types keys, then waits for the pattern in what appears from the current line on. */
  async type(keys: string, expect: RegExp): Promise<string> {
    const from = this.text.lastIndexOf("\n") + 1;
    this.child.stdin.write(keys);
    return this.waitFor(expect, from);
  }

  async exit(keys: string): Promise<number | null> {
    this.child.stdin.write(keys);
    const code = await this.closed;
    this.child.stdin.end();
    return code;
  }
}

test("terminal: completion, multi-line input, and history kept for the next session", {
  skip: hasScript ? false : "util-linux script is not installed",
  timeout: 2 * TIMEOUT_MS,
}, async () => {
  const history = join(dir, "history");
  const env = { CELGATE_HISTORY: history };
  const first = new Terminal(["repl", "--object", join(dir, "pod.yaml")], env);
  await first.waitFor(/:help lists the commands, :quit leaves\.\ncel> $/);

  // obj<TAB> completes the variable, then the loaded object's fields complete too.
  await first.type("obj\t", /cel> object$/);
  await first.type(".spec.con\t", /cel> object\.spec\.containers$/);
  const shown = await first.type(".size()\r", /\n2 \(int\)\ncel> $/);
  assert.equal(shown, "cel> object.spec.containers.size()\n2 (int)\ncel> ");

  // Tab on a command name.
  await first.type(":va\t", /cel> :vars$/);
  await first.type("\r", /object +Pod prod\/web[^\n]*\n[\s\S]*cel> $/);

  // An open bracket continues on a continuation line ("..." up to Node 22, "|" from Node 24, node:repl's
  // own prompt); the result comes once it is closed.
  await first.type("[1, 2,\r", /\n(\.\.\.|\|) $/);
  await first.type("3].map(x, x * 2)\r", /\[\n {2}2,\n {2}4,\n {2}6\n\] \(list\)\ncel> $/);

  // Errors point at the expression with a caret.
  await first.type("1 + 'a'\r", /\| 1 \+ 'a'\n \| \.\.\^\ncel> $/);
  assert.equal(await first.exit(":quit\r"), 0);

  const saved = (await readFile(history, "utf8")).split("\n");
  assert.deepEqual(saved.slice(0, 3), [":quit", "1 + 'a'", "[1, 2, 3].map(x, x * 2)"]);

  // A second session sees the first one's lines with the up arrow, the multi-line one whole.
  const second = new Terminal(["repl"], env);
  await second.waitFor(/cel> $/);
  await second.type("\x1b[A", /cel> :quit$/);
  await second.type("\x1b[A", /cel> 1 \+ 'a'$/);
  await second.type("\x1b[A", /cel> \[1, 2, 3\]\.map\(x, x \* 2\)$/);
  await second.type("\r", /\(list\)\ncel> $/);
  assert.equal(await second.exit("\x04"), 0);
});
