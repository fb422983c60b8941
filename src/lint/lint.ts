/**
 * `celgate lint`, the core: policies, exported webhook configurations and a corpus of objects in,
 * findings out. Pure: the command reads the files.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { SourceLocation } from "../errors.ts";
import { contextFromResources, type EngineContext } from "../engine/context.ts";
import { type TimedWebhook, worstCaseWait } from "../manifests/timeouts.ts";
import type { WebhookConfiguration } from "../manifests/webhook-config.ts";
import type { ResourceObject } from "../policy/types.ts";
import { nativeDeadlocks, servedDeadlocks, webhookDeadlocks } from "./deadlock.ts";
import { mutationFindings } from "./mutations.ts";
import { customParamFindings } from "./params.ts";
import { criticalProbes } from "./probes.ts";
import type { CorpusEntry, Finding, LintOptions } from "./types.ts";

export interface LintInput {
  /** The policies to lint: the user's files, served as `options.served` says. */
  readonly sets: readonly CompiledPolicySet[];
  /** Policies exported from a cluster: the API server runs them natively. */
  readonly clusterSets?: readonly CompiledPolicySet[];
  /** Webhook configurations exported from a cluster. */
  readonly webhooks: readonly WebhookConfiguration[];
  readonly corpus: readonly CorpusEntry[];
  readonly options: LintOptions;
}

/** Offline, a namespace no file defines exists with only its name label, as `celgate eval` assumes. */
function context(resources: readonly ResourceObject[]): EngineContext {
  return contextFromResources(resources, { assumeNamespaces: true });
}

/** Timeouts of the exported webhooks that one request can meet, against the request deadline. */
function timeoutFindings(webhooks: readonly WebhookConfiguration[], deadline: number): Finding[] {
  const timed: (TimedWebhook & { readonly at: () => SourceLocation })[] = webhooks.flatMap((c) =>
    c.webhooks.map((h, i) => ({
      name: `${h.name} (${c.name})`,
      phase: c.kind === "MutatingWebhookConfiguration" ? ("mutate" as const) : ("validate" as const),
      timeoutSeconds: h.timeoutSeconds,
      reinvoked: h.reinvocationPolicy === "IfNeeded",
      rules: h.rules,
      at: () => c.locate(`webhooks[${i}].timeoutSeconds`),
    })),
  );
  const worst = worstCaseWait(timed);
  if (worst.seconds * 2 <= deadline) return [];
  const first = timed.find((t) => worst.webhooks[0]?.startsWith(t.name));
  const over = worst.seconds > deadline;
  return [
    {
      rule: "timeouts",
      severity: over ? "error" : "warning",
      message: `one request can wait ${worst.seconds} s on webhooks ${worst.webhooks.join(", ")}: ${over ? "past" : "more than half of"} the API server's ${deadline} s request deadline${over ? ", after which it fails whatever their failurePolicy" : ", which the write itself shares"}`,
      fix: "lower their timeoutSeconds (a webhook that answers in milliseconds needs a few seconds at most)",
      ...(first ? { location: first.at() } : {}),
    },
  ];
}

function byLocation(a: Finding, b: Finding): number {
  const la = a.location;
  const lb = b.location;
  if (!la || !lb) return la ? -1 : lb ? 1 : 0;
  if (la.file !== lb.file) return la.file < lb.file ? -1 : 1;
  return la.line - lb.line || la.column - lb.column;
}

/** The rules compile found to name a resource no group of theirs serves (compile/resources.ts). */
function neverMatches(set: LintInput["sets"][number]): Finding[] {
  return set.diagnostics
    .filter((d) => d.code === "PE_UNKNOWN_RESOURCE")
    .map((d) => ({
      rule: "never-matches",
      severity: "warning",
      message: `${d.object ? `${d.object.kind} '${d.object.name}' ${d.path}: ` : ""}${d.message}`,
      fix: "name the resource as the API serves it (lower-case plural, in its group), or drop the rule",
      ...(d.location ? { location: d.location } : {}),
      ...(d.object ? { object: d.object } : {}),
    }));
}

/** Every finding, ordered by file and line. Never throws for bad input. */
export function lint(input: LintInput): Finding[] {
  const probes = criticalProbes(input.options);
  const findings: Finding[] = [];
  const all = [
    ...input.sets.map((set) => ({ set, native: input.options.served === "native" })),
    ...(input.clusterSets ?? []).map((set) => ({ set, native: true })),
  ];
  for (const { set, native } of all) {
    const fromCluster = input.clusterSets?.includes(set) === true;
    const ctx = context(set.resources);
    findings.push(
      ...(native ? nativeDeadlocks(set, probes, ctx) : servedDeadlocks(set, probes, input.options)),
      ...customParamFindings(set, ctx),
      ...neverMatches(set),
    );
    // A cluster's mutations are tried on the suites' objects too, but that no suite of this
    // repository exercises them says nothing.
    findings.push(
      ...mutationFindings(set, input.corpus, (entry) =>
        context([...set.resources, ...entry.resources]),
      ).filter((f) => !fromCluster || f.rule !== "mutation-unexercised"),
    );
  }
  if (input.webhooks.length > 0) {
    findings.push(...webhookDeadlocks(input.webhooks, probes));
    findings.push(...timeoutFindings(input.webhooks, input.options.requestTimeoutSeconds));
  }
  return findings.sort(byLocation);
}
