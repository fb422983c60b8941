/** A fake CliIO that records what a command writes, and temp-dir helpers for CLI tests. */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CliIO } from "../../../src/adapters/cli/io.ts";
import { main } from "../../../src/adapters/cli/main.ts";

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface FakeOptions {
  readonly stdin?: string;
  /** Feed stdin through `stdinLines` instead of `stdin()`. */
  readonly streamLines?: boolean;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal (default false), and its width. */
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export function fakeIO(options: FakeOptions = {}): { io: CliIO; out: { stdout: string; stderr: string } } {
  const out = { stdout: "", stderr: "" };
  const text = options.stdin ?? "";
  const io: CliIO = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => text,
    ...(options.streamLines
      ? {
          stdinLines: async function* () {
            yield* text.split("\n").filter((_, i, all) => i < all.length - 1 || all[i] !== "");
          },
        }
      : {}),
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? {},
    isTTY: options.isTTY ?? false,
    ...(options.columns !== undefined ? { columns: options.columns } : {}),
  };
  return { io, out };
}

export async function cli(argv: readonly string[], options: FakeOptions = {}): Promise<CliRun> {
  const { io, out } = fakeIO(options);
  const code = await main(argv, io);
  return { code, ...out };
}

/** Writes files (relative path → content) into a fresh temp directory. */
export async function tempTree(files: Readonly<Record<string, string>>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "celgate-cli-"));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

export async function removeTree(dir: string): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}
