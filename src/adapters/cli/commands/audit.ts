/**
 * `celgate audit`: policies against objects that already exist, from files or from a cluster,
 * reported per policy and as PolicyReports. Each object is reviewed as the CREATE of itself.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { CelExtras } from "../../../cel/index.ts";
import { asksAuthorizer, evaluateWithReviews } from "../../../cluster/reviews.ts";
import type { ApiClient } from "../../../cluster/client.ts";
import type { ResourceInfo } from "../../../cluster/discovery.ts";
import { listableResources, pages, resourcesToAudit } from "../../../cluster/objects.ts";
import { SubjectAccessReviewer } from "../../../cluster/sar.ts";
import { type ClusterLog, QUIET_LOG } from "../../../cluster/observe.ts";
import { ClusterState, paramKindsOf } from "../../../cluster/state.ts";
import { type CompiledPolicySet, compilePolicySet } from "../../../compile/policy.ts";
import { admit } from "../../../engine/admit.ts";
import { contextFromResources, type EngineContext } from "../../../engine/context.ts";
import { KindScopes } from "../../../kube/scope.ts";
import { buildRequest, type ResourceRef, resourceRef } from "../../../engine/request.ts";
import type { PolicyResult } from "../../../engine/types.ts";
import type { AdmissionRequest, UserInfo } from "../../../request/types.ts";
import type { ResourceObject, SourceMap } from "../../../policy/types.ts";
import { err, ok, type Result } from "../../../result.ts";
import { loadPolicyPaths, noPolicyWarnings } from "../../../sources/files.ts";
import {
  type DataDocument,
  type DataFile,
  dataFiles,
  isJsonObject,
  parseDocuments,
} from "../../input/documents.ts";
import { AuditTally, type ReportApi } from "../../output/audit.ts";
import { errorCount, formatDiagnostics, unboundNote } from "../../output/diagnostics.ts";
import { HELP_OPTION, parseCommandArgs, usageError, userPath } from "../args.ts";
import { extrasAndUser, outputAndPolicies } from "../dry-run.ts";
import { terminalWidth } from "../terminal.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "../io.ts";
import { stringifyJson } from "../../../request/json-deep.ts";
import { parseJson } from "../../../yaml/json-numbers.ts";

export const name = "audit";
export const summary = "evaluate policies against existing objects, from files or a cluster";
export const usage = "celgate audit -p POLICY_PATH... (-r PATH... | --kubeconfig FILE) [options]";
export const help = `Evaluate admission policies against objects that already exist, and report what they find.

usage: ${usage}

Each object is reviewed as the CREATE of itself: operation CREATE, no oldObject (there is no
UPDATE to compare with), the user of --user/--groups, mutating policies first and validating
policies on the result, as \`celgate eval\` does. Mutations are a shadow run: the patch each object
would get is reported, nothing is written.

Options:
  -p, --policy PATH          policy file or directory (repeatable); parameter objects and
                             Namespaces found there are used too
  -r, --resource PATH        objects to audit, YAML or JSON, one or more documents or a List
                             (\`kubectl get -A -o yaml\`), or a directory of such files (walked as
                             for -p); '-' reads standard input (repeatable).
                             Namespaces and objects of the policies' paramKinds among them are
                             used as Namespaces and params. A file is read whole.
  --kubeconfig FILE          audit the cluster in FILE instead: every resource a policy can select
                             on CREATE, listed page by page (--page-size) so memory stays bounded,
                             with Namespaces and params from the same cluster and authorizer checks
                             answered by SubjectAccessReviews
  --page-size N              objects per list request (default 500)
  --timeout SECONDS          with --kubeconfig: how long to wait for the cluster's first lists and
                             for each request (default 30); what it waits for is said on stderr at
                             once, and a cluster that has not answered by then fails the audit
  --params PATH              more files or directories with parameter objects (repeatable)
  --user NAME                request.userInfo.username (default: celgate)
  --groups G1,G2             request.userInfo.groups (default: system:authenticated)
  --cel-extras LIST          compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  -o, --output FORMAT        table (default): passes, failures, warnings, errors and skips per
                             policy and binding; json or yaml: the same and every finding (each
                             result that is not a pass or skip); policyreport: PolicyReport and
                             ClusterPolicyReport objects (wgpolicyk8s.io/v1alpha2); openreports:
                             the same as Report and ClusterReport (openreports.io/v1alpha1).
                             Reports keep one entry per result; the other formats do not grow
                             with the number of objects that pass.
  --include-unbound          also audit the policies no binding names, as if bound with
                             validationActions [Deny] (the API server never evaluates them)
  --stats                    print objects, objects/s and the process's peak memory on stderr
  -h, --help                 show this help

A result is fail when a validation failed and its binding denies or audits, warn when the binding
only warns, and warn for a mutating policy that would change the object (the patch is in the
finding, and in a report result's properties.patch). Policies without a binding are not audited,
as the API server never evaluates them (a note on stderr names them); --include-unbound audits
them as if bound with validationActions [Deny]. On a terminal, progress goes to stderr.

Exit status: 0 no fail and no error, 1 a fail or an error, 2 bad options or input.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    policy: { type: "string", short: "p", multiple: true },
    resource: { type: "string", short: "r", multiple: true },
    kubeconfig: { type: "string" },
    "page-size": { type: "string", default: "500" },
    timeout: { type: "string", default: "30" },
    params: { type: "string", multiple: true },
    user: { type: "string" },
    groups: { type: "string" },
    "cel-extras": { type: "string" },
    output: { type: "string", short: "o", default: "table" },
    stats: { type: "boolean", default: false },
    "include-unbound": { type: "boolean", default: false },
  },
  allowPositionals: false,
} as const;

const OUTPUTS = ["table", "json", "yaml", "policyreport", "openreports"] as const;
type Output = (typeof OUTPUTS)[number];

/** How long one object may take through all policies, SubjectAccessReviews included. */
const OBJECT_DEADLINE_MS = 30_000;

interface Audit {
  readonly set: CompiledPolicySet;
  readonly tally: AuditTally;
  readonly user: UserInfo;
  /** Which kinds are cluster-scoped: the built-in API's, and the CRDs among the policy files. */
  readonly scopes: KindScopes;
  readonly progress: (note: string) => void;
  /** `--include-unbound`: the policies no binding names too, as if bound with [Deny]. */
  readonly includeUnbound: boolean;
}

const INPUT_SOURCE: SourceMap = { file: "(input)", locate: () => ({ file: "(input)", line: 1, column: 1 }) };

function asResource(o: Record<string, unknown>, ref: ResourceRef): ResourceObject {
  const md = isJsonObject(o.metadata) ? o.metadata : {};
  const labels = isJsonObject(md.labels) ? (md.labels as Record<string, string>) : {};
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    name: ref.name,
    ...(ref.namespace ? { namespace: ref.namespace } : {}),
    labels,
    object: o,
    source: INPUT_SOURCE,
  };
}

function uidOf(o: Record<string, unknown>): string | undefined {
  const md = isJsonObject(o.metadata) ? o.metadata : {};
  return typeof md.uid === "string" ? md.uid : undefined;
}

/** `kind: List` and typed lists (`PodList`) alike. */
function items(doc: unknown): unknown[] {
  if (
    isJsonObject(doc) &&
    typeof doc.kind === "string" &&
    doc.kind.endsWith("List") &&
    Array.isArray(doc.items)
  )
    return doc.items;
  return [doc];
}

/**
 * eval's dry run, the engine's whole admission chain (mutate, then validate the result; unbound
 * policies only with --include-unbound), without the explain trace, which an audit never shows.
 */
function dryRun(audit: Audit, request: AdmissionRequest, ctx: EngineContext): readonly PolicyResult[] {
  // As eval: the API server's defaults again after each mutation (engine/redefault.ts).
  const options = {
    deadline: performance.now() + OBJECT_DEADLINE_MS,
    allBindings: true,
    includeUnbound: audit.includeUnbound,
    trace: false,
    defaults: true,
  };
  return admit(audit.set, request, ctx, options).results;
}

/**
 * The CREATE review of an existing object, as `eval` builds it (the request's namespace, the API
 * server's defaults), or why it cannot be built.
 */
function reviewOf(
  audit: Audit,
  object: Record<string, unknown>,
  ref: ResourceRef,
): Result<AdmissionRequest, string> {
  const built = buildRequest(ref, {
    operation: "CREATE",
    object,
    userInfo: audit.user,
    uid: randomUUID(),
    scopes: audit.scopes,
  });
  return built.ok ? ok(built.value.request) : built;
}

/** Counts one object's results (once, whatever number of runs SubjectAccessReviews took). */
function tallyObject(
  audit: Audit,
  request: AdmissionRequest,
  ref: ResourceRef,
  results: readonly PolicyResult[],
): void {
  const named = { ...ref, namespace: ref.kind === "Namespace" ? "" : request.namespace };
  const uid = uidOf(request.object ?? {});
  audit.tally.add({ ref: named, ...(uid ? { uid } : {}) }, results);
}

/**
 * A file's documents. `kubectl get -o json` output is one JSON document, often large: it is read
 * with parseJson (JSON.parse, unless a number needs reading exactly as the API server's decoder
 * reads it), many times faster and smaller than the YAML parser; anything else (YAML, or JSON
 * with an error, for a located message) goes through the YAML parser.
 */
async function readObjects(file: DataFile, io: CliIO): Promise<Result<DataDocument[], string>> {
  let text: string;
  const name = file.path === "-" ? "<stdin>" : file.shown;
  try {
    text = file.path === "-" ? await io.stdin() : await readFile(file.path, "utf8");
  } catch (e) {
    return err(`cannot read ${file.shown}: ${(e as Error).message}`);
  }
  if (/^\s*[{[]/.test(text)) {
    try {
      return ok([{ file: name, index: 1, value: parseJson(text) }]);
    } catch {
      // Not plain JSON after all (JSON-like YAML, or a syntax error to locate): the YAML parser says.
    }
  }
  return parseDocuments(text, name);
}

/** The files named, a directory's YAML and JSON files for a directory ('-' stays standard input). */
async function expandFiles(paths: readonly string[], io: CliIO): Promise<Result<DataFile[], string>> {
  const out: DataFile[] = [];
  for (const p of paths) {
    const files = p === "-" ? ok([{ path: p, shown: p }]) : await dataFiles(userPath(io, p), p);
    if (!files.ok) return files;
    out.push(...files.value);
  }
  return out.length > 0 ? ok(out) : err(`no YAML or JSON file in ${paths.join(", ")}`);
}

async function auditFiles(audit: Audit, paths: readonly string[], io: CliIO): Promise<string | undefined> {
  const objects: { object: Record<string, unknown>; ref: ResourceRef }[] = [];
  const files = await expandFiles(paths, io);
  if (!files.ok) return files.error;
  for (const file of files.value) {
    const docs = await readObjects(file, io);
    if (!docs.ok) return docs.error;
    for (const doc of docs.value) {
      for (const [i, item] of items(doc.value).entries()) {
        const ref = resourceRef(item, `${file.shown} (document ${doc.index}) item ${i}`);
        if (!ref.ok) return ref.error;
        objects.push({ object: item as Record<string, unknown>, ref: ref.value });
      }
    }
  }
  const paramKinds = new Set(paramKindsOf(audit.set).map((k) => `${k.apiVersion}/${k.kind}`));
  const context = objects
    .filter((o) => o.ref.kind === "Namespace" || paramKinds.has(`${o.ref.apiVersion}/${o.ref.kind}`))
    .map((o) => asResource(o.object, o.ref));
  const ctx = contextFromResources([...audit.set.resources, ...context], { assumeNamespaces: true });
  for (const [i, o] of objects.entries()) {
    const request = reviewOf(audit, o.object, o.ref);
    if (!request.ok) return `${o.ref.kind} '${o.ref.name}': ${request.error}`;
    tallyObject(audit, request.value, o.ref, dryRun(audit, request.value, ctx));
    if (i % 500 === 499) audit.progress(`${i + 1} of ${objects.length} objects`);
  }
  return undefined;
}

async function auditCluster(
  audit: Audit,
  client: ApiClient,
  { pageSize, timeoutSeconds }: { readonly pageSize: number; readonly timeoutSeconds: number },
  io: CliIO,
): Promise<string | undefined> {
  // The first error a cache meets (refused, a TLS or HTTP error), for the message if it never syncs.
  let firstError: string | undefined;
  const log: ClusterLog = {
    ...QUIET_LOG,
    error: (fields) => {
      if (firstError === undefined && typeof fields.error === "string") firstError = fields.error;
    },
  };
  const state = new ClusterState(client, { log });
  try {
    const paramKinds = paramKindsOf(audit.set);
    state.follow(paramKinds);
    const what = paramKinds.length > 0 ? "Namespaces and params" : "Namespaces";
    // Said at once, on a terminal or not: nothing else is printed until the cluster answers.
    io.stderr(
      `celgate audit: waiting for ${client.server} to list ${what} (up to ${timeoutSeconds} s; --timeout)\n`,
    );
    if (!(await state.whenReady(timeoutSeconds * 1000)))
      return `${client.server} did not answer within ${timeoutSeconds} s (listing ${what})${firstError === undefined ? "" : `: ${firstError}`}`;
    const ctx = state.context(contextFromResources(audit.set.resources));
    const reviewer = asksAuthorizer(audit.set) ? new SubjectAccessReviewer(client) : undefined;
    let resources: ResourceInfo[];
    try {
      resources = resourcesToAudit(audit.set, await listableResources(client));
    } catch (e) {
      return `discovery failed: ${(e as Error).message}`;
    }
    if (resources.length === 0) io.stderr("celgate audit: no resource the policies select is served\n");
    for (const r of resources) {
      const label = r.group === "" ? r.resource : `${r.resource}.${r.group}`;
      for await (const page of pages(client, r, pageSize)) {
        for (const object of page) {
          const ref = resourceRef(object, label);
          if (!ref.ok) continue;
          // The cluster says where the object lives and what its resource is called.
          const info: ResourceRef = { ...ref.value, namespace: r.namespaced ? ref.value.namespace : "" };
          const request = reviewOf(audit, object as Record<string, unknown>, info);
          if (!request.ok) {
            io.stderr(`celgate audit: ${label} '${info.name}' not audited: ${request.error}\n`);
            continue;
          }
          const results = reviewer
            ? await evaluateWithReviews(
                reviewer,
                audit.user,
                ctx,
                performance.now() + OBJECT_DEADLINE_MS,
                (c) => dryRun(audit, request.value, c),
              )
            : dryRun(audit, request.value, ctx);
          tallyObject(audit, request.value, info, results);
        }
        audit.progress(`${audit.tally.objectCount} objects (${label})`);
      }
    }
    return undefined;
  } catch (e) {
    return `${client.server}: ${(e as Error).message}`;
  } finally {
    state.stop();
  }
}

type Values = Exclude<ReturnType<typeof parseCommandArgs<typeof OPTIONS>>, number>["values"];

/** What the options ask for, checked. */
interface AuditOptions {
  readonly output: Output;
  readonly policyPaths: readonly string[];
  readonly files: readonly string[];
  readonly pageSize: number;
  /** `--timeout`: the cluster's first lists, and each request. */
  readonly timeoutSeconds: number;
  readonly extras: CelExtras;
  readonly user: UserInfo;
}

/** The options checked in the order the help lists them; or what is wrong. */
function auditOptions(values: Values): Result<AuditOptions, string> {
  const shared = outputAndPolicies(values, OUTPUTS, OUTPUTS.join(", "));
  if (!shared.ok) return shared;
  const files = values.resource ?? [];
  if (files.length === 0 && values.kubeconfig === undefined)
    return err("give -r/--resource FILE or --kubeconfig FILE");
  if (files.length > 0 && values.kubeconfig !== undefined)
    return err("-r/--resource and --kubeconfig are alternatives: audit files or a cluster");
  if (files.filter((f) => f === "-").length > 1) return err("standard input ('-') can be read only once");
  const pageSize = Number(values["page-size"]);
  if (!Number.isInteger(pageSize) || pageSize < 1)
    return err(`--page-size must be a positive whole number, got '${values["page-size"]}'`);
  const timeoutSeconds = Number(values.timeout);
  if (!/^\d+$/.test(values.timeout) || timeoutSeconds < 1 || timeoutSeconds > 3600)
    return err(`--timeout must be a whole number of seconds from 1 to 3600, got '${values.timeout}'`);
  const request = extrasAndUser(values);
  if (!request.ok) return request;
  const { extras, userInfo: user } = request.value;
  return ok({ ...shared.value, files, pageSize, timeoutSeconds, extras, user });
}

/**
 * The policies compiled, with the parameter objects of --params among their resources; or the exit
 * status after reporting the policy files' errors.
 */
async function loadPolicies(
  io: CliIO,
  policyPaths: readonly string[],
  paramFiles: readonly string[],
  extras: CelExtras,
): Promise<CompiledPolicySet | number> {
  const loaded = await loadPolicyPaths(policyPaths.map((p) => userPath(io, p)));
  const compiled = compilePolicySet(loaded.set, { extras });
  const params =
    paramFiles.length > 0 ? await loadPolicyPaths(paramFiles.map((p) => userPath(io, p))) : undefined;
  const diagnostics = [
    ...loaded.diagnostics,
    ...noPolicyWarnings(
      policyPaths.map((p) => userPath(io, p)),
      loaded.set,
      loaded.diagnostics,
      policyPaths,
    ),
    ...compiled.diagnostics,
    ...(params?.diagnostics ?? []),
  ];
  if (diagnostics.length > 0) io.stderr(formatDiagnostics(diagnostics));
  if (errorCount(diagnostics) > 0) {
    io.stderr("celgate audit: the policy files have errors; nothing was audited\n");
    return EXIT_USAGE;
  }
  return { ...compiled, resources: [...compiled.resources, ...(params?.set.resources ?? [])] };
}

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const checked = auditOptions(values);
  if (!checked.ok) return fail(checked.error);
  const { output, policyPaths, files, pageSize, timeoutSeconds, extras, user } = checked.value;

  const set = await loadPolicies(io, policyPaths, values.params ?? [], extras);
  if (typeof set === "number") return set;
  const reports = output === "policyreport" || output === "openreports";
  const tally = new AuditTally({ reports, findings: output === "json" || output === "yaml" });
  const progress = io.isTTY ? (note: string) => io.stderr(`\r\x1b[Kcelgate audit: ${note}`) : () => {};
  const scopes = KindScopes.from(set.resources.map((r) => r.object));
  const includeUnbound = values["include-unbound"];
  const audit: Audit = { set, tally, user, scopes, progress, includeUnbound };
  if (!includeUnbound)
    io.stderr(
      unboundNote(
        set.unbound.map((p) => p.name),
        "--include-unbound",
        terminalWidth(io),
      ),
    );
  const started = performance.now();

  let problem: string | undefined;
  if (values.kubeconfig !== undefined) {
    const { connect } = await import("../../../cluster/client.ts");
    const client = await connect({
      kubeconfig: userPath(io, values.kubeconfig),
      requestTimeoutMs: timeoutSeconds * 1000,
    });
    if (!client.ok) return fail(client.error);
    problem = await auditCluster(audit, client.value, { pageSize, timeoutSeconds }, io);
  } else problem = await auditFiles(audit, files, io);
  if (io.isTTY) io.stderr("\r\x1b[K");
  if (problem !== undefined) {
    io.stderr(`celgate audit: ${problem}\n`);
    return EXIT_USAGE;
  }

  printTally(io, tally, output);
  if (values.stats) printStats(io, tally, started);
  return tally.failed() ? EXIT_OUTCOME : EXIT_OK;
}

/** The tally in the chosen format, on standard output. */
function printTally(io: CliIO, tally: AuditTally, output: Output): void {
  if (output === "table") io.stdout(tally.table());
  else if (output === "json") io.stdout(tally.json());
  else if (output === "yaml") io.stdout(tally.yaml());
  else {
    const api: ReportApi = output === "openreports" ? "openreports.io/v1alpha1" : "wgpolicyk8s.io/v1alpha2";
    const docs = tally.reports(api, new Date());
    io.stdout(stringifyJson({ apiVersion: "v1", kind: "List", items: docs }, 2) + "\n");
  }
}

/** `--stats`: objects, objects per second and the process's peak memory, on standard error. */
function printStats(io: CliIO, tally: AuditTally, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  const rate = seconds > 0 ? Math.round(tally.objectCount / seconds) : tally.objectCount;
  const maxRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  io.stderr(
    `celgate audit: ${tally.objectCount} objects in ${seconds.toFixed(2)} s (${rate} objects/s), peak RSS ${maxRssMb} MB\n`,
  );
}
