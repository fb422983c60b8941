/**
 * celgate as a library: Kubernetes' own ValidatingAdmissionPolicy and MutatingAdmissionPolicy
 * objects, read, compiled and evaluated with the API server's semantics, without a cluster.
 *
 *   const loaded = loadPolicies(yamlText);              // diagnostics for anything malformed
 *   const policies = compilePolicies(loaded.set);
 *   const request = requestFor(pod);                    // the request the API server would send
 *   if (request.ok) admit(policies, request.value);     // { allowed, status, warnings, patch, ... }
 *
 * Bad input comes back as data: diagnostics with file, line and column, a failed Result, an error
 * outcome. Nothing here throws for a malformed policy, object or expression; a throw is a celgate
 * bug. This is the package's only entry point (package.json `exports`); what it does not export is
 * internal and may change.
 */
import { toJson } from "./cel/index.ts";
import type { AuthorizerBackend, CelExtras } from "./cel/index.ts";
import { type CompiledPolicySet, type CompileOptions, compilePolicySet } from "./compile/policy.ts";
import { admit as admitChain, OFFLINE_DEADLINE_MS } from "./engine/admit.ts";
import { contextFromSet } from "./engine/context.ts";
import { decide } from "./engine/decision.ts";
import { evaluateExpression as evaluateWithBindings } from "./engine/expression.ts";
import { buildRequest, resourceRef } from "./engine/request.ts";
import type { AdmissionDecision } from "./engine/types.ts";
import type { Diagnostic } from "./errors.ts";
import { checkReferences, parsePolicyText } from "./policy/parse.ts";
import type { Operation, PolicySet } from "./policy/types.ts";
import { type AdmissionRequest, DEFAULT_USER, type UserInfo } from "./request/types.ts";
import { err, ok, type Result } from "./result.ts";
import { loadPolicyPaths } from "./sources/files.ts";

export type {
  AuthorizationAnswer,
  AuthorizationAttributes,
  AuthorizerBackend,
  CelExtras,
} from "./cel/index.ts";
export type { CompiledPolicySet, CompileOptions } from "./compile/policy.ts";
export type {
  AdmissionDecision,
  EvaluationErrorKind,
  JsonPatchOp,
  PolicyOutcome,
  PolicyResult,
  TraceStep,
  Violation,
} from "./engine/types.ts";
export type { Diagnostic, DiagnosticCode, DiagnosticSeverity, SourceLocation } from "./errors.ts";
export { formatDiagnostic } from "./errors.ts";
export type {
  Operation,
  ParsedBinding,
  ParsedPolicy,
  PolicySet,
  ResourceObject,
  ValidationAction,
} from "./policy/types.ts";
export type { AdmissionRequest, GroupVersionKind, GroupVersionResource, UserInfo } from "./request/types.ts";
export type { Result } from "./result.ts";

/** Policies, bindings and other objects read from YAML or JSON, with every problem found. */
export interface LoadedPolicies {
  /** What could be read; a document with errors is left out, the others are kept. */
  readonly set: PolicySet;
  /** Every problem, each with a code, file:line:col and field path; any `error` makes the set incomplete. */
  readonly diagnostics: readonly Diagnostic[];
}

/** Reads policies from YAML or JSON text (one or more documents). Never throws. */
export function loadPolicies(text: string, file = "<text>"): LoadedPolicies {
  const parsed = parsePolicyText(text, file);
  return { set: parsed.set, diagnostics: [...parsed.diagnostics, ...checkReferences(parsed.set)] };
}

/**
 * Reads the policy files at the given paths (directories contribute their `.yaml`, `.yml` and
 * `.json` files, as `celgate serve` reads them). Never rejects: unreadable paths are diagnostics.
 */
export async function loadPolicyFiles(paths: readonly string[]): Promise<LoadedPolicies> {
  const loaded = await loadPolicyPaths(paths);
  return { set: loaded.set, diagnostics: loaded.diagnostics };
}

/**
 * Compiles every expression once, collecting every compile error in `diagnostics`. Never throws: a
 * policy whose expressions do not compile is kept, and the requests it matches are decided by its
 * failurePolicy, as in the API server.
 */
export function compilePolicies(set: PolicySet, options: CompileOptions = {}): CompiledPolicySet {
  return compilePolicySet(set, options);
}

/** How `requestFor` builds a request; every field is optional. */
export interface RequestOptions {
  /** Default: UPDATE when `oldObject` is given, else CREATE. */
  readonly operation?: Operation;
  /** The stored object, for UPDATE. */
  readonly oldObject?: Readonly<Record<string, unknown>>;
  /** Default: user `celgate` in group `system:authenticated`, as `celgate eval` sends. */
  readonly userInfo?: UserInfo;
  readonly subResource?: string;
  /** For an object without `metadata.namespace`; default `default` (cluster-scoped kinds have none). */
  readonly namespace?: string;
  /** Default: a fixed uid, so traces are the same from run to run. */
  readonly uid?: string;
  /**
   * Apply the API server's defaults to the objects, as it does before admission (default true;
   * `celgate eval --no-defaults` is false).
   */
  readonly defaults?: boolean;
}

/**
 * The AdmissionRequest the API server would send for this object: kind and resource from its
 * apiVersion and kind, its namespace, the operation and user, with the objects as the API server
 * admits them (the request's namespace written in, defaults applied). Never throws: an object
 * without apiVersion or kind, or one naming another namespace, is a failed Result saying so.
 */
export function requestFor(
  object: Readonly<Record<string, unknown>>,
  options: RequestOptions = {},
): Result<AdmissionRequest, string> {
  const ref = resourceRef(object, "object");
  if (!ref.ok) return err(ref.error);
  const operation = options.operation ?? (options.oldObject ? "UPDATE" : "CREATE");
  const built = buildRequest(ref.value, {
    operation,
    object: object as Record<string, unknown>,
    ...(options.oldObject ? { oldObject: options.oldObject as Record<string, unknown> } : {}),
    ...(options.subResource ? { subResource: options.subResource } : {}),
    userInfo: options.userInfo ?? DEFAULT_USER,
    ...(options.namespace ? { defaultNamespace: options.namespace } : {}),
    uid: options.uid ?? "00000000-0000-4000-8000-000000000000",
    defaults: options.defaults ?? true,
  });
  return built.ok ? ok(built.value.request) : built;
}

/** How `admit` evaluates; every field is optional. */
export interface AdmitOptions {
  /**
   * One phase, as a webhook is called: `mutate` or `validate`. Default: the whole chain, mutating
   * policies first and validating policies on the object they made, as the API server admits.
   */
  readonly phase?: "mutate" | "validate";
  /**
   * Also evaluate policies that no binding refers to, as if bound with validationActions [Deny]
   * (what `celgate eval --include-unbound` does). Default false: as in Kubernetes, an unbound policy
   * is not enforced.
   */
  readonly includeUnbound?: boolean;
  /** Record each step's value in the results' traces, and why a validation was false. */
  readonly explain?: boolean;
  /** How long evaluation may take before failurePolicy answers; default 30 s. */
  readonly timeoutMs?: number;
  /** Answers `authorizer` checks; without one every check is an error (failurePolicy decides). */
  readonly authorizer?: AuthorizerBackend;
}

/**
 * Admits one request as the API server would: the admission chain over the compiled policies, then
 * Deny, Warn and Audit enforced into the decision (allowed, status, warnings, audit annotations, the
 * patch). Namespaces and params come from the objects loaded with the policies; a namespace none
 * of them defines is taken to exist with only its `kubernetes.io/metadata.name` label. Never throws
 * for bad policies or requests.
 */
export function admit(
  policies: CompiledPolicySet,
  request: AdmissionRequest,
  options: AdmitOptions = {},
): AdmissionDecision {
  const ctx = contextFromSet(policies, {
    assumeNamespaces: true,
    ...(options.authorizer ? { authorizer: options.authorizer } : {}),
  });
  return decide(
    admitChain(policies, request, ctx, {
      deadline: performance.now() + (options.timeoutMs ?? OFFLINE_DEADLINE_MS),
      // The API server defaults the object again after each mutation.
      defaults: true,
      ...(options.phase ? { phase: options.phase } : {}),
      ...(options.includeUnbound ? { includeUnbound: true } : {}),
      ...(options.explain ? { explain: true } : {}),
    }),
  );
}

/** What one expression gave: its value as JSON with its CEL type, or the error. */
export type ExpressionResult =
  | {
      readonly ok: true;
      /** As `celgate expr -o json` prints it: ints beyond 2^53 as decimal strings, bytes as base64, durations as "3600s". */
      readonly value: unknown;
      /** The CEL type: `int`, `string`, `list`, `map`, … */
      readonly type: string;
    }
  | {
      readonly ok: false;
      readonly stage: "compile" | "eval";
      /** Compile errors in cel-go's rendered form, with the expression and a caret. */
      readonly error: string;
    };

/**
 * Evaluates one CEL expression with the Kubernetes admission libraries. `object`, `oldObject`,
 * `request`, `params` and `namespaceObject` are always declared (null unless bound); any other
 * binding becomes a variable of its own. Never throws.
 */
export function evaluateExpression(
  source: string,
  bindings: Readonly<Record<string, unknown>> = {},
  extras: CelExtras = {},
): ExpressionResult {
  const o = evaluateWithBindings(source, bindings, extras);
  if (o.ok) return { ok: true, value: toJson(o.value), type: o.type };
  return { ok: false, stage: o.stage === "compile" ? "compile" : "eval", error: o.error };
}
