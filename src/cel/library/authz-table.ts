/**
 * The offline authorizer: answers `authorizer` checks from a table of rules (test suites' `authorizer:`
 * section), so policies that ask "may this user delete pods?" can be tested without a cluster.
 *
 * The first rule that matches decides. A field left out of a rule matches anything, as does `*`;
 * `path` may also end in `*` to match a prefix, as RBAC's nonResourceURLs do. A rule that names a
 * path only answers path checks, and one that names any resource field only answers resource checks.
 * When no rule matches the answer is no-opinion, which `allowed()` reads as false, as it does for
 * the API server's authorizer chain when every authorizer has no opinion.
 */
import type { AuthorizationAnswer, AuthorizationAttributes, AuthorizerBackend } from "./authz.ts";

export type AuthorizerDecision = AuthorizationAnswer["decision"];

export const AUTHORIZER_DECISIONS: readonly AuthorizerDecision[] = ["allow", "deny", "no-opinion"];

/** Why a check got no-opinion when no rule matched. */
export const NO_RULE_REASON = "no rule matched";

export interface AuthorizerRule {
  /** The user's name (`system:serviceaccount:ns:name` for a service account). */
  readonly user?: string;
  /** One of the user's groups. */
  readonly userGroup?: string;
  readonly verb?: string;
  /** The API group of a resource check (`""` is the core group). */
  readonly group?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** The path of a non-resource check. */
  readonly path?: string;
  readonly decision: AuthorizerDecision;
  readonly reason?: string;
}

/** One check the table answered, for reports that explain a decision. */
export interface AuthorizerCheck {
  readonly attributes: AuthorizationAttributes;
  readonly answer: AuthorizationAnswer;
  /** Index of the rule that decided; undefined when none matched. */
  readonly rule: number | undefined;
}

const RESOURCE_FIELDS = ["group", "resource", "subresource", "namespace", "name"] as const;

function matches(pattern: string | undefined, value: string | undefined): boolean {
  return pattern === undefined || pattern === "*" || pattern === (value ?? "");
}

function matchesPath(pattern: string | undefined, value: string): boolean {
  if (pattern === undefined || pattern === "*") return true;
  if (pattern.endsWith("*")) return value.startsWith(pattern.slice(0, -1));
  return pattern === value;
}

export function ruleMatches(rule: AuthorizerRule, a: AuthorizationAttributes): boolean {
  if (!matches(rule.user, a.user)) return false;
  if (rule.userGroup !== undefined && rule.userGroup !== "*" && !a.groups.includes(rule.userGroup))
    return false;
  if (!matches(rule.verb, a.verb)) return false;
  const isPathCheck = a.path !== undefined;
  if (isPathCheck) {
    if (RESOURCE_FIELDS.some((f) => rule[f] !== undefined)) return false;
    return matchesPath(rule.path, a.path ?? "");
  }
  if (rule.path !== undefined) return false;
  return RESOURCE_FIELDS.every((f) => matches(rule[f], a[f]));
}

/**
 * A backend over a rule table. `record`, when given, sees every check and its answer, in the order
 * the policies asked.
 */
export function tableAuthorizer(
  rules: readonly AuthorizerRule[],
  record?: (check: AuthorizerCheck) => void,
): AuthorizerBackend {
  return {
    authorize(attributes: AuthorizationAttributes): AuthorizationAnswer {
      const index = rules.findIndex((r) => ruleMatches(r, attributes));
      const rule = rules[index];
      const answer: AuthorizationAnswer = rule
        ? { decision: rule.decision, reason: rule.reason ?? "" }
        : { decision: "no-opinion", reason: NO_RULE_REASON };
      record?.({ attributes, answer, rule: rule ? index : undefined });
      return answer;
    },
  };
}

/** `alice delete apps/deployments/web in default`, `alice get /healthz`: a check as people read it. */
export function describeCheck(a: AuthorizationAttributes): string {
  if (a.path !== undefined) return `${a.user} ${a.verb} ${a.path}`;
  const group = a.group ? `${a.group}/` : "";
  const resource = `${group}${a.resource ?? ""}${a.subresource ? `/${a.subresource}` : ""}`;
  const name = a.name ? ` '${a.name}'` : "";
  const ns = a.namespace ? ` in namespace '${a.namespace}'` : "";
  return `${a.user} ${a.verb} ${resource}${name}${ns}`;
}
