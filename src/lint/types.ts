/**
 * What `celgate lint` reports: set-ups that can hurt a cluster (admission deadlocks, timeouts past
 * the API server's deadline) and mutations that misbehave in it (not idempotent, refused on atomic
 * fields, reinvoked without end). Each finding says where, what, and the one-line fix.
 */
import type { SourceLocation } from "../errors.ts";
import type { AdmissionRequest } from "../engine/types.ts";
import type { ResourceObject } from "../policy/types.ts";

export const LINT_RULES = {
  "self-deadlock": "a Fail policy or webhook can block celgate's own Pods",
  "control-plane": "a Fail policy or webhook can block kube-system, Nodes or Leases",
  "custom-param-fail": "a Fail policy takes its params from a custom resource",
  timeouts: "webhook timeouts add up past the API server's request deadline",
  "mutation-not-idempotent": "a mutation applied to its own output changes it again",
  "mutation-atomic": "an ApplyConfiguration sets an atomic field, which the API server refuses",
  "reinvocation-loop": "mutations undo each other, so reinvocation never settles",
  "mutation-unexercised": "no test object exercises a mutation, so it was not checked",
  "never-matches": "a rule names a resource its API groups do not serve, so it applies to nothing",
} as const;

export type LintRule = keyof typeof LINT_RULES;

export interface Finding {
  readonly rule: LintRule;
  readonly severity: "error" | "warning";
  /** What is wrong, in one line. */
  readonly message: string;
  /** How to fix it, in one line. */
  readonly fix: string;
  readonly location?: SourceLocation;
  /** The policy, binding or webhook configuration it is about. */
  readonly object?: { readonly kind: string; readonly name: string };
}

/** One object of the mutation corpus: a request a test suite makes, with what it runs against. */
export interface CorpusEntry {
  readonly request: AdmissionRequest;
  /** Namespaces and params the suite loads for it. */
  readonly resources: readonly ResourceObject[];
  /** Where it comes from, for messages: `suite.test.yaml: case name`. */
  readonly origin: string;
}

export interface LintOptions {
  /** celgate's own namespace (its Pods must always be creatable). */
  readonly namespace: string;
  /**
   * How the policies reach the API server: served by celgate through the webhooks `celgate
   * manifests` writes, which never send requests in `excludedNamespaces` to celgate, or applied
   * natively as they are, where nothing keeps any request away from them.
   */
  readonly served: "celgate" | "native";
  /** With `served: celgate`, the namespaces celgate's webhooks exclude (manifests/webhooks.ts). */
  readonly excludedNamespaces: readonly string[];
  /** The labels of celgate's Pods. */
  readonly selfLabels: Readonly<Record<string, string>>;
  /** The API server's request deadline in seconds (kube-apiserver --request-timeout). */
  readonly requestTimeoutSeconds: number;
}
