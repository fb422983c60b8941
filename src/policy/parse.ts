/**
 * Reading policy files: YAML or JSON text → the typed policy model, validated the way the Kubernetes
 * API server validates admissionregistration.k8s.io objects (pkg/apis/admissionregistration/validation)
 * and defaulted the way it defaults them. Pure: no filesystem; src/sources/files.ts feeds it text.
 *
 * Every problem becomes a Diagnostic located at the offending value (or, for a missing field, at the
 * mapping that should hold it). A document with any error is left out of the set so later stages
 * only ever see well-formed objects; the other documents of the file are still read.
 * CEL expressions are only checked to be non-empty strings here; the CEL compiler checks the rest.
 */
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, visit } from "yaml";
import type { Document, Node, Scalar, YAMLError, YAMLMap, YAMLSeq } from "yaml";
import type { Diagnostic, DiagnosticCode, DiagnosticSeverity } from "../errors.ts";
import {
  closestName,
  dns1035Label,
  dns1123Subdomain,
  isCelIdentifier,
  labelValue,
  pathSegmentName,
  qualifiedName,
} from "./fields.ts";
import { childPath, resolveAlias, TextPositions, YamlSourceMap } from "./source-map.ts";
import type {
  AuditAnnotation,
  FailurePolicy,
  LabelSelector,
  LabelSelectorRequirement,
  MatchCondition,
  MatchPolicyType,
  MatchResources,
  MutatingBinding,
  MutatingPolicy,
  Mutation,
  NamedRuleWithOperations,
  ParameterNotFoundAction,
  ParamKind,
  ParamRef,
  ParsedBinding,
  ParsedPolicy,
  PatchType,
  PolicySet,
  ReinvocationPolicy,
  ResourceObject,
  RuleOperation,
  ScopeType,
  SourceMap,
  Validation,
  ValidationAction,
  ValidationReason,
  ValidatingBinding,
  ValidatingPolicy,
  Variable,
} from "./types.ts";

export const ADMISSION_GROUP = "admissionregistration.k8s.io";

/** The admissionregistration kinds celgate reads, and the API versions each is served in. */
export const ACCEPTED_KINDS = {
  ValidatingAdmissionPolicy: ["v1", "v1beta1", "v1alpha1"],
  ValidatingAdmissionPolicyBinding: ["v1", "v1beta1", "v1alpha1"],
  MutatingAdmissionPolicy: ["v1", "v1beta1", "v1alpha1"],
  MutatingAdmissionPolicyBinding: ["v1", "v1beta1", "v1alpha1"],
} as const satisfies Record<string, readonly string[]>;

type AcceptedKind = keyof typeof ACCEPTED_KINDS;

const FAILURE_POLICIES = ["Fail", "Ignore"] as const satisfies readonly FailurePolicy[];
const MATCH_POLICIES = ["Exact", "Equivalent"] as const satisfies readonly MatchPolicyType[];
const OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"] as const satisfies readonly RuleOperation[];
const MUTATING_OPERATIONS = ["CREATE", "UPDATE", "CONNECT", "*"] as const satisfies readonly RuleOperation[];
const SCOPES = ["Cluster", "Namespaced", "*"] as const satisfies readonly ScopeType[];
const VALIDATION_ACTIONS = ["Deny", "Warn", "Audit"] as const satisfies readonly ValidationAction[];
// validation.go accepts Forbidden, Invalid and RequestEntityTooLarge; the API reference (and the
// model) also name Unauthorized, so it is accepted too rather than rejecting documented values.
const REASONS = [
  "Unauthorized",
  "Forbidden",
  "Invalid",
  "RequestEntityTooLarge",
] as const satisfies readonly ValidationReason[];
const PATCH_TYPES = ["ApplyConfiguration", "JSONPatch"] as const satisfies readonly PatchType[];
const REINVOCATION_POLICIES = ["Never", "IfNeeded"] as const satisfies readonly ReinvocationPolicy[];
const NOT_FOUND_ACTIONS = ["Allow", "Deny"] as const satisfies readonly ParameterNotFoundAction[];
const SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;

const MAX_MATCH_CONDITIONS = 64;
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_VALUE_EXPRESSION_BYTES = 5 * 1024;

// Known fields per structure, for the unknown-field warnings (kubectl's strict decoding rejects them).
const TOP_FIELDS = ["apiVersion", "kind", "metadata", "spec", "status"];
const METADATA_FIELDS = [
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
];
const VALIDATING_SPEC_FIELDS = [
  "paramKind",
  "matchConstraints",
  "validations",
  "failurePolicy",
  "auditAnnotations",
  "matchConditions",
  "variables",
];
const MUTATING_SPEC_FIELDS = [
  "paramKind",
  "matchConstraints",
  "variables",
  "mutations",
  "failurePolicy",
  "reinvocationPolicy",
  "matchConditions",
];
const VALIDATING_BINDING_SPEC_FIELDS = ["policyName", "paramRef", "matchResources", "validationActions"];
const MUTATING_BINDING_SPEC_FIELDS = ["policyName", "paramRef", "matchResources"];
const MATCH_RESOURCES_FIELDS = [
  "namespaceSelector",
  "objectSelector",
  "resourceRules",
  "excludeResourceRules",
  "matchPolicy",
];
const RULE_FIELDS = ["resourceNames", "operations", "apiGroups", "apiVersions", "resources", "scope"];
const SELECTOR_FIELDS = ["matchLabels", "matchExpressions"];
const REQUIREMENT_FIELDS = ["key", "operator", "values"];
const NAMED_EXPRESSION_FIELDS = ["name", "expression"];
const VALIDATION_FIELDS = ["expression", "message", "reason", "messageExpression"];
const AUDIT_ANNOTATION_FIELDS = ["key", "valueExpression"];
const PARAM_KIND_FIELDS = ["apiVersion", "kind"];
const MUTATION_FIELDS = ["patchType", "applyConfiguration", "jsonPatch"];
const EXPRESSION_FIELDS = ["expression"];
const PARAM_REF_FIELDS = ["name", "namespace", "selector", "parameterNotFoundAction"];

type Resolved = Scalar | YAMLMap | YAMLSeq;

/** A value found in a document: the node (aliases resolved), where to report it, and its field path. */
interface Field {
  readonly node: Resolved;
  readonly offset: number;
  readonly path: string;
}

interface DocContext {
  readonly positions: TextPositions;
  readonly doc: Document.Parsed;
  readonly diagnostics: Diagnostic[];
}

/** Collects the diagnostics of one object and counts its errors, which decide whether it is kept. */
class Reporter {
  errors = 0;
  object: { kind: string; name: string } | undefined;

  constructor(readonly dc: DocContext) {}

  report(
    code: DiagnosticCode,
    path: string,
    offset: number,
    message: string,
    severity: DiagnosticSeverity = "error",
  ): void {
    if (severity === "error") this.errors++;
    this.dc.diagnostics.push({
      code,
      severity,
      message,
      ...(path === "" ? {} : { path }),
      location: this.dc.positions.at(offset),
      ...(this.object ? { object: this.object } : {}),
    });
  }

  resolve(node: unknown): Resolved | undefined {
    const n = resolveAlias(this.dc.doc, node);
    return isScalar(n) || isMap(n) || isSeq(n) ? n : undefined;
  }
}

function offsetOf(node: Node | null | undefined, fallback: number): number {
  return node?.range ? node.range[0] : fallback;
}

/** How a value reads in a message: `"text"`, `number 3`, `a list`. */
function describe(node: Resolved): string {
  if (isMap(node)) return "a mapping";
  if (isSeq(node)) return "a list";
  const v = node.value;
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "bigint") return `number ${String(v)}`;
  if (typeof v === "boolean") return `boolean ${String(v)}`;
  return String(v);
}

function quoteList(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

function isBlank(s: string): boolean {
  return s.trim().length === 0;
}

/** A YAML mapping read as a Kubernetes struct: typed accessors that report what they reject. */
class MapView {
  private readonly entries = new Map<string, { keyOffset: number; value: unknown }>();

  constructor(
    readonly r: Reporter,
    readonly node: YAMLMap,
    readonly path: string,
    readonly offset: number,
  ) {
    for (const pair of node.items) {
      const key = r.resolve(pair.key);
      const keyOffset = offsetOf(pair.key as Node | null, offset);
      if (!isScalar(key) || key.value === null || typeof key.value === "object") {
        r.report("PE_FIELD_TYPE", path, keyOffset, "field names must be strings");
        continue;
      }
      this.entries.set(String(key.value), { keyOffset, value: pair.value });
    }
  }

  child(key: string): string {
    return childPath(this.path, key);
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  keyOffset(key: string): number {
    return this.entries.get(key)?.keyOffset ?? this.offset;
  }

  /** The field's value, or undefined when the key is absent or its value is null (as Go's decoder reads it). */
  field(key: string): Field | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const node = this.r.resolve(entry.value);
    if (!node || (isScalar(node) && node.value === null)) return undefined;
    return { node, offset: offsetOf(entry.value as Node, entry.keyOffset), path: this.child(key) };
  }

  missing(key: string, message = `missing required field "${key}"`): void {
    this.r.report("PE_MISSING_FIELD", this.child(key), this.offset, message);
  }

  /** Warns about fields the Kubernetes type does not have, so typos like `validation:` are visible. */
  known(fields: readonly string[]): void {
    for (const [key, entry] of this.entries) {
      if (fields.includes(key)) continue;
      const hint = closestName(key, fields);
      this.r.report(
        "PE_FIELD_VALUE",
        this.child(key),
        entry.keyOffset,
        `unknown field "${key}"${hint ? ` (did you mean "${hint}"?)` : ""}`,
        "warning",
      );
    }
  }

  string(key: string): string | undefined {
    const f = this.field(key);
    return f ? asString(this.r, f) : undefined;
  }

  /** A string that must be present and not blank. */
  requiredString(key: string, message?: string): string | undefined {
    const f = this.field(key);
    if (!f) {
      this.missing(key, message);
      return undefined;
    }
    const s = asString(this.r, f);
    if (s === undefined) return undefined;
    if (isBlank(s)) {
      this.r.report("PE_FIELD_VALUE", f.path, f.offset, "must not be empty");
      return undefined;
    }
    return s;
  }

  /** A string that may be absent (or "", which Kubernetes reads as unset) but must not be only blanks. */
  optionalNonEmptyString(key: string): string | undefined {
    const f = this.field(key);
    if (!f) return undefined;
    const s = asString(this.r, f);
    if (s === "") return undefined;
    if (s !== undefined && isBlank(s)) {
      this.r.report("PE_FIELD_VALUE", f.path, f.offset, "must be non-empty if specified");
      return undefined;
    }
    return s;
  }

  map(key: string): MapView | undefined {
    const f = this.field(key);
    return f ? asMap(this.r, f) : undefined;
  }

  seq(key: string): Field[] | undefined {
    const f = this.field(key);
    return f ? asSeq(this.r, f) : undefined;
  }

  /** A list of strings; wrongly typed items are reported and left out. */
  stringList(key: string): { field: Field; items: { value: string; field: Field }[] } | undefined {
    const f = this.field(key);
    if (!f) return undefined;
    const items = asSeq(this.r, f);
    if (!items) return undefined;
    const out: { value: string; field: Field }[] = [];
    for (const item of items) {
      const s = asString(this.r, item);
      if (s !== undefined) out.push({ value: s, field: item });
    }
    return { field: f, items: out };
  }

  enumValue<T extends string>(key: string, allowed: readonly T[], fallback: T): T | undefined {
    const f = this.field(key);
    if (!f) return fallback;
    const s = asString(this.r, f);
    return s === undefined ? undefined : oneOf(this.r, f, s, allowed);
  }
}

function asString(r: Reporter, f: Field): string | undefined {
  if (isScalar(f.node) && typeof f.node.value === "string") return f.node.value;
  r.report("PE_FIELD_TYPE", f.path, f.offset, `must be a string; got ${describe(f.node)}`);
  return undefined;
}

function asMap(r: Reporter, f: Field): MapView | undefined {
  if (isMap(f.node)) return new MapView(r, f.node, f.path, f.offset);
  r.report("PE_FIELD_TYPE", f.path, f.offset, `must be a mapping; got ${describe(f.node)}`);
  return undefined;
}

/** The items of a list; a null item is kept as a null scalar so the item reader reports it. */
function asSeq(r: Reporter, f: Field): Field[] | undefined {
  if (!isSeq(f.node)) {
    r.report("PE_FIELD_TYPE", f.path, f.offset, `must be a list; got ${describe(f.node)}`);
    return undefined;
  }
  const out: Field[] = [];
  f.node.items.forEach((item, i) => {
    const node = r.resolve(item);
    const path = childPath(f.path, i);
    const offset = offsetOf(item as Node | null, f.offset);
    if (node) out.push({ node, offset, path });
    else r.report("PE_FIELD_TYPE", path, offset, "must be a value");
  });
  return out;
}

function oneOf<T extends string>(r: Reporter, f: Field, value: string, allowed: readonly T[]): T | undefined {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  r.report(
    "PE_FIELD_VALUE",
    f.path,
    f.offset,
    `must be one of ${quoteList(allowed)}; got ${JSON.stringify(value)}`,
  );
  return undefined;
}

function reportFormat(r: Reporter, f: Field, value: string, errors: readonly string[]): boolean {
  for (const e of errors) r.report("PE_FIELD_VALUE", f.path, f.offset, `${e}; got ${JSON.stringify(value)}`);
  return errors.length === 0;
}

/** A list field that must have at least one item. */
function requireItems<T>(view: MapView, key: string, list: { field: Field; items: T[] } | undefined): void {
  if (list === undefined) {
    if (!view.field(key)) view.missing(key);
  } else if (isSeq(list.field.node) && list.field.node.items.length === 0) {
    view.r.report("PE_FIELD_VALUE", list.field.path, list.field.offset, "must contain at least one item");
  }
}

/** `*` matches everything, so listing anything next to it is a mistake the API server rejects. */
function wildcardAlone(r: Reporter, list: { field: Field; items: { value: string }[] }, what: string): void {
  if (list.items.length > 1 && list.items.some((i) => i.value === "*")) {
    r.report(
      "PE_FIELD_VALUE",
      list.field.path,
      list.field.offset,
      `if '*' is present, must not specify other ${what}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// metadata

interface Metadata {
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

function readStringMap(
  r: Reporter,
  view: MapView | undefined,
  key: string,
  checkValue: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  const m = view?.map(key);
  if (!m) return out;
  for (const k of m.keys()) {
    const keyErrors = qualifiedName(k);
    for (const e of keyErrors)
      r.report("PE_FIELD_VALUE", m.child(k), m.keyOffset(k), `key ${e}; got ${JSON.stringify(k)}`);
    const f = m.field(k);
    if (!f) {
      // `key:` with no value reads as "" in Kubernetes (null → zero value).
      out[k] = "";
      continue;
    }
    const v = asString(r, f);
    if (v === undefined) continue;
    if (checkValue) reportFormat(r, f, v, labelValue(v));
    out[k] = v;
  }
  return out;
}

function readMetadata(r: Reporter, top: MapView, requireDnsName: boolean): Metadata {
  const meta = top.map("metadata");
  if (!meta) {
    if (!top.field("metadata"))
      top.r.report("PE_MISSING_FIELD", "metadata.name", top.offset, 'missing required field "metadata.name"');
    return { name: undefined, namespace: undefined, labels: {}, annotations: {} };
  }
  meta.known(METADATA_FIELDS);
  let name = meta.requiredString("name");
  const nameField = meta.field("name");
  if (
    name !== undefined &&
    requireDnsName &&
    nameField &&
    !reportFormat(r, nameField, name, dns1123Subdomain(name))
  ) {
    name = undefined;
  }
  const namespace = meta.string("namespace");
  return {
    name,
    namespace,
    labels: readStringMap(r, meta, "labels", true),
    annotations: readStringMap(r, meta, "annotations", false),
  };
}

// ---------------------------------------------------------------------------------------------------
// match resources, rules and selectors

function readSelector(r: Reporter, view: MapView): LabelSelector {
  view.known(SELECTOR_FIELDS);
  const matchLabels = readStringMap(r, view, "matchLabels", true);
  const matchExpressions: LabelSelectorRequirement[] = [];
  for (const item of view.seq("matchExpressions") ?? []) {
    const req = asMap(r, item);
    if (!req) continue;
    req.known(REQUIREMENT_FIELDS);
    const key = req.requiredString("key");
    const keyField = req.field("key");
    if (key !== undefined && keyField) reportFormat(r, keyField, key, qualifiedName(key));
    const operatorField = req.field("operator");
    let operator: LabelSelectorRequirement["operator"] | undefined;
    if (!operatorField) req.missing("operator");
    else {
      const s = asString(r, operatorField);
      if (s !== undefined) operator = oneOf(r, operatorField, s, SELECTOR_OPERATORS);
    }
    const values = req.stringList("values");
    const given = values?.items ?? [];
    for (const v of given) reportFormat(r, v.field, v.value, labelValue(v.value));
    if ((operator === "In" || operator === "NotIn") && given.length === 0) {
      const where = values?.field;
      r.report(
        values ? "PE_FIELD_VALUE" : "PE_MISSING_FIELD",
        req.child("values"),
        where ? where.offset : req.offset,
        `must be specified when operator is "In" or "NotIn"`,
      );
    }
    if ((operator === "Exists" || operator === "DoesNotExist") && given.length > 0 && values) {
      r.report(
        "PE_FIELD_VALUE",
        values.field.path,
        values.field.offset,
        `must be empty when operator is "Exists" or "DoesNotExist"`,
      );
    }
    if (key !== undefined && operator !== undefined) {
      matchExpressions.push({ key, operator, values: given.map((v) => v.value) });
    }
  }
  return { matchLabels, matchExpressions };
}

const EMPTY_SELECTOR: LabelSelector = { matchLabels: {}, matchExpressions: [] };

/**
 * validateResources: `*` is every resource without subresources, `*\/*` everything, `x/*` every
 * subresource of x, `*\/y` subresource y of everything; a list may not repeat what a wildcard covers.
 */
function checkResources(r: Reporter, list: { field: Field; items: { value: string; field: Field }[] }): void {
  const subWildcardFor = new Set<string>();
  const resourceWildcardFor = new Set<string>();
  for (const { value } of list.items) {
    const slash = value.indexOf("/");
    if (slash < 0) continue;
    const res = value.slice(0, slash);
    const sub = value.slice(slash + 1);
    if (sub === "*") subWildcardFor.add(res);
    if (res === "*") resourceWildcardFor.add(sub);
  }
  let hasSingleWildcard = false;
  let hasPlainResource = false;
  for (const { value, field } of list.items) {
    if (value === "") {
      r.report("PE_FIELD_VALUE", field.path, field.offset, "must not be empty");
      continue;
    }
    const slash = value.indexOf("/");
    if (slash < 0) {
      if (value === "*") hasSingleWildcard = true;
      else hasPlainResource = true;
      continue;
    }
    const res = value.slice(0, slash);
    const sub = value.slice(slash + 1);
    if (sub !== "*" && subWildcardFor.has(res)) {
      r.report(
        "PE_FIELD_VALUE",
        field.path,
        field.offset,
        `if '${res}/*' is present, must not specify ${value}`,
      );
    }
    if (res !== "*" && resourceWildcardFor.has(sub)) {
      r.report(
        "PE_FIELD_VALUE",
        field.path,
        field.offset,
        `if '*/${sub}' is present, must not specify ${value}`,
      );
    }
  }
  if (list.items.length > 1 && list.items.some((i) => i.value === "*/*")) {
    r.report(
      "PE_FIELD_VALUE",
      list.field.path,
      list.field.offset,
      "if '*/*' is present, must not specify other resources",
    );
  }
  if (hasSingleWildcard && hasPlainResource) {
    r.report(
      "PE_FIELD_VALUE",
      list.field.path,
      list.field.offset,
      "if '*' is present, must not specify other resources without subresources",
    );
  }
}

function readRule(r: Reporter, item: Field, mutatingInclude: boolean): NamedRuleWithOperations | undefined {
  const view = asMap(r, item);
  if (!view) return undefined;
  view.known(RULE_FIELDS);
  const before = r.errors;

  const operations: RuleOperation[] = [];
  const ops = view.stringList("operations");
  requireItems(view, "operations", ops);
  if (ops) {
    wildcardAlone(r, ops, "operations");
    for (const op of ops.items) {
      const v = oneOf(r, op.field, op.value, OPERATIONS);
      if (v === undefined) continue;
      if (mutatingInclude && v === "DELETE") {
        r.report(
          "PE_FIELD_VALUE",
          op.field.path,
          op.field.offset,
          `must be one of ${quoteList(MUTATING_OPERATIONS)}; got "DELETE" (mutating admission policies cannot match DELETE)`,
        );
        continue;
      }
      operations.push(v);
    }
  }

  const groups = view.stringList("apiGroups");
  requireItems(view, "apiGroups", groups);
  if (groups) wildcardAlone(r, groups, "API groups");

  const versions = view.stringList("apiVersions");
  requireItems(view, "apiVersions", versions);
  if (versions) {
    wildcardAlone(r, versions, "API versions");
    for (const v of versions.items) {
      if (v.value === "") r.report("PE_FIELD_VALUE", v.field.path, v.field.offset, "must not be empty");
    }
  }

  const resources = view.stringList("resources");
  requireItems(view, "resources", resources);
  if (resources) checkResources(r, resources);

  const names = view.stringList("resourceNames");
  const seen = new Set<string>();
  for (const n of names?.items ?? []) {
    reportFormat(r, n.field, n.value, pathSegmentName(n.value));
    if (seen.has(n.value)) {
      r.report(
        "PE_DUPLICATE",
        n.field.path,
        n.field.offset,
        `duplicate resource name ${JSON.stringify(n.value)}`,
      );
    }
    seen.add(n.value);
  }

  const scope = view.enumValue("scope", SCOPES, "*");
  if (r.errors > before || scope === undefined) return undefined;
  return {
    operations,
    apiGroups: groups?.items.map((i) => i.value) ?? [],
    apiVersions: versions?.items.map((i) => i.value) ?? [],
    resources: resources?.items.map((i) => i.value) ?? [],
    resourceNames: names?.items.map((i) => i.value) ?? [],
    scope,
  };
}

function readRules(
  r: Reporter,
  view: MapView,
  key: string,
  mutatingInclude: boolean,
): NamedRuleWithOperations[] {
  const out: NamedRuleWithOperations[] = [];
  for (const item of view.seq(key) ?? []) {
    const rule = readRule(r, item, mutatingInclude);
    if (rule) out.push(rule);
  }
  return out;
}

function readMatchResources(
  r: Reporter,
  view: MapView,
  opts: { readonly requireResourceRules: boolean; readonly mutating: boolean },
): MatchResources {
  view.known(MATCH_RESOURCES_FIELDS);
  const ns = view.map("namespaceSelector");
  const obj = view.map("objectSelector");
  const resourceRules = readRules(r, view, "resourceRules", opts.mutating);
  if (opts.requireResourceRules) {
    const f = view.field("resourceRules");
    if (!f)
      view.missing(
        "resourceRules",
        'missing required field "resourceRules": at least one rule is needed to give the policy its types',
      );
    else if (isSeq(f.node) && f.node.items.length === 0) {
      r.report("PE_FIELD_VALUE", f.path, f.offset, "must contain at least one item");
    }
  }
  const excludeResourceRules = readRules(r, view, "excludeResourceRules", false);
  const matchPolicy = view.enumValue("matchPolicy", MATCH_POLICIES, "Equivalent") ?? "Equivalent";
  return {
    namespaceSelector: ns ? readSelector(r, ns) : EMPTY_SELECTOR,
    objectSelector: obj ? readSelector(r, obj) : EMPTY_SELECTOR,
    resourceRules,
    excludeResourceRules,
    matchPolicy,
  };
}

// ---------------------------------------------------------------------------------------------------
// policy spec parts

function readParamKind(r: Reporter, view: MapView): ParamKind | undefined {
  view.known(PARAM_KIND_FIELDS);
  const before = r.errors;
  const apiVersion = view.requiredString("apiVersion");
  const avField = view.field("apiVersion");
  if (apiVersion !== undefined && avField) {
    const parts = apiVersion.split("/");
    if (parts.length > 2) {
      r.report(
        "PE_FIELD_VALUE",
        avField.path,
        avField.offset,
        `must be "group/version" or "version"; got ${JSON.stringify(apiVersion)}`,
      );
    } else {
      const group = parts.length === 2 ? (parts[0] ?? "") : "";
      const version = parts.length === 2 ? (parts[1] ?? "") : (parts[0] ?? "");
      if (group !== "") {
        for (const e of dns1123Subdomain(group)) {
          r.report(
            "PE_FIELD_VALUE",
            avField.path,
            avField.offset,
            `group ${e}; got ${JSON.stringify(group)}`,
          );
        }
      }
      if (version === "") {
        r.report(
          "PE_FIELD_VALUE",
          avField.path,
          avField.offset,
          `version must be specified; got ${JSON.stringify(apiVersion)}`,
        );
      } else {
        for (const e of dns1035Label(version)) {
          r.report(
            "PE_FIELD_VALUE",
            avField.path,
            avField.offset,
            `version ${e}; got ${JSON.stringify(version)}`,
          );
        }
      }
    }
  }
  const kind = view.requiredString("kind");
  const kindField = view.field("kind");
  if (kind !== undefined && kindField) {
    for (const e of dns1035Label(kind.toLowerCase())) {
      r.report(
        "PE_FIELD_VALUE",
        kindField.path,
        kindField.offset,
        `may have mixed case, but otherwise ${e}; got ${JSON.stringify(kind)}`,
      );
    }
  }
  if (r.errors > before || apiVersion === undefined || kind === undefined) return undefined;
  return { apiVersion, kind };
}

/** A list field's items; more than `max` is reported (the items are still read, to report them too). */
function boundedSeq(r: Reporter, spec: MapView, key: string, max?: number): Field[] {
  const f = spec.field(key);
  const items = f ? asSeq(r, f) : undefined;
  if (!f || !items) return [];
  if (max !== undefined && items.length > max)
    r.report("PE_FIELD_VALUE", f.path, f.offset, `must have at most ${max} items; got ${items.length}`);
  return items;
}

/**
 * Names that must be unique within one list. `first` reports a repeat, with the line of its first
 * use, and returns false for it.
 */
class UniqueNames {
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly r: Reporter,
    private readonly what: string,
  ) {}
  first(field: Field, name: string): boolean {
    const line = this.seen.get(name);
    if (line !== undefined) {
      this.r.report(
        "PE_DUPLICATE",
        field.path,
        field.offset,
        `duplicate ${this.what} ${JSON.stringify(name)} (first at line ${line})`,
      );
      return false;
    }
    this.seen.set(name, this.r.dc.positions.at(field.offset).line);
    return true;
  }
}

/**
 * matchConditions and variables: `{name, expression}` items with unique names, each name checked by
 * `nameProblems` (the messages, empty when the name is good).
 */
function readNamedExpressions(
  r: Reporter,
  spec: MapView,
  key: "matchConditions" | "variables",
  max: number | undefined,
  what: string,
  nameProblems: (name: string) => readonly string[],
): { name: string; expression: string }[] {
  const out: { name: string; expression: string }[] = [];
  const names = new UniqueNames(r, what);
  for (const item of boundedSeq(r, spec, key, max)) {
    const view = asMap(r, item);
    if (!view) continue;
    view.known(NAMED_EXPRESSION_FIELDS);
    const name = view.requiredString("name");
    const nameField = view.field("name");
    let nameOk = name !== undefined;
    if (name !== undefined && nameField) {
      nameOk = reportFormat(r, nameField, name, nameProblems(name));
      if (!names.first(nameField, name)) nameOk = false;
    }
    const expression = view.requiredString("expression");
    if (nameOk && name !== undefined && expression !== undefined) out.push({ name, expression });
  }
  return out;
}

function readMatchConditions(r: Reporter, spec: MapView): MatchCondition[] {
  return readNamedExpressions(
    r,
    spec,
    "matchConditions",
    MAX_MATCH_CONDITIONS,
    "match condition name",
    qualifiedName,
  );
}

function readVariables(r: Reporter, spec: MapView): Variable[] {
  return readNamedExpressions(r, spec, "variables", undefined, "variable name", (name) =>
    isCelIdentifier(name)
      ? []
      : [
          "must be a CEL identifier (letters, digits and '_', not starting with a digit, not a reserved word)",
        ],
  );
}

function readValidation(r: Reporter, item: Field): Validation | undefined {
  const view = asMap(r, item);
  if (!view) return undefined;
  view.known(VALIDATION_FIELDS);
  const before = r.errors;
  const expression = view.requiredString("expression");
  const messageExpression = view.optionalNonEmptyString("messageExpression");
  const message = view.optionalNonEmptyString("message");
  const messageField = view.field("message");
  if (message !== undefined && messageField && /[\r\n]/.test(message.trim())) {
    r.report("PE_FIELD_VALUE", messageField.path, messageField.offset, "must not contain line breaks");
  }
  const reasonField = view.field("reason");
  let reason: ValidationReason | undefined;
  if (reasonField) {
    const s = asString(r, reasonField);
    if (s !== undefined) reason = oneOf(r, reasonField, s, REASONS);
  }
  if (r.errors > before || expression === undefined) return undefined;
  return {
    expression,
    ...(message !== undefined ? { message } : {}),
    ...(messageExpression !== undefined ? { messageExpression } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}

function readAuditAnnotations(r: Reporter, spec: MapView, policyName: string | undefined): AuditAnnotation[] {
  const out: AuditAnnotation[] = [];
  const keys = new UniqueNames(r, "audit annotation key");
  for (const item of boundedSeq(r, spec, "auditAnnotations", MAX_AUDIT_ANNOTATIONS)) {
    const view = asMap(r, item);
    if (!view) continue;
    view.known(AUDIT_ANNOTATION_FIELDS);
    const before = r.errors;
    const key = view.requiredString("key");
    const keyField = view.field("key");
    if (key !== undefined && keyField) {
      // The audit annotation is recorded as "<policy name>/<key>", which must be a qualified name;
      // the policy name is checked on its own, so only the key's part of that is reported here.
      const asName =
        policyName !== undefined && dns1123Subdomain(policyName).length === 0
          ? `${policyName}/${key}`
          : `x/${key}`;
      const errors = qualifiedName(asName).map((e) => e.replace(/^name part /, ""));
      for (const e of errors) {
        r.report(
          "PE_FIELD_VALUE",
          keyField.path,
          keyField.offset,
          `${e} (the key becomes "<policy name>/<key>"); got ${JSON.stringify(key)}`,
        );
      }
      keys.first(keyField, key);
    }
    const valueExpression = view.requiredString("valueExpression");
    const veField = view.field("valueExpression");
    if (valueExpression !== undefined && veField) {
      const bytes = Buffer.byteLength(valueExpression.trim(), "utf8");
      if (bytes > MAX_AUDIT_VALUE_EXPRESSION_BYTES) {
        r.report(
          "PE_FIELD_VALUE",
          veField.path,
          veField.offset,
          `must not exceed ${MAX_AUDIT_VALUE_EXPRESSION_BYTES} bytes in length; got ${bytes}`,
        );
      }
    }
    if (r.errors === before && key !== undefined && valueExpression !== undefined)
      out.push({ key, valueExpression });
  }
  return out;
}

function readMutation(r: Reporter, item: Field): Mutation | undefined {
  const view = asMap(r, item);
  if (!view) return undefined;
  view.known(MUTATION_FIELDS);
  const before = r.errors;
  const ptField = view.field("patchType");
  let patchType: PatchType | undefined;
  if (!ptField) view.missing("patchType");
  else {
    const s = asString(r, ptField);
    if (s !== undefined) patchType = oneOf(r, ptField, s, PATCH_TYPES);
  }
  const readExpression = (key: "applyConfiguration" | "jsonPatch"): string | undefined => {
    const m = view.map(key);
    if (!m) return undefined;
    m.known(EXPRESSION_FIELDS);
    return m.requiredString("expression");
  };
  const given = { applyConfiguration: view.field("applyConfiguration"), jsonPatch: view.field("jsonPatch") };
  let expression: string | undefined;
  if (patchType !== undefined) {
    const own = patchType === "ApplyConfiguration" ? "applyConfiguration" : "jsonPatch";
    const other = own === "applyConfiguration" ? "jsonPatch" : "applyConfiguration";
    if (!given[own])
      view.missing(
        own,
        `missing required field "${own}": it must be specified when patchType is "${patchType}"`,
      );
    else expression = readExpression(own);
    const otherField = given[other];
    if (otherField) {
      r.report(
        "PE_FIELD_VALUE",
        otherField.path,
        otherField.offset,
        `must not be specified when patchType is "${patchType}"`,
      );
    }
  }
  if (r.errors > before || patchType === undefined || expression === undefined) return undefined;
  return patchType === "ApplyConfiguration"
    ? { patchType, applyConfiguration: { expression } }
    : { patchType, jsonPatch: { expression } };
}

interface CommonSpec {
  readonly paramKind?: ParamKind;
  readonly matchConstraints?: MatchResources;
  readonly matchConditions: readonly MatchCondition[];
  readonly variables: readonly Variable[];
  readonly failurePolicy: FailurePolicy;
}

function readCommonSpec(r: Reporter, spec: MapView, mutating: boolean): CommonSpec {
  const pk = spec.map("paramKind");
  const paramKind = pk ? readParamKind(r, pk) : undefined;
  const mc = spec.map("matchConstraints");
  if (!mc && !spec.field("matchConstraints")) {
    spec.missing(
      "matchConstraints",
      'missing required field "matchConstraints": a policy must say which resources it applies to',
    );
  }
  const matchConstraints = mc
    ? readMatchResources(r, mc, { requireResourceRules: true, mutating })
    : undefined;
  const matchConditions = readMatchConditions(r, spec);
  const variables = readVariables(r, spec);
  const failurePolicy = spec.enumValue("failurePolicy", FAILURE_POLICIES, "Fail") ?? "Fail";
  return {
    ...(paramKind ? { paramKind } : {}),
    ...(matchConstraints ? { matchConstraints } : {}),
    matchConditions,
    variables,
    failurePolicy,
  };
}

// ---------------------------------------------------------------------------------------------------
// the four kinds

interface ObjectInput {
  readonly r: Reporter;
  readonly top: MapView;
  readonly apiVersion: string;
  readonly source: SourceMap;
}

function requireSpec(top: MapView): MapView | undefined {
  const spec = top.map("spec");
  if (!spec && !top.field("spec")) top.missing("spec");
  return spec;
}

function readValidatingPolicy({ r, top, apiVersion, source }: ObjectInput): ValidatingPolicy | undefined {
  top.known(TOP_FIELDS);
  const meta = readMetadata(r, top, true);
  const spec = requireSpec(top);
  if (!spec) return undefined;
  spec.known(VALIDATING_SPEC_FIELDS);
  const common = readCommonSpec(r, spec, false);
  const validations: Validation[] = [];
  for (const item of spec.seq("validations") ?? []) {
    const v = readValidation(r, item);
    if (v) validations.push(v);
  }
  const auditAnnotations = readAuditAnnotations(r, spec, meta.name);
  const countItems = (key: string): number => {
    const f = spec.field(key);
    return f && isSeq(f.node) ? f.node.items.length : 0;
  };
  if (countItems("validations") === 0 && countItems("auditAnnotations") === 0) {
    const f = spec.field("validations");
    r.report(
      "PE_MISSING_FIELD",
      spec.child("validations"),
      f ? f.offset : spec.offset,
      "validations or auditAnnotations must contain at least one item",
    );
  }
  if (r.errors > 0 || meta.name === undefined) return undefined;
  return {
    kind: "ValidatingAdmissionPolicy",
    name: meta.name,
    apiVersion,
    source,
    ...common,
    annotations: meta.annotations,
    validations,
    auditAnnotations,
  };
}

function readMutatingPolicy({ r, top, apiVersion, source }: ObjectInput): MutatingPolicy | undefined {
  top.known(TOP_FIELDS);
  const meta = readMetadata(r, top, true);
  const spec = requireSpec(top);
  if (!spec) return undefined;
  spec.known(MUTATING_SPEC_FIELDS);
  const common = readCommonSpec(r, spec, true);
  const mutations: Mutation[] = [];
  const mf = spec.field("mutations");
  const items = mf ? asSeq(r, mf) : undefined;
  if (!mf) spec.missing("mutations", 'missing required field "mutations": it must contain at least one item');
  else if (items && items.length === 0)
    r.report("PE_FIELD_VALUE", mf.path, mf.offset, "must contain at least one item");
  for (const item of items ?? []) {
    const m = readMutation(r, item);
    if (m) mutations.push(m);
  }
  const reinvocationPolicy = spec.enumValue("reinvocationPolicy", REINVOCATION_POLICIES, "Never") ?? "Never";
  if (r.errors > 0 || meta.name === undefined) return undefined;
  return {
    kind: "MutatingAdmissionPolicy",
    name: meta.name,
    apiVersion,
    source,
    ...common,
    annotations: meta.annotations,
    mutations,
    reinvocationPolicy,
  };
}

function readParamRef(r: Reporter, view: MapView): ParamRef | undefined {
  view.known(PARAM_REF_FIELDS);
  const before = r.errors;
  const name = view.string("name");
  const nameField = view.field("name");
  const namespace = view.string("namespace");
  const sel = view.map("selector");
  const selector = sel ? readSelector(r, sel) : undefined;
  const hasName = name !== undefined && name !== "";
  if (hasName && nameField) {
    reportFormat(r, nameField, name, pathSegmentName(name));
    if (sel)
      r.report(
        "PE_FIELD_VALUE",
        nameField.path,
        nameField.offset,
        "name and selector are mutually exclusive",
      );
  }
  if (!hasName && !sel && r.errors === before) {
    r.report("PE_MISSING_FIELD", view.path, view.offset, "one of name or selector must be specified");
  }
  const parameterNotFoundAction = view.enumValue("parameterNotFoundAction", NOT_FOUND_ACTIONS, "Deny");
  if (r.errors > before || parameterNotFoundAction === undefined) return undefined;
  return {
    ...(hasName ? { name } : {}),
    ...(namespace !== undefined && namespace !== "" ? { namespace } : {}),
    ...(selector ? { selector } : {}),
    parameterNotFoundAction,
  };
}

interface CommonBinding {
  readonly name: string | undefined;
  readonly policyName: string | undefined;
  readonly paramRef?: ParamRef;
  readonly matchResources?: MatchResources;
  readonly spec: MapView | undefined;
}

function readCommonBinding(
  r: Reporter,
  top: MapView,
  specFields: readonly string[],
  mutating: boolean,
): CommonBinding {
  top.known(TOP_FIELDS);
  const meta = readMetadata(r, top, true);
  const spec = requireSpec(top);
  if (!spec) return { name: meta.name, policyName: undefined, spec };
  spec.known(specFields);
  let policyName = spec.requiredString("policyName");
  const pnField = spec.field("policyName");
  if (
    policyName !== undefined &&
    pnField &&
    !reportFormat(r, pnField, policyName, dns1123Subdomain(policyName))
  ) {
    policyName = undefined;
  }
  const pr = spec.map("paramRef");
  const paramRef = pr ? readParamRef(r, pr) : undefined;
  const mr = spec.map("matchResources");
  const matchResources = mr
    ? readMatchResources(r, mr, { requireResourceRules: false, mutating })
    : undefined;
  return {
    name: meta.name,
    policyName,
    spec,
    ...(paramRef ? { paramRef } : {}),
    ...(matchResources ? { matchResources } : {}),
  };
}

function readValidationActions(r: Reporter, spec: MapView): ValidationAction[] {
  const list = spec.stringList("validationActions");
  const out: ValidationAction[] = [];
  if (!list) {
    if (!spec.field("validationActions")) {
      spec.missing(
        "validationActions",
        'missing required field "validationActions": at least one of "Deny", "Warn", "Audit" is required',
      );
    }
    return out;
  }
  const seen = new Set<string>();
  for (const item of list.items) {
    const action = oneOf(r, item.field, item.value, VALIDATION_ACTIONS);
    if (seen.has(item.value)) {
      r.report(
        "PE_DUPLICATE",
        item.field.path,
        item.field.offset,
        `duplicate validation action ${JSON.stringify(item.value)}`,
      );
    } else if (action !== undefined) {
      out.push(action);
    }
    seen.add(item.value);
  }
  if (seen.has("Deny") && seen.has("Warn")) {
    r.report(
      "PE_FIELD_VALUE",
      list.field.path,
      list.field.offset,
      'must not contain both "Deny" and "Warn" (the same failure would be reported twice)',
    );
  }
  if (isSeq(list.field.node) && list.field.node.items.length === 0) {
    r.report("PE_FIELD_VALUE", list.field.path, list.field.offset, "must contain at least one item");
  }
  return out;
}

function readValidatingBinding({ r, top, apiVersion, source }: ObjectInput): ValidatingBinding | undefined {
  const common = readCommonBinding(r, top, VALIDATING_BINDING_SPEC_FIELDS, false);
  const validationActions = common.spec ? readValidationActions(r, common.spec) : [];
  if (r.errors > 0 || common.name === undefined || common.policyName === undefined) return undefined;
  return {
    kind: "ValidatingAdmissionPolicyBinding",
    name: common.name,
    apiVersion,
    source,
    policyName: common.policyName,
    ...(common.paramRef ? { paramRef: common.paramRef } : {}),
    ...(common.matchResources ? { matchResources: common.matchResources } : {}),
    validationActions,
  };
}

function readMutatingBinding({ r, top, apiVersion, source }: ObjectInput): MutatingBinding | undefined {
  const common = readCommonBinding(r, top, MUTATING_BINDING_SPEC_FIELDS, true);
  if (r.errors > 0 || common.name === undefined || common.policyName === undefined) return undefined;
  return {
    kind: "MutatingAdmissionPolicyBinding",
    name: common.name,
    apiVersion,
    source,
    policyName: common.policyName,
    ...(common.paramRef ? { paramRef: common.paramRef } : {}),
    ...(common.matchResources ? { matchResources: common.matchResources } : {}),
  };
}

function readResource(
  { r, top, apiVersion, source }: ObjectInput,
  kind: string,
  node: YAMLMap,
): ResourceObject | undefined {
  const meta = readMetadata(r, top, false);
  if (r.errors > 0 || meta.name === undefined) return undefined;
  const object = node.toJS(r.dc.doc) as Record<string, unknown>;
  return {
    apiVersion,
    kind,
    name: meta.name,
    ...(meta.namespace !== undefined && meta.namespace !== "" ? { namespace: meta.namespace } : {}),
    labels: meta.labels,
    object,
    source,
  };
}

// ---------------------------------------------------------------------------------------------------
// documents

interface Collected {
  readonly policies: ParsedPolicy[];
  readonly bindings: ParsedBinding[];
  readonly resources: ResourceObject[];
}

/** metadata.name for labelling diagnostics, read without reporting anything (readMetadata reports). */
function peekName(r: Reporter, node: YAMLMap): string {
  const meta = r.resolve(node.get("metadata", true));
  const name = isMap(meta) ? r.resolve(meta.get("name", true)) : undefined;
  return isScalar(name) && typeof name.value === "string" ? name.value : "";
}

function acceptedList(): string {
  return Object.keys(ACCEPTED_KINDS).join(", ");
}

function readObject(
  dc: DocContext,
  node: Resolved,
  fallbackOffset: number,
  out: Collected,
  itemPath = "",
): void {
  const r = new Reporter(dc);
  const offset = offsetOf(node, fallbackOffset);
  if (!isMap(node)) {
    r.report(
      "PE_NOT_OBJECT",
      itemPath,
      offset,
      `a document must be a mapping with apiVersion and kind; got ${describe(node)}`,
    );
    return;
  }
  const top = new MapView(r, node, "", offset);
  const avField = top.field("apiVersion");
  const kindField = top.field("kind");
  const apiVersion = avField ? asString(r, avField) : undefined;
  const kind = kindField ? asString(r, kindField) : undefined;
  for (const [key, f] of [
    ["apiVersion", avField],
    ["kind", kindField],
  ] as const) {
    if (!f)
      r.report(
        "PE_NOT_OBJECT",
        key,
        offset,
        `a Kubernetes object needs "apiVersion" and "kind"; "${key}" is missing`,
      );
  }
  if (apiVersion === undefined || kind === undefined || !avField || !kindField) return;

  r.object = { kind, name: peekName(r, node) };

  const itemsField = top.field("items");
  if (kind === "List" || (kind.endsWith("List") && itemsField && isSeq(itemsField.node))) {
    if (!itemsField) {
      top.missing("items", 'missing required field "items": a List holds its objects in "items"');
      return;
    }
    const items = asSeq(r, itemsField);
    for (const item of items ?? []) readObject(dc, item.node, item.offset, out, item.path);
    return;
  }

  const source = new YamlSourceMap(dc.positions, dc.doc, node);
  const input: ObjectInput = { r, top, apiVersion, source };
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (group !== ADMISSION_GROUP) {
    const res = readResource(input, kind, node);
    if (res) out.resources.push(res);
    return;
  }
  if (!Object.hasOwn(ACCEPTED_KINDS, kind)) {
    r.report(
      "PE_UNKNOWN_KIND",
      "kind",
      kindField.offset,
      `kind ${JSON.stringify(kind)} of ${ADMISSION_GROUP} is not one celgate reads; accepted kinds: ${acceptedList()}`,
    );
    return;
  }
  const accepted = kind as AcceptedKind;
  const versions: readonly string[] = ACCEPTED_KINDS[accepted];
  if (!versions.includes(version)) {
    r.report(
      "PE_UNKNOWN_KIND",
      "apiVersion",
      avField.offset,
      `${kind} is read from apiVersion ${versions.map((v) => `${ADMISSION_GROUP}/${v}`).join(", ")}; got ${JSON.stringify(apiVersion)}`,
    );
    return;
  }
  switch (accepted) {
    case "ValidatingAdmissionPolicy": {
      const p = readValidatingPolicy(input);
      if (p) out.policies.push(p);
      return;
    }
    case "MutatingAdmissionPolicy": {
      const p = readMutatingPolicy(input);
      if (p) out.policies.push(p);
      return;
    }
    case "ValidatingAdmissionPolicyBinding": {
      const b = readValidatingBinding(input);
      if (b) out.bindings.push(b);
      return;
    }
    case "MutatingAdmissionPolicyBinding": {
      const b = readMutatingBinding(input);
      if (b) out.bindings.push(b);
      return;
    }
  }
}

/** yaml's messages end in " at line L, column C:" and a code frame; the location travels separately. */
function splitYamlMessage(message: string): { message: string; detail?: string } {
  const m = /^([\s\S]*?) at line \d+, column \d+:?\n?([\s\S]*)$/.exec(message);
  if (!m) return { message };
  const detail = (m[2] ?? "").replace(/^\n+|\n+$/g, "");
  return detail ? { message: m[1] ?? message, detail } : { message: m[1] ?? message };
}

/**
 * Parses one policy file's text. Multi-document files (`---`) are read document by document; a
 * document with errors is left out of the set and the others are kept. Bindings are not checked
 * against the policies here, since a policy may live in another file: see checkReferences.
 */
export function parsePolicyText(text: string, file: string): { set: PolicySet; diagnostics: Diagnostic[] } {
  const lineCounter = new LineCounter();
  const positions = new TextPositions(file, lineCounter);
  const diagnostics: Diagnostic[] = [];
  const out: Collected = { policies: [], bindings: [], resources: [] };
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: true });
  for (const doc of Array.isArray(docs) ? docs : []) {
    const syntax = (e: YAMLError, severity: DiagnosticSeverity): void => {
      const { message, detail } = splitYamlMessage(e.message);
      const pos = e.linePos?.[0];
      diagnostics.push({
        code: "PE_YAML_SYNTAX",
        severity,
        message,
        location: pos ? { file, line: pos.line, column: pos.col } : positions.at(e.pos[0]),
        ...(detail ? { detail } : {}),
      });
    };
    for (const e of doc.errors) syntax(e, "error");
    for (const w of doc.warnings) syntax(w, "warning");
    if (doc.errors.length > 0) continue;

    let unresolved = false;
    visit(doc, {
      Alias(_, alias) {
        if (alias.resolve(doc) === undefined) {
          unresolved = true;
          diagnostics.push({
            code: "PE_YAML_SYNTAX",
            severity: "error",
            message: `alias *${alias.source} refers to no anchor defined before it`,
            location: positions.at(offsetOf(alias, 0)),
          });
        }
      },
    });
    if (unresolved) continue;

    const dc: DocContext = { positions, doc, diagnostics };
    const root = resolveAlias(doc, doc.contents);
    if (root === null || root === undefined || (isScalar(root) && root.value === null)) continue;
    if (!isScalar(root) && !isMap(root) && !isSeq(root)) continue;
    readObject(dc, root, doc.range[0], out);
  }
  // Reading order follows the model, not the text; people read a file top to bottom.
  const byPosition = (d: Diagnostic): number =>
    d.location ? d.location.line * 1_000_000 + d.location.column : Number.MAX_SAFE_INTEGER;
  diagnostics.sort((a, b) => byPosition(a) - byPosition(b));
  return { set: out, diagnostics };
}

// ---------------------------------------------------------------------------------------------------
// cross-document checks

function where(source: SourceMap, path: string): string {
  const l = source.locate(path);
  return `${l.file}:${l.line}:${l.column}`;
}

/**
 * Checks that need the whole set: every binding names a loaded policy of its kind, and no policy,
 * binding or resource is defined twice (the later definition would silently replace the earlier one).
 */
export function checkReferences(set: PolicySet): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const duplicate = (
    kind: string,
    name: string,
    source: SourceMap,
    firstSource: SourceMap,
    label: string,
  ): void => {
    diagnostics.push({
      code: "PE_DUPLICATE",
      severity: "error",
      message: `${label} is defined more than once (first at ${where(firstSource, "metadata.name")})`,
      path: "metadata.name",
      location: source.locate("metadata.name"),
      object: { kind, name },
    });
  };

  const policies = new Map<string, ParsedPolicy>();
  for (const p of set.policies) {
    const key = `${p.kind}/${p.name}`;
    const first = policies.get(key);
    if (first) duplicate(p.kind, p.name, p.source, first.source, `${p.kind} ${JSON.stringify(p.name)}`);
    else policies.set(key, p);
  }
  const bindings = new Map<string, ParsedBinding>();
  for (const b of set.bindings) {
    const key = `${b.kind}/${b.name}`;
    const first = bindings.get(key);
    if (first) duplicate(b.kind, b.name, b.source, first.source, `${b.kind} ${JSON.stringify(b.name)}`);
    else bindings.set(key, b);
  }
  const resources = new Map<string, ResourceObject>();
  for (const res of set.resources) {
    const group = res.apiVersion.includes("/") ? res.apiVersion.slice(0, res.apiVersion.indexOf("/")) : "";
    const key = `${group}/${res.kind}/${res.namespace ?? ""}/${res.name}`;
    const first = resources.get(key);
    const label = `${res.kind} ${JSON.stringify(res.namespace ? `${res.namespace}/${res.name}` : res.name)}`;
    if (first) duplicate(res.kind, res.name, res.source, first.source, label);
    else resources.set(key, res);
  }

  for (const b of set.bindings) {
    const policyKind =
      b.kind === "ValidatingAdmissionPolicyBinding" ? "ValidatingAdmissionPolicy" : "MutatingAdmissionPolicy";
    if (policies.has(`${policyKind}/${b.policyName}`)) continue;
    // The API server stores such a binding and never matches it (its policy source pairs bindings
    // with the policies that exist): it is inert, which deserves a warning, not a load error.
    diagnostics.push({
      code: "PE_UNKNOWN_POLICY",
      severity: "warning",
      message: `no ${policyKind} named ${JSON.stringify(b.policyName)} is loaded: the binding applies to nothing`,
      path: "spec.policyName",
      location: b.source.locate("spec.policyName"),
      object: { kind: b.kind, name: b.name },
    });
  }
  return diagnostics;
}

/** Joins the sets read from several files, keeping file order. */
export function mergePolicySets(sets: readonly PolicySet[]): PolicySet {
  return {
    policies: sets.flatMap((s) => s.policies),
    bindings: sets.flatMap((s) => s.bindings),
    resources: sets.flatMap((s) => s.resources),
  };
}
