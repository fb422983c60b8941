/**
 * A suite case made into the request it describes: built from its objects as the API server would
 * build it (engine/request.ts), or taken as it is from a saved AdmissionReview (`reviewFile`,
 * decoded by the webhook's codec the runner is given). Problems are diagnostics at the case's path.
 */
import { parseAllDocuments } from "yaml";
import type { Diagnostic } from "../errors.ts";
import { aliasExcessMessage, checkAliases } from "../yaml/aliases.ts";
import { EXACT_YAML_NUMBERS, readJsonText } from "../yaml/json-numbers.ts";
import {
  buildRequest,
  type DefaultedField,
  defaultedFields,
  type ResourceRef,
  resourceRef,
} from "../engine/request.ts";
import type { KindScopes } from "../kube/scope.ts";
import { type AdmissionRequest, DEFAULT_USER } from "../request/types.ts";
import type { Result } from "../result.ts";
import type { SuiteReader } from "../sources/suites.ts";
import type { JsonObject, ObjectCase, ReviewCase, Suite, SuiteCase } from "./types.ts";

export interface PreparedCase {
  readonly spec: SuiteCase;
  readonly resource: ResourceRef;
  readonly request: AdmissionRequest;
  readonly original: unknown;
  readonly defaulted: readonly DefaultedField[];
  readonly namespaceObject?: JsonObject;
  /** The API server's defaults on stored objects and after mutations (`defaulting`). */
  readonly defaults: boolean;
}

export function suiteError(suite: Suite, path: string, message: string, detail?: string): Diagnostic {
  return {
    code: "TE_SUITE",
    severity: "error",
    message,
    ...(path === "" ? {} : { path }),
    location: suite.locate(path),
    ...(detail ? { detail } : {}),
  };
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The case's namespaceObject, checked against the request it is for: unused (a warning) on a
 * cluster-scoped request, an error when it names another namespace than the request's.
 */
function checkNamespaceObject(
  suite: Suite,
  c: SuiteCase,
  request: AdmissionRequest,
  diagnostics: Diagnostic[],
): boolean {
  const nsObject = c.namespaceObject;
  const nsName =
    nsObject && isObject(nsObject.value.metadata) ? String(nsObject.value.metadata.name) : undefined;
  if (!nsObject || nsName === undefined) return true;
  const kind = request.requestKind ?? request.kind;
  const onNamespace = kind.group === "" && kind.version === "v1" && kind.kind === "Namespace";
  if (request.namespace === "" || onNamespace) {
    diagnostics.push({
      ...suiteError(
        suite,
        nsObject.path,
        onNamespace
          ? "namespaceObject is not used: a request on a Namespace has a null namespaceObject, as in the API server"
          : "namespaceObject is not used: the request is for a cluster-scoped object, so namespaceObject is null",
      ),
      severity: "warning",
    });
  } else if (request.namespace !== nsName) {
    diagnostics.push(
      suiteError(
        suite,
        nsObject.path,
        `namespaceObject is '${nsName}' but the request's namespace is '${request.namespace}'`,
      ),
    );
    return false;
  }
  return true;
}

export function prepareCase(
  suite: Suite,
  c: ObjectCase,
  index: number,
  input: {
    readonly object: JsonObject;
    readonly oldObject: JsonObject | undefined;
    readonly defaults: boolean;
    readonly scopes: KindScopes;
  },
  diagnostics: Diagnostic[],
): PreparedCase | undefined {
  const { object, oldObject, defaults } = input;
  const ref = resourceRef(object, c.object.path);
  if (!ref.ok) {
    diagnostics.push(suiteError(suite, c.object.path, ref.error));
    return undefined;
  }
  const nsObject = c.namespaceObject?.value;
  const nsName = nsObject && isObject(nsObject.metadata) ? String(nsObject.metadata.name) : undefined;
  // The case's own namespace wins over the object's; the namespaceObject's and the defaults' only fill in.
  const defaultNamespace = nsName ?? c.defaultNamespace;
  const built = buildRequest(
    { ...ref.value, namespace: c.namespace ?? ref.value.namespace },
    {
      operation: c.operation,
      object,
      ...(oldObject ? { oldObject } : {}),
      ...(c.subResource ? { subResource: c.subResource } : {}),
      userInfo: c.userInfo ?? DEFAULT_USER,
      ...(defaultNamespace !== undefined ? { defaultNamespace } : {}),
      // Deterministic, so traces that show the request are the same on every run.
      uid: `00000000-0000-4000-8000-${String(index + 1).padStart(12, "0")}`,
      defaults,
      ...(c.requestName !== undefined ? { name: c.requestName } : {}),
      scopes: input.scopes,
    },
  );
  if (!built.ok) {
    diagnostics.push(suiteError(suite, c.object.path, built.error));
    return undefined;
  }
  let request = built.value.request;
  if (c.kind) request = { ...request, kind: c.kind, requestKind: c.kind };
  if (c.resource) request = { ...request, resource: c.resource, requestResource: c.resource };
  if (c.dryRun !== undefined) request = { ...request, dryRun: c.dryRun };
  if (!checkNamespaceObject(suite, c, request, diagnostics)) return undefined;
  return {
    spec: c,
    // Named by the namespace it was evaluated in, as eval names it (a Namespace is not inside one).
    resource: {
      ...ref.value,
      namespace: ref.value.kind === "Namespace" ? "" : request.namespace,
      name: request.name || ref.value.name,
    },
    request,
    original: request.operation === "DELETE" ? request.oldObject : request.object,
    defaulted: defaultedFields(built.value.defaulted),
    ...(nsObject && nsName !== undefined ? { namespaceObject: nsObject } : {}),
    defaults,
  };
}

/**
 * A case given as a saved AdmissionReview: decoded as the webhook decodes a review, and its request
 * evaluated as it is, without the offline defaulting (the API server sent it defaulted) and with its
 * own namespace, user, operation, dryRun and options. The API server defaults what its mutations
 * change, as `serve` does.
 */
export async function prepareReviewCase(
  suite: Suite,
  c: ReviewCase,
  reader: SuiteReader,
  decodeReview: ((review: unknown) => Result<AdmissionRequest, string>) | undefined,
  diagnostics: Diagnostic[],
): Promise<PreparedCase | undefined> {
  const file = c.review.value;
  const fail = (message: string) => {
    diagnostics.push(suiteError(suite, c.review.path, message));
    return undefined;
  };
  if (!decodeReview) return fail("reviewFile cases need a runner that reads AdmissionReviews");
  const text = await reader.readText(file.resolved);
  if (!text.ok) return fail(`cannot read ${file.written}: ${text.error}`);
  // JSON as the webhook reads a body (an int64 exactly, 1.0 a double); YAML as kubectl converts it.
  const json = readJsonText(text.value);
  if (json instanceof RangeError) return fail(`${file.written}: ${json.message}`);
  const docs =
    json !== undefined
      ? []
      : parseAllDocuments(text.value, EXACT_YAML_NUMBERS).filter(
          (d) => d.contents !== null || d.errors.length,
        );
  const problem = docs.flatMap((d) => d.errors)[0];
  if (problem) return fail(`${file.written}: not valid YAML or JSON: ${problem.message.split("\n")[0]}`);
  if (json === undefined && docs.length !== 1)
    return fail(`${file.written}: expected one AdmissionReview, found ${docs.length} documents`);
  const doc = docs[0];
  const excess = doc === undefined ? undefined : checkAliases(doc);
  if (excess !== undefined) return fail(`${file.written}: ${aliasExcessMessage(excess)}`);
  // Bounded by checkAliases, by Kubernetes' rule rather than the yaml package's fixed count (which throws).
  const decoded = decodeReview(json !== undefined ? json.value : doc?.toJS({ maxAliasCount: -1 }));
  if (!decoded.ok) return fail(`${file.written}: ${decoded.error}`);
  const request = decoded.value;
  if (!checkNamespaceObject(suite, c, request, diagnostics)) return undefined;
  const subject = request.object ?? request.oldObject;
  const meta = subject && isObject(subject.metadata) ? subject.metadata : {};
  const k = request.kind;
  return {
    spec: c,
    resource: {
      apiVersion: k.group ? `${k.group}/${k.version}` : k.version,
      kind: k.kind,
      namespace: request.namespace,
      name: request.name || (typeof meta.name === "string" ? meta.name : ""),
    },
    request,
    original: request.operation === "DELETE" ? request.oldObject : request.object,
    defaulted: [],
    ...(c.namespaceObject ? { namespaceObject: c.namespaceObject.value } : {}),
    defaults: true,
  };
}
