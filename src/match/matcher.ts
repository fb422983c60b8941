/**
 * Whether a policy's matchConstraints or a binding's matchResources select an admission request, with
 * the API server's semantics (apiserver admission/plugin/policy/matching and the webhook predicates
 * for namespaces and objects).
 *
 * The four checks are resourceRules, excludeResourceRules, namespaceSelector and objectSelector. The
 * API server runs them in another order but its result does not depend on the order: any check that
 * definitely fails gives "not matched", even when another check errored; only when every check that
 * could be decided passed does an error (unknown namespace, invalid selector) surface. So a typo in a
 * selector, or an unknown namespace, never fails a request the policy does not otherwise select. We run
 * the rules first because they are cheap and need no namespace lookup, and because "no rule matches"
 * is the most useful reason to show in an explanation.
 */
import type { AdmissionRequest, GroupVersionKind, GroupVersionResource } from "../request/types.ts";
import type {
  LabelSelector,
  MatchPolicyType,
  MatchResources,
  NamedRuleWithOperations,
} from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";
import { describeTarget, requestTarget, type RuleTarget, ruleMatches } from "./rules.ts";
import {
  compileLabelSelector,
  type InvalidSelectorError,
  type LabelMatcher,
  type Labels,
} from "./selector.ts";

export interface MatchContext {
  /** Labels of a namespace the cluster (or the loaded files) knows; undefined when it does not exist. */
  namespaceLabels(name: string): Labels | undefined;
}

export type MatchErrorKind = "namespace-not-found" | "invalid-selector" | "invalid-request";

export type MatchOutcome =
  | {
      readonly status: "matched";
      /** What was compared with the rules: the request's resource, or its requestResource (Equivalent). */
      readonly resource: GroupVersionResource;
      readonly subResource: string;
      readonly kind: GroupVersionKind;
      /** True when only the requestResource matched (matchPolicy Equivalent). */
      readonly equivalent: boolean;
      readonly reason: string;
    }
  | { readonly status: "not-matched"; readonly reason: string }
  | { readonly status: "error"; readonly errorKind: MatchErrorKind; readonly message: string };

/** A MatchOutcome that does not select: not matched, or an error. */
export type Unselected = Exclude<MatchOutcome, { readonly status: "matched" }>;

interface MatchError {
  readonly errorKind: MatchErrorKind;
  readonly message: string;
}

/** A check that either decided (with a reason when it failed) or could not decide. */
type Check = Result<{ readonly pass: true } | { readonly pass: false; readonly reason: string }, MatchError>;

const PASS: Check = ok({ pass: true });

function fail(reason: string): Check {
  return ok({ pass: false, reason });
}

interface RuleHit {
  readonly index: number;
  readonly target: RuleTarget;
  readonly equivalent: boolean;
}

/**
 * The resource the client originally asked for, when it differs from `resource`. This is our stand-in
 * for the API server's discovery-based equivalence: with matchPolicy Equivalent the server also tries
 * every resource that is the same object served by another group/version (extensions/v1beta1 and
 * apps/v1 deployments). We have no discovery, so the only equivalent we know is the one the request
 * itself names in requestResource/requestSubResource.
 */
function equivalentTarget(request: AdmissionRequest): RuleTarget | undefined {
  const original = request.requestResource;
  if (original === undefined) return undefined;
  const own = requestTarget(request);
  const subResource = request.requestSubResource ?? own.subResource;
  const same =
    original.group === own.resource.group &&
    original.version === own.resource.version &&
    original.resource === own.resource.resource &&
    subResource === own.subResource;
  return same ? undefined : { resource: original, subResource };
}

/**
 * First rule selecting the request; with Equivalent, every rule is tried on `resource` before any on
 * the equivalent. As a number, because the engine asks for every policy and binding of a request and
 * reads only whether one matched: `i` for rule i on the request's own resource, `EQUIVALENT - i` for
 * rule i on its requestResource, NO_RULE for none.
 */
function findRule(
  rules: readonly NamedRuleWithOperations[],
  policy: MatchPolicyType,
  request: AdmissionRequest,
): number {
  const own = requestTarget(request);
  for (let i = 0; i < rules.length; i++)
    if (ruleMatches(rules[i] as NamedRuleWithOperations, request, own)) return i;
  if (policy !== "Equivalent") return NO_RULE;
  const alt = equivalentTarget(request);
  if (alt === undefined) return NO_RULE;
  for (let i = 0; i < rules.length; i++)
    if (ruleMatches(rules[i] as NamedRuleWithOperations, request, alt)) return EQUIVALENT - i;
  return NO_RULE;
}

const NO_RULE = -1;
const EQUIVALENT = -2;

/** A findRule hit as its rule's index and whether the requestResource matched. */
function ruleHit(request: AdmissionRequest, found: number): RuleHit {
  return found >= 0
    ? { index: found, target: requestTarget(request), equivalent: false }
    : {
        index: EQUIVALENT - found,
        target: equivalentTarget(request) ?? requestTarget(request),
        equivalent: true,
      };
}

function describeRequest(request: AdmissionRequest): string {
  const where = request.namespace === "" ? "" : ` in namespace '${request.namespace}'`;
  const name = request.name === "" ? "" : ` '${request.name}'`;
  return `${request.operation} ${describeTarget(requestTarget(request))}${name}${where}`;
}

function viaEquivalent(hit: RuleHit): string {
  return hit.equivalent ? ` (via requestResource ${describeTarget(hit.target)}, matchPolicy Equivalent)` : "";
}

const isRecord = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The labels of an object, or undefined for an object that cannot carry labels: absent (null), or
 * without `metadata`, as the connect/rollback option kinds are. Labels that are not a map of strings
 * read as none, as the API server's unstructured accessor does.
 */
export function objectLabels(object: unknown): Labels | undefined {
  if (!isRecord(object)) return undefined;
  const metadata = object.metadata;
  if (!isRecord(metadata)) return undefined;
  const labels = metadata.labels;
  if (!isRecord(labels)) return {};
  const entries = Object.entries(labels);
  return entries.every(([, v]) => typeof v === "string") ? (labels as Labels) : {};
}

function namespaceLabelsFor(request: AdmissionRequest, ctx: MatchContext): Result<Labels, MatchError> {
  const isNamespace = request.resource.resource === "namespaces";
  // A Namespace being created or updated is not in the cluster yet (or not in this version): its own
  // object carries the labels to select on.
  if (
    isNamespace &&
    (request.subResource ?? "") === "" &&
    (request.operation === "CREATE" || request.operation === "UPDATE")
  ) {
    const labels = objectLabels(request.object);
    return labels === undefined
      ? err({
          errorKind: "invalid-request",
          message: `${request.operation} of namespace '${request.name}' carries no Namespace object`,
        })
      : ok(labels);
  }
  // The API server sets the namespace of a request for a Namespace to its own name; request files
  // written by hand often leave it empty.
  const name = request.namespace !== "" ? request.namespace : isNamespace ? request.name : "";
  const known = ctx.namespaceLabels(name);
  if (known !== undefined) return ok(known);
  // Deleting a namespace we were not told about: the oldObject is the stored Namespace the API server
  // would have looked up, so its labels are the ones it would have used.
  if (isNamespace) {
    const old = objectLabels(request.oldObject);
    if (old !== undefined) return ok(old);
  }
  return err({ errorKind: "namespace-not-found", message: `namespaces "${name}" not found` });
}

/**
 * A selector as the checks use it: undefined when it selects everything (absent, or `{}`), else the
 * compiled matcher or why it is invalid. Compiled once per policy or binding (PreparedMatch).
 */
type PreparedSelector = Result<LabelMatcher, InvalidSelectorError> | undefined;

function prepareSelector(sel: LabelSelector | undefined): PreparedSelector {
  if (sel === undefined) return undefined;
  const compiled = compileLabelSelector(sel);
  return compiled.ok && compiled.value.empty ? undefined : compiled;
}

function checkNamespaceSelector(
  sel: Result<LabelMatcher, InvalidSelectorError>,
  request: AdmissionRequest,
  ctx: MatchContext,
): Check {
  // Cluster-scoped resources other than Namespace are never filtered by namespaceSelector; the API
  // server decides this before it even parses the selector.
  if (request.namespace === "" && request.resource.resource !== "namespaces") return PASS;
  if (!sel.ok) {
    return err({ errorKind: "invalid-selector", message: `namespaceSelector: ${sel.error.message}` });
  }
  const labels = namespaceLabelsFor(request, ctx);
  if (!labels.ok) return labels;
  if (sel.value.matches(labels.value)) return PASS;
  const name = request.namespace !== "" ? request.namespace : request.name;
  return fail(`namespaceSelector (${sel.value.text}) does not match namespace '${name}'`);
}

function checkObjectSelector(
  sel: Result<LabelMatcher, InvalidSelectorError>,
  request: AdmissionRequest,
): Check {
  if (!sel.ok) {
    return err({ errorKind: "invalid-selector", message: `objectSelector: ${sel.error.message}` });
  }
  const matcher = sel.value;
  // Either object may satisfy it, so a label being added or removed still selects the request; an
  // absent object (oldObject on CREATE, object on DELETE) never does.
  const selects = (object: unknown): boolean => {
    const labels = objectLabels(object);
    return labels !== undefined && matcher.matches(labels);
  };
  if (selects(request.object) || selects(request.oldObject)) return PASS;
  return fail(`objectSelector (${matcher.text}) matches neither object nor oldObject`);
}

/**
 * A matched outcome. What it describes is worked out when read: the engine asks only for the status,
 * and building the reason's text for every policy of every request was part of what the matcher
 * cost, per policy and request.
 */
class Matched {
  readonly status = "matched";
  constructor(
    private readonly request: AdmissionRequest,
    /** The resource rule that matched; NO_CRITERIA or EVERY_RESOURCE when no rule was asked. */
    private readonly ruleIndex: number,
    readonly equivalent: boolean,
  ) {}
  private get target(): RuleTarget {
    const own = requestTarget(this.request);
    return this.equivalent ? (equivalentTarget(this.request) ?? own) : own;
  }
  get resource(): GroupVersionResource {
    return this.target.resource;
  }
  get subResource(): string {
    return this.target.subResource;
  }
  get kind(): GroupVersionKind {
    return this.equivalent ? (this.request.requestKind ?? this.request.kind) : this.request.kind;
  }
  get reason(): string {
    if (this.ruleIndex === NO_CRITERIA) return "no match criteria";
    if (this.ruleIndex === EVERY_RESOURCE) return "resourceRules is empty: every resource";
    const via = this.equivalent
      ? viaEquivalent({ index: this.ruleIndex, target: this.target, equivalent: true })
      : "";
    return `matched by resourceRules[${this.ruleIndex}]${via}`;
  }
  toJSON(): object {
    const { status, resource, subResource, kind, equivalent, reason } = this;
    return { status, resource, subResource, kind, equivalent, reason };
  }
}

/**
 * A policy's matchConstraints or a binding's matchResources, with its selectors compiled: built once
 * when the policy is compiled, asked for every request. An undefined MatchResources selects
 * everything: that is what an absent binding matchResources means; for a policy without
 * matchConstraints the caller decides.
 */
export class PreparedMatch {
  private readonly namespaceSelector: PreparedSelector;
  private readonly objectSelector: PreparedSelector;
  constructor(readonly resources: MatchResources | undefined) {
    this.namespaceSelector = prepareSelector(resources?.namespaceSelector);
    this.objectSelector = prepareSelector(resources?.objectSelector);
  }

  /**
   * Decides whether the criteria select `request`. Requests for admission configuration objects are
   * not special here: see isAdmissionConfigurationResource.
   */
  match(request: AdmissionRequest, ctx: MatchContext): MatchOutcome {
    const d = this.decide(request, ctx);
    if (typeof d !== "number") return d;
    return d >= 0 || d === NO_CRITERIA || d === EVERY_RESOURCE
      ? new Matched(request, d, false)
      : new Matched(request, EQUIVALENT - d, true);
  }

  /**
   * The same decision, for the engine: undefined when the criteria select `request`, which is then
   * described no further (a matched outcome is an object per policy and binding of every request).
   */
  check(request: AdmissionRequest, ctx: MatchContext): Unselected | undefined {
    const d = this.decide(request, ctx);
    return typeof d === "number" ? undefined : d;
  }

  /** The rule that matched (see findRule), NO_CRITERIA or EVERY_RESOURCE; or why the criteria do not select. */
  private decide(request: AdmissionRequest, ctx: MatchContext): number | Unselected {
    const mr = this.resources;
    if (mr === undefined) return NO_CRITERIA;

    let hit = EVERY_RESOURCE;
    if (mr.resourceRules.length > 0) {
      hit = findRule(mr.resourceRules, mr.matchPolicy, request);
      if (hit === NO_RULE) {
        const alt = mr.matchPolicy === "Equivalent" ? equivalentTarget(request) : undefined;
        const also = alt !== undefined ? ` (nor its requestResource ${describeTarget(alt)})` : "";
        return { status: "not-matched", reason: `no resourceRules match ${describeRequest(request)}${also}` };
      }
    }

    if (mr.excludeResourceRules.length > 0) {
      const excluded = findRule(mr.excludeResourceRules, mr.matchPolicy, request);
      if (excluded !== NO_RULE) {
        const h = ruleHit(request, excluded);
        return {
          status: "not-matched",
          reason: `excluded by excludeResourceRules[${h.index}]${viaEquivalent(h)}`,
        };
      }
    }

    // Both selectors are evaluated before either error is reported: a definite "no" from one
    // outranks an error from the other.
    const ns =
      this.namespaceSelector === undefined
        ? PASS
        : checkNamespaceSelector(this.namespaceSelector, request, ctx);
    const obj = this.objectSelector === undefined ? PASS : checkObjectSelector(this.objectSelector, request);
    if (ns.ok && !ns.value.pass) return { status: "not-matched", reason: ns.value.reason };
    if (obj.ok && !obj.value.pass) return { status: "not-matched", reason: obj.value.reason };
    if (!ns.ok) return { status: "error", errorKind: ns.error.errorKind, message: ns.error.message };
    if (!obj.ok) return { status: "error", errorKind: obj.error.errorKind, message: obj.error.message };
    return hit;
  }
}

/** Criteria that select without a rule: none at all (an absent matchResources), or an empty resourceRules. */
const NO_CRITERIA = -(2 ** 40);
const EVERY_RESOURCE = NO_CRITERIA - 1;

/**
 * Decides whether `mr` selects `request`, preparing it first: for callers that ask once. The engine
 * keeps each policy's and binding's PreparedMatch.
 */
export function matchesResources(
  mr: MatchResources | undefined,
  request: AdmissionRequest,
  ctx: MatchContext,
): MatchOutcome {
  return new PreparedMatch(mr).match(request, ctx);
}

const ADMISSION_GROUP = "admissionregistration.k8s.io";
const ADMISSION_KINDS: ReadonlySet<string> = new Set([
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
]);
const ADMISSION_RESOURCES: ReadonlySet<string> = new Set([
  "validatingadmissionpolicies",
  "validatingadmissionpolicybindings",
  "mutatingadmissionpolicies",
  "mutatingadmissionpolicybindings",
  "validatingwebhookconfigurations",
  "mutatingwebhookconfigurations",
]);

/**
 * Requests that create or change admission configuration are never subject to admission policies or
 * webhooks, so a bad policy cannot lock an administrator out of fixing it. Kubernetes decides by the
 * request's kind; we also accept the resource, since hand-written requests may get only one right.
 */
export function isAdmissionConfigurationResource(request: AdmissionRequest): boolean {
  return (
    (request.kind.group === ADMISSION_GROUP && ADMISSION_KINDS.has(request.kind.kind)) ||
    (request.resource.group === ADMISSION_GROUP && ADMISSION_RESOURCES.has(request.resource.resource))
  );
}
