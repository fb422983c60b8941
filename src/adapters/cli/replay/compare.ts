/**
 * What changed between two answers to one review, and which policies the change comes from.
 * Warnings are compared as a multiset (their order follows the policies' order, not their meaning);
 * audit annotations as a map; a patch operation by operation; a denial by its code, reason and
 * message as well as by whether it denies.
 */
import type { PolicyResult } from "../../../engine/types.ts";
import type { RecordedDecision } from "../../server/recording.ts";
import type { Answer } from "./answer.ts";

export const CHANGE_KINDS = [
  "newly-denied",
  "newly-allowed",
  "denial-changed",
  "warnings",
  "audit-annotations",
  "patch",
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** Attributed to no policy the candidate or baseline names: the recorded answer had it. */
export const RECORDED = "(recorded answer)";

const sortedJson = (xs: readonly string[]): string => JSON.stringify([...xs].sort());
const mapJson = (m: Readonly<Record<string, string>>): string =>
  JSON.stringify(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** The kinds of change from `before` to `after`, in CHANGE_KINDS order; none when they agree. */
export function changesBetween(before: RecordedDecision, after: RecordedDecision): ChangeKind[] {
  const out: ChangeKind[] = [];
  if (before.allowed && !after.allowed) out.push("newly-denied");
  else if (!before.allowed && after.allowed) out.push("newly-allowed");
  else if (
    !before.allowed &&
    (before.code !== after.code || before.reason !== after.reason || before.message !== after.message)
  )
    out.push("denial-changed");
  if (sortedJson(before.warnings) !== sortedJson(after.warnings)) out.push("warnings");
  if (mapJson(before.auditAnnotations) !== mapJson(after.auditAnnotations)) out.push("audit-annotations");
  if (JSON.stringify(before.patch) !== JSON.stringify(after.patch)) out.push("patch");
  return out;
}

/** Whether a policy's result bears on a kind of change. */
const BEARS: Readonly<Record<ChangeKind, (r: PolicyResult) => boolean>> = {
  "newly-denied": (r) => r.outcome === "fail" || r.outcome === "error",
  "newly-allowed": (r) => r.outcome === "fail" || r.outcome === "error",
  "denial-changed": (r) => r.outcome === "fail" || r.outcome === "error",
  warnings: (r) => r.warnings.length > 0 || r.violations.some((v) => v.action === "Warn"),
  "audit-annotations": (r) =>
    Object.keys(r.auditAnnotations).length > 0 || r.violations.some((v) => v.action === "Audit"),
  patch: (r) => (r.patch?.length ?? 0) > 0,
};

/** What of a policy's result a kind of change compares, to tell which policies' results differ. */
function facet(kind: ChangeKind, r: PolicyResult): string {
  if (kind === "patch") return JSON.stringify(r.patch ?? []);
  if (kind === "warnings")
    return JSON.stringify([r.warnings, r.violations.filter((v) => v.action === "Warn")]);
  if (kind === "audit-annotations")
    return JSON.stringify([mapJson(r.auditAnnotations), r.violations.filter((v) => v.action === "Audit")]);
  return JSON.stringify([r.outcome, r.reason, r.violations]);
}

/**
 * The policies a change comes from. With both sides' results: the policies whose result for that
 * kind differs and bears on it on either side. Against a recorded answer (no results on that side):
 * the candidate's policies that bear on it, or RECORDED when none does (a policy of the recorded
 * set that the candidate no longer has or no longer applies).
 */
export function policiesOf(kind: ChangeKind, before: Answer | undefined, after: Answer): string[] {
  const bearing = (results: readonly PolicyResult[]) => results.filter(BEARS[kind]);
  let names: string[];
  if (before === undefined) names = bearing(after.results).map((r) => r.policy);
  else {
    const key = (r: PolicyResult) => `${r.policy}\u0000${r.binding ?? ""}\u0000${r.param ?? ""}`;
    const facets = (results: readonly PolicyResult[]) =>
      new Map(results.map((r) => [key(r), facet(kind, r)]));
    const was = facets(before.results);
    const now = facets(after.results);
    names = [...bearing(before.results), ...bearing(after.results)]
      .filter((r) => was.get(key(r)) !== now.get(key(r)))
      .map((r) => r.policy);
  }
  const unique = [...new Set(names)].sort();
  return unique.length > 0 ? unique : [RECORDED];
}
