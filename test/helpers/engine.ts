/** Builders for engine tests: policy text → compiled set, and admission requests. */
import { readFileSync } from "node:fs";
import { stringify as stringifyYaml } from "yaml";
import { compilePolicySet, type CompiledPolicySet } from "../../src/compile/policy.ts";
import { contextFromSet, type EngineContext } from "../../src/engine/context.ts";
import { decide } from "../../src/engine/decision.ts";
import { mutate } from "../../src/engine/mutating.ts";
import type { EvaluateOptions } from "../../src/engine/types.ts";
import { validate } from "../../src/engine/validating.ts";
import type { AdmissionDecision } from "../../src/engine/types.ts";
import type { AdmissionRequest } from "../../src/request/types.ts";
import { checkReferences, parsePolicyText } from "../../src/policy/parse.ts";

export function compileText(text: string): CompiledPolicySet {
  const { set, diagnostics } = parsePolicyText(text, "test.yaml");
  const errors = [...diagnostics, ...checkReferences(set)].filter((d) => d.severity === "error");
  if (errors.length > 0)
    throw new Error(`policy text has errors: ${errors.map((d) => d.message).join("; ")}`);
  return compilePolicySet(set);
}

/** The engine's own lookups over the set's files (strict about unknown namespaces, like serve without assumptions). */
export function contextFor(set: CompiledPolicySet): EngineContext {
  return contextFromSet(set);
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

export const FAR = () => performance.now() + 10_000;

// ---- YAML builders: tests write policies as objects and run them as real YAML text -------------

type Doc = Record<string, unknown>;

/** Several objects as one multi-document YAML text, as a user would write it. */
export function yamlDocs(...docs: readonly Doc[]): string {
  return docs.map((d) => stringifyYaml(d, { lineWidth: 0 })).join("---\n");
}

export const POD_RULES = [
  { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"] },
];

/** A ValidatingAdmissionPolicy for pods (CREATE, UPDATE) unless `spec` says otherwise. */
export function vap(name: string, spec: Doc): Doc {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name },
    spec: { matchConstraints: { resourceRules: POD_RULES }, ...spec },
  };
}

/** A binding with validationActions [Deny] unless `spec` says otherwise. */
export function vapBinding(name: string, policyName: string, spec: Doc = {}): Doc {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name },
    spec: { policyName, validationActions: ["Deny"], ...spec },
  };
}

/** A MutatingAdmissionPolicy for pods (CREATE), reinvocationPolicy Never (required), unless `spec` says otherwise. */
export function map(name: string, spec: Doc): Doc {
  return {
    apiVersion: "admissionregistration.k8s.io/v1alpha1",
    kind: "MutatingAdmissionPolicy",
    metadata: { name },
    spec: {
      reinvocationPolicy: "Never",
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
        ],
      },
      ...spec,
    },
  };
}

export function mapBinding(name: string, policyName: string, spec: Doc = {}): Doc {
  return {
    apiVersion: "admissionregistration.k8s.io/v1alpha1",
    kind: "MutatingAdmissionPolicyBinding",
    metadata: { name },
    spec: { policyName, ...spec },
  };
}

export function namespaceDoc(name: string, labels: Record<string, string> = {}): Doc {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } };
}

export function configMapDoc(
  name: string,
  namespace: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
): Doc {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, labels }, data };
}

/** A Pod object in namespace `default` named `web`. */
export function podObject(spec: Doc = {}, labels?: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", ...(labels ? { labels } : {}) },
    spec,
  };
}

/** Compiles `text` and runs the validating phase on `request`. */
export function validateText(
  text: string,
  request: AdmissionRequest,
  options: Partial<EvaluateOptions> = {},
): AdmissionDecision {
  const set = compileText(text);
  return decide(validate(set, request, contextFor(set), { deadline: FAR(), ...options }));
}

/** Compiles `text` and runs the mutating phase on `request`. */
export function mutateText(
  text: string,
  request: AdmissionRequest,
  options: Partial<EvaluateOptions> = {},
): AdmissionDecision {
  const set = compileText(text);
  return decide(mutate(set, request, contextFor(set), { deadline: FAR(), ...options }));
}

/** The text of a file under test/fixtures/engine/. */
export function engineFixture(name: string): string {
  return readFileSync(new URL(`../fixtures/engine/${name}`, import.meta.url), "utf8");
}

/** What a decision says besides its results: for tests that hold two evaluations to each other. */
export function decisionOutline(d: AdmissionDecision): Record<string, unknown> {
  return {
    allowed: d.allowed,
    status: d.status,
    warnings: d.warnings,
    auditAnnotations: d.auditAnnotations,
    cost: d.cost,
  };
}
