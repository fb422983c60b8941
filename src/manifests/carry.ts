/**
 * What of the policies a webhook itself can say, so the API server never calls celgate for a
 * request no policy on that webhook can select: the matchConditions and the label-selector
 * requirements that every (policy, binding) pair routed to the webhook shares.
 *
 * Both are conjunctions: a pair applies only when all its conditions hold and all its selector
 * requirements match. A condition or requirement every pair has is therefore one a request must
 * pass for any pair to apply, and the webhook may test it first. What only some pairs have stays
 * with celgate, which matches every pair again itself (the webhook is a prefilter, never the rule).
 */
import {
  ADMISSION_VARIABLES,
  type CelEnvironment,
  compile,
  createEnvironment,
  type ExpressionProblem,
} from "../cel/index.ts";
import type {
  LabelSelector,
  LabelSelectorRequirement,
  MatchCondition,
  ParsedBinding,
  ParsedPolicy,
} from "../policy/types.ts";

/** A webhook configuration accepts at most this many matchConditions (admissionregistration/v1). */
export const MAX_WEBHOOK_MATCH_CONDITIONS = 64;

/**
 * The variables a webhook's matchConditions see (Kubernetes "Matching requests: matchConditions":
 * object, oldObject, request and authorizer; no params, namespaceObject or policy variables).
 */
const WEBHOOK_CONDITION_VARIABLES = {
  object: ADMISSION_VARIABLES.object,
  oldObject: ADMISSION_VARIABLES.oldObject,
  request: ADMISSION_VARIABLES.request,
  authorizer: ADMISSION_VARIABLES.authorizer,
  "authorizer.requestResource": ADMISSION_VARIABLES["authorizer.requestResource"],
};

let conditionEnv: CelEnvironment | undefined;

/**
 * Compiles an expression as the API server compiles a webhook's matchCondition: without celgate's
 * opt-in extras and without the variables only policies have. Empty when it compiles.
 */
export function webhookConditionProblems(expression: string): readonly ExpressionProblem[] {
  conditionEnv ??= createEnvironment({ variables: WEBHOOK_CONDITION_VARIABLES });
  const r = compile(expression, conditionEnv);
  return r.ok ? [] : r.problems;
}

/** A pair the webhook serves: a policy and the binding that enforces it. */
export interface RoutedPair {
  readonly policy: ParsedPolicy;
  readonly binding: ParsedBinding;
}

function normalized(expression: string): string {
  return expression.trim();
}

/**
 * The matchConditions every pair's policy has (the same expression, whatever its name), in the
 * first pair's order, when each compiles as a webhook condition. Names are the first policy's,
 * made unique within the webhook.
 */
export function commonMatchConditions(pairs: readonly RoutedPair[]): MatchCondition[] {
  const [first, ...rest] = pairs;
  if (!first) return [];
  const shared = first.policy.matchConditions.filter(
    (c) =>
      rest.every((p) =>
        p.policy.matchConditions.some((o) => normalized(o.expression) === normalized(c.expression)),
      ) && webhookConditionProblems(c.expression).length === 0,
  );
  const out: MatchCondition[] = [];
  const names = new Set<string>();
  const seen = new Set<string>();
  for (const c of shared) {
    const text = normalized(c.expression);
    if (seen.has(text)) continue;
    seen.add(text);
    let name = c.name;
    for (let i = 2; names.has(name); i++) name = `${c.name.slice(0, 60)}-${i}`;
    names.add(name);
    out.push({ name, expression: c.expression });
    if (out.length === MAX_WEBHOOK_MATCH_CONDITIONS) break;
  }
  return out;
}

/** A selector's requirements, matchLabels written as `In` with one value, each in a canonical form. */
export function requirementsOf(selector: LabelSelector | undefined): LabelSelectorRequirement[] {
  if (!selector) return [];
  const out: LabelSelectorRequirement[] = Object.entries(selector.matchLabels).map(([key, value]) => ({
    key,
    operator: "In",
    values: [value],
  }));
  for (const r of selector.matchExpressions)
    out.push({ key: r.key, operator: r.operator, values: [...new Set(r.values)].sort() });
  return out;
}

function requirementKey(r: LabelSelectorRequirement): string {
  return JSON.stringify([r.key, r.operator, r.values]);
}

/** The requirements every list holds, in the first list's order, each once. */
export function commonRequirements(
  lists: readonly (readonly LabelSelectorRequirement[])[],
): LabelSelectorRequirement[] {
  const [first, ...rest] = lists;
  if (!first) return [];
  const others = rest.map((l) => new Set(l.map(requirementKey)));
  const out: LabelSelectorRequirement[] = [];
  const seen = new Set<string>();
  for (const r of first) {
    const k = requirementKey(r);
    if (seen.has(k) || !others.every((o) => o.has(k))) continue;
    seen.add(k);
    out.push(r);
  }
  return out;
}

/** The namespace-selector requirements of a pair: its policy's and its binding's, both apply. */
export function namespaceRequirements(pair: RoutedPair): LabelSelectorRequirement[] {
  return [
    ...requirementsOf(pair.policy.matchConstraints?.namespaceSelector),
    ...requirementsOf(pair.binding.matchResources?.namespaceSelector),
  ];
}

/** The object-selector requirements of a pair: its policy's and its binding's, both apply. */
export function objectRequirements(pair: RoutedPair): LabelSelectorRequirement[] {
  return [
    ...requirementsOf(pair.policy.matchConstraints?.objectSelector),
    ...requirementsOf(pair.binding.matchResources?.objectSelector),
  ];
}

/**
 * A metav1.LabelSelector as a webhook writes it: single-value `In` requirements as matchLabels
 * (when their key is not used twice), the rest as matchExpressions. Undefined when there is none.
 */
export function renderSelector(
  requirements: readonly LabelSelectorRequirement[],
): Record<string, unknown> | undefined {
  if (requirements.length === 0) return undefined;
  const keyCount = new Map<string, number>();
  for (const r of requirements) keyCount.set(r.key, (keyCount.get(r.key) ?? 0) + 1);
  const matchLabels: Record<string, string> = {};
  const matchExpressions: Record<string, unknown>[] = [];
  for (const r of requirements) {
    const value = r.values[0];
    if (r.operator === "In" && r.values.length === 1 && value !== undefined && keyCount.get(r.key) === 1)
      matchLabels[r.key] = value;
    else
      matchExpressions.push({
        key: r.key,
        operator: r.operator,
        ...(r.operator === "In" || r.operator === "NotIn" ? { values: [...r.values] } : {}),
      });
  }
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}
