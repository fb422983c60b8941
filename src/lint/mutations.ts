/**
 * Mutations checked against a corpus of objects (the policy tests' requests):
 *
 * - idempotence: each MutatingAdmissionPolicy alone is applied to an object, then to its own
 *   output; a second patch that is not empty means a reinvocation, a retried request or an object
 *   that already had the change gets it again (Kubernetes: "Mutating webhooks must be idempotent",
 *   and so must policies, which the API server reinvokes the same way);
 * - atomic fields: an ApplyConfiguration that sets one is refused by the API server, as the engine
 *   refuses it (engine/merge-typed.ts, from the kind's schema), so the finding reads the engine's error;
 * - reinvocation loops: all the policies applied together, then again to their output; what
 *   changes the second time, from policies each idempotent alone, is policies undoing each other,
 *   which reinvocation (IfNeeded) cannot settle: the object depends on who ran last.
 *
 * A policy no object of the corpus exercises gets a warning, since none of this was checked for it.
 */
import type { CompiledMutatingPolicy, CompiledPolicySet } from "../compile/policy.ts";
import type { EngineContext } from "../engine/context.ts";
import { mutate } from "../engine/mutating.ts";
import type { AdmissionRequest, JsonPatchOp, PolicyResult } from "../engine/types.ts";
import type { CorpusEntry, Finding } from "./types.ts";

type ContextFor = (entry: CorpusEntry) => EngineContext;

function options() {
  return { deadline: performance.now() + 60_000, explain: true };
}

function ops(patch: readonly JsonPatchOp[] | undefined): string {
  const shown = (patch ?? []).slice(0, 3).map((o) => `${o.op} ${o.path}`);
  return `${shown.join(", ")}${(patch?.length ?? 0) > 3 ? ", ..." : ""}`;
}

function only(set: CompiledPolicySet, policy: CompiledMutatingPolicy): CompiledPolicySet {
  return { ...set, bindings: set.bindings.filter((b) => b.policy === policy), unbound: [] };
}

function mutable(entry: CorpusEntry): boolean {
  const r = entry.request;
  return (r.operation === "CREATE" || r.operation === "UPDATE") && r.object !== null;
}

function withObject(r: AdmissionRequest, object: unknown): AdmissionRequest {
  return { ...r, object: object as Record<string, unknown> };
}

function where(p: CompiledMutatingPolicy, path: string) {
  return { location: p.policy.source.locate(path), object: { kind: p.kind, name: p.name } };
}

/** The engine's refusal of an ApplyConfiguration that sets atomic fields (smd.go validatePatch's words). */
const ATOMIC_REFUSAL = "may not mutate atomic arrays, maps or structs: ";

/**
 * Atomic fields an ApplyConfiguration of this policy set, per mutation index: the engine refuses such
 * a mutation as the API server does, and the error names the paths; the trace's last mutation step
 * says which mutation it was.
 */
function atomicFindings(
  p: CompiledMutatingPolicy,
  results: readonly PolicyResult[],
  seen: Set<number>,
): Finding[] {
  const findings: Finding[] = [];
  for (const r of results) {
    if (r.policy !== p.name || r.outcome !== "error") continue;
    const at = r.reason?.indexOf(ATOMIC_REFUSAL) ?? -1;
    if (at < 0 || r.reason === undefined) continue;
    const step = [...r.trace].reverse().find((s) => s.stage === "mutation");
    const index = step ? Number(step.name) : 0;
    if (seen.has(index)) continue;
    seen.add(index);
    const paths = r.reason.slice(at + ATOMIC_REFUSAL.length);
    findings.push({
      rule: "mutation-atomic",
      severity: "error",
      message: `${p.kind} '${p.name}' mutations[${index}] is an ApplyConfiguration that sets the atomic ${paths}: the API server refuses it ("may not mutate atomic arrays, maps or structs"), so it ${p.policy.failurePolicy === "Ignore" ? "silently does nothing (failurePolicy Ignore)" : "denies every request it applies to (failurePolicy Fail)"}`,
      fix: "write this change as a JSONPatch mutation (add or replace the field, or append with /-)",
      ...where(p, `spec.mutations[${index}].applyConfiguration.expression`),
    });
  }
  return findings;
}

/** Idempotence, atomic fields and coverage, one policy at a time. */
function singlePolicyFindings(
  set: CompiledPolicySet,
  p: CompiledMutatingPolicy,
  corpus: readonly CorpusEntry[],
  contextFor: ContextFor,
  notIdempotent: Set<string>,
): Finding[] {
  const alone = only(set, p);
  const findings: Finding[] = [];
  const atomicSeen = new Set<number>();
  let exercised = false;
  let reported = false;
  for (const entry of corpus) {
    const ctx = contextFor(entry);
    const first = mutate(alone, entry.request, ctx, options());
    findings.push(...atomicFindings(p, first.results, atomicSeen));
    // A refused mutation was exercised: the object reached it, and its finding says why nothing changed.
    if (atomicSeen.size > 0) exercised = true;
    if (!first.patch || first.patch.length === 0) continue;
    exercised = true;
    if (reported) continue;
    const second = mutate(alone, withObject(entry.request, first.patchedObject), ctx, options());
    if (!second.patch || second.patch.length === 0) continue;
    reported = true;
    notIdempotent.add(p.name);
    findings.push({
      rule: "mutation-not-idempotent",
      severity: "error",
      message: `${p.kind} '${p.name}' is not idempotent: applied to its own output for ${entry.origin} it changes the object again (${ops(second.patch)})`,
      fix: "make each mutation a no-op when its change is already there (test for it in the expression or in a matchCondition)",
      ...where(p, "spec.mutations"),
    });
  }
  if (!exercised)
    findings.push({
      rule: "mutation-unexercised",
      severity: "warning",
      message: `${p.kind} '${p.name}' changes none of the ${corpus.length} test object${corpus.length === 1 ? "" : "s"}, so its idempotence and its atomic fields were not checked`,
      fix: "add a case its mutations apply to in the policy's *.test.yaml suite",
      ...where(p, "metadata.name"),
    });
  return findings;
}

/** Policies that change the output of the whole chain again: they undo each other. */
function loopFindings(
  set: CompiledPolicySet,
  mutating: readonly CompiledMutatingPolicy[],
  corpus: readonly CorpusEntry[],
  contextFor: ContextFor,
  notIdempotent: ReadonlySet<string>,
): Finding[] {
  for (const entry of corpus) {
    const ctx = contextFor(entry);
    const first = mutate(set, entry.request, ctx, options());
    if (!first.patch || first.patch.length === 0) continue;
    const second = mutate(set, withObject(entry.request, first.patchedObject), ctx, options());
    const changing = [
      ...new Set(
        second.results
          .filter((r) => (r.patch?.length ?? 0) > 0 && !notIdempotent.has(r.policy))
          .map((r) => r.policy),
      ),
    ];
    if (changing.length === 0) continue;
    const involved = mutating.filter((p) => changing.includes(p.name));
    const reinvoked = involved.find((p) => p.policy.reinvocationPolicy === "IfNeeded");
    const anchor = reinvoked ?? involved[0];
    if (!anchor) continue;
    const names = involved.map((p) => `'${p.name}'`).join(", ");
    return [
      {
        rule: "reinvocation-loop",
        severity: reinvoked ? "error" : "warning",
        message: `MutatingAdmissionPolicies ${names} undo each other's changes for ${entry.origin}: applied again to their own output they change it (${ops(second.patch)}), ${reinvoked ? `and '${reinvoked.name}' asks to be reinvoked, which cannot settle it` : "so the object depends on which runs last"}`,
        fix: "let one policy own each field, or make each leave alone a field another policy has set",
        ...where(anchor, reinvoked ? "spec.reinvocationPolicy" : "metadata.name"),
      },
    ];
  }
  return [];
}

/** Every mutation finding for the bound MutatingAdmissionPolicies of a set. */
export function mutationFindings(
  set: CompiledPolicySet,
  corpus: readonly CorpusEntry[],
  contextFor: ContextFor,
): Finding[] {
  const mutating = [
    ...new Set(
      set.bindings
        .map((b) => b.policy)
        .filter((p): p is CompiledMutatingPolicy => p.kind === "MutatingAdmissionPolicy"),
    ),
  ];
  if (mutating.length === 0) return [];
  const usable = corpus.filter(mutable);
  const notIdempotent = new Set<string>();
  const findings = mutating.flatMap((p) => singlePolicyFindings(set, p, usable, contextFor, notIdempotent));
  return [...findings, ...loopFindings(set, mutating, usable, contextFor, notIdempotent)];
}
