/**
 * The `celgate` command line: `main(argv, io)` dispatches to one command and resolves to the exit
 * code. Nothing runs at import time; `bin.ts` wires it to the process.
 */
import { readFile } from "node:fs/promises";
import { codegenModeFrom } from "../../cel/index.ts";
import * as audit from "./commands/audit.ts";
import { closestName } from "../../policy/fields.ts";
import { optionSuggestion } from "./args.ts";
import * as check from "./commands/check.ts";
import * as evalCommand from "./commands/eval.ts";
import * as expr from "./commands/expr.ts";
import * as lintCommand from "./commands/lint.ts";
import * as manifests from "./commands/manifests.ts";
import * as repl from "./commands/repl.ts";
import * as replay from "./commands/replay.ts";
import * as serve from "./commands/serve.ts";
import * as testCommand from "./commands/test.ts";
import { type CliIO, type Command, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "./io.ts";

export type { CliIO, Command } from "./io.ts";

/** Every command, in the order `celgate --help` lists them. Adding a command is one line here. */
export const COMMANDS: readonly Command[] = [
  check,
  lintCommand,
  evalCommand,
  expr,
  testCommand,
  audit,
  serve,
  replay,
  repl,
  manifests,
];

function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}

function globalHelp(): string {
  const rows: [string, string][] = [
    ...COMMANDS.map((c): [string, string] => [c.name, c.summary]),
    ["help [command]", "show help for a command"],
  ];
  const width = Math.max(...rows.map(([n]) => n.length));
  const list = rows.map(([n, s]) => `  ${n.padEnd(width)}  ${s}`).join("\n");
  return `celgate: Kubernetes ValidatingAdmissionPolicy and MutatingAdmissionPolicy in CEL,
as an admission webhook and from the command line.

usage: celgate <command> [options]

Commands:
${list}

Options:
  -h, --help     show this help
  --version      print the version

Exit status: 0 success, 1 an outcome to act on (a denial, failed check, evaluation error),
2 bad usage or input.
`;
}

/** package.json sits three levels up from both src/adapters/cli/main.ts and dist/adapters/cli/main.js. */
async function version(): Promise<string> {
  const text = await readFile(new URL("../../../package.json", import.meta.url), "utf8");
  const pkg = JSON.parse(text) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}

/**
 * Runs the command line. `argv` excludes the node binary and script (process.argv.slice(2)).
 * Resolves to the exit code; rejects only on a bug, which bin.ts reports.
 */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr(globalHelp());
    return EXIT_USAGE;
  }
  if (first === "--help" || first === "-h") {
    io.stdout(globalHelp());
    return EXIT_OK;
  }
  if (first === "--version") {
    io.stdout(`celgate ${await version()}\n`);
    return EXIT_OK;
  }
  if (first === "help") {
    const topic = rest[0];
    if (topic === undefined) {
      io.stdout(globalHelp());
      return EXIT_OK;
    }
    const cmd = findCommand(topic);
    if (!cmd) return unknownCommand(io, topic);
    io.stdout(cmd.help);
    return EXIT_OK;
  }
  if (first.startsWith("-")) {
    io.stderr(
      `celgate: unknown option '${first}'${optionSuggestion(first, ["help", "version"])}\nusage: celgate <command> [options]\nRun 'celgate --help' for the commands.\n`,
    );
    return EXIT_USAGE;
  }
  const cmd = findCommand(first);
  if (!cmd) return unknownCommand(io, first);
  const codegen = io.env.CELGATE_CEL_CODEGEN;
  if (codegen !== undefined && codegen !== "" && codegenModeFrom(codegen) === undefined)
    io.stderr(
      `celgate: warning: CELGATE_CEL_CODEGEN=${JSON.stringify(codegen)} is not one of lazy, always, never; using lazy\n`,
    );
  return cmd.run(rest, io);
}

function unknownCommand(io: CliIO, name: string): number {
  const names = COMMANDS.map((c) => c.name);
  const near = closestName(name, names);
  const hint = near === undefined ? `commands: ${names.join(", ")}` : `did you mean '${near}'?`;
  io.stderr(`celgate: unknown command '${name}'; ${hint}\nRun 'celgate --help' for usage.\n`);
  return EXIT_USAGE;
}

export { EXIT_OK, EXIT_OUTCOME, EXIT_USAGE };
