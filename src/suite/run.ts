/**
 * Running a test suite: every case becomes the AdmissionRequest the API server would send, runs
 * through the mutating then the validating policies as `celgate eval` runs them (unbound policies as
 * if bound with validationActions [Deny]), with the suite's authorizer table answering `authorizer`
 * checks, and the decision is compared with the case's `expect`.
 *
 * A suite is prepared whole before any case runs: a missing object file or a policy with errors
 * makes the suite broken (exit 2), never a failed case, so a failure always means the policy did
 * something other than what the test says.
 */
import { parseAllDocuments } from "yaml";
import { EXACT_YAML_NUMBERS, readJsonText } from "../yaml/json-numbers.ts";
import { type DefaultedField, type ResourceRef, resourceRef } from "../engine/request.ts";
import { type AuthorizerCheck, type CelExtras, compileRegex, tableAuthorizer } from "../cel/index.ts";
import { type CompiledPolicySet, compilePolicySet } from "../compile/policy.ts";
import { admit, OFFLINE_DEADLINE_MS } from "../engine/admit.ts";
import { contextFromResources, type EngineContext, withNamespaceObject } from "../engine/context.ts";
import { decide } from "../engine/decision.ts";
import { jsonEqual } from "../engine/mutate.ts";
import type { JsonPatchOp, PolicyResult } from "../engine/types.ts";
import { KindScopes } from "../kube/scope.ts";
import type { AdmissionRequest } from "../request/types.ts";
import type { Diagnostic, SourceLocation } from "../errors.ts";
import type { Result } from "../result.ts";
import type { SuiteReader } from "../sources/suites.ts";
import { parseSuiteText, suiteNameFromFile } from "./parse.ts";
import {
  type At,
  EXPECT_KEYS,
  type ExpectKey,
  type Expectations,
  type JsonObject,
  type ObjectSource,
  type Suite,
  type SuiteCase,
} from "./types.ts";
import { type PreparedCase, prepareCase, prepareReviewCase, suiteError } from "./prepare.ts";

export interface RunOptions {
  readonly extras?: CelExtras;
  /** The Kubernetes release to compile the policies for (CompileOptions.kubernetesVersion). */
  readonly kubernetesVersion?: string;
  /** Count what the cases cover of each expression (CompileOptions.coverage; coverage.ts reports it). */
  readonly coverage?: boolean;
  /** Whether cases that do not say (`defaulting`) get the API server's defaults (default true). */
  readonly defaults?: boolean;
  /**
   * Decodes a saved AdmissionReview (a case's `reviewFile`) as the webhook decodes a review body:
   * its request, or the reason the webhook would refuse it. The adapters' codec does it (this stage
   * cannot import adapters); without it, a suite with a reviewFile case is broken.
   */
  readonly decodeReview?: (review: unknown) => Result<AdmissionRequest, string>;
}

/** What the policies decided about a case, in the terms of `expect`. */
export interface CaseActual {
  readonly allowed: boolean;
  readonly status?: { readonly code: number; readonly reason: string; readonly message: string };
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** Policies evaluated (outcome pass, fail or error), each once, in order. */
  readonly matched: readonly string[];
  /** Policies skipped (did not match, or a matchCondition was false), each once, in order. */
  readonly skipped: readonly string[];
  /** JSON Patch from the original object to the mutated one; empty when nothing changed. */
  readonly patch: readonly JsonPatchOp[];
  /** The object after every mutation (the original when none changed it); null for DELETE. */
  readonly patched: unknown;
}

/** One expectation that did not hold. */
export interface Mismatch {
  readonly key: ExpectKey;
  /** Where the expectation is written (`cases[2].expect.message`). */
  readonly path: string;
  readonly expected: unknown;
  readonly actual: unknown;
  /** Why, when more than the two values is needed (e.g. which patterns matched no warning). */
  readonly note?: string;
}

export interface CaseResult {
  readonly name: string;
  /** The object the request is about, as reports name it. */
  readonly resource: ResourceRef;
  readonly path: string;
  readonly location: SourceLocation;
  readonly passed: boolean;
  readonly mismatches: readonly Mismatch[];
  readonly actual: CaseActual;
  /** The object as admission received it (for DELETE, the object being deleted): namespaced and defaulted. */
  readonly original: unknown;
  /** What the API server's defaulting changed, paths from `object.`/`oldObject.`. */
  readonly defaulted: readonly DefaultedField[];
  /** Every policy's result, mutations first, with explain traces. */
  readonly results: readonly PolicyResult[];
  readonly authorizerChecks: readonly AuthorizerCheck[];
  readonly durationMs: number;
}

export interface SuiteResult {
  readonly file: string;
  readonly name: string;
  /** Problems with the suite or the files it names; any error means no case was run. */
  readonly diagnostics: readonly Diagnostic[];
  readonly broken: boolean;
  readonly cases: readonly CaseResult[];
  /** Cases not run because `--run` did not select them. */
  readonly skipped: number;
}

/**
 * A suite read and loaded, its cases ready to run, or broken: the problems with it and every file
 * it names, all of them, found before any case of any suite runs.
 */
export interface LoadedSuite {
  readonly file: string;
  readonly name: string;
  readonly diagnostics: readonly Diagnostic[];
  readonly broken: boolean;
  /** Present when not broken. */
  readonly suite?: Suite;
  readonly loaded?: Loaded;
}

function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Reads an object file once per suite: one YAML or JSON document holding a Kubernetes object. */
async function readObjectFile(
  reader: SuiteReader,
  path: string,
): Promise<{ ok: true; value: JsonObject } | { ok: false; error: string }> {
  const text = await reader.readText(path);
  if (!text.ok) return { ok: false, error: `cannot read ${path}: ${text.error}` };
  // JSON as the API server's decoder reads it (an int64 exactly, 1.0 a double), as eval reads it.
  const json = readJsonText(text.value);
  if (json instanceof RangeError) return { ok: false, error: `${path}: ${json.message}` };
  const read =
    json === undefined ? readYamlObject(text.value, path) : { ok: true as const, value: json.value };
  if (!read.ok) return read;
  const ref = resourceRef(read.value, path);
  if (!ref.ok) return { ok: false, error: ref.error };
  return { ok: true, value: read.value as JsonObject };
}

/** The one YAML document of an object file, its integers as kubectl delivers them (exactYamlInts). */
function readYamlObject(
  text: string,
  path: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const parsed = parseAllDocuments(text, EXACT_YAML_NUMBERS);
  const docs = (Array.isArray(parsed) ? parsed : []).filter((d) => d.contents !== null || d.errors.length);
  for (const d of docs) {
    const e = d.errors[0];
    if (e) {
      const pos = e.linePos?.[0];
      const first = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "");
      return { ok: false, error: `${path}${pos ? `:${pos.line}:${pos.col}` : ""}: not valid YAML: ${first}` };
    }
  }
  if (docs.length !== 1)
    return { ok: false, error: `${path}: expected one YAML or JSON document, found ${docs.length}` };
  try {
    return { ok: true, value: docs[0]?.toJS() };
  } catch (e) {
    return { ok: false, error: `${path}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

export interface Loaded {
  readonly set: CompiledPolicySet;
  /** The lookups with the API server's defaults on stored objects, and without (`defaulting: false`). */
  readonly contexts: { readonly defaulted: EngineContext; readonly asWritten: EngineContext };
  readonly cases: readonly PreparedCase[];
}

async function missingFiles(
  suite: Suite,
  reader: SuiteReader,
  refs: Suite["policies"],
  what: string,
): Promise<{ diagnostics: Diagnostic[]; paths: Set<string> }> {
  const diagnostics: Diagnostic[] = [];
  const paths = new Set<string>();
  for (const ref of refs)
    if (!(await reader.exists(ref.value.resolved))) {
      paths.add(ref.value.resolved);
      diagnostics.push(
        suiteError(
          suite,
          ref.path,
          `${what} '${ref.value.written}' not found (looked for ${ref.value.resolved})`,
        ),
      );
    }
  return { diagnostics, paths };
}

/** Loads what the suite names and builds every case's request; any problem is a diagnostic. */
async function load(
  suite: Suite,
  reader: SuiteReader,
  options: RunOptions,
): Promise<{ loaded?: Loaded; diagnostics: Diagnostic[] }> {
  // Every problem at once: what is missing is reported, and what is there is still loaded and
  // checked, so one run shows all that needs fixing.
  const missingPolicies = await missingFiles(suite, reader, suite.policies, "policy path");
  const missingResources = await missingFiles(suite, reader, suite.resources, "resources path");
  const diagnostics: Diagnostic[] = [...missingPolicies.diagnostics, ...missingResources.diagnostics];
  const present = (refs: Suite["policies"], missing: ReadonlySet<string>) =>
    refs.map((p) => p.value.resolved).filter((p) => !missing.has(p));
  const policies = await reader.loadPolicies(present(suite.policies, missingPolicies.paths));
  const resourcePaths = present(suite.resources, missingResources.paths);
  const resources = resourcePaths.length > 0 ? await reader.loadPolicies(resourcePaths) : undefined;
  // Compiled with every resource, so a CustomResourceDefinition among them gives its kind's scope.
  const allResources = [...policies.set.resources, ...(resources?.set.resources ?? [])];
  const set = compilePolicySet(
    { ...policies.set, resources: allResources },
    {
      ...(options.extras ? { extras: options.extras } : {}),
      ...(options.kubernetesVersion !== undefined ? { kubernetesVersion: options.kubernetesVersion } : {}),
      ...(options.coverage === true ? { coverage: true } : {}),
    },
  );
  diagnostics.push(...policies.diagnostics, ...set.diagnostics, ...(resources?.diagnostics ?? []));
  const stray = resources ? resources.set.policies.length + resources.set.bindings.length : 0;
  if (stray > 0)
    diagnostics.push({
      ...suiteError(
        suite,
        "resources",
        `the resources files hold ${stray} ${stray === 1 ? "policy or binding" : "policies and bindings"}, which are not evaluated; list those files under policies`,
      ),
      severity: "warning",
    });
  if (set.policies.length === 0 && !hasErrors(diagnostics))
    diagnostics.push(
      suiteError(
        suite,
        "policies",
        `no ValidatingAdmissionPolicy or MutatingAdmissionPolicy found in ${suite.policies.map((p) => p.value.written).join(", ")}`,
      ),
    );
  const scopes = KindScopes.from(allResources.map((r) => r.object));

  const files = new Map<string, Awaited<ReturnType<typeof readObjectFile>>>();
  const objectOf = async (source: At<ObjectSource>): Promise<JsonObject | undefined> => {
    const s = source.value;
    if (s.inline) return s.inline;
    let read = files.get(s.file.resolved);
    if (!read) {
      read = await readObjectFile(reader, s.file.resolved);
      files.set(s.file.resolved, read);
    }
    if (read.ok) return structuredClone(read.value);
    diagnostics.push(suiteError(suite, source.path, read.error));
    return undefined;
  };

  const cases: PreparedCase[] = [];
  for (const [index, c] of suite.cases.entries()) {
    if (c.review) {
      const prepared = await prepareReviewCase(suite, c, reader, options.decodeReview, diagnostics);
      if (prepared) cases.push(prepared);
      continue;
    }
    const object = await objectOf(c.object);
    const oldObject = c.oldObject ? await objectOf(c.oldObject) : undefined;
    if (!object || (c.oldObject && !oldObject)) continue;
    const defaults = c.defaulting ?? options.defaults ?? true;
    const prepared = prepareCase(suite, c, index, { object, oldObject, defaults, scopes }, diagnostics);
    if (prepared) cases.push(prepared);
  }
  if (hasErrors(diagnostics)) return { diagnostics };
  const contexts = {
    defaulted: contextFromResources(allResources, { assumeNamespaces: true }),
    asWritten: contextFromResources(allResources, { assumeNamespaces: true, defaults: false }),
  };
  return { loaded: { set, contexts, cases }, diagnostics };
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = [...new Set(a)].sort();
  const y = [...new Set(b)].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function sameMultiset(a: readonly string[], b: readonly string[]): boolean {
  const x = [...a].sort();
  const y = [...b].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** What a failed expectation found instead, and why when more than the two values is needed. */
type Miss = { readonly actual: unknown; readonly note?: string | undefined } | undefined;
type Check<K extends ExpectKey> = (expected: Exclude<Expectations[K], undefined>, actual: CaseActual) => Miss;

const NO_STATUS = "the request was allowed, so there is no status";

/** One check per expectation key: undefined when it holds, else what was found. */
const CHECKS: { readonly [K in ExpectKey]: Check<K> } = {
  allowed: (e, a) => (e !== a.allowed ? { actual: a.allowed } : undefined),
  code: (e, a) =>
    e !== a.status?.code
      ? { actual: a.status?.code ?? null, note: a.status ? undefined : NO_STATUS }
      : undefined,
  reason: (e, a) =>
    e !== a.status?.reason
      ? { actual: a.status?.reason ?? null, note: a.status ? undefined : NO_STATUS }
      : undefined,
  message: (e, a) =>
    e !== a.status?.message
      ? { actual: a.status?.message ?? null, note: a.status ? undefined : NO_STATUS }
      : undefined,
  messageMatches: (e, a) =>
    a.status && compileRegex(e).test(a.status.message)
      ? undefined
      : {
          actual: a.status?.message ?? null,
          note: a.status ? "the pattern is not found in the message" : NO_STATUS,
        },
  warnings: (e, a) => (sameMultiset(e, a.warnings) ? undefined : { actual: a.warnings }),
  warningsMatch: (e, a) => {
    const unmatched = e.filter((p) => {
      const re = compileRegex(p);
      return !a.warnings.some((w) => re.test(w));
    });
    return unmatched.length === 0
      ? undefined
      : {
          actual: a.warnings,
          note: `no warning matches ${unmatched.map((p) => JSON.stringify(p)).join(", ")}`,
        };
  },
  auditAnnotations: (e, a) => {
    const bad = Object.entries(e).filter(([k, v]) => a.auditAnnotations[k] !== v);
    return bad.length === 0
      ? undefined
      : {
          actual: a.auditAnnotations,
          note: `${bad.map(([k]) => JSON.stringify(k)).join(", ")} ${bad.length === 1 ? "differs" : "differ"} (only the keys given are checked)`,
        };
  },
  matched: (e, a) => (sameSet(e, a.matched) ? undefined : { actual: a.matched }),
  skipped: (e, a) => (sameSet(e, a.skipped) ? undefined : { actual: a.skipped }),
  patched: (e, a) => (jsonEqual(e, a.patched) ? undefined : { actual: a.patched }),
  patch: (e, a) => (jsonEqual(e, a.patch) ? undefined : { actual: a.patch }),
  unchanged: (e, a) =>
    e === (a.patch.length === 0)
      ? undefined
      : {
          actual: a.patch.length === 0,
          note: e ? "a mutation changed the object" : "no mutation changed the object",
        },
};

/** Compares the actual decision with every expectation the case states. */
export function compare(c: SuiteCase, actual: CaseActual): Mismatch[] {
  const out: Mismatch[] = [];
  for (const key of EXPECT_KEYS) {
    const expected = c.expect[key];
    if (expected === undefined) continue;
    const miss = (CHECKS[key] as Check<ExpectKey>)(expected, actual);
    if (miss === undefined) continue;
    out.push({
      key,
      path: c.expectPaths[key] ?? `${c.path}.expect.${key}`,
      expected,
      actual: miss.actual,
      ...(miss.note ? { note: miss.note } : {}),
    });
  }
  return out;
}

function runCase(loaded: Loaded, rules: Suite["authorizer"], pc: PreparedCase): CaseResult {
  const started = performance.now();
  const checks: AuthorizerCheck[] = [];
  const base = pc.defaults ? loaded.contexts.defaulted : loaded.contexts.asWritten;
  const ctx: EngineContext = {
    ...(pc.namespaceObject ? withNamespaceObject(base, pc.namespaceObject, { defaults: pc.defaults }) : base),
    authorizer: tableAuthorizer(rules, (c) => checks.push(c)),
  };
  const options = {
    deadline: performance.now() + OFFLINE_DEADLINE_MS,
    // Only bound policies, as the API server (and serve) evaluates them: a suite binds what it tests.
    allBindings: true,
    explain: true,
    defaults: pc.defaults,
  };
  const request = pc.request;
  const decision = decide(admit(loaded.set, request, ctx, options));
  const results = decision.results;
  const actual: CaseActual = {
    allowed: decision.allowed,
    ...(decision.status ? { status: decision.status } : {}),
    warnings: decision.warnings,
    auditAnnotations: decision.auditAnnotations,
    matched: unique(results.filter((r) => r.outcome !== "skip").map((r) => r.policy)),
    skipped: unique(results.filter((r) => r.outcome === "skip").map((r) => r.policy)),
    patch: decision.patch ?? [],
    patched: request.operation === "DELETE" ? null : (decision.patchedObject ?? request.object),
  };
  const mismatches = compare(pc.spec, actual);
  return {
    name: pc.spec.name,
    resource: pc.resource,
    path: pc.spec.path,
    location: pc.spec.location,
    passed: mismatches.length === 0,
    mismatches,
    actual,
    original: pc.original,
    defaulted: pc.defaulted,
    results,
    authorizerChecks: checks,
    durationMs: performance.now() - started,
  };
}

/** Reads, checks and loads one suite file, reporting every problem it and its files have. Never throws for bad input. */
export async function loadSuiteFile(
  file: string,
  reader: SuiteReader,
  options: RunOptions = {},
): Promise<LoadedSuite> {
  const text = await reader.readText(file);
  if (!text.ok)
    return {
      file,
      name: suiteNameFromFile(file),
      broken: true,
      diagnostics: [
        {
          code: "TE_SUITE",
          severity: "error",
          message: `cannot read the suite file: ${text.error}`,
          location: { file, line: 1, column: 1 },
        },
      ],
    };
  const parsed = parseSuiteText(text.value, file);
  const suite = parsed.suite ?? parsed.partial;
  if (!suite) return { file, name: parsed.name, broken: true, diagnostics: parsed.diagnostics };
  return loadSuite(suite, reader, options, parsed.diagnostics);
}

/** Loads what a parsed suite names; broken when the suite or any of those has an error. */
export async function loadSuite(
  suite: Suite,
  reader: SuiteReader,
  options: RunOptions = {},
  parseDiagnostics: readonly Diagnostic[] = [],
): Promise<LoadedSuite> {
  const { loaded, diagnostics } = await load(suite, reader, options);
  const all = [...parseDiagnostics, ...diagnostics];
  const base = { file: suite.file, name: suite.name, diagnostics: all };
  if (!loaded || hasErrors(parseDiagnostics)) return { ...base, broken: true };
  return { ...base, broken: false, suite, loaded };
}

/**
 * Runs a loaded suite's cases, those `select` takes (given the case's name elements, the suite's
 * first) or all. A broken suite runs none.
 */
export function runLoadedSuite(
  l: LoadedSuite,
  select?: (elements: readonly string[]) => boolean,
): SuiteResult {
  const base = { file: l.file, name: l.name, diagnostics: l.diagnostics, broken: l.broken };
  const { suite, loaded } = l;
  if (l.broken || !suite || !loaded) return { ...base, cases: [], skipped: 0 };
  const chosen = select
    ? loaded.cases.filter((pc) => select([suite.name, ...pc.spec.namePath]))
    : loaded.cases;
  return {
    ...base,
    cases: chosen.map((pc) => runCase(loaded, suite.authorizer, pc)),
    skipped: loaded.cases.length - chosen.length,
  };
}

/** Reads, checks, loads and runs one suite file. Never throws for bad input. */
export async function runSuiteFile(
  file: string,
  reader: SuiteReader,
  options: RunOptions = {},
): Promise<SuiteResult> {
  return runLoadedSuite(await loadSuiteFile(file, reader, options));
}

/** Loads and runs a parsed suite. */
export async function runSuite(
  suite: Suite,
  reader: SuiteReader,
  options: RunOptions = {},
  parseDiagnostics: readonly Diagnostic[] = [],
): Promise<SuiteResult> {
  return runLoadedSuite(await loadSuite(suite, reader, options, parseDiagnostics));
}
