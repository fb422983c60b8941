/** `celgate replay`: recorded traffic re-admitted by a candidate policy set, and what would change. */
import type { CelExtras } from "../../../cel/index.ts";
import { type CompiledPolicySet, type CompileOptions, compilePolicySet } from "../../../compile/policy.ts";
import { KindScopes } from "../../../kube/scope.ts";
import { err, ok, type Result } from "../../../result.ts";
import { loadPolicyPaths, noPolicyWarnings } from "../../../sources/files.ts";
import { errorCount, formatDiagnostics } from "../../output/diagnostics.ts";
import {
  compileChoice,
  HELP_OPTION,
  KUBERNETES_VERSION_OPTION,
  kubernetesVersionOf,
  parseCommandArgs,
  splitList,
  usageError,
  userPath,
} from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "../io.ts";
import { type Answer, Answerer } from "../replay/answer.ts";
import { CHANGE_KINDS, type ChangeKind, changesBetween, policiesOf } from "../replay/compare.ts";
import { describeResource, formatJunit, formatText, ReplayTally } from "../replay/report.ts";
import { type ReplayItem, readSources } from "../replay/sources.ts";

export const name = "replay";
export const summary = "re-admit recorded reviews with a candidate policy set and report what changes";
export const usage = "celgate replay PATH... -p CANDIDATE... [--baseline CURRENT...] [options]";
export const help = `Re-admit every review in PATH with the CANDIDATE policy set, as \`celgate serve\` would
answer it, and report what would change against the BASELINE set, or, without --baseline,
against the answer recorded with each review.

usage: ${usage}

PATH is a file or directory (read recursively, in sorted order) of:
  - reviews recorded by \`celgate serve --record DIR\` (*.jsonl), each replayed on the path that
    answered it (/validate, /mutate/fail, ...) and compared with the answer recorded;
  - audit.k8s.io/v1 Events logged at the RequestResponse level (*.log, *.jsonl, or an EventList),
    each turned into the AdmissionRequest the API server built for it;
  - AdmissionReviews and resources (*.yaml, *.yml, *.json), as \`celgate eval -r\` reads them.
Reviews from audit logs and files name no webhook path: they get the whole admission chain
(mutating policies, then validating ones) and need --baseline to compare with.

Options:
  -p, --policy PATH        the candidate policy set: file or directory (repeatable; required)
  --baseline PATH          the set to compare with (repeatable); default: the recorded answers
  -o, --output FORMAT      text (default), json or junit
  --fail-on LIST           the kinds of change that make the exit status 1 (comma-separated;
                           default all): ${CHANGE_KINDS.join(", ")}
  --cel-extras LIST        compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  --kubernetes-version X.Y compile and run both sets as Kubernetes X.Y would
  -h, --help               show this help

What is reported: reviews newly denied, newly allowed, denied with another code or message,
and reviews whose warnings, audit annotations or patch changed; counted, and grouped by policy,
namespace and user, with the first examples of each. Namespaces and params come from the policy
paths (as for \`serve\` without a cluster). A review recorded with redacted values is replayed with
them: a policy that reads a redacted field sees "[redacted]".

Exit status: 0 nothing of the --fail-on kinds changed and every review was read; 1 some review
changed in one of those ways; 2 bad usage, policy files with errors, or reviews that could not be
read (each named by file:line; the others are replayed and reported).
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    policy: { type: "string", short: "p", multiple: true },
    baseline: { type: "string", multiple: true },
    output: { type: "string", short: "o", default: "text" },
    "fail-on": { type: "string" },
    "cel-extras": { type: "string" },
    ...KUBERNETES_VERSION_OPTION,
  },
  allowPositionals: true,
} as const;

const OUTPUTS = ["text", "json", "junit"] as const;
type Output = (typeof OUTPUTS)[number];

interface ReplayOptions {
  readonly paths: readonly string[];
  readonly candidate: readonly string[];
  readonly baseline: readonly string[];
  readonly output: Output;
  readonly failOn: ReadonlySet<ChangeKind>;
  readonly compile: CompileOptions;
}

type Values = Exclude<ReturnType<typeof parseCommandArgs<typeof OPTIONS>>, number>["values"];

function replayOptions(
  values: Values,
  positionals: readonly string[],
  io: CliIO,
): Result<ReplayOptions, string> {
  if (positionals.length === 0) return err("missing PATH: the recorded reviews to replay");
  const candidate = values.policy ?? [];
  if (candidate.length === 0) return err("missing -p/--policy: the candidate policy set");
  const output = values.output as Output;
  if (!OUTPUTS.includes(output))
    return err(`unknown output format '${values.output}'; expected text, json or junit`);
  const kinds = values["fail-on"] === undefined ? [...CHANGE_KINDS] : splitList(values["fail-on"]);
  const unknown = kinds.find((k) => !(CHANGE_KINDS as readonly string[]).includes(k));
  if (unknown !== undefined)
    return err(`unknown kind of change '${unknown}' in --fail-on; expected ${CHANGE_KINDS.join(", ")}`);
  let extras: CelExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return e;
    extras = e.value;
  }
  const release = kubernetesVersionOf(values["kubernetes-version"]);
  if (!release.ok) return release;
  return ok({
    paths: positionals.map((p) => userPath(io, p)),
    candidate: candidate.map((p) => userPath(io, p)),
    baseline: (values.baseline ?? []).map((p) => userPath(io, p)),
    output,
    failOn: new Set(kinds as ChangeKind[]),
    compile: compileChoice(extras, release.value),
  });
}

/** A policy set compiled as serve compiles it; undefined after reporting its errors. */
async function loadSet(io: CliIO, paths: readonly string[], what: string, compile: CompileOptions) {
  const loaded = await loadPolicyPaths(paths);
  const set: CompiledPolicySet = compilePolicySet(loaded.set, compile);
  const problems = [
    ...loaded.diagnostics,
    ...noPolicyWarnings(paths, loaded.set, loaded.diagnostics, paths),
    ...set.diagnostics,
  ];
  if (problems.length > 0) io.stderr(formatDiagnostics(problems));
  if (errorCount(problems) > 0) {
    io.stderr(`celgate replay: the ${what} policy files have errors; nothing was replayed\n`);
    return undefined;
  }
  return set;
}

/** One review: the candidate's answer against the baseline's or the recorded one, into the tally. */
function replayOne(
  item: ReplayItem,
  candidate: Answerer,
  baseline: Answerer | undefined,
  tally: ReplayTally,
): void {
  let before: Answer | undefined;
  if (baseline !== undefined) before = baseline.answer(item);
  else if (item.recorded === undefined) {
    tally.problem(
      item.where,
      "no recorded answer to compare with (a review from a file or an audit log): give --baseline",
    );
    return;
  }
  const after = candidate.answer(item);
  const beforeDecision = before?.decision ?? item.recorded;
  if (beforeDecision === undefined) return;
  const changes = changesBetween(beforeDecision, after.decision);
  if (changes.length === 0) {
    tally.add(undefined, item.request, new Map());
    return;
  }
  const policies = new Map(changes.map((k) => [k, policiesOf(k, before, after)] as const));
  tally.add(
    {
      where: item.where,
      ...(item.path !== undefined ? { path: item.path } : {}),
      operation: item.request.operation,
      resource: describeResource(item.request),
      user: item.request.userInfo.username,
      changes,
      before: beforeDecision,
      after: after.decision,
    },
    item.request,
    policies,
  );
}

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const checked = replayOptions(parsed.values, parsed.positionals, io);
  if (!checked.ok) return fail(checked.error);
  const o = checked.value;
  const candidateSet = await loadSet(io, o.candidate, "candidate", o.compile);
  if (candidateSet === undefined) return EXIT_USAGE;
  const baselineSet =
    o.baseline.length > 0 ? await loadSet(io, o.baseline, "baseline", o.compile) : undefined;
  if (o.baseline.length > 0 && baselineSet === undefined) return EXIT_USAGE;
  const candidate = new Answerer(candidateSet);
  const baseline = baselineSet === undefined ? undefined : new Answerer(baselineSet);
  const tally = new ReplayTally(baseline === undefined ? "recorded" : "baseline");
  // Both sets' CRDs say which custom kinds are cluster-scoped, for requests built from audit events and files.
  const scopes = KindScopes.from(
    [...candidateSet.resources, ...(baselineSet?.resources ?? [])].map((r) => r.object),
  );
  for await (const event of readSources(o.paths, scopes)) {
    if (event.kind === "problem") tally.problem(event.where, event.message);
    else if (event.kind === "skip") tally.skip(event.reason);
    else replayOne(event.item, candidate, baseline, tally);
  }
  io.stdout(
    o.output === "json"
      ? `${JSON.stringify(tally, null, 2)}\n`
      : o.output === "junit"
        ? formatJunit(tally, o.failOn)
        : formatText(tally),
  );
  if (tally.problemCount > 0) {
    if (o.output !== "text")
      io.stderr(`celgate replay: ${tally.problemCount} reviews could not be read; see the report\n`);
    return EXIT_USAGE;
  }
  if (tally.reviews === 0 && tally.skipped === 0) {
    io.stderr(`celgate replay: no reviews found in ${o.paths.join(", ")}\n`);
    return EXIT_USAGE;
  }
  return CHANGE_KINDS.some((k) => o.failOn.has(k) && tally.byKind[k] > 0) ? EXIT_OUTCOME : EXIT_OK;
}
