/**
 * Which requests a policy or binding matches: matchConstraints / matchResources with their
 * resource rules and namespace and object label selectors, checked as admissionregistration's
 * validation.go checks them (wildcards standing alone, resources and subresources, operators).
 */
import { isSeq } from "yaml";
import { labelValue, pathSegmentName, qualifiedName } from "./fields.ts";
import type { Field, YamlMap, YamlReader } from "../yaml/reader.ts";
import {
  enumValue,
  missing,
  oneOf,
  quoteList,
  reportFormat,
  requiredString,
  requireItems,
  stringList,
  wildcardAlone,
} from "./read.ts";
import type {
  LabelSelector,
  LabelSelectorRequirement,
  MatchPolicyType,
  MatchResources,
  NamedRuleWithOperations,
  RuleOperation,
  ScopeType,
} from "./types.ts";
import { readStringMap } from "./metadata.ts";
import { OPERATIONS } from "./types.ts";

const MATCH_POLICIES = ["Exact", "Equivalent"] as const satisfies readonly MatchPolicyType[];
const RULE_OPERATIONS: readonly RuleOperation[] = [...OPERATIONS, "*"];
const MUTATING_OPERATIONS = ["CREATE", "UPDATE", "CONNECT", "*"] as const satisfies readonly RuleOperation[];
const SCOPES = ["Cluster", "Namespaced", "*"] as const satisfies readonly ScopeType[];
const SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;

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

export function readSelector(r: YamlReader, view: YamlMap): LabelSelector {
  view.known(SELECTOR_FIELDS);
  const matchLabels = readStringMap(r, view, "matchLabels", true);
  const matchExpressions: LabelSelectorRequirement[] = [];
  for (const item of view.list("matchExpressions") ?? []) {
    const req = r.mapping(item);
    if (!req) continue;
    req.known(REQUIREMENT_FIELDS);
    const key = requiredString(req, "key");
    const keyField = req.field("key");
    if (key !== undefined && keyField) reportFormat(r, keyField, key, qualifiedName(key));
    const operatorField = req.field("operator");
    let operator: LabelSelectorRequirement["operator"] | undefined;
    if (!operatorField) missing(req, "operator");
    else {
      const s = r.string(operatorField);
      if (s !== undefined) operator = oneOf(r, operatorField, s, SELECTOR_OPERATORS);
    }
    const values = stringList(req, "values");
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
function checkResources(
  r: YamlReader,
  list: { field: Field; items: { value: string; field: Field }[] },
): void {
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

function readRule(r: YamlReader, item: Field, mutatingInclude: boolean): NamedRuleWithOperations | undefined {
  const view = r.mapping(item);
  if (!view) return undefined;
  view.known(RULE_FIELDS);
  const before = r.errors;

  const operations: RuleOperation[] = [];
  const ops = stringList(view, "operations");
  requireItems(view, "operations", ops);
  if (ops) {
    wildcardAlone(r, ops, "operations");
    for (const op of ops.items) {
      const v = oneOf(r, op.field, op.value, RULE_OPERATIONS);
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

  const groups = stringList(view, "apiGroups");
  requireItems(view, "apiGroups", groups);
  if (groups) wildcardAlone(r, groups, "API groups");

  const versions = stringList(view, "apiVersions");
  requireItems(view, "apiVersions", versions);
  if (versions) {
    wildcardAlone(r, versions, "API versions");
    for (const v of versions.items) {
      if (v.value === "") r.report("PE_FIELD_VALUE", v.field.path, v.field.offset, "must not be empty");
    }
  }

  const resources = stringList(view, "resources");
  requireItems(view, "resources", resources);
  if (resources) checkResources(r, resources);

  const names = stringList(view, "resourceNames");
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

  const scope = enumValue(view, "scope", SCOPES, "*");
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
  r: YamlReader,
  view: YamlMap,
  key: string,
  mutatingInclude: boolean,
): NamedRuleWithOperations[] {
  const out: NamedRuleWithOperations[] = [];
  for (const item of view.list(key) ?? []) {
    const rule = readRule(r, item, mutatingInclude);
    if (rule) out.push(rule);
  }
  return out;
}

export function readMatchResources(
  r: YamlReader,
  view: YamlMap,
  opts: { readonly requireResourceRules: boolean; readonly mutating: boolean },
): MatchResources {
  view.known(MATCH_RESOURCES_FIELDS);
  const ns = view.map("namespaceSelector");
  const obj = view.map("objectSelector");
  const resourceRules = readRules(r, view, "resourceRules", opts.mutating);
  if (opts.requireResourceRules) {
    const f = view.field("resourceRules");
    if (!f)
      missing(
        view,
        "resourceRules",
        'missing required field "resourceRules": at least one rule is needed to give the policy its types',
      );
    else if (isSeq(f.node) && f.node.items.length === 0) {
      r.report("PE_FIELD_VALUE", f.path, f.offset, "must contain at least one item");
    }
  }
  const excludeResourceRules = readRules(r, view, "excludeResourceRules", false);
  const matchPolicy = enumValue(view, "matchPolicy", MATCH_POLICIES, "Equivalent") ?? "Equivalent";
  return {
    namespaceSelector: ns ? readSelector(r, ns) : EMPTY_SELECTOR,
    objectSelector: obj ? readSelector(r, obj) : EMPTY_SELECTOR,
    resourceRules,
    excludeResourceRules,
    matchPolicy,
  };
}
