/** `celgate check`: load and compile policy files, report every problem, and what is not enforced. */
import { readdir, readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import type { CelExtras } from "../../../cel/index.ts";
import { compilePolicySet } from "../../../compile/policy.ts";
import { checkStaticManifests, STATIC_EXTENSIONS, type StaticFile } from "../../../manifests/static.ts";
import { loadPolicyPaths } from "../../../sources/files.ts";
import {
  type CheckReport,
  errorCount,
  formatCheckJson,
  formatCheckText,
  formatDiagnostics,
  plural,
} from "../../output/diagnostics.ts";
import { HELP_OPTION, parseCommandArgs, usageError, userPath } from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME } from "../io.ts";

export const name = "check";
export const summary = "parse and compile policy files and report every problem";
export const usage = "celgate check [options] PATH... | celgate check --static-manifests DIR";
export const help = `Parse and compile ValidatingAdmissionPolicies, MutatingAdmissionPolicies and their bindings,
and report every problem found (not just the first), each with file:line:col and field path.

usage: ${usage}

PATH is a file or a directory (walked for .yaml, .yml and .json files, except *.test.yaml).

Options:
  -o, --output FORMAT      text (default) or json
  --cel-extras LIST        compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  --static-manifests DIR   check DIR as the API server's manifest-based admission configuration
                           would read it (a plugin's staticManifestsDir, KEP-5793, Kubernetes 1.36+)
  -h, --help               show this help

Policies that no binding refers to are noted: they are loaded and checked, but not enforced.

--static-manifests DIR is the pre-flight for files the API server loads at startup, where a bad
file stops it from starting. It reads DIR's own .yaml, .yml and .json files (not subdirectories)
and reports as errors what the API server refuses: a field the type does not have or a field given
twice (strict decoding), anything but admissionregistration.k8s.io/v1 webhook configurations,
policies and bindings (alone, or in a v1 List), kinds of more than one admission plugin in one
directory, a name that does not end in .static.k8s.io or is used twice, a webhook with
clientConfig.service instead of url, paramKind, paramRef, a binding whose policy is not in DIR,
and every problem plain check reports.

Exit status: 0 no errors (warnings allowed), 1 errors found, 2 bad options.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    output: { type: "string", short: "o", default: "text" },
    "cel-extras": { type: "string" },
    "static-manifests": { type: "string" },
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
  const staticDir = values["static-manifests"];
  if (staticDir !== undefined) {
    if (positionals.length > 0)
      return fail("--static-manifests DIR checks one directory: give no PATH with it");
    return checkStatic(io, staticDir, output);
  }
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

/** The files the API server reads from a staticManifestsDir: its own entries, by name, that are not directories. */
async function staticFiles(dir: string, shown: string): Promise<StaticFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => !e.isDirectory())
    .map((e) => e.name)
    .filter((n) => (STATIC_EXTENSIONS as readonly string[]).includes(extname(n).toLowerCase()))
    .sort();
  const files: StaticFile[] = [];
  for (const n of names) files.push({ path: join(shown, n), text: await readFile(join(dir, n), "utf8") });
  return files;
}

async function checkStatic(io: CliIO, given: string, output: "text" | "json"): Promise<number> {
  let files: StaticFile[];
  try {
    files = await staticFiles(userPath(io, given), given);
  } catch (e) {
    return usageError(io, { name, usage }, `--static-manifests ${given}: ${(e as Error).message}`);
  }
  const report = checkStaticManifests(files);
  const errors = errorCount(report.diagnostics);
  if (output === "json")
    io.stdout(
      `${JSON.stringify(
        {
          dir: given,
          plugin: report.plugin ?? null,
          files: files.map((f) => f.path),
          objects: report.objects,
          errors,
          diagnostics: report.diagnostics,
        },
        null,
        2,
      )}\n`,
    );
  else {
    const kinds = Object.entries(report.objects).map(([k, n]) => plural(n, k, `${k}s`));
    const warnings = report.diagnostics.length - errors;
    io.stdout(
      `${formatDiagnostics(report.diagnostics)}static manifests${report.plugin ? ` for the ${report.plugin} plugin` : ""}: ${[plural(files.length, "file", "files"), ...kinds].join(", ")}, ${plural(report.diagnostics.length, "problem", "problems")}${report.diagnostics.length > 0 ? ` (${plural(errors, "error", "errors")}, ${plural(warnings, "warning", "warnings")})` : ""}\n`,
    );
  }
  if (files.length === 0) io.stderr(`celgate check: warning: ${given} holds no .yaml, .yml or .json file\n`);
  return errors > 0 ? EXIT_OUTCOME : EXIT_OK;
}
