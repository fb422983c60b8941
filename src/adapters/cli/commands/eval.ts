/**
 * `celgate eval`: dry-run policies against resource files, as the API server would admit them —
 * mutating policies first, then validating policies on the mutated object.
 */
import { randomUUID } from "node:crypto";
import { type CelExtras, DEFAULT_RELEASE, NEWEST_RELEASE, OLDEST_RELEASE } from "../../../cel/index.ts";
import { type CompiledPolicySet, type CompileOptions, compilePolicySet } from "../../../compile/policy.ts";
import type { Diagnostic } from "../../../errors.ts";
import { admit, OFFLINE_DEADLINE_MS } from "../../../engine/admit.ts";
import { contextFromResources, type EngineContext } from "../../../engine/context.ts";
import { decide } from "../../../engine/decision.ts";
import { type AdmissionRequest, OPERATIONS, type UserInfo } from "../../../request/types.ts";
import { KindScopes } from "../../../kube/scope.ts";
import type { Operation, ResourceObject } from "../../../policy/types.ts";
import { err, ok, type Result } from "../../../result.ts";
import { loadPolicyPaths, noPolicyWarnings } from "../../../sources/files.ts";
import { errorCount, formatDiagnostics, plural, unboundNote } from "../../output/diagnostics.ts";
import { withNameHints } from "../../output/hints.ts";
import {
  formatResultsJson,
  formatResultsTable,
  formatResultsYaml,
  type ResourceEvaluation,
  resourceEvaluation,
} from "../../output/results.ts";
import {
  compileChoice,
  HELP_OPTION,
  KUBERNETES_VERSION_OPTION,
  kubernetesVersionOf,
  parseCommandArgs,
  usageError,
  userPath,
} from "../args.ts";
import {
  type DataFile,
  dataFiles,
  isJsonObject,
  parseDocuments,
  readDocuments,
  readSingleDocument,
} from "../../input/documents.ts";
import { decodeSavedReview } from "../../admission/saved.ts";
import { extrasAndUser, outputAndPolicies } from "../dry-run.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, EXIT_USAGE } from "../io.ts";
import { writeMutated } from "../mutated.ts";
import { terminalWidth } from "../terminal.ts";
import {
  buildRequest,
  defaultedFields,
  expandLists,
  type RequestOptions,
  type ResourceRef,
  resourceRef,
} from "../../../engine/request.ts";

export const name = "eval";
export const summary = "dry-run policies against resource files";
export const usage = "celgate eval -p POLICY_PATH... -r RESOURCE_PATH... [options]";
export const help = `Evaluate admission policies against resources, offline, as the API server would: mutating
policies first, then validating policies on the mutated object.

usage: ${usage}

Options:
  -p, --policy PATH          policy file or directory (repeatable); parameter objects and
                             Namespaces found there are used too
  -r, --resource PATH        resource file, YAML or JSON, one or more documents or a List, or a
                             directory of them (walked as for -p: .yaml, .yml and .json files,
                             recursively) (repeatable; '-' reads standard input, e.g. from kubectl
                             get -o yaml); an AdmissionReview (v1 or v1beta1) is evaluated as its
                             request says
  --old-resource FILE        the stored object(s): makes the operation UPDATE. With several
                             resources, each is paired with the old object of the same kind,
                             namespace and name
  --operation OP             CREATE (default), UPDATE (needs --old-resource), DELETE (the resource
                             is the object being deleted) or CONNECT
  --subresource NAME         e.g. status, scale
  --user NAME                request.userInfo.username (default: celgate)
  --groups G1,G2             request.userInfo.groups (default: system:authenticated)
  --namespace-object FILE    the Namespace of the resources (namespaceSelector, namespaceObject);
                             resources without metadata.namespace are put in it
  --params PATH              files or directories with parameter objects (repeatable)
  --cel-extras LIST          compile with non-Kubernetes CEL features: bind, math, base64 (or all)
  --kubernetes-version X.Y   compile and evaluate as Kubernetes X.Y would (${OLDEST_RELEASE} to ${NEWEST_RELEASE}; default
                             ${DEFAULT_RELEASE}); see 'celgate help check'
  -o, --output FORMAT        table (default), json or yaml
  --explain                  show every matchCondition, variable, validation and mutation with
                             its value, and the fields the API server's defaults set
  --show-skipped             also list the policies that do not apply (hidden by default in the
                             table; -o json and -o yaml always hold them)
  --write-mutated DIR        write each resource as admission leaves it (mutated, namespaced and
                             defaulted), one file per object (a List's items too), to
                             DIR/<kind>_<namespace>_<name>.yaml (kind in lower case; no namespace
                             part for a cluster-scoped object); never overwrites an input file
  --no-defaults              evaluate the manifests as written, without the defaults the API
                             server applies before admission
  --include-unbound          also evaluate the policies no binding names, as if bound with
                             validationActions [Deny] (the API server never evaluates them)
  -h, --help                 show this help

The table has a row per policy evaluation (a mutating policy's second run, when a later policy
changed the object and its reinvocationPolicy is IfNeeded, is marked '(reinvoked)'), then a line
per resource with what the API server would answer (allowed or denied, warnings, patched) and a
count. On a terminal it is fitted to the width. -o json and -o yaml give, per resource, the
decision (allowed, status, warnings, auditAnnotations, patch) and every policy's result, whole.

Policies that no binding refers to are not evaluated, as the API server evaluates only the
policies a binding names (and celgate serve does the same); a note on stderr names them. With
--include-unbound they are evaluated as if bound with validationActions [Deny], and the output
says so (binding '(none)*' in the table, "binding": null in JSON and YAML).
Resources without metadata.namespace go to the default namespace, unless their kind is
cluster-scoped (Namespace, ClusterRole, ...), and get that namespace in metadata.namespace, as
the API server sets it before admission. Built-in kinds (Pod, Deployment, Service, Namespace,
Job, ...) get the defaults the API server applies (Kubernetes ${DEFAULT_RELEASE}): imagePullPolicy, replicas,
the kubernetes.io/metadata.name label, ... Namespaces come from the policy paths, --params and
--namespace-object; a namespace none of them defines is taken to exist.

A saved AdmissionReview (what the API server sends a webhook) is evaluated exactly as 'celgate
serve' would evaluate it: decoded by the webhook's decoder (a review serve would refuse is refused
with the same reason), with the request's own namespace, user, operation, objects, dryRun and
options, and no offline defaulting. --old-resource, --operation, --subresource, --user and
--groups build requests from plain resources and cannot be given with one.

Exit status: 0 nothing denied and no evaluation errors, 1 a denial or an evaluation error,
2 bad options or input (policy files with errors are reported and nothing is evaluated).
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    policy: { type: "string", short: "p", multiple: true },
    resource: { type: "string", short: "r", multiple: true },
    "old-resource": { type: "string" },
    operation: { type: "string" },
    subresource: { type: "string" },
    user: { type: "string" },
    groups: { type: "string" },
    "namespace-object": { type: "string" },
    params: { type: "string", multiple: true },
    "cel-extras": { type: "string" },
    ...KUBERNETES_VERSION_OPTION,
    output: { type: "string", short: "o", default: "table" },
    explain: { type: "boolean" },
    "show-skipped": { type: "boolean" },
    "write-mutated": { type: "string" },
    "no-defaults": { type: "boolean" },
    "include-unbound": { type: "boolean" },
  },
  allowPositionals: false,
} as const;

const OUTPUTS = ["table", "json", "yaml"] as const;
type Output = (typeof OUTPUTS)[number];

interface InputResource {
  readonly ref: ResourceRef;
  readonly object: Record<string, unknown>;
  readonly where: string;
  /** The request of a saved AdmissionReview, decoded as the webhook decodes one. */
  readonly review?: AdmissionRequest;
}

/** What a resource file names for a review's request: its kind and the object (or the one deleted). */
function reviewRef(r: AdmissionRequest): ResourceRef {
  const k = r.kind;
  const subject = r.object ?? r.oldObject;
  const meta = subject && isJsonObject(subject.metadata) ? subject.metadata : {};
  return {
    apiVersion: k.group ? `${k.group}/${k.version}` : k.version,
    kind: k.kind,
    namespace: r.namespace,
    name: r.name || (typeof meta.name === "string" ? meta.name : ""),
  };
}

/** The files named, a directory's YAML and JSON files for a directory ('-' stays standard input). */
async function expandFiles(paths: readonly string[], io: CliIO): Promise<Result<DataFile[], string>> {
  const out: DataFile[] = [];
  for (const p of paths) {
    if (p === "-") {
      out.push({ path: p, shown: p });
      continue;
    }
    const files = await dataFiles(userPath(io, p), p);
    if (!files.ok) return files;
    out.push(...files.value);
  }
  return ok(out);
}

/** The objects of the files (or directories) named; `read` collects the files read. */
async function readResources(
  paths: readonly string[],
  io: CliIO,
  read: string[],
): Promise<Result<InputResource[], string>> {
  const out: InputResource[] = [];
  const expanded = await expandFiles(paths, io);
  if (!expanded.ok) return expanded;
  for (const { path, shown: file } of expanded.value) {
    if (path !== "-") read.push(path);
    const docs = path === "-" ? parseDocuments(await io.stdin(), "<stdin>") : await readDocuments(path);
    if (!docs.ok) return docs;
    for (const doc of docs.value) {
      const items = expandLists(doc.value);
      for (const [i, item] of items.entries()) {
        const where = `${file}${docs.value.length > 1 ? ` (document ${doc.index})` : ""}${items.length > 1 || item !== doc.value ? ` item ${i}` : ""}`;
        if (isJsonObject(item) && item.kind === "AdmissionReview") {
          const decoded = decodeSavedReview(item);
          if (!decoded.ok) return err(`${where}: ${decoded.error}`);
          const review = decoded.value;
          out.push({ ref: reviewRef(review), object: item, where, review });
          continue;
        }
        const ref = resourceRef(item, where);
        if (!ref.ok) return ref;
        out.push({ ref: ref.value, object: item as Record<string, unknown>, where });
      }
    }
  }
  return ok(out);
}

function sameObject(a: ResourceRef, b: ResourceRef): boolean {
  return (
    a.apiVersion === b.apiVersion && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name
  );
}

/** Pairs each resource with its stored version: the only one, or the one with the same identity. */
function pairOld(
  resources: readonly InputResource[],
  olds: readonly InputResource[],
): Result<(InputResource | undefined)[], string> {
  if (olds.length === 1 && resources.length === 1) return ok([olds[0]]);
  const out: (InputResource | undefined)[] = [];
  for (const r of resources) {
    const old = olds.find((o) => sameObject(o.ref, r.ref));
    if (!old)
      return err(
        `--old-resource has no ${r.ref.kind} '${r.ref.namespace ? `${r.ref.namespace}/` : ""}${r.ref.name}' to pair with ${r.where}`,
      );
    out.push(old);
  }
  return ok(out);
}

/** The resources to evaluate, each with its stored version for UPDATE, and the Namespace given. */
interface Inputs {
  /** The files read (a directory's, for a directory), never to be written over. */
  readonly files: readonly string[];
  readonly resources: readonly InputResource[];
  readonly olds: readonly (InputResource | undefined)[];
  readonly namespaceObject?: Record<string, unknown>;
}

async function readInputs(
  resourceFiles: readonly string[],
  oldFile: string | undefined,
  nsFile: string | undefined,
  io: CliIO,
): Promise<Result<Inputs, string>> {
  if ([...resourceFiles, oldFile].filter((f) => f === "-").length > 1)
    return err("standard input ('-') can be read only once");
  const files: string[] = [];
  const resources = await readResources(resourceFiles, io, files);
  if (!resources.ok) return resources;
  if (resources.value.length === 0) return err(`no resources found in ${resourceFiles.join(", ")}`);
  let olds: (InputResource | undefined)[] = resources.value.map(() => undefined);
  if (oldFile) {
    const read = await readResources([oldFile], io, files);
    if (!read.ok) return read;
    const paired = pairOld(resources.value, read.value);
    if (!paired.ok) return paired;
    olds = paired.value;
  }
  if (nsFile === undefined) return ok({ files, resources: resources.value, olds });
  const doc = await readSingleDocument(userPath(io, nsFile));
  if (!doc.ok) return doc;
  const ref = resourceRef(doc.value, nsFile);
  if (!ref.ok) return ref;
  if (ref.value.kind !== "Namespace" || ref.value.name === "")
    return err(`${nsFile}: --namespace-object must be a Namespace with a name, got ${ref.value.kind}`);
  files.push(userPath(io, nsFile));
  return ok({
    files,
    resources: resources.value,
    olds,
    namespaceObject: doc.value as Record<string, unknown>,
  });
}

function reportInputErrors(io: CliIO, diagnostics: readonly Diagnostic[]): boolean {
  if (diagnostics.length > 0) io.stderr(formatDiagnostics(diagnostics));
  if (errorCount(diagnostics) === 0) return false;
  io.stderr(`celgate eval: the policy files have errors; nothing was evaluated\n`);
  return true;
}

type Values = Exclude<ReturnType<typeof parseCommandArgs<typeof OPTIONS>>, number>["values"];

/** What the options ask for, checked. */
interface EvalOptions {
  readonly output: Output;
  readonly policyPaths: readonly string[];
  readonly resourceFiles: readonly string[];
  readonly oldFile: string | undefined;
  readonly operation: Operation;
  readonly extras: CelExtras;
  readonly release: string | undefined;
  readonly userInfo: UserInfo;
}

/** The options checked in the order the help lists them; or what is wrong. */
function evalOptions(values: Values): Result<EvalOptions, string> {
  const shared = outputAndPolicies(values, OUTPUTS, "table, json or yaml");
  if (!shared.ok) return shared;
  const resourceFiles = values.resource ?? [];
  if (resourceFiles.length === 0) return err("missing -r/--resource");
  const oldFile = values["old-resource"];
  const operation = (values.operation?.toUpperCase() ?? (oldFile ? "UPDATE" : "CREATE")) as Operation;
  if (!OPERATIONS.includes(operation))
    return err(`unknown operation '${values.operation}'; expected ${OPERATIONS.join(", ")}`);
  if (operation === "UPDATE" && !oldFile) return err("--operation UPDATE needs --old-resource");
  if (operation !== "UPDATE" && oldFile) return err(`--old-resource is only for UPDATE, not ${operation}`);
  const request = extrasAndUser(values);
  if (!request.ok) return request;
  const release = kubernetesVersionOf(values["kubernetes-version"]);
  if (!release.ok) return release;
  const { extras, userInfo } = request.value;
  return ok({ ...shared.value, resourceFiles, oldFile, operation, extras, release: release.value, userInfo });
}

/** The policies compiled, and the files read; or the exit status after reporting their errors. */
interface LoadedPolicies {
  readonly set: CompiledPolicySet;
  /** The policy files' and --params' resources: parameter objects, Namespaces, CRDs. */
  readonly resources: readonly ResourceObject[];
  readonly files: readonly string[];
}

async function loadPolicies(
  io: CliIO,
  policyPaths: readonly string[],
  paramFiles: readonly string[],
  compile: CompileOptions,
): Promise<LoadedPolicies | number> {
  const loaded = await loadPolicyPaths(policyPaths.map((p) => userPath(io, p)));
  const params =
    paramFiles.length > 0 ? await loadPolicyPaths(paramFiles.map((p) => userPath(io, p))) : undefined;
  // Compiled with the params' files too: a CustomResourceDefinition there gives its kind's scope.
  const resources = [...loaded.set.resources, ...(params?.set.resources ?? [])];
  const set: CompiledPolicySet = compilePolicySet({ ...loaded.set, resources }, compile);
  const problems = [
    ...loaded.diagnostics,
    ...noPolicyWarnings(
      policyPaths.map((p) => userPath(io, p)),
      loaded.set,
      loaded.diagnostics,
      policyPaths,
    ),
    ...set.diagnostics,
    ...(params?.diagnostics ?? []),
  ];
  if (reportInputErrors(io, withNameHints(problems, loaded.set.policies))) return EXIT_USAGE;
  return { set, resources, files: [...loaded.files, ...(params?.files ?? [])] };
}

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);
  const checked = evalOptions(values);
  if (!checked.ok) return fail(checked.error);
  const { output, policyPaths, resourceFiles, oldFile, operation, extras, release, userInfo } = checked.value;

  // Inputs first: a typo in a resource path should not wait for every policy to compile.
  const inputs = await readInputs(resourceFiles, oldFile, values["namespace-object"], io);
  if (!inputs.ok) return fail(inputs.error);
  const { files, resources, olds, namespaceObject } = inputs.value;

  const requestFlags = (["old-resource", "operation", "subresource", "user", "groups"] as const).filter(
    (f) => values[f] !== undefined,
  );
  if (requestFlags.length > 0 && resources.some((r) => r.review))
    return fail(
      `--${requestFlags[0]} cannot be given with an AdmissionReview: the review's request says what it is`,
    );

  const loaded = await loadPolicies(io, policyPaths, values.params ?? [], compileChoice(extras, release));
  if (typeof loaded === "number") return loaded;
  const defaults = !values["no-defaults"];
  const explain = values.explain ?? false;
  const includeUnbound = values["include-unbound"] ?? false;
  if (!includeUnbound)
    io.stderr(
      unboundNote(
        loaded.set.unbound.map((p) => p.name),
        "--include-unbound",
        terminalWidth(io),
      ),
    );
  const namespaceName = namespaceObject && resourceRefName(namespaceObject);
  const evaluations = evaluateAll(resources, olds, {
    set: loaded.set,
    // Offline, a namespace no file defines exists, as a Namespace created with only its name.
    ctx: contextFromResources(loaded.resources, {
      assumeNamespaces: true,
      defaults,
      ...(namespaceObject ? { namespaceObject } : {}),
    }),
    scopes: KindScopes.from(loaded.resources.map((r) => r.object)),
    build: {
      operation,
      userInfo,
      ...(values.subresource ? { subResource: values.subresource } : {}),
      ...(namespaceName ? { defaultNamespace: namespaceName } : {}),
    },
    defaults,
    explain,
    includeUnbound,
  });
  if (!evaluations.ok) return fail(evaluations.error);

  const outDir = values["write-mutated"];
  if (outDir !== undefined) {
    const written = await writeMutatedFiles(io, outDir, evaluations.value, resources, operation, [
      ...files,
      ...loaded.files,
    ]);
    if (written !== undefined) return fail(written);
  }
  const view = { explain, showSkipped: values["show-skipped"] ?? false };
  return report(evaluations.value, output, view, io);
}

/**
 * `--write-mutated DIR`: each object as admission leaves it, never over one of the `inputs`; or what
 * is wrong (a DELETE or CONNECT has no object to write).
 */
async function writeMutatedFiles(
  io: CliIO,
  outDir: string,
  evaluations: readonly ResourceEvaluation[],
  resources: readonly InputResource[],
  operation: Operation,
  inputs: readonly string[],
): Promise<string | undefined> {
  const notWritten = resources
    .map((r) => r.review?.operation ?? operation)
    .find((op) => op === "DELETE" || op === "CONNECT");
  if (notWritten !== undefined)
    return `--write-mutated writes the objects of CREATE and UPDATE, not ${notWritten}`;
  const written = await writeMutated(userPath(io, outDir), evaluations, inputs);
  if (!written.ok) return written.error;
  io.stderr(`celgate eval: wrote ${plural(written.value.length, "object", "objects")} to ${outDir}\n`);
  return undefined;
}

/** What every resource of one `eval` run is evaluated with. */
interface Evaluator {
  readonly set: CompiledPolicySet;
  readonly ctx: EngineContext;
  readonly scopes: KindScopes;
  /** What the flags say of the requests built from plain resources. */
  readonly build: Pick<RequestOptions, "operation" | "userInfo" | "subResource" | "defaultNamespace">;
  readonly defaults: boolean;
  readonly explain: boolean;
  /** `--include-unbound`: the policies no binding names too, as if bound with [Deny]. */
  readonly includeUnbound: boolean;
}

/**
 * Each resource admitted: a plain one in the request the API server would build for it, a saved
 * review's request as it is; an error when a resource's namespace contradicts the request's.
 */
function evaluateAll(
  resources: readonly InputResource[],
  olds: readonly (InputResource | undefined)[],
  e: Evaluator,
): Result<ResourceEvaluation[], string> {
  const evaluations: ResourceEvaluation[] = [];
  for (const [i, r] of resources.entries()) {
    const options = {
      deadline: performance.now() + OFFLINE_DEADLINE_MS,
      allBindings: true,
      includeUnbound: e.includeUnbound,
      explain: e.explain,
      defaults: e.defaults,
    };
    if (r.review) {
      // The whole chain, as the API server runs it for this request: its objects as they are, and
      // the defaults after a mutation changes one, whatever --no-defaults says of plain resources.
      const decision = decide(admit(e.set, r.review, e.ctx, { ...options, defaults: true }));
      evaluations.push({ ...resourceEvaluation(r.ref, r.review, decision), defaulted: [] });
      continue;
    }
    const old = olds[i];
    const built = buildRequest(r.ref, {
      ...e.build,
      object: r.object,
      ...(old ? { oldObject: old.object } : {}),
      uid: randomUUID(),
      defaults: e.defaults,
      scopes: e.scopes,
    });
    if (!built.ok) return err(`${r.where}: ${built.error}`);
    const { request } = built.value;
    // Name the resource by the namespace it was evaluated in (a Namespace is not inside one).
    const ref = { ...r.ref, namespace: r.ref.kind === "Namespace" ? "" : request.namespace };
    evaluations.push({
      ...resourceEvaluation(ref, request, decide(admit(e.set, request, e.ctx, options))),
      defaulted: defaultedFields(built.value.defaulted),
    });
  }
  return ok(evaluations);
}

/** Prints the evaluations in the chosen format; the exit status says whether any was denied or failed. */
function report(
  evaluations: readonly ResourceEvaluation[],
  output: Output,
  view: { readonly explain: boolean; readonly showSkipped: boolean },
  io: CliIO,
): number {
  const { explain } = view;
  const width = terminalWidth(io);
  io.stdout(
    output === "json"
      ? formatResultsJson(evaluations, { explain })
      : output === "yaml"
        ? formatResultsYaml(evaluations, { explain })
        : formatResultsTable(evaluations, {
            explain,
            hideSkipped: !view.showSkipped,
            skippedHint: "--show-skipped lists them",
            ...(width === undefined ? {} : { width }),
          }),
  );
  if (evaluations.some((e) => e.results.some((r) => r.errorKind === "namespace-not-found")))
    io.stderr(
      "celgate eval: note: a binding selects namespaces by label; give the Namespace with --namespace-object FILE or in a policy path\n",
    );
  const bad = evaluations.some((e) => !e.allowed || e.results.some((r) => r.outcome === "error"));
  return bad ? EXIT_OUTCOME : EXIT_OK;
}

function resourceRefName(o: Record<string, unknown>): string | undefined {
  const meta = o.metadata;
  return isJsonObject(meta) && typeof meta.name === "string" ? meta.name : undefined;
}
