/**
 * Admission deadlocks: a (policy, binding) pair served with failurePolicy Fail, or a webhook with
 * failurePolicy Fail, that matches a request the cluster needs to heal (probes.ts). Whether it
 * matches is asked of the engine itself, with the probe's request: rules, selectors (namespaces are
 * known only by their name label) and matchConditions, exactly as a review would. A webhook (from a
 * cluster dump, or the ones `celgate manifests` writes for the policies) is asked the same way,
 * written as the policy that selects what it selects.
 */
import { stringify } from "yaml";
import { type CompiledPolicySet, compilePolicySet } from "../compile/policy.ts";
import { contextFromResources, type EngineContext } from "../engine/context.ts";
import { mutate } from "../engine/mutating.ts";
import { validate } from "../engine/validating.ts";
import type { AdmissionRequest, PolicyResult } from "../engine/types.ts";
import { boundRules, type WebhookRule } from "../manifests/rules.ts";
import {
  isWebhookConfiguration,
  readWebhookConfiguration,
  type WebhookConfiguration,
  type WebhookSpec,
} from "../manifests/webhook-config.ts";
import { planWebhooks, webhookManifests } from "../manifests/webhooks.ts";
import { parsePolicyText } from "../policy/parse.ts";
import { routeOf } from "../policy/routing.ts";
import type { LabelSelector, ParsedBinding, ParsedPolicy } from "../policy/types.ts";
import type { Probe } from "./probes.ts";
import type { Finding, LintOptions, LintRule } from "./types.ts";

const NO_DEADLINE = () => performance.now() + 60_000;

interface Hit {
  readonly probe: Probe;
  /** The pair denied the probe as it is written, not only when it cannot be evaluated. */
  readonly denied: boolean;
}

/** The probes each (policy, binding) pair of the set matches, keyed `policy\0binding`. */
function hits(set: CompiledPolicySet, probes: readonly Probe[], ctx: EngineContext): Map<string, Hit[]> {
  const out = new Map<string, Hit[]>();
  const record = (probe: Probe, r: PolicyResult) => {
    if (r.outcome === "skip" || r.binding === undefined) return;
    const key = `${r.policy}\u0000${r.binding}`;
    const denied = r.outcome === "fail" && r.violations.some((v) => v.action === "Deny");
    out.set(key, [...(out.get(key) ?? []), { probe, denied }]);
  };
  for (const probe of probes) {
    const options = { deadline: NO_DEADLINE(), explain: true };
    for (const r of validate(set, probe.request, ctx, options).results) record(probe, r);
    for (const r of mutate(set, probe.request, ctx, options).results) record(probe, r);
  }
  return out;
}

function list(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function ruleOf(found: readonly Hit[]): LintRule {
  return found.some((h) => h.probe.rule === "self-deadlock") ? "self-deadlock" : "control-plane";
}

/** The namespaces to exclude, or undefined when a cluster-scoped probe needs narrower rules. */
function namespacesOf(found: readonly Hit[]): string[] | undefined {
  if (found.some((h) => !h.probe.namespaced)) return undefined;
  return [...new Set(found.map((h) => h.probe.request.namespace))];
}

function deniedText(found: readonly Hit[]): string {
  const denied = found.filter((h) => h.denied).map((h) => h.probe.what);
  return denied.length > 0 ? `; as written it even denies ${list([...new Set(denied)])}` : "";
}

function pairFinding(
  b: { readonly policy: ParsedPolicy; readonly binding: ParsedBinding },
  found: readonly Hit[],
  how: string,
  fix: string,
): Finding {
  return {
    rule: ruleOf(found),
    severity: "error",
    message: `${b.policy.kind} '${b.policy.name}' (binding '${b.binding.name}'), ${how}, can match ${list([...new Set(found.map((h) => h.probe.what))])} under failurePolicy Fail: ${how.startsWith("served") ? "when celgate is down, or the policy cannot be evaluated," : "when it cannot be evaluated"} they fail${deniedText(found)}`,
    fix,
    location: b.policy.source.locate("metadata.name"),
    object: { kind: b.policy.kind, name: b.policy.name },
  };
}

/** Applied natively: every pair routed to Fail that matches a probe. */
export function nativeDeadlocks(
  set: CompiledPolicySet,
  probes: readonly Probe[],
  ctx: EngineContext,
): Finding[] {
  const matched = hits(set, probes, ctx);
  const findings: Finding[] = [];
  for (const b of set.bindings) {
    const found = matched.get(`${b.policy.name}\u0000${b.binding.name}`);
    if (!found || routeOf(b.policy.policy, b.binding) !== "Fail") continue;
    const namespaces = namespacesOf(found);
    findings.push(
      pairFinding(
        { policy: b.policy.policy, binding: b.binding },
        found,
        "applied natively",
        namespaces
          ? `exclude them in the binding: matchResources.namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [${namespaces.join(", ")}]}]}`
          : "narrow spec.matchConstraints.resourceRules so they do not reach those objects (cluster-scoped: no namespaceSelector keeps them away), or set failurePolicy: Ignore",
      ),
    );
  }
  return findings;
}

function listMatches(list: readonly string[], value: string): boolean {
  return list.includes("*") || list.includes(value);
}

/** Whether a webhook rule selects a request (operation, group, version, resource[/sub], scope). */
function ruleSelects(rule: WebhookRule, r: AdmissionRequest): boolean {
  const namespaced = r.namespace !== "";
  const sub = r.subResource ?? "";
  return (
    listMatches(rule.operations, r.operation) &&
    listMatches(rule.apiGroups, r.resource.group) &&
    listMatches(rule.apiVersions, r.resource.version) &&
    (rule.scope === "*" || (rule.scope === "Namespaced") === namespaced) &&
    rule.resources.some((p) => {
      const [res, s = ""] = p.split("/", 2) as [string, string | undefined];
      return (res === "*" || res === r.resource.resource) && (s === "*" || s === sub);
    })
  );
}

/**
 * Served by celgate: the webhooks \`celgate manifests\` writes for the set decide what reaches it,
 * with their namespace exclusions and the conditions and selectors they carry. A Fail webhook that
 * a probe reaches fails it when celgate is down; the finding goes to the pairs on that webhook whose
 * rules select the probe.
 */
export function servedDeadlocks(
  set: CompiledPolicySet,
  probes: readonly Probe[],
  options: Pick<LintOptions, "namespace" | "excludedNamespaces">,
): Finding[] {
  const webhookOptions = {
    service: "celgate",
    namespace: options.namespace,
    excludeNamespaces: options.excludedNamespaces,
  };
  const planned = planWebhooks(set, webhookOptions);
  const configs = webhookManifests(set, webhookOptions)
    .documents.filter(isWebhookConfiguration)
    .flatMap((d) => readWebhookConfiguration(d, { strict: false, locate: () => GENERATED }).config ?? []);
  const reached = reachedWebhooks(configs, probes);
  const findings: Finding[] = [];
  for (const w of planned) {
    const found = reached.get(w.name);
    if (w.failurePolicy !== "Fail" || !found) continue;
    for (const pair of w.pairs) {
      const rules = boundRules(
        pair.policy.matchConstraints?.resourceRules ?? [],
        pair.binding.matchResources?.resourceRules ?? [],
      );
      const mine = found.filter((h) => rules.some((r) => ruleSelects(r, h.probe.request)));
      if (mine.length > 0)
        findings.push(
          pairFinding(
            pair,
            mine,
            `served by celgate through webhook ${w.name}`,
            "narrow spec.matchConstraints.resourceRules so they do not reach those objects, or exclude them with a matchCondition (the webhook carries it when every policy on it has it), or set failurePolicy: Ignore",
          ),
        );
    }
  }
  return findings;
}

const GENERATED = { file: "(generated)", line: 1, column: 1 };

function selector(s: LabelSelector): Record<string, unknown> {
  return {
    ...(Object.keys(s.matchLabels).length > 0 ? { matchLabels: s.matchLabels } : {}),
    ...(s.matchExpressions.length > 0 ? { matchExpressions: s.matchExpressions } : {}),
  };
}

/** A webhook as the validating policy that selects the same requests (rules, selectors, matchConditions). */
function asPolicy(name: string, hook: WebhookSpec): string {
  const policy = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name },
    spec: {
      failurePolicy: hook.failurePolicy,
      matchConstraints: {
        resourceRules: hook.rules.map((r) => ({ ...r })),
        namespaceSelector: selector(hook.namespaceSelector),
        objectSelector: selector(hook.objectSelector),
        matchPolicy: hook.matchPolicy,
      },
      ...(hook.matchConditions.length > 0
        ? { matchConditions: hook.matchConditions.map((c) => ({ ...c })) }
        : {}),
      validations: [{ expression: "true" }],
    },
  };
  const binding = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name },
    spec: { policyName: name, validationActions: ["Deny"] },
  };
  return `---\n${stringify(policy)}---\n${stringify(binding)}`;
}

/** The probes each Fail webhook of these configurations reaches, by webhook name. */
function reachedWebhooks(
  configs: readonly WebhookConfiguration[],
  probes: readonly Probe[],
): Map<string, Hit[]> {
  const named = new Map<string, string>();
  let text = "";
  configs.forEach((config, c) => {
    config.webhooks.forEach((hook, index) => {
      if (hook.failurePolicy !== "Fail") return;
      const name = `webhook-${c}-${index}.lint.celgate.dev`;
      named.set(name, `${config.name}\u0000${hook.name}`);
      text += asPolicy(name, hook);
    });
  });
  const out = new Map<string, Hit[]>();
  if (named.size === 0) return out;
  const set = compilePolicySet(parsePolicyText(text, "(webhooks)").set);
  const ctx = contextFromResources([], { assumeNamespaces: true });
  for (const [key, found] of hits(set, probes, ctx)) {
    const name = key.slice(0, key.indexOf("\u0000"));
    const hook = named.get(name);
    if (hook) out.set(hook.slice(hook.indexOf("\u0000") + 1), found);
  }
  return out;
}

/** Findings for webhooks exported from a cluster: those with failurePolicy Fail that match a probe. */
export function webhookDeadlocks(
  configs: readonly WebhookConfiguration[],
  probes: readonly Probe[],
): Finding[] {
  const reached = reachedWebhooks(configs, probes);
  const findings: Finding[] = [];
  for (const config of configs)
    config.webhooks.forEach((hook, index) => {
      const found = reached.get(hook.name);
      if (hook.failurePolicy !== "Fail" || !found) return;
      const namespaces = namespacesOf(found);
      findings.push({
        rule: ruleOf(found),
        severity: "error",
        message: `webhook '${hook.name}' of ${config.kind} '${config.name}' can match ${list([...new Set(found.map((h) => h.probe.what))])} under failurePolicy Fail: when its server is down they fail`,
        fix: namespaces
          ? `add to its namespaceSelector: {key: kubernetes.io/metadata.name, operator: NotIn, values: [${namespaces.join(", ")}]}`
          : "narrow its rules so they do not reach those objects (cluster-scoped: no namespaceSelector keeps them away), or set failurePolicy: Ignore",
        location: config.locate(`webhooks[${index}].name`),
        object: { kind: config.kind, name: config.name },
      });
    });
  return findings;
}
