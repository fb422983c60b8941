#!/usr/bin/env node
/** The `celgate` executable: runs `main` with the process's streams and sets the exit code. */
import { createInterface } from "node:readline";
import { configureRuntime, runtimeOptionsFromEnv } from "../../cel/index.ts";
import type { CliIO } from "./io.ts";
import { main } from "./main.ts";

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const io: CliIO = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  stdin: readAll,
  stdinLines: () => createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }),
  cwd: process.cwd(),
  env: process.env,
  isTTY: process.stdout.isTTY === true,
  ...(process.stdout.isTTY === true && process.stdout.columns > 0 ? { columns: process.stdout.columns } : {}),
};

// The evaluator's settings are the process's: CELGATE_CEL_CODEGEN and V8's bytecode limit (cel/configure.ts).
configureRuntime(runtimeOptionsFromEnv(process.env));

main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `celgate: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 70;
  },
);
