/** `celgate test`: run the declarative policy test suites (`*.test.yaml`). */
import { writeFile } from "node:fs/promises";
import type { CelExtras } from "../../../cel/index.ts";
import { fileSuiteReader, findSuiteFiles, type SuiteReader } from "../../../sources/suites.ts";
import { runSuiteFile, type SuiteResult } from "../../../suite/run.ts";
import { decodeSavedReview } from "../../admission/saved.ts";
import { formatDiagnostics } from "../../output/diagnostics.ts";
import { formatJunit, formatSuiteJson, formatSuiteText, summarize } from "../../output/suite.ts";
import { HELP_OPTION, parseCommandArgs, usageError, userPath } from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "../io.ts";

export const name = "test";
export const summary = "run the declarative policy tests (*.test.yaml)";
export const usage = "celgate test [PATH...] [options]";
export const help = `Run policy test suites: each case is an admission request evaluated as 'celgate eval'
evaluates it (mutating policies first, then validating policies on the mutated object), and its
expectations (allowed, message, warnings, patched, ...) are checked.

usage: ${usage}

PATH is a suite file or a directory searched recursively for *.test.yaml and *.test.yml
(hidden entries and node_modules are skipped). Without PATH, the current directory.

Options:
  -o, --output FORMAT   text (default) or json
  --junit FILE          also write a JUnit XML report to FILE
  --cel-extras LIST     compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  --ascii               PASS/FAIL instead of ✓/✗
  --no-defaults         evaluate the objects of cases that do not set 'defaulting' as written,
                        without the defaults the API server applies before admission
  -h, --help            show this help

Objects are evaluated as admission sees them: in the request's namespace and, for built-in kinds,
with the API server's defaults (Kubernetes 1.36), unless a case says 'defaulting: false'.

The text report ends with 'N passed, M failed'. A failed case shows each expectation that did not
hold (expected and actual; a line diff for patched and patch), then every policy's result with the
explain trace and the authorizer checks that were made.

Exit status: 0 every case passed, 1 a case failed, 2 a suite file (or a policy or object file it
names) has errors, or bad options. Problems are reported on stderr as file:line:col.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    output: { type: "string", short: "o", default: "text" },
    junit: { type: "string" },
    "cel-extras": { type: "string" },
    ascii: { type: "boolean" },
    "no-defaults": { type: "boolean" },
  },
  allowPositionals: true,
} as const;

const OUTPUTS = ["text", "json"] as const;
type Output = (typeof OUTPUTS)[number];

/** Runs the command with the given reader (tests substitute one). */
export async function runWith(args: readonly string[], io: CliIO, reader: SuiteReader): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const output = values.output as Output;
  if (!OUTPUTS.includes(output)) return fail(`unknown output format '${output}'; expected text or json`);
  let extras: CelExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return fail(e.error);
    extras = e.value;
  }
  const paths = positionals.length > 0 ? positionals.map((p) => userPath(io, p)) : [io.cwd];
  const found = await findSuiteFiles(paths);
  if (found.problems.length > 0) {
    io.stderr(found.problems.map((p) => `celgate test: ${p}\n`).join(""));
    return EXIT_USAGE;
  }
  if (found.files.length === 0) {
    io.stderr(
      `celgate test: no test suites (*.test.yaml, *.test.yml) found in ${positionals.length > 0 ? positionals.join(", ") : "the current directory"}\n`,
    );
    return EXIT_USAGE;
  }

  const suites: SuiteResult[] = [];
  for (const file of found.files)
    suites.push(
      await runSuiteFile(file, reader, {
        extras,
        defaults: !values["no-defaults"],
        decodeReview: decodeSavedReview,
      }),
    );

  const diagnostics = suites.flatMap((s) => s.diagnostics);
  if (diagnostics.length > 0) io.stderr(formatDiagnostics(diagnostics));
  io.stdout(
    output === "json" ? formatSuiteJson(suites) : formatSuiteText(suites, { ascii: values.ascii ?? false }),
  );
  if (values.junit !== undefined) {
    const target = userPath(io, values.junit);
    try {
      await writeFile(target, formatJunit(suites));
    } catch (e) {
      io.stderr(
        `celgate test: cannot write ${values.junit}: ${e instanceof Error ? e.message : String(e)}\n`,
      );
      return EXIT_USAGE;
    }
  }
  const sum = summarize(suites);
  if (sum.broken > 0) return EXIT_USAGE;
  return sum.failed > 0 ? EXIT_OUTCOME : EXIT_OK;
}

export function run(args: readonly string[], io: CliIO): Promise<number> {
  return runWith(args, io, fileSuiteReader);
}
