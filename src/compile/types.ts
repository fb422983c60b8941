/**
 * What compilation yields: compiled expressions, policies, bindings and the set, and the options it
 * takes. policy.ts compiles; the stages after it read these.
 */
import type {
  CelEnvironment,
  CelExtras,
  CelType,
  ExpressionCoverage,
  Program,
  ProgramSequence,
} from "../cel/index.ts";
import type { Diagnostic } from "../errors.ts";
import type { PreparedMatch } from "../match/index.ts";
import type {
  FailurePolicy,
  MutatingPolicy,
  ParsedBinding,
  PatchType,
  ResourceObject,
  ValidatingPolicy,
  ValidationReason,
} from "../policy/types.ts";

/** One compiled expression and where it came from. `program` is absent when it failed to compile. */
export interface CompiledExpression {
  readonly path: string;
  readonly source: string;
  readonly program: Program | undefined;
  /** Why it did not compile: the first problem, as cel-go renders it (`ERROR: <input>:1:5: ...`). */
  readonly compileError?: string;
  /** The environment it was compiled against, for explaining a false result by its parts. */
  readonly env?: CelEnvironment;
  /** Its type as the checker found it; absent when it failed to compile. */
  readonly checkedType?: CelType;
  /** What its runs covered, when compiled with CompileOptions.coverage. */
  readonly coverage?: ExpressionCoverage;
}

export interface CompiledValidation {
  readonly index: number;
  readonly expression: CompiledExpression;
  readonly message: string | undefined;
  readonly messageExpression: CompiledExpression | undefined;
  readonly reason: ValidationReason;
}

export interface CompiledMutation {
  readonly index: number;
  readonly patchType: PatchType;
  readonly expression: CompiledExpression;
}

/**
 * What evaluating a policy needs built besides `object`, `oldObject` and `params`: the request's
 * variables its expressions name, and a memo when they share subexpressions (cel/plan/shared.ts). The
 * engine builds a request's other variables only for the policies that read them.
 */
export interface PolicyNeeds {
  readonly request: boolean;
  readonly namespaceObject: boolean;
  readonly authorizer: boolean;
  /** `authorizer.requestResource`, a variable of its own. */
  readonly requestResource: boolean;
  /** Places in the memo: how many subexpressions the policy's expressions share (0: no memo). */
  readonly memo: number;
}

export interface CompiledCommon {
  readonly name: string;
  readonly failurePolicy: FailurePolicy;
  readonly matchConditions: readonly { readonly name: string; readonly expression: CompiledExpression }[];
  readonly variables: readonly { readonly name: string; readonly expression: CompiledExpression }[];
  /** Position of each variable in `variables` by name, for `variables.<name>` lookups at evaluation. */
  readonly variableIndex: ReadonlyMap<string, number>;
  readonly needs: PolicyNeeds;
  /** The policy's matchConstraints, ready to ask (the engine skips a policy without them). */
  readonly match: PreparedMatch;
  /** Compile errors of this policy; a policy with any is evaluated as an error (by failurePolicy). */
  readonly diagnostics: readonly Diagnostic[];
}

export interface CompiledValidatingPolicy extends CompiledCommon {
  readonly kind: "ValidatingAdmissionPolicy";
  readonly policy: ValidatingPolicy;
  readonly validations: readonly CompiledValidation[];
  /**
   * The validations' programs as one generated function (cel/sequence.ts), which the engine runs
   * when it records no trace; absent when a validation did not compile.
   */
  readonly sequence: ProgramSequence | undefined;
  readonly auditAnnotations: readonly { readonly key: string; readonly expression: CompiledExpression }[];
}

export interface CompiledMutatingPolicy extends CompiledCommon {
  readonly kind: "MutatingAdmissionPolicy";
  readonly policy: MutatingPolicy;
  readonly mutations: readonly CompiledMutation[];
}

export type CompiledPolicy = CompiledValidatingPolicy | CompiledMutatingPolicy;

export interface CompiledBinding {
  readonly binding: ParsedBinding;
  readonly policy: CompiledPolicy;
  /** The binding's matchResources, ready to ask (absent: selects everything). */
  readonly match: PreparedMatch;
}

/** Everything the engine needs, immutable: a reload builds a new one and swaps it whole. */
export interface CompiledPolicySet {
  readonly policies: readonly CompiledPolicy[];
  readonly bindings: readonly CompiledBinding[];
  /** Policies no binding refers to: loaded and checked, not enforced by the webhook. */
  readonly unbound: readonly CompiledPolicy[];
  readonly resources: readonly ResourceObject[];
  readonly diagnostics: readonly Diagnostic[];
}

export interface CompileOptions {
  /** Opt-in CEL features for every policy (the CLI's `--cel-extras`). */
  readonly extras?: CelExtras;
  /**
   * Compute a subexpression that several of a policy's expressions share once per evaluation
   * (cel/plan/shared.ts; on by default). Off, every expression computes its own: the same decisions and
   * costs, which the tests hold it to.
   */
  readonly shareSubexpressions?: boolean;
  /**
   * The Kubernetes release to compile for, `X.Y` as cel/env/releases.ts's parseRelease accepts it
   * (the default release when absent): a new expression is checked against the environment the API
   * server of that release gives it (checkEnvironment: the release before it, plus what comes with
   * its cel-go). When given, a policy or binding in an API version the release does not serve is a
   * problem, and so is a name the release reserves for manifest-based admission (compile/served.ts);
   * absent, every version and name is accepted.
   */
  readonly kubernetesVersion?: string;
  /**
   * Check every expression of a policy again with `object` typed from the schema of the one kind
   * its matchConstraints name and `params` from its paramKind's (built-in kinds, and custom
   * resources of the CustomResourceDefinitions among the set's objects and `crds`), and report what
   * that finds as warnings (schema-typing.ts; `check`).
   */
  readonly schemaTyping?: boolean;
  /**
   * Count, for each expression, which of its nodes its runs evaluate and which outcomes its branches
   * take (`test --coverage`; CompiledExpression.coverage). Off (the default), nothing is counted and
   * the programs are the ones serving runs: shared, cached and generated.
   */
  readonly coverage?: boolean;
  /** More CustomResourceDefinitions for schema typing (`check --crd`), besides the set's own. */
  readonly crds?: readonly ResourceObject[];
}
