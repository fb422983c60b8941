/** `celgate check`: load and compile policy files, report every problem, and what is not enforced. */
import { readdir, readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { type CelExtras, DEFAULT_RELEASE, NEWEST_RELEASE, OLDEST_RELEASE } from "../../../cel/index.ts";
import { type CompiledPolicy, type CompiledPolicySet, compilePolicySet } from "../../../compile/policy.ts";
import type { Diagnostic } from "../../../errors.ts";
import { checkStaticManifests, STATIC_EXTENSIONS, type StaticFile } from "../../../manifests/static.ts";
import type { PolicySet, RejectedBinding, ResourceObject } from "../../../policy/types.ts";
import { isCustomResourceDefinition } from "../../../kube/schemas/index.ts";
import { loadPolicyPaths, noPolicyWarnings, under } from "../../../sources/files.ts";
import {
  type CheckReport,
  errorCount,
  formatCheckJson,
  formatCheckText,
  formatDiagnostics,
  plural,
  type UnboundPolicy,
} from "../../output/diagnostics.ts";
import { withNameHints } from "../../output/hints.ts";
import {
  compileChoice,
  HELP_OPTION,
  KUBERNETES_VERSION_OPTION,
  kubernetesVersionOf,
  parseCommandArgs,
  usageError,
  userPath,
} from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME } from "../io.ts";
import { formatMatrixJson, formatMatrixText, releaseMatrix } from "../matrix.ts";

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
  --kubernetes-version X.Y check as the API server of Kubernetes X.Y would (${OLDEST_RELEASE} to ${NEWEST_RELEASE};
                           default ${DEFAULT_RELEASE}; see below)
  --matrix                 compile for every release modelled and print, for each policy, the
                           oldest and newest that accept it (a table, or -o json)
  --crd FILE|DIR           read CustomResourceDefinitions from FILE or DIR (repeatable) to type
                           object and params of the custom resources a policy matches (see below)
  --strict                 warnings fail too (exit 1), e.g. a PATH that holds no policy
  --static-manifests DIR   check DIR as the API server's manifest-based admission configuration
                           would read it (a plugin's staticManifestsDir, KEP-5793, Kubernetes 1.36+)
  -h, --help               show this help

A PATH that holds no policy or binding is a warning, so that a misspelt path in CI does not pass
silently. Policies that no binding refers to are noted: they are loaded and checked, but not
enforced. A name an expression does not know gets a hint when the policy has a likely one
(variables.<name>, object, request, ...).

--kubernetes-version X.Y checks against that release as its API server checks a policy it is
given: a new expression compiles with the CEL libraries and checks of the release before it (the
API server's compatibility version, so that a rollback can still run it), so an expression using
semver, which arrives in 1.33, is refused by 1.33 and accepted from 1.34. A policy or binding in an
API version the release does not serve is an error (MutatingAdmissionPolicy v1beta1 on 1.33), one
served only behind a feature gate or --runtime-config a warning. Without it, the default release
(${DEFAULT_RELEASE}) is used and every API version celgate reads is accepted. ${NEWEST_RELEASE} is a preview,
modelled from its pre-release (v1.38.0-beta.0), used only when named.

--matrix compiles each policy as every release from ${OLDEST_RELEASE} to ${NEWEST_RELEASE} would, and prints a row per
policy: per release ok, warn (accepted with warnings, e.g. an API version behind a feature gate)
or no (refused), then the oldest and newest releases that accept it, and why the newest release
that refuses or warns does so. Exit status 1 when a policy is accepted by no release or a file
has errors.

Expressions are type-checked as the API server checks them (cel-go's checker, the CEL environment
of the release checked for). A policy whose matchConstraints name exactly one kind with a schema is
checked again with object and oldObject typed from that schema, and params from its paramKind's
when that has one: built-in kinds (Kubernetes ${DEFAULT_RELEASE}), and custom resources whose
CustomResourceDefinition is among the PATHs or given with --crd (the served version's
openAPIV3Schema, matched by group, version and plural). What only that finds (a misspelt field,
with a did-you-mean, or a field of the wrong type) is a warning, as the API server only warns
about it (and never types custom resources or params). A CRD whose schema is not structural is an
error (PE_CRD_SCHEMA), as the API server refuses it, and its kind stays untyped.

--static-manifests DIR is the pre-flight for files the API server loads at startup, where a bad
file stops it from starting. It reads DIR's own .yaml, .yml and .json files (not subdirectories)
and reports as errors what the API server refuses: a field the type does not have or a field given
twice (strict decoding), anything but admissionregistration.k8s.io/v1 webhook configurations,
policies and bindings (alone, or in a v1 List), kinds of more than one admission plugin in one
directory, a name that does not end in .static.k8s.io or is used twice, a webhook with
clientConfig.service instead of url, paramKind, paramRef, a binding whose policy is not in DIR,
and every problem plain check reports.

Exit status: 0 no errors (warnings allowed, unless --strict), 1 errors found (or warnings with
--strict), 2 bad options.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    output: { type: "string", short: "o", default: "text" },
    "cel-extras": { type: "string" },
    ...KUBERNETES_VERSION_OPTION,
    matrix: { type: "boolean" },
    crd: { type: "string", multiple: true },
    "static-manifests": { type: "string" },
    strict: { type: "boolean" },
  },
  allowPositionals: true,
} as const;

function policyKindOf(binding: RejectedBinding["kind"]): CompiledPolicy["kind"] {
  return binding === "ValidatingAdmissionPolicyBinding"
    ? "ValidatingAdmissionPolicy"
    : "MutatingAdmissionPolicy";
}

/**
 * The policies no binding enforces, each with why. A policy counts as bound when any binding names
 * it (two policies of one name are a reported error, not unbound); one whose only binding has
 * errors is not enforced because of them, which the note says rather than "no binding".
 */
function unboundPolicies(compiled: CompiledPolicySet, set: PolicySet): UnboundPolicy[] {
  const named = new Set(set.bindings.map((b) => `${policyKindOf(b.kind)}/${b.policyName}`));
  const rejected = new Map<string, string>();
  for (const b of set.rejectedBindings ?? [])
    if (b.policyName !== undefined) rejected.set(`${policyKindOf(b.kind)}/${b.policyName}`, b.name);
  return compiled.unbound.flatMap((p): UnboundPolicy[] => {
    const key = `${p.kind}/${p.name}`;
    if (named.has(key)) return [];
    const broken = rejected.get(key);
    return [
      {
        kind: p.kind,
        name: p.name,
        location: p.policy.source.locate("metadata.name"),
        ...(broken === undefined ? {} : { note: `not enforced: its binding '${broken}' has errors` }),
      },
    ];
  });
}

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
    if (values["kubernetes-version"] !== undefined)
      return fail(
        `--static-manifests checks for Kubernetes 1.36+ (KEP-5793): give no --kubernetes-version with it`,
      );
    if (values.crd !== undefined)
      return fail("--static-manifests types nothing from schemas: give no --crd with it");
    return checkStatic(io, staticDir, output);
  }
  if (positionals.length === 0) return fail("missing the policy files or directories to check");
  let extras: CelExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return fail(e.error);
    extras = e.value;
  }
  const release = kubernetesVersionOf(values["kubernetes-version"]);
  if (!release.ok) return fail(release.error);
  if (values.matrix && release.value !== undefined)
    return fail("--matrix checks every release: give no --kubernetes-version with it");
  if (values.matrix && values.crd !== undefined)
    return fail("--matrix reports what each release accepts, without schema typing: give no --crd with it");

  const paths = positionals.map((p) => userPath(io, p));
  const loaded = await loadPolicyPaths(paths);
  if (values.matrix) return printMatrix(io, loaded.set, loaded.diagnostics, extras, output);
  const crdPaths = values.crd ?? [];
  const crds = await loadCrds(
    crdPaths.map((p) => userPath(io, p)),
    crdPaths,
  );
  // Schema-typed checking (warnings) is check's: it costs compile time the server need not spend.
  const compiled = compilePolicySet(loaded.set, {
    ...compileChoice(extras, release.value),
    schemaTyping: true,
    crds: crds.objects,
  });
  const problems = [...loaded.diagnostics, ...crds.diagnostics, ...compiled.diagnostics];
  const report: CheckReport = {
    files: loaded.files,
    policies: compiled.policies.length,
    bindings: compiled.bindings.length,
    diagnostics: [
      ...withNameHints(problems, loaded.set.policies),
      ...noPolicyWarnings(paths, loaded.set, problems, positionals),
    ],
    unbound: unboundPolicies(compiled, loaded.set),
  };
  io.stdout(output === "json" ? formatCheckJson(report) : formatCheckText(report));
  const errors = errorCount(report.diagnostics);
  const failing = values.strict ? report.diagnostics.length : errors;
  return failing > 0 ? EXIT_OUTCOME : EXIT_OK;
}

/** Problems of reading a --crd file; those of the policies or bindings it may also hold are not check's. */
const CRD_FILE_PROBLEMS: ReadonlySet<Diagnostic["code"]> = new Set([
  "PE_IO",
  "PE_YAML_SYNTAX",
  "PE_YAML_ALIASES",
  "PE_NOT_OBJECT",
]);

/**
 * `--crd FILE|DIR`: the CustomResourceDefinitions the paths hold (read as policy files are), the
 * problems reading them, and a warning for a path that holds none, as for an empty PATH.
 */
async function loadCrds(
  paths: readonly string[],
  written: readonly string[],
): Promise<{ objects: ResourceObject[]; diagnostics: Diagnostic[] }> {
  if (paths.length === 0) return { objects: [], diagnostics: [] };
  const loaded = await loadPolicyPaths(paths);
  const objects = loaded.set.resources.filter((r) => isCustomResourceDefinition(r.object));
  const diagnostics = loaded.diagnostics.filter((d) => CRD_FILE_PROBLEMS.has(d.code));
  paths.forEach((path, i) => {
    const files = [
      ...objects.map((o) => o.source.locate("metadata.name").file),
      ...diagnostics.flatMap((d) => (d.location ? [d.location.file] : [])),
    ];
    if (!files.some((f) => under(f, path)))
      diagnostics.push({
        code: "PE_NO_POLICIES",
        severity: "warning",
        message: `--crd ${written[i] ?? path} holds no CustomResourceDefinition`,
      });
  });
  return { objects, diagnostics };
}

/** `--matrix`: the file problems first (on stderr), then the table or JSON of releases per policy. */
function printMatrix(
  io: CliIO,
  set: PolicySet,
  loadProblems: readonly Diagnostic[],
  extras: CelExtras,
  output: "text" | "json",
): number {
  if (loadProblems.length > 0) io.stderr(formatDiagnostics(withNameHints(loadProblems, set.policies)));
  const rows = releaseMatrix(set, extras);
  io.stdout(output === "json" ? formatMatrixJson(rows) : formatMatrixText(rows));
  return errorCount(loadProblems) > 0 || rows.some((r) => r.oldest === null) ? EXIT_OUTCOME : EXIT_OK;
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
