/**
 * A policy whose params are a custom resource, under failurePolicy Fail. The API server reads params
 * through an informer of the paramKind; when the CRD is missing, being upgraded or not yet served
 * after a restart, the policy cannot be configured and every request it matches fails
 * ("If ParamKind refers to a non-existent kind, this policy definition is mis-configured and the
 * FailurePolicy is applied", admissionregistration/v1 types.go). It is the pattern behind
 * Gatekeeper's control-plane deadlock reports, and it locks itself in when the policy also matches
 * the CustomResourceDefinitions that would bring the kind back.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { EngineContext } from "../engine/context.ts";
import { mutate } from "../engine/mutating.ts";
import { validate } from "../engine/validating.ts";
import type { AdmissionRequest } from "../engine/types.ts";
import { splitApiVersion } from "../kube/kinds.ts";
import { isBuiltInGroup } from "../kube/scope.ts";
import { routeOf } from "../policy/routing.ts";
import type { Finding } from "./types.ts";

/** The creation of a CustomResourceDefinition, as the API server would send it. */
function crdCreation(): AdmissionRequest {
  const gvk = { group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition" };
  const gvr = { group: "apiextensions.k8s.io", version: "v1", resource: "customresourcedefinitions" };
  return {
    uid: "00000000-0000-4000-8000-0000000000cd",
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name: "replicalimits.rules.example.com",
    namespace: "",
    operation: "CREATE",
    userInfo: { username: "cluster-admin", groups: ["system:masters", "system:authenticated"] },
    object: {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "replicalimits.rules.example.com" },
      spec: {
        group: "rules.example.com",
        names: { kind: "ReplicaLimit", plural: "replicalimits" },
        scope: "Namespaced",
      },
    },
    oldObject: null,
    dryRun: false,
    options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
  };
}

export function customParamFindings(set: CompiledPolicySet, ctx: EngineContext): Finding[] {
  const crd = crdCreation();
  const options = { deadline: performance.now() + 60_000, explain: true };
  const onCrds = new Set(
    [...validate(set, crd, ctx, options).results, ...mutate(set, crd, ctx, options).results]
      .filter((r) => r.outcome !== "skip")
      .map((r) => r.policy),
  );
  const findings: Finding[] = [];
  for (const p of set.policies) {
    const kind = p.policy.paramKind;
    if (!kind || isBuiltInGroup(splitApiVersion(kind.apiVersion).group)) continue;
    const failing = set.bindings.filter((b) => b.policy === p && routeOf(p.policy, b.binding) === "Fail");
    if (failing.length === 0) continue;
    const locked = onCrds.has(p.name)
      ? "; it also matches CustomResourceDefinitions, so the CRD cannot be put back while it fails"
      : "";
    findings.push({
      rule: "custom-param-fail",
      severity: "error",
      message: `${p.kind} '${p.name}' takes its params from ${kind.apiVersion} ${kind.kind}, a custom resource, under failurePolicy Fail: while its CRD is missing or not yet served, every request it matches fails${locked}`,
      fix: "keep params in a built-in kind (a ConfigMap), or set failurePolicy: Ignore and deny a missing param with parameterNotFoundAction: Deny",
      location: p.policy.source.locate("spec.paramKind"),
      object: { kind: p.kind, name: p.name },
    });
  }
  return findings;
}
