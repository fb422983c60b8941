/**
 * The parsed policy model: Kubernetes' admissionregistration.k8s.io objects as celgate reads them,
 * after structural validation and with defaults applied. Field names follow the Kubernetes API so a
 * reader can hold this file next to the API reference. Everything is readonly: stages after parsing
 * never change what the user wrote.
 */
import type { SourceLocation } from "../errors.ts";

export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
/** The admission operations, in the API's order; the one definition every reader of requests uses. */
export const OPERATIONS: readonly Operation[] = Object.freeze(["CREATE", "UPDATE", "DELETE", "CONNECT"]);
export type RuleOperation = Operation | "*";
export type FailurePolicy = "Fail" | "Ignore";
export type MatchPolicyType = "Exact" | "Equivalent";
export type ValidationAction = "Deny" | "Warn" | "Audit";
export type ScopeType = "Cluster" | "Namespaced" | "*";
export type ParameterNotFoundAction = "Allow" | "Deny";
export type ReinvocationPolicy = "Never" | "IfNeeded";
export type PatchType = "JSONPatch" | "ApplyConfiguration";
/** The HTTP reason a failed validation reports (metav1.StatusReason). */
export type ValidationReason = "Unauthorized" | "Forbidden" | "Invalid" | "RequestEntityTooLarge";

/** Where each field of a document was written, keyed by field path (`spec.validations[0].expression`). */
export interface SourceMap {
  readonly file: string;
  /** Location of the field's value; falls back to the document start for unknown paths. */
  locate(path: string): SourceLocation;
  /** Location of the character at `offset` of the string value at `path` (a CEL sub-expression). */
  locateWithin?(path: string, offset: number): SourceLocation;
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  readonly values: readonly string[];
}

/** metav1.LabelSelector. An absent selector matches everything; `{}` matches everything too. */
export interface LabelSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly matchExpressions: readonly LabelSelectorRequirement[];
}

export interface NamedRuleWithOperations {
  readonly operations: readonly RuleOperation[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  /** `pods`, `pods/status`, `*`, `*\/*`, `pods/*`, `*\/scale`. */
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
  readonly scope: ScopeType;
}

export interface MatchResources {
  /** Absent selector: everything matches. */
  readonly namespaceSelector?: LabelSelector;
  readonly objectSelector?: LabelSelector;
  readonly resourceRules: readonly NamedRuleWithOperations[];
  readonly excludeResourceRules: readonly NamedRuleWithOperations[];
  readonly matchPolicy: MatchPolicyType;
}

export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

export interface Variable {
  readonly name: string;
  readonly expression: string;
}

export interface Validation {
  readonly expression: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: ValidationReason;
}

export interface AuditAnnotation {
  readonly key: string;
  readonly valueExpression: string;
}

export interface ParamKind {
  readonly apiVersion: string;
  readonly kind: string;
}

export interface Mutation {
  readonly patchType: PatchType;
  /** Set when patchType is ApplyConfiguration. */
  readonly applyConfiguration?: { readonly expression: string };
  /** Set when patchType is JSONPatch. */
  readonly jsonPatch?: { readonly expression: string };
}

interface PolicyCommon {
  readonly name: string;
  readonly apiVersion: string;
  readonly source: SourceMap;
  readonly paramKind?: ParamKind;
  /** Absent means the policy matches nothing by itself (Kubernetes requires it; we report its absence). */
  readonly matchConstraints?: MatchResources;
  readonly matchConditions: readonly MatchCondition[];
  readonly variables: readonly Variable[];
  readonly failurePolicy: FailurePolicy;
  /** The policy's own annotations/labels, kept for descriptions in listings. */
  readonly annotations: Readonly<Record<string, string>>;
}

export interface ValidatingPolicy extends PolicyCommon {
  readonly kind: "ValidatingAdmissionPolicy";
  readonly validations: readonly Validation[];
  readonly auditAnnotations: readonly AuditAnnotation[];
}

export interface MutatingPolicy extends PolicyCommon {
  readonly kind: "MutatingAdmissionPolicy";
  readonly mutations: readonly Mutation[];
  readonly reinvocationPolicy: ReinvocationPolicy;
}

export type ParsedPolicy = ValidatingPolicy | MutatingPolicy;

export interface ParamRef {
  readonly name?: string;
  readonly namespace?: string;
  readonly selector?: LabelSelector;
  readonly parameterNotFoundAction: ParameterNotFoundAction;
}

interface BindingCommon {
  readonly name: string;
  readonly apiVersion: string;
  readonly source: SourceMap;
  readonly policyName: string;
  readonly paramRef?: ParamRef;
  readonly matchResources?: MatchResources;
}

export interface ValidatingBinding extends BindingCommon {
  readonly kind: "ValidatingAdmissionPolicyBinding";
  readonly validationActions: readonly ValidationAction[];
}

export interface MutatingBinding extends BindingCommon {
  readonly kind: "MutatingAdmissionPolicyBinding";
}

export type ParsedBinding = ValidatingBinding | MutatingBinding;

/** Any other Kubernetes object found in policy files: parameter objects and Namespaces. */
export interface ResourceObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The whole object as JSON. */
  readonly object: Readonly<Record<string, unknown>>;
  readonly source: SourceMap;
}

/** A binding left out of the set because its document has errors, and the policy it names. */
export interface RejectedBinding {
  readonly kind: ParsedBinding["kind"];
  readonly name: string;
  /** spec.policyName as written, when it is a string. */
  readonly policyName: string | undefined;
}

/** Everything read from a set of policy files. */
export interface PolicySet {
  readonly policies: readonly ParsedPolicy[];
  readonly bindings: readonly ParsedBinding[];
  /** Parameter objects and Namespaces, in file order. */
  readonly resources: readonly ResourceObject[];
  /**
   * Bindings whose documents have errors (reported as diagnostics), so that a policy they name is
   * not called unbound, which would contradict the file.
   */
  readonly rejectedBindings?: readonly RejectedBinding[];
  /**
   * Policies whose documents have errors (reported as diagnostics), with the parts that were well
   * formed: left out of the set, and their expressions still compiled, so that a structural error
   * does not hide the CEL errors the API server reports beside it.
   */
  readonly rejectedPolicies?: readonly ParsedPolicy[];
}
