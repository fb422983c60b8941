/** `celgate lint`: admission deadlocks, timeouts and misbehaving mutations, before they reach a cluster. */
import { readFile } from "node:fs/promises";
import type { CelExtras } from "../../../cel/index.ts";
import { type CompiledPolicySet, compilePolicySet } from "../../../compile/policy.ts";
import { type Diagnostic, formatDiagnostic } from "../../../errors.ts";
import { lint } from "../../../lint/lint.ts";
import { type Finding, LINT_RULES } from "../../../lint/types.ts";
import { readObjects } from "../../../manifests/documents.ts";
import { DEFAULT_REQUEST_TIMEOUT_SECONDS } from "../../../manifests/timeouts.ts";
import {
  isWebhookConfiguration,
  readWebhookConfiguration,
  type WebhookConfiguration,
} from "../../../manifests/webhook-config.ts";
import { excludedNamespaces } from "../../../manifests/webhooks.ts";
import { parsePolicyText } from "../../../policy/parse.ts";
import { loadPolicyPaths, noPolicyWarnings } from "../../../sources/files.ts";
import { formatDiagnostics, plural } from "../../output/diagnostics.ts";
import { HELP_OPTION, parseCommandArgs, splitList, usageError, userPath } from "../args.ts";
import { lintCorpus } from "../corpus.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "../io.ts";

export const name = "lint";
export const summary = "find admission deadlocks, timeouts past the deadline and mutations that misbehave";
export const usage = "celgate lint [options] PATH...";

const RULES = Object.entries(LINT_RULES)
  .map(([rule, text]) => `  ${rule.padEnd(24)} ${text}`)
  .join("\n");

export const help = `Check policies, and optionally the webhook configurations and policies of a cluster, for
set-ups that can hurt a cluster, each reported with file:line and a one-line fix.

usage: ${usage}

PATH is a policy file or directory, as for celgate check. The test suites (*.test.yaml) under the
PATHs are the corpus of objects the mutations are applied to.

Options:
  --cluster FILE        webhook configurations, policies and bindings exported from a cluster
                        (repeatable), e.g. kubectl get validatingwebhookconfigurations,
                        mutatingwebhookconfigurations,validatingadmissionpolicies,
                        validatingadmissionpolicybindings -o yaml > cluster.yaml
  --objects FILE        more objects for the mutation corpus, each admitted as a CREATE (repeatable)
  --namespace NS        celgate's namespace, whose Pods must always start (default celgate)
  --native              the policies are applied to the API server as they are, not served by
                        celgate: no webhook keeps kube-system or any namespace away from them
  --exclude-namespace NS  served by celgate: a namespace its webhooks also exclude, as given to
                        celgate manifests (repeatable, or a comma-separated list)
  --request-timeout N   the API server's request deadline in seconds (default ${DEFAULT_REQUEST_TIMEOUT_SECONDS})
  --cel-extras LIST     compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  -o, --output FORMAT   text (default) or json
  -h, --help            show this help

Rules:
${RULES}

A policy can block a request the cluster needs to heal when a binding that can deny (or a
mutation) serves it under failurePolicy Fail and it matches: the creation of celgate's own Pods and
ReplicaSets, Pods and leader-election Leases in kube-system, the nodes' Leases in kube-node-lease,
or a kubelet's update of its Node. Whether it matches is what a review would say for such a request
(rules, selectors with namespaces known by name, matchConditions). Served by celgate (the default),
the webhooks of celgate manifests never send kube-system, kube-node-lease, NS or an
--exclude-namespace to it, so only the other requests (a kubelet's) count; with --native every one
does. Webhooks and policies from --cluster are checked the same way, as the cluster has them
(its policies run natively), and the webhooks' timeouts are added up as the API server would wait
on them.

Each bound MutatingAdmissionPolicy is applied to every corpus object, then to its own output: a
second patch means it is not idempotent. An ApplyConfiguration that sets an atomic field (args,
tolerations, nodeSelector, ...) is reported, since the API server refuses it. All mutations are then
applied together twice: what still changes is policies undoing each other.

Exit status: 0 no errors (warnings allowed), 1 errors found, 2 bad options, files that do not read
or policies that do not compile (reported as celgate check reports them; nothing is linted).
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    cluster: { type: "string", multiple: true },
    objects: { type: "string", multiple: true },
    namespace: { type: "string", default: "celgate" },
    native: { type: "boolean", default: false },
    "exclude-namespace": { type: "string", multiple: true },
    "request-timeout": { type: "string", default: String(DEFAULT_REQUEST_TIMEOUT_SECONDS) },
    "cel-extras": { type: "string" },
    output: { type: "string", short: "o", default: "text" },
  },
  allowPositionals: true,
} as const;

/** The labels of celgate's Pods in deploy/deployment.yaml. */
const SELF_LABELS = {
  "app.kubernetes.io/name": "celgate",
  "app.kubernetes.io/component": "admission-webhook",
};

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

interface Cluster {
  readonly webhooks: WebhookConfiguration[];
  readonly sets: CompiledPolicySet[];
  readonly problems: Diagnostic[];
}

/** Reads the --cluster files: webhook configurations apart, the policies of each file as one set. */
async function readCluster(
  io: CliIO,
  files: readonly string[],
  extras: CelExtras,
): Promise<Cluster | string> {
  const out: Cluster = { webhooks: [], sets: [], problems: [] };
  for (const given of files) {
    let text: string;
    try {
      text = await readFile(userPath(io, given), "utf8");
    } catch (e) {
      return `--cluster ${given}: ${(e as Error).message}`;
    }
    const read = readObjects(text, given);
    out.problems.push(...read.diagnostics);
    for (const o of read.objects) {
      if (!isWebhookConfiguration(o.value)) continue;
      const r = readWebhookConfiguration(o.value, { strict: false, locate: o.locate });
      out.problems.push(...r.diagnostics.filter((d) => d.severity === "error"));
      if (r.config) out.webhooks.push(r.config);
    }
    const parsed = parsePolicyText(text, given);
    out.problems.push(...parsed.diagnostics.filter((d) => d.severity === "error"));
    if (parsed.set.policies.length + parsed.set.bindings.length > 0) {
      const compiled = compilePolicySet(parsed.set, { extras });
      out.problems.push(...compiled.diagnostics.filter((d) => d.severity === "error"));
      out.sets.push(compiled);
    }
  }
  return out;
}

function formatFinding(f: Finding): string {
  const where = f.location ? `${f.location.file}:${f.location.line}:${f.location.column}: ` : "";
  return `${where}${f.severity}: [${f.rule}] ${f.message}\n  fix: ${f.fix}\n`;
}

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const output = values.output;
  if (output !== "text" && output !== "json")
    return fail(`unknown output format '${output}'; expected text or json`);
  if (positionals.length === 0 && (values.cluster ?? []).length === 0)
    return fail("missing the policy files or directories to lint (or --cluster FILE)");
  if (!DNS1123_LABEL.test(values.namespace))
    return fail(
      `--namespace must be a namespace name (lower-case RFC 1123 label), got '${values.namespace}'`,
    );
  const exclude = (values["exclude-namespace"] ?? []).flatMap(splitList);
  for (const ns of exclude)
    if (!DNS1123_LABEL.test(ns))
      return fail(`--exclude-namespace must name namespaces (lower-case RFC 1123 labels), got '${ns}'`);
  const deadline = Number(values["request-timeout"]);
  if (!/^\d+$/.test(values["request-timeout"]) || deadline < 1 || deadline > 3600)
    return fail(
      `--request-timeout must be a whole number of seconds from 1 to 3600, got '${values["request-timeout"]}'`,
    );
  let extras: CelExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return fail(e.error);
    extras = e.value;
  }

  const paths = positionals.map((p) => userPath(io, p));
  const sets: CompiledPolicySet[] = [];
  const problems: Diagnostic[] = [];
  if (paths.length > 0) {
    const loaded = await loadPolicyPaths(paths);
    const compiled = compilePolicySet(loaded.set, { extras });
    for (const d of noPolicyWarnings(paths, loaded.set, loaded.diagnostics, positionals))
      io.stderr(`${formatDiagnostic(d)}\n`);
    // A policy that does not compile is left out of the set: its errors fail the run, or lint would
    // report "no findings" for a policy it never looked at.
    problems.push(...[...loaded.diagnostics, ...compiled.diagnostics].filter((d) => d.severity === "error"));
    sets.push(compiled);
  }
  const cluster = await readCluster(io, values.cluster ?? [], extras);
  if (typeof cluster === "string") return fail(cluster);
  problems.push(...cluster.problems);
  if (problems.length > 0) {
    io.stderr(`celgate lint: the input does not read:\n${formatDiagnostics(problems)}`);
    return EXIT_USAGE;
  }
  const corpus = await lintCorpus(
    paths,
    (values.objects ?? []).map((f) => userPath(io, f)),
  );
  for (const p of corpus.problems) io.stderr(`celgate lint: warning: ${p}\n`);

  const findings = lint({
    sets,
    clusterSets: cluster.sets,
    webhooks: cluster.webhooks,
    corpus: corpus.entries,
    options: {
      namespace: values.namespace,
      served: values.native ? "native" : "celgate",
      excludedNamespaces: excludedNamespaces({ namespace: values.namespace, excludeNamespaces: exclude }),
      selfLabels: SELF_LABELS,
      requestTimeoutSeconds: deadline,
    },
  });
  const errors = findings.filter((f) => f.severity === "error").length;
  if (output === "json")
    io.stdout(
      `${JSON.stringify({ findings, errors, warnings: findings.length - errors, corpus: corpus.entries.length }, null, 2)}\n`,
    );
  else
    io.stdout(
      `${findings.map(formatFinding).join("")}${findings.length === 0 ? "no findings" : `${plural(findings.length, "finding", "findings")} (${plural(errors, "error", "errors")}, ${plural(findings.length - errors, "warning", "warnings")})`}; ${plural(corpus.entries.length, "test object", "test objects")} in the mutation corpus\n`,
    );
  return errors > 0 ? EXIT_OUTCOME : EXIT_OK;
}
