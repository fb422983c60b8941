/** `celgate manifests`: the webhook configurations that route the API server's requests to celgate. */
import { readFile } from "node:fs/promises";
import { Document, isNode, isScalar, isSeq, visit } from "yaml";
import { type Diagnostic, formatDiagnostic } from "../../../errors.ts";
import { readObjects } from "../../../manifests/documents.ts";
import { formatDiagnostics } from "../../output/diagnostics.ts";
import { compareWebhookConfigurations } from "../../../manifests/drift.ts";
import { DEFAULT_REQUEST_TIMEOUT_SECONDS } from "../../../manifests/timeouts.ts";
import {
  isWebhookConfiguration,
  readWebhookConfiguration,
  type WebhookConfiguration,
} from "../../../manifests/webhook-config.ts";
import {
  ALWAYS_EXCLUDED_NAMESPACES,
  type CertManagerIssuer,
  certificateName,
  configurationName,
  DEFAULT_PORT,
  DEFAULT_TIMEOUT_SECONDS,
  type WebhookManifests,
  webhookManifests,
} from "../../../manifests/webhooks.ts";
import { rbacManifests } from "../../../manifests/rbac.ts";
import { loadSnapshot } from "../../../sources/store.ts";
import { type CompiledPolicySet, compilePolicySet } from "../../../compile/policy.ts";
import { HELP_OPTION, parseCommandArgs, splitList, usageError, userPath } from "../args.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "../io.ts";

export const name = "manifests";
export const summary =
  "print the webhook configurations that send admission requests to celgate, or its RBAC";
export const usage =
  "celgate manifests --policies PATH... --service NAME --namespace NS [--ca-bundle FILE | --cert-manager ISSUER | --rbac] [--check-drift FILE] [options]";
export const help = `Print, as multi-document YAML, the ValidatingWebhookConfiguration and MutatingWebhookConfiguration
(admissionregistration.k8s.io/v1) that send the API server's admission requests to a celgate Service.

usage: ${usage}

Options:
  --policies PATH        policy file or directory (repeatable), as given to celgate serve
  --service NAME         the Service in front of celgate
  --namespace NS         the Service's namespace
  --port N               the Service port the API server calls (default ${DEFAULT_PORT})
  --timeout-seconds N    how long the API server waits for an answer, 1-30 (default ${DEFAULT_TIMEOUT_SECONDS})
  --request-timeout N    the API server's own request deadline in seconds, its --request-timeout
                         (default ${DEFAULT_REQUEST_TIMEOUT_SECONDS}); the webhooks' timeouts must add up to less
  --exclude-namespace NS never send requests in NS to celgate (repeatable, or a comma-separated list),
                         besides ${ALWAYS_EXCLUDED_NAMESPACES.join(", ")} and celgate's own namespace
  --ca-bundle FILE       PEM bundle of the CA that signed celgate's certificate, embedded as caBundle
  --cert-manager ISSUER  let cert-manager issue the certificate and inject its CA instead: also prints a
                         Certificate NAME-tls (Secret NAME-tls) issued by ISSUER, an Issuer in NS, or
                         ClusterIssuer/NAME
  --check-drift FILE     print nothing new: compare the webhook configurations in FILE (YAML, as
                         \`kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations -o yaml\`
                         prints them, or a file this command wrote) with what the policies need now,
                         and print each difference
  --rbac                 print instead the ClusterRole and ClusterRoleBinding a cluster-connected
                         serve needs: get/list/watch on namespaces and on each bound paramKind's
                         resource, create on subjectaccessreviews when a bound policy reads
                         authorizer; named NAME and bound to the ServiceAccount NAME in NS. Each
                         rule has a comment saying which policies need it and what serve caches
                         for it. --policies may be left out: the RBAC serve needs with no policy
  --service-account SA   with --rbac, bind to this ServiceAccount instead of NAME
  --policies-from-cluster
                         with --rbac, also get/list/watch the admission policy kinds
  --register-webhooks    with --rbac, also get and update the two webhook configurations
                         \`serve --register-webhooks NS/NAME\` writes (by name)
  -h, --help             show this help

The rules are the union of the rules of the enforced (bound) policies: each policy's matchConstraints
narrowed by its binding's matchResources, merged, never wider than the policies ask. Each webhook
calls /validate/fail, /validate/ignore, /mutate/fail or /mutate/ignore with that failurePolicy, so an
unreachable celgate fails each request the way its policies say; a binding whose validationActions
are only Warn and Audit cannot deny, so it goes to an Ignore webhook whatever its policy's
failurePolicy. The namespaceSelector and objectSelector requirements and the matchConditions that
all the policies on a webhook share are carried into it, so the API server does not call celgate
for requests none of them can select; policies that no request reaches together get webhooks of
their own on the same path (SERVICE.NS.fail-2.validate.celgate.dev, ...), each carrying its own.
resourceNames and excludeResourceRules cannot be expressed in webhook rules: celgate applies them
itself. kube-system, kube-node-lease, NS and every --exclude-namespace are never sent to celgate.

Warnings (on stderr) name the wildcard rules that also match leases, events or the admission
configuration objects themselves. The webhooks' timeouts are checked against --request-timeout: one
request goes through every mutating webhook it matches, in turn and twice each when reinvoked, then
the validating ones (called in parallel); a sum past the deadline is an error, past half of it a
warning.

A paramKind's resource name comes from a table of built-in kinds; for any other kind --rbac
guesses the plural as the API machinery does and says so: check it against the CRD.

Exit status: 0 printed (or no drift), 1 drift found, 2 bad options, policy files that do not parse
or policies that do not compile (reported as celgate check reports them), or timeouts that add up
past the request deadline.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    policies: { type: "string", multiple: true },
    service: { type: "string" },
    namespace: { type: "string" },
    port: { type: "string", default: String(DEFAULT_PORT) },
    "timeout-seconds": { type: "string", default: String(DEFAULT_TIMEOUT_SECONDS) },
    "request-timeout": { type: "string", default: String(DEFAULT_REQUEST_TIMEOUT_SECONDS) },
    "exclude-namespace": { type: "string", multiple: true },
    "ca-bundle": { type: "string" },
    "cert-manager": { type: "string" },
    "check-drift": { type: "string" },
    rbac: { type: "boolean", default: false },
    "service-account": { type: "string" },
    "policies-from-cluster": { type: "boolean", default: false },
    "register-webhooks": { type: "boolean", default: false },
  },
  allowPositionals: false,
} as const;

/** `--rbac` without --policies: what serve needs with no policy at all. */
const NO_POLICIES = compilePolicySet({ policies: [], bindings: [], resources: [] });

/** RFC 1035 label: what Kubernetes requires of a Service name. */
const DNS1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** RFC 1123 label: a namespace name. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** RFC 1123 subdomain: an Issuer name. */
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

const HEADER =
  "# Generated by `celgate manifests` from the policies: regenerate it when they change rather than editing it.\n";

function integer(text: string, min: number, max: number): number | undefined {
  const n = Number(text);
  return /^\d+$/.test(text) && n >= min && n <= max ? n : undefined;
}

function parseIssuer(text: string): CertManagerIssuer | undefined {
  const slash = text.indexOf("/");
  const kind = slash === -1 ? "Issuer" : text.slice(0, slash);
  const issuerName = slash === -1 ? text : text.slice(slash + 1);
  if (kind !== "Issuer" && kind !== "ClusterIssuer") return undefined;
  return DNS1123_SUBDOMAIN.test(issuerName) ? { kind, name: issuerName } : undefined;
}

/**
 * Multi-document YAML as people write it: lists of plain values in flow style (`[CREATE, UPDATE]`),
 * and no line folding, so a caBundle stays one line.
 */
export function renderDocuments(
  documents: readonly Record<string, unknown>[],
  ruleComments: readonly (readonly string[])[] = [],
): string {
  const render = (value: Record<string, unknown>): string => {
    const doc = new Document(value);
    visit(doc, {
      Seq(_, node) {
        if (node.items.every((item) => isScalar(item))) node.flow = true;
      },
    });
    // A ClusterRole's rules, each with why it is there (--rbac).
    const rules = value.kind === "ClusterRole" ? doc.get("rules", true) : undefined;
    if (isSeq(rules))
      rules.items.forEach((item, i) => {
        const lines = ruleComments[i] ?? [];
        if (lines.length > 0 && isNode(item)) item.commentBefore = lines.map((l) => ` ${l}`).join("\n");
      });
    return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  };
  return HEADER + documents.map((d) => `---\n${render(d)}`).join("");
}

/** How the API server is to trust celgate's certificate: `--ca-bundle` read, or `--cert-manager` parsed. */
async function readTrust(
  io: CliIO,
  caBundleFile: string | undefined,
  issuer: string | undefined,
): Promise<{ caBundle?: string; certManager?: CertManagerIssuer } | string> {
  if (caBundleFile !== undefined) {
    let pem: string;
    try {
      pem = await readFile(userPath(io, caBundleFile), "utf8");
    } catch (e) {
      return `--ca-bundle ${caBundleFile}: ${(e as Error).message}`;
    }
    if (!PEM_CERTIFICATE.test(pem))
      return `--ca-bundle ${caBundleFile}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it`;
    return { caBundle: Buffer.from(pem, "utf8").toString("base64") };
  }
  if (issuer !== undefined) {
    const certManager = parseIssuer(issuer);
    if (!certManager) return `--cert-manager must be an Issuer name or ClusterIssuer/NAME, got '${issuer}'`;
    return { certManager };
  }
  return {};
}

type Values = Exclude<ReturnType<typeof parseCommandArgs<typeof OPTIONS>>, number>["values"];

/** What every form of the command takes: the policies, the Service, and the webhooks' timing. */
interface Target {
  readonly policies: readonly string[];
  readonly service: string;
  readonly namespace: string;
  readonly port: number;
  readonly timeoutSeconds: number;
  readonly requestTimeout: number;
  readonly excludeNamespaces: readonly string[];
}

/** The options every form takes, checked in the order the help lists them; or what is wrong. */
function targetOf(values: Values): Target | string {
  const policies = values.policies ?? [];
  if (policies.length === 0 && !values.rbac) return "missing --policies PATH";
  const service = values.service;
  if (service === undefined) return "missing --service NAME";
  if (!DNS1035_LABEL.test(service))
    return `--service must be a Service name (lower-case RFC 1035 label), got '${service}'`;
  const namespace = values.namespace;
  if (namespace === undefined) return "missing --namespace NS";
  if (!DNS1123_LABEL.test(namespace))
    return `--namespace must be a namespace name (lower-case RFC 1123 label), got '${namespace}'`;
  const port = integer(values.port, 1, 65535);
  if (port === undefined) return `--port must be a port number from 1 to 65535, got '${values.port}'`;
  const timeoutSeconds = integer(values["timeout-seconds"], 1, 30);
  if (timeoutSeconds === undefined)
    return `--timeout-seconds must be a whole number of seconds from 1 to 30, got '${values["timeout-seconds"]}'`;
  const requestTimeout = integer(values["request-timeout"], 1, 3600);
  if (requestTimeout === undefined)
    return `--request-timeout must be a whole number of seconds from 1 to 3600, got '${values["request-timeout"]}'`;
  const excludeNamespaces = (values["exclude-namespace"] ?? []).flatMap(splitList);
  for (const ns of excludeNamespaces)
    if (!DNS1123_LABEL.test(ns))
      return `--exclude-namespace must name namespaces (lower-case RFC 1123 labels), got '${ns}'`;
  return { policies, service, namespace, port, timeoutSeconds, requestTimeout, excludeNamespaces };
}

/** The policies compiled, or the exit status after saying why they do not load. */
async function loadPolicies(io: CliIO, policies: readonly string[]): Promise<CompiledPolicySet | number> {
  const loaded = await loadSnapshot(
    policies.map((p) => userPath(io, p)),
    {},
    {},
    policies,
  );
  // A set with compile errors still serves (failurePolicy decides), but manifests are written for
  // policies that work: the errors fail the command as they fail check.
  const diagnostics = loaded.ok ? loaded.snapshot.diagnostics : loaded.diagnostics;
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (loaded.ok && errors.length === 0) {
    // A path with no policy would write configurations for less than was meant: said, as check says it.
    for (const d of diagnostics) if (d.code === "PE_NO_POLICIES") io.stderr(`${formatDiagnostic(d)}\n`);
    return loaded.snapshot.set;
  }
  io.stderr(`celgate manifests: the policies do not load:\n${formatDiagnostics(diagnostics)}`);
  return EXIT_USAGE;
}

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const target = targetOf(values);
  if (typeof target === "string") return fail(target);
  if (values.rbac) return printRbac(io, values, target);
  if (
    values["service-account"] !== undefined ||
    values["policies-from-cluster"] ||
    values["register-webhooks"]
  )
    return fail("--service-account, --policies-from-cluster and --register-webhooks go with --rbac");
  if (values["ca-bundle"] !== undefined && values["cert-manager"] !== undefined)
    return fail("--ca-bundle and --cert-manager are alternatives: give one");
  const trust = await readTrust(io, values["ca-bundle"], values["cert-manager"]);
  if (typeof trust === "string") return fail(trust);
  const set = await loadPolicies(io, target.policies);
  if (typeof set === "number") return set;
  const { service, namespace, port, timeoutSeconds, requestTimeout, excludeNamespaces } = target;
  const { caBundle, certManager } = trust;
  const result = webhookManifests(set, {
    service,
    namespace,
    port,
    timeoutSeconds,
    ...(excludeNamespaces.length > 0 ? { excludeNamespaces } : {}),
    ...(caBundle !== undefined ? { caBundle } : {}),
    ...(certManager ? { certManager } : {}),
  });
  const worst = result.worstCase;
  if (worst.seconds > requestTimeout)
    return fail(
      `with --timeout-seconds ${timeoutSeconds}, one request can wait ${worst.seconds} s on celgate's webhooks (${worst.webhooks.join(", ")}), past the API server's ${requestTimeout} s request deadline (--request-timeout); lower --timeout-seconds to ${Math.floor((requestTimeout * timeoutSeconds) / worst.seconds)} or less`,
    );
  printNotes(io, target, trust, result);
  if (values["check-drift"] !== undefined) return checkDrift(io, values["check-drift"], result);
  if (result.documents.length > 0) io.stdout(renderDocuments(result.documents));
  return EXIT_OK;
}

/** `--rbac`: the ServiceAccount, roles and bindings celgate needs, instead of the webhooks. */
async function printRbac(io: CliIO, values: Values, target: Target): Promise<number> {
  const fail = (message: string) => usageError(io, { name, usage }, message);
  if (values["ca-bundle"] !== undefined || values["cert-manager"] !== undefined)
    return fail("--rbac prints RBAC only: it takes no --ca-bundle or --cert-manager");
  const serviceAccount = values["service-account"] ?? target.service;
  if (!DNS1123_SUBDOMAIN.test(serviceAccount))
    return fail(`--service-account must be a ServiceAccount name, got '${serviceAccount}'`);
  const set = target.policies.length === 0 ? NO_POLICIES : await loadPolicies(io, target.policies);
  if (typeof set === "number") return set;
  const rbac = rbacManifests(set, {
    name: target.service,
    namespace: target.namespace,
    serviceAccount,
    policiesFromCluster: values["policies-from-cluster"],
    ...(values["register-webhooks"]
      ? { registerWebhooks: configurationName(target.service, target.namespace) }
      : {}),
  });
  for (const note of rbac.notes) io.stderr(`celgate manifests: ${note}\n`);
  io.stdout(renderDocuments(rbac.documents, rbac.reasons));
  return EXIT_OK;
}

/** The notes and warnings of the webhooks generated, with what the trust chosen and the deadline add. */
function printNotes(
  io: CliIO,
  target: Target,
  trust: { caBundle?: string; certManager?: CertManagerIssuer },
  result: WebhookManifests,
): void {
  const { service, namespace, requestTimeout } = target;
  const worst = result.worstCase;
  const notes = [...result.notes];
  if (trust.certManager)
    notes.push(
      `cert-manager: the Certificate ${namespace}/${certificateName(service)} writes Secret ${certificateName(service)}; mount it as celgate's --tls-cert/--tls-key`,
    );
  else if (trust.caBundle === undefined)
    notes.push(
      "no --ca-bundle or --cert-manager: the API server will verify celgate's certificate against its own trust roots",
    );
  const warnings = [...result.warnings];
  if (worst.seconds * 2 > requestTimeout)
    warnings.push(
      `one request can wait ${worst.seconds} s on celgate's webhooks (${worst.webhooks.join(", ")}), more than half of the API server's ${requestTimeout} s request deadline, which other webhooks and the write itself share`,
    );
  for (const note of notes) io.stderr(`celgate manifests: ${note}\n`);
  for (const warning of warnings) io.stderr(`celgate manifests: warning: ${warning}\n`);
}

const GENERATED = { file: "(generated)", line: 1, column: 1 };

/** `--check-drift FILE`: the differences between FILE's webhook configurations and the wanted ones. */
async function checkDrift(io: CliIO, given: string, result: WebhookManifests): Promise<number> {
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const file = userPath(io, given);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    return fail(`--check-drift ${given}: ${(e as Error).message}`);
  }
  const read = readObjects(text, given);
  const problems: Diagnostic[] = [...read.diagnostics];
  const live: WebhookConfiguration[] = [];
  for (const o of read.objects) {
    if (!isWebhookConfiguration(o.value)) continue;
    const r = readWebhookConfiguration(o.value, { strict: false, locate: o.locate });
    problems.push(...r.diagnostics.filter((d) => d.severity === "error"));
    if (r.config) live.push(r.config);
  }
  if (problems.length > 0) {
    io.stderr(`celgate manifests: --check-drift ${given} does not read:\n${formatDiagnostics(problems)}`);
    return EXIT_USAGE;
  }
  const wanted: WebhookConfiguration[] = [];
  for (const d of result.documents) {
    if (!isWebhookConfiguration(d)) continue;
    const r = readWebhookConfiguration(d, { strict: true, locate: () => GENERATED });
    // What this command generates always reads back; a failure here is a bug worth seeing.
    if (!r.config)
      throw new Error(`generated ${String(d.kind)} does not read back: ${r.diagnostics[0]?.message}`);
    wanted.push(r.config);
  }
  const report = compareWebhookConfigurations(wanted, live);
  for (const i of report.ignored)
    io.stderr(`celgate manifests: --check-drift: not celgate's, left alone: ${i}\n`);
  if (report.differences.length === 0) {
    io.stdout(
      `no drift: ${given} holds the ${wanted.length === 1 ? "configuration" : `${wanted.length} configurations`} the policies need\n`,
    );
    return EXIT_OK;
  }
  io.stdout(
    `${report.differences.map((d) => `${d}\n`).join("")}${report.differences.length} difference${report.differences.length === 1 ? "" : "s"}: regenerate with celgate manifests and apply it\n`,
  );
  return EXIT_OUTCOME;
}
