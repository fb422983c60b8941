/** `celgate test`: run the declarative policy test suites (`*.test.yaml`). */
import { writeFile } from "node:fs/promises";
import { type CelExtras, DEFAULT_RELEASE, NEWEST_RELEASE, OLDEST_RELEASE } from "../../../cel/index.ts";
import { fileSuiteReader, findSuiteFiles, type SuiteReader } from "../../../sources/suites.ts";
import { coverageReport } from "../../../suite/coverage.ts";
import { type LoadedSuite, loadSuiteFile, runLoadedSuite } from "../../../suite/run.ts";
import { type CaseSelector, caseSelector } from "../../../suite/select.ts";
import { decodeSavedReview } from "../../admission/saved.ts";
import { ANSI, PLAIN } from "../../output/colour.ts";
import { coverageJson, formatCoverageText, formatLcov, formatPercent } from "../../output/coverage.ts";
import { formatDiagnostics, plural } from "../../output/diagnostics.ts";
import { withNameHints } from "../../output/hints.ts";
import { formatJunit, formatSuiteJson, formatSuiteText, summarize } from "../../output/suite.ts";
import {
  HELP_OPTION,
  KUBERNETES_VERSION_OPTION,
  kubernetesVersionOf,
  parseCommandArgs,
  usageError,
  userPath,
} from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "../io.ts";
import { scaffoldSuite } from "../scaffold.ts";
import { useColour } from "../terminal.ts";

export const name = "test";
export const summary = "run the declarative policy tests (*.test.yaml)";
export const usage = "celgate test [PATH...] [options]";
export const help = `Run policy test suites: each case is an admission request evaluated as 'celgate eval'
evaluates it (mutating policies first, then validating policies on the mutated object), and its
expectations (allowed, message, warnings, patched, ...) are checked. Only the policies a binding
names are evaluated, as the API server does: a suite that tests a policy shipped without a binding
lists a binding file (kept in fixtures/, which policy loading skips) under its policies.

usage: ${usage}
       celgate test --update SUITE -p POLICY_PATH... -r OBJECT_PATH... [--params PATH...] [--force]

PATH is a suite file or a directory searched recursively for *.test.yaml and *.test.yml
(hidden entries and node_modules are skipped). Without PATH, the current directory.

Options:
  -o, --output FORMAT   text (default) or json
  --run PATTERN         run only the cases whose name matches, as 'go test -run' does: a case is
                        named suite/group/.../case, PATTERN is split at '/' and each part is a
                        regular expression (RE2) for that level; spaces match as '_'
  --junit FILE          also write a JUnit XML report to FILE
  --coverage            also report what the cases exercised of every expression of every
                        policy the suites load: the CEL nodes evaluated and the outcomes of each
                        branch (see "Coverage" below)
  --coverage-lcov FILE  also write the coverage as an lcov tracefile (implies --coverage)
  --min-coverage N      fail (exit 1) when the total coverage is below N percent (0 to 100;
                        implies --coverage)
  --cel-extras LIST     compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  --kubernetes-version X.Y
                        compile and run as Kubernetes X.Y would (${OLDEST_RELEASE} to ${NEWEST_RELEASE}; default
                        ${DEFAULT_RELEASE}); see 'celgate help check'
  --ascii               PASS/FAIL instead of ✓/✗
  --no-color            no colour (colour is used only on a terminal, and never with NO_COLOR set)
  --no-defaults         evaluate the objects of cases that do not set 'defaulting' as written,
                        without the defaults the API server applies before admission
  -h, --help            show this help

Writing a new suite from what happens now:
  --update SUITE        write SUITE (a new *.test.yaml) with a case per object given with -r,
                        each expecting what the policies decide now (allowed, code, reason,
                        message, warnings, audit annotations, the patch); it is run before it is
                        kept, and an existing file is left alone unless --force
  -p, --policy PATH     the policies the suite tests (repeatable)
  -r, --resource PATH   object files or directories, YAML or JSON, one case per object
                        (repeatable; '-' reads standard input; the objects are written inline)
  --params PATH         parameter objects and Namespaces: the suite's resources (repeatable)
  --force               overwrite SUITE if it exists

Objects are evaluated as admission sees them: in the request's namespace and, for built-in kinds,
with the API server's defaults (Kubernetes ${DEFAULT_RELEASE}), unless a case says 'defaulting: false'.

Every suite is read and loaded, with every file it names, before any case runs: when any has a
problem, all the problems of all suites are reported (on stderr, as file:line:col) and no case is
run. The text report has a line per case; a failed case shows each expectation that did not hold
(expected and actual; a line diff for patched and patch), then every policy's result with the
explain trace and the authorizer checks that were made. It ends with the failed cases again and
'N passed, M failed' (then ', E errors' for suite files with errors and ', S skipped' for cases
--run left out, when there are any). A JUnit failure's message holds every expectation that did
not hold, in full; its body adds the decision.

Coverage: every node of an expression (matchConditions, variables, validations,
messageExpressions, auditAnnotations, mutations) counts, constants and the parts a macro adds
aside, as does each outcome of each branch: '&&' and '||' true and false, a '?:' condition true
and false, a comprehension's range empty and not empty, 'all'/'exists'/'exists_one' true and
false, an optional ('a.?b', 'm[?k]', optMap) present and absent, a matchCondition true and false,
a validation passing and failing. The report lists what was not covered at file:line:col with a
caret (only the top of an unevaluated part, and the outcomes of branches that ran), then a line
per policy and the total: covered nodes and outcomes in percent of all. With -o json it is the
report's 'coverage'. Counting runs the policies' closures one by one instead of the generated
code serving runs; values, errors and costs are the same.

Exit status: 0 every case passed, 1 a case failed or the coverage is below --min-coverage, 2 a
suite file (or a policy or object file it names) has errors, --run matches no case, or bad options.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    output: { type: "string", short: "o", default: "text" },
    run: { type: "string" },
    junit: { type: "string" },
    coverage: { type: "boolean" },
    "coverage-lcov": { type: "string" },
    "min-coverage": { type: "string" },
    "cel-extras": { type: "string" },
    ...KUBERNETES_VERSION_OPTION,
    ascii: { type: "boolean" },
    "no-color": { type: "boolean" },
    "no-defaults": { type: "boolean" },
    update: { type: "string" },
    policy: { type: "string", short: "p", multiple: true },
    resource: { type: "string", short: "r", multiple: true },
    params: { type: "string", multiple: true },
    force: { type: "boolean" },
  },
  allowPositionals: true,
} as const;

const OUTPUTS = ["text", "json"] as const;
type Output = (typeof OUTPUTS)[number];
type Values = Exclude<ReturnType<typeof parseCommandArgs<typeof OPTIONS>>, number>["values"];

/** `--update`: write a new suite from the policies and objects given. */
async function update(
  values: Values,
  positionals: readonly string[],
  extras: CelExtras,
  kubernetesVersion: string | undefined,
  io: CliIO,
): Promise<number> {
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const target = values.update as string;
  if (positionals.length > 0)
    return fail(`--update writes one suite; unexpected argument '${positionals[0]}'`);
  const policies = values.policy ?? [];
  const objects = values.resource ?? [];
  if (policies.length === 0) return fail("--update needs -p/--policy: the policies the suite tests");
  if (objects.length === 0) return fail("--update needs -r/--resource: the objects to make cases of");
  const written = await scaffoldSuite(
    {
      target: userPath(io, target),
      written: target,
      policies: policies.map((p) => userPath(io, p)),
      objects: objects.map((r) => (r === "-" ? r : userPath(io, r))),
      params: (values.params ?? []).map((p) => userPath(io, p)),
      force: values.force ?? false,
      extras,
      kubernetesVersion,
      defaults: !values["no-defaults"],
    },
    io,
  );
  if (!written.ok) return fail(written.error);
  const cases = written.value.cases;
  const denied = cases.filter((c) => !c.actual.allowed).length;
  io.stdout(
    `wrote ${target}: ${plural(cases.length, "case", "cases")} (${cases.length - denied} allowed, ${denied} denied)\n`,
  );
  return EXIT_OK;
}

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
  const release = kubernetesVersionOf(values["kubernetes-version"]);
  if (!release.ok) return fail(release.error);
  const minCoverage = values["min-coverage"] === undefined ? undefined : Number(values["min-coverage"]);
  if (
    minCoverage !== undefined &&
    !(/^\d+(\.\d+)?$/.test(values["min-coverage"] ?? "") && minCoverage <= 100)
  )
    return fail(`--min-coverage expects a percentage from 0 to 100, got '${values["min-coverage"]}'`);
  const coverage =
    values.coverage === true || values["coverage-lcov"] !== undefined || minCoverage !== undefined;
  if (coverage && values.update !== undefined) return fail("--coverage is not for --update");
  if (values.update !== undefined) return update(values, positionals, extras, release.value, io);
  for (const only of ["policy", "resource", "params", "force"] as const)
    if (values[only] !== undefined) return fail(`--${only} is for --update`);
  let select: CaseSelector | undefined;
  if (values.run !== undefined) {
    const s = caseSelector(values.run);
    if (!s.ok) return fail(s.error);
    select = s.value;
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

  // Every suite is loaded (and every problem found) before any case runs, as check reports all.
  const loaded: LoadedSuite[] = [];
  for (const file of found.files)
    loaded.push(
      await loadSuiteFile(file, reader, {
        extras,
        defaults: !values["no-defaults"],
        decodeReview: decodeSavedReview,
        ...(coverage ? { coverage: true } : {}),
        ...(release.value !== undefined ? { kubernetesVersion: release.value } : {}),
      }),
    );
  const diagnostics = loaded.flatMap((s) => s.diagnostics);
  // With the hints check and eval add (a suite that does not compile keeps no parsed policies, so
  // those about a policy's own variables are left out).
  if (diagnostics.length > 0) io.stderr(formatDiagnostics(withNameHints(diagnostics, [])));
  const broken = loaded.filter((s) => s.broken);
  const suites = (broken.length > 0 ? broken : loaded).map((s) => runLoadedSuite(s, select));
  const sum = summarize(suites);
  if (broken.length === 0 && values.run !== undefined && sum.passed + sum.failed === 0) {
    io.stderr(`celgate test: no case matches --run ${JSON.stringify(values.run)}\n`);
    return EXIT_USAGE;
  }
  const palette = useColour(io, values["no-color"]) ? ANSI : PLAIN;
  // Only suites that ran count: with a broken suite no case ran, and coverage says nothing.
  const covered = coverage && broken.length === 0 ? coverageReport(loaded) : undefined;
  io.stdout(
    output === "json"
      ? formatSuiteJson(suites, covered && coverageJson(covered))
      : formatSuiteText(suites, {
          ascii: values.ascii ?? false,
          palette,
          ...(covered ? { beforeSummary: formatCoverageText(covered) } : {}),
        }),
  );
  if (covered && values["coverage-lcov"] !== undefined) {
    const target = userPath(io, values["coverage-lcov"]);
    try {
      await writeFile(target, formatLcov(covered));
    } catch (e) {
      io.stderr(
        `celgate test: cannot write ${values["coverage-lcov"]}: ${e instanceof Error ? e.message : String(e)}\n`,
      );
      return EXIT_USAGE;
    }
  }
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
  if (sum.broken > 0) return EXIT_USAGE;
  if (covered && minCoverage !== undefined && covered.percent < minCoverage) {
    io.stderr(
      `celgate test: coverage ${formatPercent(covered.percent)} is below --min-coverage ${values["min-coverage"]}%\n`,
    );
    return EXIT_OUTCOME;
  }
  return sum.failed > 0 ? EXIT_OUTCOME : EXIT_OK;
}

export function run(args: readonly string[], io: CliIO): Promise<number> {
  return runWith(args, io, fileSuiteReader);
}
