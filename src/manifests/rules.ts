/**
 * Webhook rules from policy rules. The API server sends a request to a webhook only when one of its
 * rules matches, and celgate matches every policy again itself, so a webhook rule may be broader
 * than the policies it serves (a wasted call) but never narrower (a policy silently not enforced).
 * Everything here errs broad where a policy feature has no webhook equivalent: resourceNames,
 * excludeResourceRules and selectors are dropped, and the engine applies them.
 *
 * A rule matches a request when each of its lists matches: operations, groups and versions by
 * equality or `*`, resources as `resource[/subresource]` patterns where either half may be `*`
 * (`pods/*` matches pods and every subresource of pods; `*` matches every resource without a
 * subresource), and the scope. Because each half of a resource pattern matches independently, the
 * intersection of two rules is exact, and so is the union of two rules that differ in one list.
 */
import type { NamedRuleWithOperations, ScopeType } from "../policy/types.ts";

/** admissionregistration.k8s.io/v1 RuleWithOperations. */
export interface WebhookRule {
  readonly operations: readonly string[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly scope: ScopeType;
}

type ListField = "operations" | "apiGroups" | "apiVersions" | "resources";
const LIST_FIELDS: readonly ListField[] = ["operations", "apiGroups", "apiVersions", "resources"];

const OPERATION_ORDER = ["*", "CREATE", "UPDATE", "DELETE", "CONNECT"];

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byOperation(a: string, b: string): number {
  const ia = OPERATION_ORDER.indexOf(a);
  const ib = OPERATION_ORDER.indexOf(b);
  return ia === -1 || ib === -1 ? byText(a, b) : ia - ib;
}

/** A `resource[/subresource]` item: `sub` is "" for the resource itself, `*` for any (including none). */
interface ResourcePattern {
  readonly res: string;
  readonly sub: string;
}

function parseResource(item: string): ResourcePattern {
  const slash = item.indexOf("/");
  return slash === -1 ? { res: item, sub: "" } : { res: item.slice(0, slash), sub: item.slice(slash + 1) };
}

function renderResource(p: ResourcePattern): string {
  return p.sub === "" ? p.res : `${p.res}/${p.sub}`;
}

/** What both `a` and `b` match, for one half of a pattern or one list item; undefined when nothing. */
function meet(a: string, b: string): string | undefined {
  if (a === "*") return b;
  if (b === "*" || a === b) return a;
  return undefined;
}

function covers(wide: ResourcePattern, narrow: ResourcePattern): boolean {
  return (wide.res === "*" || wide.res === narrow.res) && (wide.sub === "*" || wide.sub === narrow.sub);
}

/**
 * Canonical form of a list: no duplicates, `*` alone when present, resources without the patterns
 * another one already matches (the API server rejects `*\/*` beside anything, `*` beside plain
 * resources, and `pods/*` beside `pods/log`), and a fixed order so equal lists compare equal.
 */
function normalizeList(field: ListField, items: readonly string[]): string[] {
  const unique = [...new Set(items)];
  if (field !== "resources") {
    if (unique.includes("*")) return ["*"];
    return unique.sort(field === "operations" ? byOperation : byText);
  }
  const patterns = unique.map(parseResource);
  const kept = patterns.filter((p, i) => !patterns.some((q, j) => j !== i && covers(q, p)));
  return kept.map(renderResource).sort(byText);
}

function normalize(rule: WebhookRule): WebhookRule {
  return {
    operations: normalizeList("operations", rule.operations),
    apiGroups: normalizeList("apiGroups", rule.apiGroups),
    apiVersions: normalizeList("apiVersions", rule.apiVersions),
    resources: normalizeList("resources", rule.resources),
    scope: rule.scope,
  };
}

/** A policy or binding rule as a webhook rule: resourceNames has no webhook equivalent and is dropped. */
export function toWebhookRule(rule: NamedRuleWithOperations): WebhookRule {
  return normalize({
    operations: rule.operations,
    apiGroups: rule.apiGroups,
    apiVersions: rule.apiVersions,
    resources: rule.resources,
    scope: rule.scope,
  });
}

function intersectList(field: ListField, a: readonly string[], b: readonly string[]): string[] {
  if (field !== "resources") {
    const out: string[] = [];
    for (const x of a)
      for (const y of b) {
        const m = meet(x, y);
        if (m !== undefined) out.push(m);
      }
    return normalizeList(field, out);
  }
  const out: string[] = [];
  for (const x of a.map(parseResource))
    for (const y of b.map(parseResource)) {
      const res = meet(x.res, y.res);
      const sub = meet(x.sub, y.sub);
      if (res !== undefined && sub !== undefined) out.push(renderResource({ res, sub }));
    }
  return normalizeList(field, out);
}

/** The requests both rules match, as one rule; undefined when they share none. */
export function intersectRules(a: WebhookRule, b: WebhookRule): WebhookRule | undefined {
  const scope = meet(a.scope, b.scope) as ScopeType | undefined;
  if (scope === undefined) return undefined;
  const lists: Partial<Record<ListField, string[]>> = {};
  for (const field of LIST_FIELDS) {
    const list = intersectList(field, a[field], b[field]);
    if (list.length === 0) return undefined;
    lists[field] = list;
  }
  return {
    operations: lists.operations ?? [],
    apiGroups: lists.apiGroups ?? [],
    apiVersions: lists.apiVersions ?? [],
    resources: lists.resources ?? [],
    scope,
  };
}

/**
 * The rules a binding enforces: the policy's matchConstraints narrowed by the binding's
 * matchResources. A binding without resourceRules does not narrow (Kubernetes: "when resourceRules
 * is unset, it does not constrain resource matching"); a policy without matchConstraints matches
 * nothing. excludeResourceRules are left to the engine: a webhook rule cannot subtract.
 */
export function boundRules(
  policyRules: readonly NamedRuleWithOperations[],
  bindingRules: readonly NamedRuleWithOperations[],
): WebhookRule[] {
  const policy = policyRules.map(toWebhookRule);
  if (bindingRules.length === 0) return policy;
  const binding = bindingRules.map(toWebhookRule);
  const out: WebhookRule[] = [];
  for (const p of policy)
    for (const b of binding) {
      const r = intersectRules(p, b);
      if (r) out.push(r);
    }
  return out;
}

function listCovers(field: ListField, wide: readonly string[], narrow: readonly string[]): boolean {
  if (field !== "resources") return wide.includes("*") || narrow.every((x) => wide.includes(x));
  const w = wide.map(parseResource);
  return narrow.map(parseResource).every((n) => w.some((x) => covers(x, n)));
}

/** Whether every request `narrow` matches is matched by `wide`. */
export function ruleCovers(wide: WebhookRule, narrow: WebhookRule): boolean {
  if (wide.scope !== "*" && wide.scope !== narrow.scope) return false;
  return LIST_FIELDS.every((f) => listCovers(f, wide[f], narrow[f]));
}

function key(list: readonly string[]): string {
  return JSON.stringify(list);
}

/** The one list two same-scope rules differ in, if they differ in at most one. */
function soleDifference(a: WebhookRule, b: WebhookRule): ListField | "none" | undefined {
  if (a.scope !== b.scope) return undefined;
  const differing = LIST_FIELDS.filter((f) => key(a[f]) !== key(b[f]));
  if (differing.length === 0) return "none";
  return differing.length === 1 ? differing[0] : undefined;
}

/**
 * The union of rules, written with fewer rules (greedily, not provably the fewest): rules another
 * rule already covers are dropped, and rules that differ in a single list become one rule with the
 * union of that list. Never widens: the result matches exactly the requests the input matches.
 * Keeps the order in which rules first appear.
 */
export function mergeRules(rules: readonly WebhookRule[]): WebhookRule[] {
  let out = rules.map(normalize);
  let changed = true;
  while (changed) {
    changed = false;
    // Drop covered rules (for equal rules, the later one).
    const kept = out.filter(
      (r, i) => !out.some((w, j) => j !== i && ruleCovers(w, r) && (!ruleCovers(r, w) || j < i)),
    );
    if (kept.length !== out.length) {
      out = kept;
      changed = true;
    }
    outer: for (let i = 0; i < out.length; i++) {
      for (let j = i + 1; j < out.length; j++) {
        const a = out[i]!;
        const b = out[j]!;
        const field = soleDifference(a, b);
        if (field === undefined) continue;
        const merged = field === "none" ? a : normalize({ ...a, [field]: [...a[field], ...b[field]] });
        out = [...out.slice(0, i), merged, ...out.slice(i + 1, j), ...out.slice(j + 1)];
        changed = true;
        break outer;
      }
    }
  }
  return out;
}
