/** `celgate check`: load and compile policy files, report every problem, and what is not enforced. */
import type { CelExtras } from "../../../cel/index.ts";
import { compilePolicySet } from "../../../compile/policy.ts";
import { loadPolicyPaths } from "../../../sources/files.ts";
import { type CheckReport, errorCount, formatCheckJson, formatCheckText } from "../../output/diagnostics.ts";
import { HELP_OPTION, parseCommandArgs, usageError, userPath } from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME } from "../io.ts";

export const name = "check";
export const summary = "parse and compile policy files and report every problem";
export const usage = "celgate check [options] PATH...";
export const help = `Parse and compile ValidatingAdmissionPolicies, MutatingAdmissionPolicies and their bindings,
and report every problem found (not just the first), each with file:line:col and field path.

usage: ${usage}

PATH is a file or a directory (walked for .yaml, .yml and .json files, except *.test.yaml).

Options:
  -o, --output FORMAT  text (default) or json
  --cel-extras LIST    compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  -h, --help           show this help

Policies that no binding refers to are noted: they are loaded and checked, but not enforced.

Exit status: 0 no errors (warnings allowed), 1 errors found, 2 bad options.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    output: { type: "string", short: "o", default: "text" },
    "cel-extras": { type: "string" },
  },
  allowPositionals: true,
} as const;

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const output = values.output;
  if (output !== "text" && output !== "json")
    return fail(`unknown output format '${output}'; expected text or json`);
  if (positionals.length === 0) return fail("missing the policy files or directories to check");
  let extras: CelExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return fail(e.error);
    extras = e.value;
  }

  const loaded = await loadPolicyPaths(positionals.map((p) => userPath(io, p)));
  const compiled = compilePolicySet(loaded.set, { extras });
  const report: CheckReport = {
    files: loaded.files,
    policies: compiled.policies.length,
    bindings: compiled.bindings.length,
    diagnostics: [...loaded.diagnostics, ...compiled.diagnostics],
    unbound: compiled.unbound.map((p) => ({
      kind: p.kind,
      name: p.name,
      location: p.policy.source.locate("metadata.name"),
    })),
  };
  io.stdout(output === "json" ? formatCheckJson(report) : formatCheckText(report));
  return errorCount(report.diagnostics) > 0 ? EXIT_OUTCOME : EXIT_OK;
}
