/** `celgate serve`: the policies as an HTTPS admission webhook, until SIGTERM or SIGINT. */
import { DEFAULT_RELEASE, NEWEST_RELEASE, OLDEST_RELEASE } from "../../../cel/index.ts";
import { type ServeOptions, startWebhook } from "../../server/app.ts";
import { STALE_READINESS, type StaleReadiness } from "../../../cluster/link.ts";
import { DEFAULT_SILENCE_MS } from "../../../cluster/reflector.ts";
import { err, ok, type Result } from "../../../result.ts";
import { DEFAULT_READ_LIMITS } from "../../../sources/files.ts";
import { CLOSE_TIMEOUT_MS, DEFAULT_LIMITS } from "../../server/server.ts";
import { loadTlsMaterial } from "../../server/tls.ts";
import { isLogLevel, LOG_LEVELS } from "../../server/review-log.ts";
import {
  HELP_OPTION,
  KUBERNETES_VERSION_OPTION,
  kubernetesVersionOf,
  parseCommandArgs,
  usageError,
  userPath,
} from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_USAGE } from "../io.ts";
import * as check from "./check.ts";

/** The default disk budget of `--record`, in MiB. */
const DEFAULT_RECORD_MIB = 256;

export const name = "serve";
export const summary = "serve the policies as an HTTPS admission webhook";
export const usage = "celgate serve --policies PATH... [options]";
export const help = `Serve ValidatingAdmissionPolicies and MutatingAdmissionPolicies as an HTTPS admission webhook
(AdmissionReview admission.k8s.io/v1 and v1beta1).

usage: ${usage}

Options:
  --policies PATH        policy file or directory (repeatable); watched and hot-reloaded
  --host ADDRESS         address to listen on (default 0.0.0.0; npm start uses 127.0.0.1)
  --port N               admission port, HTTPS only (default 8443)
  --metrics-port N       plain-HTTP port for GET /metrics (default 8080; 0 picks a free port)
  --tls-cert FILE        certificate (PEM); reloaded when the file changes
  --tls-key FILE         private key (PEM); without --tls-cert/--tls-key a self-signed
                         certificate for localhost is generated, for development only
  --client-ca FILE       require client certificates signed by this CA (the API server's)
  --drain-seconds N      on SIGTERM keep answering for N seconds before closing (default 10;
                         0 closes at once); then requests in flight get up to ${CLOSE_TIMEOUT_MS / 1000} s more
  --max-connections N    open connections at most (default ${DEFAULT_LIMITS.maxConnections}); at the cap the
                         one waiting longest for its client (idle, mid-handshake, or still
                         sending its request) is closed to make room, or a new one is refused
  --max-inflight-mib N   MiB of request bodies over 64 KiB held at once (default ${DEFAULT_LIMITS.maxBytesInFlight / 1048576});
                         a request past it is answered 429 before its body is read
  --max-policy-file-mib N
                         MiB one policy file may hold (default ${DEFAULT_READ_LIMITS.maxFileBytes / 1048576}, a ConfigMap's limit)
  --max-policy-set-mib N MiB all policy files may hold together (default ${DEFAULT_READ_LIMITS.maxSetBytes / 1048576}); a file
                         past either is not read (PE_TOO_LARGE) and keeps its last good content
  --dry-run              load and compile the policies, report every problem as \`celgate check\`
                         does, and exit with its status (and check --tls-cert/--tls-key when
                         given); serve nothing
  --log-level LEVEL      fatal, error, warn, info (default), debug, trace or silent; the
                         request log is JSON lines on stdout, written at least once a second
  --log-values           at debug level, log the trace's values as they are; by default
                         Secrets, ConfigMap data, env values and fields named like
                         credentials are redacted, wherever expressions move them
  --record DIR           write the reviews answered, with each answer, to rotating files of JSON
                         lines in DIR, for \`celgate replay\`; off by default. SENSITIVE: the files
                         hold the objects admitted (Secrets' data, ConfigMap data, env values and
                         fields named like credentials are redacted as the debug log redacts them)
  --record-sample RATE   the share of reviews recorded, above 0 and at most 1 (default 1)
  --record-max-mib N     MiB the recording's files may hold together (default ${DEFAULT_RECORD_MIB}); the
                         oldest files are deleted. A recording never slows or fails a review:
                         when writes fall behind, reviews are dropped and counted
                         (celgate_record_dropped_total)
  --cel-extras LIST      compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  --kubernetes-version X.Y
                         compile and run the policies as Kubernetes X.Y would (${OLDEST_RELEASE} to ${NEWEST_RELEASE};
                         default ${DEFAULT_RELEASE}); see 'celgate help check'
  --kubeconfig FILE      connect to the cluster in FILE; in a pod (KUBERNETES_SERVICE_HOST and a
                         ServiceAccount token) serve connects by itself
  --no-cluster           do not connect, even in a pod: only the policy files' objects are known
  --policies-from-cluster
                         also serve the cluster's ValidatingAdmissionPolicy and
                         MutatingAdmissionPolicy objects and bindings (files win a name clash)
  --cluster-stale-seconds N
                         a watch that brings no event or bookmark for N s (default ${DEFAULT_SILENCE_MS / 1000}: the API
                         server bookmarks every minute) is taken for a hung API server and opened
                         again; cluster state older than N s is stale
  --cluster-stale-readiness serve|unready
                         with stale cluster state, stay ready and decide from it (serve, the
                         default) or report not ready on /readyz until it is current (unready)
  --register-webhooks NAMESPACE/SERVICE
                         once ready, write the ValidatingWebhookConfiguration and
                         MutatingWebhookConfiguration that \`celgate manifests --service SERVICE
                         --namespace NAMESPACE\` prints for the policies served, and keep them
                         current on every reload (needs a cluster and --tls-cert)
  --webhook-ca FILE      with --register-webhooks, the CA (PEM) the API server is to trust;
                         default the --tls-cert file itself (a self-signed certificate)
  --webhook-port N       with --register-webhooks, the Service port the API server calls
                         (default 443), as \`celgate manifests --port\` writes it
  -h, --help             show this help

Connected to a cluster, serve keeps a cache (list, then watch) of Namespaces and of every
paramKind its bindings use, answers authorizer checks with SubjectAccessReviews, and reports
ready only once every cache has synced. If the API server goes away it keeps serving from the
last synced state (metric celgate_cluster_cache_age_seconds, a JSON log line); a Namespace or
param never seen is an error that the policy's failurePolicy decides. \`celgate manifests --rbac\`
prints the ClusterRole this needs.

Routes: POST /validate, /mutate and the split paths /validate/fail, /validate/ignore,
/mutate/fail, /mutate/ignore that evaluate only the policies with that failurePolicy (a binding
whose validationActions are only Warn and Audit is served on /validate/ignore, as
\`celgate manifests\` routes it); GET /healthz, /readyz on both ports (probe the metrics port:
with --client-ca the admission port asks every client for a certificate); GET /metrics on the
metrics port. Policies without a binding are loaded and checked, not enforced.

With --register-webhooks, nothing is sent to celgate before it can answer: the configurations are
written only once /readyz would answer 200 (ports open, policies loaded, every cache synced) and
the CA verifies the served certificate for SERVICE.NAMESPACE.svc; then again when the policies or
the certificate change (only if their content changes). A failed write is logged
("event":"webhook-registration") and counted (celgate_webhook_registrations_total), and retried.
On shutdown they are left as they are, for the replicas still serving: to uninstall, delete them
first. The ClusterRole needs get and update on the two names (\`celgate manifests --rbac
--register-webhooks NAMESPACE/SERVICE\`), and create when they do not exist yet.

Policy reloads never fail open: a file that cannot be read or parsed (or is over the limits, or
its YAML aliases expand too far) keeps its last good content while the other files' changes are
applied, and a reload that would remove a policy, binding or param (a file emptied, truncated or
deleted) waits until the files read the same twice, 1 s apart. A set whose estimated memory is
over its share of the heap (half of it, less what the server needs besides) is refused, at start or
on a reload (PE_SET_MEMORY; metric celgate_policy_sets_refused_memory_total). Each reload is one
JSON line in the log ("event":"policy-reload"), a partial or failed one at error level with every
problem as \`celgate check\` prints it, and counted in celgate_policy_reloads_total.

On SIGTERM or SIGINT: readiness turns off, answers go on for --drain-seconds (each asking the
client to reconnect elsewhere), then the server closes; a second signal exits at once.

Exit status: 0 after a clean shutdown, 1 after a second signal or a failed shutdown, 2 bad
options, unreadable certificates or policy files, or a port that cannot be opened. With
--dry-run: \`celgate check\`'s status (0 no errors, 1 errors found, 2 bad options).
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    policies: { type: "string", multiple: true },
    host: { type: "string", default: "0.0.0.0" },
    port: { type: "string", default: "8443" },
    "metrics-port": { type: "string", default: "8080" },
    "tls-cert": { type: "string" },
    "tls-key": { type: "string" },
    "client-ca": { type: "string" },
    "drain-seconds": { type: "string", default: "10" },
    "log-level": { type: "string", default: "info" },
    "cel-extras": { type: "string" },
    ...KUBERNETES_VERSION_OPTION,
    kubeconfig: { type: "string" },
    "no-cluster": { type: "boolean", default: false },
    "policies-from-cluster": { type: "boolean", default: false },
    "cluster-stale-seconds": { type: "string", default: String(DEFAULT_SILENCE_MS / 1000) },
    "cluster-stale-readiness": { type: "string", default: "serve" },
    "max-connections": { type: "string", default: String(DEFAULT_LIMITS.maxConnections) },
    "max-inflight-mib": { type: "string", default: String(DEFAULT_LIMITS.maxBytesInFlight / 1048576) },
    "max-policy-file-mib": { type: "string", default: String(DEFAULT_READ_LIMITS.maxFileBytes / 1048576) },
    "max-policy-set-mib": { type: "string", default: String(DEFAULT_READ_LIMITS.maxSetBytes / 1048576) },
    "dry-run": { type: "boolean", default: false },
    "log-values": { type: "boolean", default: false },
    "register-webhooks": { type: "string" },
    "webhook-ca": { type: "string" },
    "webhook-port": { type: "string" },
    record: { type: "string" },
    "record-sample": { type: "string", default: "1" },
    "record-max-mib": { type: "string", default: String(DEFAULT_RECORD_MIB) },
  },
  allowPositionals: false,
} as const;

function port(text: string): number | undefined {
  const n = Number(text);
  return Number.isInteger(n) && n >= 0 && n <= 65535 ? n : undefined;
}

/** What is wrong with the certificate flags of a dry run, or undefined. */
function dryRunCertificate(cert: string | undefined, key: string | undefined, io: CliIO): string | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) return "--tls-cert and --tls-key go together";
  const loaded = loadTlsMaterial(userPath(io, cert), userPath(io, key));
  return loaded.ok ? undefined : loaded.error.message;
}

/** A request to paste into a shell: a Pod the bundled policies deny, sent to a local URL of `url`'s port. */
export function curlExample(url: string): string {
  const u = new URL(url);
  // A server listening on every address is reached on loopback.
  const host = u.hostname === "0.0.0.0" ? "127.0.0.1" : u.hostname === "[::]" ? "[::1]" : u.hostname;
  const review = {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "1",
      operation: "CREATE",
      namespace: "default",
      name: "web",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      userInfo: { username: "alice" },
      object: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "app", image: "nginx", securityContext: { privileged: true } }] },
      },
    },
  };
  return `try it: curl -sk https://${host}:${u.port}/validate -H 'content-type: application/json' -d '${JSON.stringify(review)}'`;
}

type ServeValues = ParsedServeArgs["values"];
type ParsedServeArgs = Exclude<ReturnType<typeof parseServeArgs>, number>;

function parseServeArgs(args: readonly string[], io: CliIO) {
  return parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
}

/** serve's options from its flags, in the order they are checked, or the first flag that is wrong. */
function serveOptions(values: ServeValues, io: CliIO): Result<ServeOptions, string> {
  const policies = values.policies ?? [];
  if (policies.length === 0) return err("missing --policies PATH");
  const admissionPort = port(values.port);
  if (admissionPort === undefined) return err(`--port must be a port number, got '${values.port}'`);
  const metricsPort = port(values["metrics-port"]);
  if (metricsPort === undefined)
    return err(`--metrics-port must be a port number, got '${values["metrics-port"]}'`);
  const drain = Number(values["drain-seconds"]);
  if (!Number.isFinite(drain) || drain < 0)
    return err(`--drain-seconds must be a number of seconds, got '${values["drain-seconds"]}'`);
  const logLevel = values["log-level"];
  if (!isLogLevel(logLevel)) return err(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  let celExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return e;
    celExtras = e.value;
  }
  const release = kubernetesVersionOf(values["kubernetes-version"]);
  if (!release.ok) return release;
  if (values["no-cluster"] && (values.kubeconfig !== undefined || values["policies-from-cluster"]))
    return err("--no-cluster cannot go with --kubeconfig or --policies-from-cluster");
  const staleSeconds = Number(values["cluster-stale-seconds"]);
  if (!Number.isFinite(staleSeconds) || staleSeconds <= 0)
    return err(
      `--cluster-stale-seconds must be a number of seconds above 0, got '${values["cluster-stale-seconds"]}'`,
    );
  const staleReadiness = values["cluster-stale-readiness"];
  if (!(STALE_READINESS as readonly string[]).includes(staleReadiness))
    return err(`--cluster-stale-readiness must be serve or unready, got '${staleReadiness}'`);
  const maxConnections = Number(values["max-connections"]);
  if (!Number.isInteger(maxConnections) || maxConnections < 1)
    return err(`--max-connections must be a whole number above 0, got '${values["max-connections"]}'`);
  const inflightMib = Number(values["max-inflight-mib"]);
  if (!Number.isFinite(inflightMib) || inflightMib < 1)
    return err(`--max-inflight-mib must be a number of MiB, at least 1, got '${values["max-inflight-mib"]}'`);
  const fileMib = Number(values["max-policy-file-mib"]);
  const setMib = Number(values["max-policy-set-mib"]);
  for (const [flag, v] of [
    ["max-policy-file-mib", fileMib],
    ["max-policy-set-mib", setMib],
  ] as const)
    if (!Number.isFinite(v) || v <= 0)
      return err(`--${flag} must be a number of MiB above 0, got '${values[flag]}'`);
  const register = registerWebhooksOf(values, io);
  if (!register.ok) return register;
  const record = recordOf(values, io);
  if (!record.ok) return record;
  return ok({
    ...register.value,
    ...record.value,
    policies: policies.map((p) => userPath(io, p)),
    readLimits: { maxFileBytes: Math.round(fileMib * 1048576), maxSetBytes: Math.round(setMib * 1048576) },
    host: values.host,
    port: admissionPort,
    metricsPort,
    ...(values["tls-cert"] ? { tlsCert: userPath(io, values["tls-cert"]) } : {}),
    ...(values["tls-key"] ? { tlsKey: userPath(io, values["tls-key"]) } : {}),
    ...(values["client-ca"] ? { clientCa: userPath(io, values["client-ca"]) } : {}),
    drainMs: drain * 1000,
    limits: { maxConnections, maxBytesInFlight: Math.round(inflightMib * 1048576) },
    celExtras,
    ...(release.value !== undefined ? { kubernetesVersion: release.value } : {}),
    logLevel,
    cluster: {
      disabled: values["no-cluster"],
      ...(values.kubeconfig !== undefined ? { kubeconfig: userPath(io, values.kubeconfig) } : {}),
      policiesFromCluster: values["policies-from-cluster"],
      reflector: { silenceMs: staleSeconds * 1000 },
      staleReadiness: staleReadiness as StaleReadiness,
    },
    logValues: values["log-values"],
  });
}

/** `--record DIR`, `--record-sample RATE` and `--record-max-mib N`, or what is wrong with them. */
function recordOf(values: ServeValues, io: CliIO): Result<Pick<ServeOptions, "record">, string> {
  const dir = values.record;
  const sampleRate = Number(values["record-sample"]);
  const mib = Number(values["record-max-mib"]);
  if (!(sampleRate > 0 && sampleRate <= 1))
    return err(`--record-sample must be a number above 0 and at most 1, got '${values["record-sample"]}'`);
  if (!(Number.isFinite(mib) && mib >= 1))
    return err(`--record-max-mib must be a number of MiB, at least 1, got '${values["record-max-mib"]}'`);
  if (dir === undefined) return ok({});
  return ok({ record: { dir: userPath(io, dir), sampleRate, maxBytes: Math.round(mib * 1048576) } });
}

/** RFC 1123 label (a namespace name) and RFC 1035 label (a Service name). */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `--register-webhooks NAMESPACE/SERVICE` and `--webhook-ca FILE`, or what is wrong with them. */
function registerWebhooksOf(
  values: ServeValues,
  io: CliIO,
): Result<Pick<ServeOptions, "registerWebhooks">, string> {
  const given = values["register-webhooks"];
  const ca = values["webhook-ca"];
  const portText = values["webhook-port"];
  if (given === undefined) {
    if (ca !== undefined) return err("--webhook-ca goes with --register-webhooks");
    return portText === undefined ? ok({}) : err("--webhook-port goes with --register-webhooks");
  }
  const [namespace = "", service = "", ...rest] = given.split("/");
  if (rest.length > 0 || !DNS1123_LABEL.test(namespace) || !DNS1035_LABEL.test(service))
    return err(
      `--register-webhooks must be NAMESPACE/SERVICE (the Service the API server calls), got '${given}'`,
    );
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && !(/^\d+$/.test(portText ?? "") && port >= 1 && port <= 65535))
    return err(`--webhook-port must be a port number from 1 to 65535, got '${portText}'`);
  return ok({
    registerWebhooks: {
      namespace,
      service,
      ...(ca !== undefined ? { caFile: userPath(io, ca) } : {}),
      ...(port !== undefined ? { port } : {}),
    },
  });
}

/** `--dry-run`: the same loading, compiling and report as `celgate check`, so the two never disagree. */
function dryRun(values: ServeValues, io: CliIO, fail: (message: string) => number): Promise<number> | number {
  const certificate = dryRunCertificate(values["tls-cert"], values["tls-key"], io);
  if (certificate !== undefined) return fail(certificate);
  return check.run(
    [
      ...(values.policies ?? []),
      ...(values["cel-extras"] !== undefined ? ["--cel-extras", values["cel-extras"]] : []),
      ...(values["kubernetes-version"] !== undefined
        ? ["--kubernetes-version", values["kubernetes-version"]]
        : []),
    ],
    io,
  );
}

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseServeArgs(args, io);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const options = serveOptions(values, io);
  if (!options.ok) return fail(options.error);
  if (values["dry-run"]) return dryRun(values, io, fail);
  const log = (line: string) => io.stderr(`${line}\n`);
  const started = await startWebhook(options.value, log);
  if (!started.ok) {
    io.stderr(`celgate serve: ${started.message}\n`);
    return EXIT_USAGE;
  }
  const { webhook } = started;
  // A development server (no certificate given) says how to try it.
  if (webhook.generatedCert !== undefined) log(curlExample(webhook.url));
  // Runs until a signal; the handler drains the webhook (readiness off, keep answering), then closes.
  const code = await new Promise<number>((resolve) => {
    webhook.server.installSignalHandlers({ exit: resolve });
  });
  await webhook.release();
  log(
    code === 0
      ? "celgate stopped"
      : webhook.server.aborted
        ? "celgate stopped at once on a second signal; requests in flight were dropped"
        : "celgate stopped after a failed shutdown",
  );
  return code === 0 ? EXIT_OK : code;
}
