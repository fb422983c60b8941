/**
 * Checks across documents and files, once the whole set is read: every binding names a loaded
 * policy of its kind, and nothing is defined twice.
 */
import type { Diagnostic } from "../errors.ts";
import { closestName } from "./fields.ts";
import type { ParsedBinding, ParsedPolicy, PolicySet, ResourceObject, SourceMap } from "./types.ts";

function where(source: SourceMap, path: string): string {
  const l = source.locate(path);
  return `${l.file}:${l.line}:${l.column}`;
}

/**
 * Checks that need the whole set: every binding names a loaded policy of its kind, and no policy,
 * binding or resource is defined twice (the later definition would silently replace the earlier one).
 */
export function checkReferences(set: PolicySet): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const duplicate = (
    kind: string,
    name: string,
    source: SourceMap,
    firstSource: SourceMap,
    label: string,
  ): void => {
    diagnostics.push({
      code: "PE_DUPLICATE",
      severity: "error",
      message: `${label} is defined more than once (first at ${where(firstSource, "metadata.name")})`,
      path: "metadata.name",
      location: source.locate("metadata.name"),
      object: { kind, name },
    });
  };

  const policies = new Map<string, ParsedPolicy>();
  for (const p of set.policies) {
    const key = `${p.kind}/${p.name}`;
    const first = policies.get(key);
    if (first) duplicate(p.kind, p.name, p.source, first.source, `${p.kind} ${JSON.stringify(p.name)}`);
    else policies.set(key, p);
  }
  const bindings = new Map<string, ParsedBinding>();
  for (const b of set.bindings) {
    const key = `${b.kind}/${b.name}`;
    const first = bindings.get(key);
    if (first) duplicate(b.kind, b.name, b.source, first.source, `${b.kind} ${JSON.stringify(b.name)}`);
    else bindings.set(key, b);
  }
  const resources = new Map<string, ResourceObject>();
  for (const res of set.resources) {
    const group = res.apiVersion.includes("/") ? res.apiVersion.slice(0, res.apiVersion.indexOf("/")) : "";
    const key = `${group}/${res.kind}/${res.namespace ?? ""}/${res.name}`;
    const first = resources.get(key);
    const label = `${res.kind} ${JSON.stringify(res.namespace ? `${res.namespace}/${res.name}` : res.name)}`;
    if (first) duplicate(res.kind, res.name, res.source, first.source, label);
    else resources.set(key, res);
  }

  for (const b of set.bindings) {
    const policyKind =
      b.kind === "ValidatingAdmissionPolicyBinding" ? "ValidatingAdmissionPolicy" : "MutatingAdmissionPolicy";
    if (policies.has(`${policyKind}/${b.policyName}`)) continue;
    const near = closestName(
      b.policyName,
      set.policies.filter((p) => p.kind === policyKind).map((p) => p.name),
    );
    // The API server stores such a binding and never matches it (its policy source pairs bindings
    // with the policies that exist): it is inert, which deserves a warning, not a load error.
    diagnostics.push({
      code: "PE_UNKNOWN_POLICY",
      severity: "warning",
      message: `no ${policyKind} named ${JSON.stringify(b.policyName)} is loaded: the binding applies to nothing${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}`,
      path: "spec.policyName",
      location: b.source.locate("spec.policyName"),
      object: { kind: b.kind, name: b.name },
    });
  }
  return diagnostics;
}

/** Joins the sets read from several files, keeping file order. */
export function mergePolicySets(sets: readonly PolicySet[]): PolicySet {
  const merged: PolicySet = {
    policies: sets.flatMap((s) => s.policies),
    bindings: sets.flatMap((s) => s.bindings),
    resources: sets.flatMap((s) => s.resources),
  };
  const rejectedBindings = sets.flatMap((s) => s.rejectedBindings ?? []);
  const rejectedPolicies = sets.flatMap((s) => s.rejectedPolicies ?? []);
  return {
    ...merged,
    ...(rejectedBindings.length > 0 ? { rejectedBindings } : {}),
    ...(rejectedPolicies.length > 0 ? { rejectedPolicies } : {}),
  };
}
