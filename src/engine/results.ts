/**
 * A policy result and what it is built from: the subject (policy and binding) it is about, and the
 * verdict its evaluation reached. Results are built key by key in one order, so that they share
 * one shape.
 */
// The module's, not the global: reading the global `performance` goes through a lazy getter
// first, a third of a clock read's cost here, and the engine reads the clock per policy.
import { routeOf } from "../policy/routing.ts";
import { performance } from "node:perf_hooks";
import type { CompiledBinding, CompiledPolicy } from "../compile/policy.ts";
import type { ValidationAction } from "../policy/types.ts";
import type { Evaluation } from "./evaluate.ts";
import type { Admission, PolicyResult, Violation } from "./types.ts";

export interface Subject {
  readonly policy: CompiledPolicy;
  readonly binding: CompiledBinding | undefined;
  /** The split path that serves this pair (policy/routing.ts), decided once, when the subject is built. */
  readonly route: "Fail" | "Ignore";
  /** What every result for this subject starts with (built with the subject, not per request). */
  readonly base: ResultBase;
}

export function subjectOf(policy: CompiledPolicy, binding: CompiledBinding | undefined): Subject {
  const base: { -readonly [K in keyof ResultBase]: ResultBase[K] } = {
    policy: policy.name,
    policyKind: policy.kind,
  };
  if (binding) base.binding = binding.binding.name;
  return { policy, binding, route: routeOf(policy.policy, binding?.binding), base };
}

export function validationActions(s: Subject): readonly ValidationAction[] {
  const b = s.binding?.binding;
  if (b && b.kind === "ValidatingAdmissionPolicyBinding") return b.validationActions;
  return ["Deny"];
}

/**
 * Empty lists and maps in results and decisions, shared rather than built for each: allocations on
 * a review's path cost more than their size (they write fresh memory and bring scavenges closer).
 */
export const NO_VIOLATIONS: readonly Violation[] = Object.freeze([]);
export const NO_WARNINGS: readonly string[] = Object.freeze([]);
export const NO_ANNOTATIONS: Readonly<Record<string, string>> = Object.freeze({});

/** What a phase finds when no policy can apply (it evaluates none). */
export const NO_RESULTS: Admission = Object.freeze({ results: Object.freeze([]) });

/**
 * What a policy's evaluation found: a result without the fields every result shares. An optional
 * field may be given as undefined, which leaves it out of the result.
 */
export type Verdict = Pick<PolicyResult, "outcome" | "violations" | "warnings" | "auditAnnotations"> & {
  readonly [K in "errorKind" | "reason" | "validationActions" | "patch"]?: PolicyResult[K] | undefined;
};
type MutableResult = { -readonly [K in keyof PolicyResult]: PolicyResult[K] };

/**
 * The result, built key by key in one order rather than spread together: spreads with optional
 * keys gave every result a shape of its own, and building them was an eighth of a 20-rule review.
 * The order is the one results have always printed in.
 */
export function finish(base: ResultBase, v: Verdict, ev: Evaluation, started: number): PolicyResult {
  const r = { policy: base.policy, policyKind: base.policyKind } as MutableResult;
  if (base.binding !== undefined) r.binding = base.binding;
  if (base.param !== undefined) r.param = base.param;
  r.outcome = v.outcome;
  if (v.errorKind !== undefined) r.errorKind = v.errorKind;
  if (v.reason !== undefined) r.reason = v.reason;
  if (v.validationActions !== undefined) r.validationActions = v.validationActions;
  r.violations = v.violations;
  r.warnings = v.warnings;
  r.auditAnnotations = v.auditAnnotations;
  if (v.patch !== undefined) r.patch = v.patch;
  r.trace = ev.trace;
  r.cost = ev.state.cost;
  r.durationMs = performance.now() - started;
  return r;
}

export type ResultBase = Pick<PolicyResult, "policy" | "policyKind" | "binding" | "param">;

export function skipResult(base: ResultBase, reason: string, ev: Evaluation, started: number): PolicyResult {
  return finish(
    base,
    {
      outcome: "skip",
      reason,
      violations: NO_VIOLATIONS,
      warnings: NO_WARNINGS,
      auditAnnotations: NO_ANNOTATIONS,
    },
    ev,
    started,
  );
}
