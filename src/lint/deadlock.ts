/**
 * Admission deadlocks: a (policy, binding) pair served with failurePolicy Fail, or a webhook with
 * failurePolicy Fail, that matches a request the cluster needs to heal (probes.ts). Whether it
 * matches is asked of the engine itself, with the probe's request: rules, selectors (namespaces are
 * known only by their name label) and matchConditions, exactly as a review would. A webhook from a
 * cluster dump is asked the same way, written as the policy that selects what it selects.
 */
import { stringify } from "yaml";
import { type CompiledPolicySet, compilePolicySet } from "../compile/policy.ts";
import type { EngineContext } from "../engine/evaluate.ts";
import { mutate, validate } from "../engine/evaluate.ts";
import type { PolicyResult } from "../engine/types.ts";
import type { WebhookConfiguration, WebhookSpec } from "../manifests/webhook-config.ts";
import { parsePolicyText } from "../policy/parse.ts";
import { routeOf } from "../policy/routing.ts";
import type { LabelSelector } from "../policy/types.ts";
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

/**
 * Findings for the policies of a set: pairs routed to Fail that match a probe. Served by celgate,
 * a namespaced probe in a namespace its webhooks exclude never reaches a policy.
 */
export function policyDeadlocks(
  set: CompiledPolicySet,
  probes: readonly Probe[],
  ctx: EngineContext,
  options: Pick<LintOptions, "served" | "excludedNamespaces">,
): Finding[] {
  const reachable = probes.filter(
    (p) =>
      options.served === "native" ||
      !p.namespaced ||
      !options.excludedNamespaces.includes(p.request.namespace),
  );
  const matched = hits(set, reachable, ctx);
  const how =
    options.served === "native"
      ? "applied natively"
      : "served by celgate (a namespaceSelector cannot keep cluster-scoped objects away)";
  const findings: Finding[] = [];
  for (const b of set.bindings) {
    const found = matched.get(`${b.policy.name}\u0000${b.binding.name}`);
    if (!found || routeOf(b.policy.policy, b.binding) !== "Fail") continue;
    const policy = b.policy.policy;
    const namespaces = namespacesOf(found);
    findings.push({
      rule: ruleOf(found),
      severity: "error",
      message: `${policy.kind} '${policy.name}' (binding '${b.binding.name}'), ${how}, can match ${list([...new Set(found.map((h) => h.probe.what))])} under failurePolicy Fail: when it cannot be evaluated${options.served === "celgate" ? ", or celgate is down," : ""} they fail${deniedText(found)}`,
      fix: namespaces
        ? `exclude them in the binding: matchResources.namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [${namespaces.join(", ")}]}]}`
        : "narrow spec.matchConstraints.resourceRules so they do not reach nodes (cluster-scoped: no namespaceSelector keeps them out), or set failurePolicy: Ignore",
      location: policy.source.locate("metadata.name"),
      object: { kind: policy.kind, name: policy.name },
    });
  }
  return findings;
}

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

/** Findings for webhooks exported from a cluster: those with failurePolicy Fail that match a probe. */
export function webhookDeadlocks(
  configs: readonly WebhookConfiguration[],
  probes: readonly Probe[],
  ctx: EngineContext,
): Finding[] {
  const named = new Map<string, { config: WebhookConfiguration; index: number; hook: WebhookSpec }>();
  let text = "";
  configs.forEach((config, c) => {
    config.webhooks.forEach((hook, index) => {
      if (hook.failurePolicy !== "Fail") return;
      const name = `webhook-${c}-${index}.lint.celgate.dev`;
      named.set(name, { config, index, hook });
      text += asPolicy(name, hook);
    });
  });
  if (named.size === 0) return [];
  const set = compilePolicySet(parsePolicyText(text, "(webhooks)").set);
  const matched = hits(set, probes, ctx);
  const findings: Finding[] = [];
  for (const [name, { config, index, hook }] of named) {
    const found = matched.get(`${name}\u0000${name}`);
    if (!found) continue;
    const namespaces = namespacesOf(found);
    findings.push({
      rule: ruleOf(found),
      severity: "error",
      message: `webhook '${hook.name}' of ${config.kind} '${config.name}' can match ${list([...new Set(found.map((h) => h.probe.what))])} under failurePolicy Fail: when its server is down they fail`,
      fix: namespaces
        ? `add to its namespaceSelector: {key: kubernetes.io/metadata.name, operator: NotIn, values: [${namespaces.join(", ")}]}`
        : "narrow its rules so they do not reach nodes (cluster-scoped: no namespaceSelector keeps them out), or set failurePolicy: Ignore",
      location: config.locate(`webhooks[${index}].name`),
      object: { kind: config.kind, name: config.name },
    });
  }
  return findings;
}
