/** Builders for engine tests: policy text → compiled set, and admission requests. */
import { compilePolicySet, type CompiledPolicySet } from "../../src/compile/policy.ts";
import type { EngineContext } from "../../src/engine/evaluate.ts";
import { paramLookup } from "../../src/engine/params.ts";
import type { AdmissionRequest } from "../../src/engine/types.ts";
import { checkReferences, parsePolicyText } from "../../src/policy/parse.ts";

export function compileText(text: string): CompiledPolicySet {
  const { set, diagnostics } = parsePolicyText(text, "test.yaml");
  const errors = [...diagnostics, ...checkReferences(set)].filter((d) => d.severity === "error");
  if (errors.length > 0)
    throw new Error(`policy text has errors: ${errors.map((d) => d.message).join("; ")}`);
  return compilePolicySet(set);
}

export function contextFor(set: CompiledPolicySet): EngineContext {
  const namespaces = new Map(
    set.resources
      .filter((r) => r.kind === "Namespace" && r.apiVersion === "v1")
      .map((r) => [r.name, r.object] as const),
  );
  return { namespace: (n) => namespaces.get(n), params: paramLookup(set.resources) };
}

export function podRequest(
  object: Record<string, unknown> | null,
  overrides: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  return {
    uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
    kind: { group: "", version: "v1", kind: "Pod" },
    resource: { group: "", version: "v1", resource: "pods" },
    name: "web",
    namespace: "default",
    operation: "CREATE",
    userInfo: { username: "alice", groups: ["system:authenticated"] },
    object,
    oldObject: null,
    dryRun: false,
    options: null,
    ...overrides,
  };
}

export function deploymentRequest(
  replicas: number,
  overrides: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  return podRequest(
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
      spec: { replicas },
    },
    {
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      resource: { group: "apps", version: "v1", resource: "deployments" },
      ...overrides,
    },
  );
}

export const FAR = () => Date.now() + 10_000;
