/**
 * The trial's "heavy policy set" phase (issue 37 item 5): a server of its own, with the
 * Deployment's 320 MiB heap, under ordinary load while a policy set too large for its heap is
 * written beside its policies (it must be refused: one reload line with PE_SET_MEMORY, the last good
 * set serving, no decision changed, the process alive), then a large set that fits (it must load),
 * then that set removed. The heavy sets select Deployments, which no request of the trial is, so no
 * decision may change.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rootPath } from "./common.ts";
import { heavyPolicyText } from "./memory.ts";

/** What the trial's `phase` needs of a server. */
interface PhaseServer {
  readonly child: ChildProcess;
  readonly port: number;
  readonly dir: string;
  exited: Promise<number | null>;
}

type Shot = { readonly body: string; readonly expect: string | undefined };

/** bench/trial.ts's `phase`, passed in so this file needs nothing else of it. */
type Phase<R> = (
  name: string,
  server: PhaseServer,
  seconds: number,
  connections: number,
  next: (connection: number, n: number) => Shot,
  extra?: (until: number) => Promise<string>,
) => Promise<R>;

/** Validations too many for the 320 MiB heap's share of a set, and a large number that fits. */
const TOO_MANY = 12000;
const FITS = 2000;
/** The phase runs at least this long, so that its reloads happen under load. */
const MIN_SECONDS = 30;
const STEP_MS = 60_000;

interface Logged {
  stdout: string;
  stderr: string;
}

async function startHeavyServer(command: readonly string[]): Promise<PhaseServer & { readonly out: Logged }> {
  const dir = mkdtempSync(join(tmpdir(), "celgate-trial-memory-"));
  for (const f of readdirSync(rootPath("policies")))
    if (f.endsWith(".yaml") && !f.endsWith(".test.yaml")) copyFileSync(rootPath("policies", f), join(dir, f));
  const child = spawn(
    process.execPath,
    [
      "--max-old-space-size=320",
      ...command,
      "serve",
      "--policies",
      dir,
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--metrics-port",
      "0",
      "--log-level",
      "info",
      "--drain-seconds",
      "0",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const out: Logged = { stdout: "", stderr: "" };
  let partial = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    // Only reload lines are kept (review lines would grow without bound under load); a line may
    // arrive in pieces.
    const lines = `${partial}${d}`.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (line.includes('"event":"policy-reload"')) out.stdout += `${line}\n`;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    out.stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /on https:\/\/127\.0\.0\.1:(\d+)/.exec(out.stderr);
      if (m) {
        clearInterval(timer);
        resolve(Number(m[1]));
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`serve exited (${code}):\n${out.stderr}`));
    });
  });
  await new Promise((r) => setTimeout(r, 3000));
  return { child, port, dir, exited, out };
}

/** Waits (bounded) for the `n`th reload line; its result and diagnostic codes, or undefined. */
async function reloadLine(out: Logged, n: number, until: number): Promise<string | undefined> {
  while (performance.now() < until) {
    const lines = out.stdout.split("\n").filter(Boolean);
    const line = lines[n - 1];
    if (line !== undefined) {
      const r = JSON.parse(line) as { result: string; diagnostics?: { code: string }[] };
      const codes = [...new Set((r.diagnostics ?? []).map((d) => d.code))];
      return `${r.result}${codes.length > 0 ? ` (${codes.join(", ")})` : ""}`;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

/** The phase: its result as `phase` makes it, with what each reload did in its note. */
export async function heavyPolicyPhase<R>(
  command: readonly string[],
  seconds: number,
  ordinary: (n: number) => Shot,
  phase: Phase<R>,
): Promise<R> {
  const server = await startHeavyServer(command);
  try {
    return await phase(
      `heavy policy set (${TOO_MANY} validations refused, ${FITS} loaded), 50 conns`,
      server,
      Math.max(seconds, MIN_SECONDS),
      50,
      (_c, n) => ordinary(n),
      async () => {
        // Each step is waited for up to a minute: parsing and compiling thousands of validations
        // takes seconds, more on a busy machine (the load stops at the phase's end either way).
        const step = () => performance.now() + STEP_MS;
        const file = join(server.dir, "heavy.yaml");
        writeFileSync(file, heavyPolicyText(TOO_MANY, 50, "trial-heavy"));
        const refused = await reloadLine(server.out, 1, step());
        writeFileSync(file, heavyPolicyText(FITS, 50, "trial-heavy"));
        const fits = await reloadLine(server.out, 2, step());
        // A removal is held back until the files read the same twice (store.ts), then applied.
        rmSync(file);
        const held = await reloadLine(server.out, 3, step());
        const removed = await reloadLine(server.out, 4, step());
        const alive = server.child.exitCode === null ? "alive" : `exited ${server.child.exitCode}`;
        return `reloads: too large → ${refused ?? "no line"}; fits → ${fits ?? "no line"}; removed → ${held ?? "no line"}, then ${removed ?? "no line"}; server ${alive}`;
      },
    );
  } finally {
    server.child.kill("SIGKILL");
    await server.exited;
    rmSync(server.dir, { recursive: true, force: true });
  }
}
