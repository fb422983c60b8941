/**
 * Stage 2: parsed policies → compiled policies. Every expression of every policy is compiled once
 * here, its result type checked, and every problem collected (not just the first), so `check`,
 * `eval`, `test` and `serve` all report the same list.
 */
import {
  ADMISSION_VARIABLES,
  admissionCheckEnv,
  type CelType,
  type CheckEnv,
  type CheckSpec,
  celTypes,
  checkEnvironment,
  DEFAULT_RELEASE,
  unavailableAt,
  type ExpressionKind,
  typeCheck,
  typeString,
  resultTypeIssue,
  type CelExtras,
  compile,
  createEnvironment,
  EXTRA_NAMES,
  type ExpressionProblem,
  PER_CALL_COST_LIMIT,
  type SharedKeys,
  sequenceOf,
  sharedSubexpressions,
} from "../cel/index.ts";
import type { Diagnostic } from "../errors.ts";
import { KindScopes } from "../kube/scope.ts";
import type { KindSchema } from "../kube/schemas/index.ts";
import {
  customResourceSchemas,
  fieldHint,
  type PolicySchemaTypes,
  policySchemaTypes,
  schemaCheckEnv,
  schemaNote,
  schemaTypeClash,
} from "./schema-typing.ts";
import { PreparedMatch } from "../match/index.ts";
import { unknownResourceWarnings } from "./resources.ts";
import { apiVersionProblem, staticNameProblem } from "./served.ts";
import type {
  MutatingPolicy,
  Mutation,
  ParsedPolicy,
  PolicySet,
  ResourceObject,
  ValidatingPolicy,
} from "../policy/types.ts";

export type {
  CompiledBinding,
  CompiledExpression,
  CompiledMutatingPolicy,
  CompiledMutation,
  CompiledPolicy,
  CompiledPolicySet,
  CompiledValidatingPolicy,
  CompiledValidation,
  CompileOptions,
  PolicyNeeds,
} from "./types.ts";
import type {
  CompiledBinding,
  CompiledCommon,
  CompiledExpression,
  CompiledMutatingPolicy,
  CompiledPolicy,
  CompiledPolicySet,
  CompiledValidatingPolicy,
  CompileOptions,
  PolicyNeeds,
} from "./types.ts";

/** A mutation's expression: its JSONPatch's or its ApplyConfiguration's, as its patchType says. */
function mutationSource(m: Mutation): string {
  return (m.patchType === "JSONPatch" ? m.jsonPatch?.expression : m.applyConfiguration?.expression) ?? "";
}

/** Every CEL expression of a policy, in the order the policy lists them. */
export function expressionSources(policy: ParsedPolicy): string[] {
  const out = [
    ...policy.variables.map((v) => v.expression),
    ...policy.matchConditions.map((m) => m.expression),
  ];
  if (policy.kind === "ValidatingAdmissionPolicy") {
    for (const v of policy.validations) {
      out.push(v.expression);
      if (v.messageExpression !== undefined) out.push(v.messageExpression);
    }
    for (const a of policy.auditAnnotations) out.push(a.valueExpression);
  } else {
    for (const m of policy.mutations) out.push(mutationSource(m));
  }
  return out;
}

/** Per-policy opt-in to non-Kubernetes CEL features: `metadata.annotations["celgate.dev/cel-extras"]: "bind,math"`. */
export const EXTRAS_ANNOTATION = "celgate.dev/cel-extras";

function extrasFor(
  policy: ParsedPolicy,
  base: CelExtras | undefined,
): { extras: CelExtras; problem?: string } {
  const raw = policy.annotations[EXTRAS_ANNOTATION];
  const extras: Record<string, boolean> = { ...(base ?? {}) };
  if (raw === undefined) return { extras };
  const unknown: string[] = [];
  for (const name of raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    if ((EXTRA_NAMES as readonly string[]).includes(name)) extras[name] = true;
    else unknown.push(name);
  }
  return unknown.length
    ? {
        extras,
        problem: `unknown CEL extra ${unknown.map((u) => `"${u}"`).join(", ")}; expected some of ${EXTRA_NAMES.join(", ")}`,
      }
    : { extras };
}

/**
 * The admission variables an expression may name, as the API server declares them (kubernetes
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/compile.go mustBuildEnvs, with the
 * OptionalVariableDeclarations of the policy plugins): `params` only for a policy with a paramKind,
 * `authorizer` and `authorizer.requestResource` in every expression but a messageExpression.
 */
function declaredVariables(hasParams: boolean, hasAuthorizer: boolean): Partial<typeof ADMISSION_VARIABLES> {
  const out: Partial<Record<keyof typeof ADMISSION_VARIABLES, string>> = { ...ADMISSION_VARIABLES };
  if (!hasParams) delete out.params;
  if (!hasAuthorizer) {
    delete out.authorizer;
    delete out["authorizer.requestResource"];
  }
  return out as Partial<typeof ADMISSION_VARIABLES>;
}

/** Checker environments by what makes them differ (PolicyCompiler.checkSpec), bounded. */
const CHECK_ENVS = new Map<string, CheckEnv>();
const CHECK_ENV_LIMIT = 1000;

class PolicyCompiler {
  readonly diagnostics: Diagnostic[] = [];
  /** The variables the compiled expressions read, so far. */
  private readonly uses = new Set<string>();
  /** The policy's variables compiled so far, in order, with their checked types (undefined: failed). */
  private readonly variableTypes: [string, CelType | undefined][] = [];
  /** The same, as the schema-typed pass typed them (schemaWarnings). */
  private readonly typedVariables: [string, CelType | undefined][] = [];
  /** The schema-typed pass's type of the last expression. */
  private lastTyped: CelType | undefined;
  /** `object`'s and `params`' schema types, when asked for and either kind has a schema. */
  private readonly schema: PolicySchemaTypes | undefined;
  constructor(
    private readonly policy: ParsedPolicy,
    private readonly extras: CelExtras,
    /** Canonical keys of the subexpressions this policy's expressions share. */
    private readonly shared: SharedKeys,
    private readonly kubernetesVersion: string | undefined,
    /** The custom resources' schemas when schema typing is asked for, else undefined. */
    schemaTyping: readonly KindSchema[] | undefined,
    /** Count what each expression's runs cover (CompileOptions.coverage). */
    readonly covering = false,
  ) {
    this.schema = schemaTyping && policySchemaTypes(policy, schemaTyping);
  }

  /** Records a compiled variable, which the expressions after it see with its checked type. */
  addVariable(name: string, e: CompiledExpression): void {
    this.variableTypes.push([name, e.checkedType]);
    this.typedVariables.push([name, this.lastTyped ?? e.checkedType]);
  }

  /**
   * An expression that compiled, checked again with `object` typed from its kind's schema
   * (schema-typing.ts): what that finds is a warning, as the API server's type checking warns.
   */
  private schemaWarnings(path: string, source: string, mutation: boolean, authorizer: boolean): void {
    this.lastTyped = undefined;
    const schema = this.schema;
    if (schema === undefined) return;
    const env = schemaCheckEnv(schema, {
      params: this.policy.paramKind === undefined ? null : celTypes.DYN,
      variables: this.typedVariables,
      mutation,
      extras: this.extras,
      kubernetesVersion: this.kubernetesVersion,
      authorizer,
    });
    schema.misses.length = 0;
    const r = typeCheck(source, this.extras.bind === true, env);
    this.lastTyped = r.type;
    const note = schemaNote(schema);
    for (const p of r.problems) {
      if (this.policy.kind === "MutatingAdmissionPolicy" && p.operands && schemaTypeClash(p.operands))
        continue;
      const hint = fieldHint(schema, p.message);
      const rendered = `${p.rendered}\n${note}${hint === undefined ? "" : `\nhint: ${hint}`}`;
      this.report(path, { ...p, rendered }, "warning");
    }
  }

  /**
   * The checker environment of the policy's next expression, as Kubernetes builds it (admission
   * compile.go, composition.go): `params` dyn when the policy has a paramKind and undeclared
   * otherwise, the variables before it typed by their expressions, `Object`/`JSONPatch` for mutations,
   * and `authorizer` in every expression but a messageExpression (validating/plugin.go).
   */
  private checkSpec(mutation: boolean, authorizer: boolean, seesVariables: boolean): CheckSpec {
    const params = this.policy.paramKind === undefined ? null : celTypes.DYN;
    const variables = seesVariables ? this.variableTypes : [];
    const vars = variables.map(([n, t]) => `${n}:${t === undefined ? "-" : typeString(t)}`);
    const key = JSON.stringify([
      this.kubernetesVersion ?? "",
      params !== null,
      mutation,
      authorizer,
      seesVariables,
      vars,
    ]);
    // Policies share environments (most have the same variables, or none): each is built once.
    const cacheKey = `${key}\u0000${JSON.stringify(this.extras)}`;
    let env = CHECK_ENVS.get(cacheKey);
    if (env === undefined) {
      env = admissionCheckEnv({
        params,
        authorizer,
        declareVariables: seesVariables,
        variables,
        mutation,
        extras: this.extras,
        // The release's new-expression environment (cel/env/releases.ts), not the release's own.
        ...checkEnvironment(this.kubernetesVersion),
      });
      if (CHECK_ENVS.size >= CHECK_ENV_LIMIT) CHECK_ENVS.clear();
      CHECK_ENVS.set(cacheKey, env);
    }
    return { env, key };
  }

  private report(
    path: string,
    problem: ExpressionProblem | { code: "PE_CEL_TYPE"; message: string; rendered: string },
    severity: "error" | "warning" = "error",
  ): void {
    // At the faulty sub-expression, on its own line of a multi-line expression, where known.
    const src = this.policy.source;
    const offset = "offset" in problem ? problem.offset : undefined;
    const loc = offset !== undefined && src.locateWithin ? src.locateWithin(path, offset) : src.locate(path);
    // A function the release's new expressions lack says when it arrives (cel/check/arrival.ts).
    const name = /^undeclared reference to '([^']+)'/.exec(problem.message)?.[1];
    const why =
      name === undefined ? undefined : unavailableAt(name, this.kubernetesVersion ?? DEFAULT_RELEASE);
    this.diagnostics.push({
      code: problem.code,
      severity,
      message: why === undefined ? problem.message : `${problem.message}: ${why}`,
      path,
      location: loc,
      detail: problem.rendered,
      object: { kind: this.policy.kind, name: this.policy.name },
    });
  }

  expr(
    path: string,
    source: string,
    policyVariables: readonly string[],
    kind: ExpressionKind,
    mutation = false,
    authorizer = true,
  ): CompiledExpression {
    // A matchCondition cannot name `variables`: the API server validates it with its stateless
    // compiler, which declares none (admissionregistration validation.go
    // validateMatchConditionsExpression), and refuses the policy otherwise.
    const seesVariables = kind !== "matchCondition";
    const env = createEnvironment({
      variables: declaredVariables(this.policy.paramKind !== undefined, authorizer),
      ...(seesVariables ? { policyVariables } : {}),
      extras: this.extras,
      ...(mutation ? { structTypes: ["Object", "JSONPatch"] } : {}),
      // The release decides the run time as well as the checker (releases.ts RuntimeSwitches).
      ...(this.kubernetesVersion !== undefined ? { kubernetesVersion: this.kubernetesVersion } : {}),
    });
    const booleanResult = kind === "matchCondition" || kind === "validation";
    const r = compile(source, env, this.shared, this.checkSpec(mutation, authorizer, seesVariables), {
      coverage: this.covering,
      booleanResult,
    });
    if (!r.ok) {
      for (const p of r.problems) this.report(path, p);
      return {
        path,
        source,
        program: undefined,
        compileError: (r.problems[0]?.rendered ?? "").split("\n")[0] ?? "",
      };
    }
    for (const u of r.program.uses) this.uses.add(u);
    // Kubernetes' result type rule (admission/plugin/cel/compile.go CompileCELExpression).
    const message = resultTypeIssue(kind, r.checkedType);
    if (message !== undefined) {
      this.report(path, { code: "PE_CEL_TYPE", message, rendered: message });
      return { path, source, program: undefined, compileError: message };
    }
    this.schemaWarnings(path, source, mutation, authorizer);
    return {
      path,
      source,
      program: r.program,
      env,
      checkedType: r.checkedType,
      ...(r.coverage !== undefined ? { coverage: r.coverage } : {}),
    };
  }

  /** What the policy's expressions need; call it once they are all compiled. */
  needs(): PolicyNeeds {
    const u = this.uses;
    return {
      request: u.has("request"),
      namespaceObject: u.has("namespaceObject"),
      authorizer: u.has("authorizer"),
      requestResource: u.has("authorizer.requestResource"),
      memo: this.shared.size,
    };
  }
}

/** Compiles one policy. Never throws; problems are in `diagnostics`. */
export function compilePolicy(
  policy: ParsedPolicy,
  options: CompileOptions = {},
  /** The custom resources' schemas for schema typing (compilePolicySet reads them once per set). */
  crds: readonly KindSchema[] = [],
): CompiledPolicy {
  const { extras, problem } = extrasFor(policy, options.extras);
  // With coverage, every expression computes its own subexpressions, so each place counts its runs.
  const shared =
    options.shareSubexpressions === false || options.coverage === true
      ? new Map<string, number>()
      : sharedSubexpressions(expressionSources(policy), extras.bind === true);
  const c = new PolicyCompiler(
    policy,
    extras,
    shared,
    options.kubernetesVersion,
    options.schemaTyping === true ? crds : undefined,
    options.coverage === true,
  );
  const served = options.kubernetesVersion && apiVersionProblem(policy, options.kubernetesVersion);
  if (served) c.diagnostics.push(served);
  const reserved = options.kubernetesVersion && staticNameProblem(policy, options.kubernetesVersion);
  if (reserved) c.diagnostics.push(reserved);
  if (problem) {
    c.diagnostics.push({
      code: "PE_FIELD_VALUE",
      severity: "error",
      message: problem,
      path: `metadata.annotations.${EXTRAS_ANNOTATION}`,
      location: policy.source.locate(`metadata.annotations.${EXTRAS_ANNOTATION}`),
      object: { kind: policy.kind, name: policy.name },
    });
  }
  // Variables may be of any type; each is typed by its expression for those after it.
  const variableNames: string[] = [];
  const variables = policy.variables.map((v, i) => {
    const expression = c.expr(
      `spec.variables[${i}].expression`,
      v.expression,
      [...variableNames],
      "variable",
    );
    variableNames.push(v.name);
    c.addVariable(v.name, expression);
    return { name: v.name, expression };
  });
  const names = variableNames;
  const matchConditions = policy.matchConditions.map((m, i) => ({
    name: m.name,
    expression: c.expr(`spec.matchConditions[${i}].expression`, m.expression, names, "matchCondition"),
  }));
  const variableIndex = new Map(variableNames.map((n, i) => [n, i] as const));
  const common = {
    name: policy.name,
    failurePolicy: policy.failurePolicy,
    matchConditions,
    variables,
    variableIndex,
    match: new PreparedMatch(policy.matchConstraints),
  };
  if (policy.kind === "ValidatingAdmissionPolicy") return compileValidating(c, policy, common, names);
  return compileMutating(c, policy, common, names);
}

/** What every compiled policy has, whatever its kind, before its needs and diagnostics are known. */
type Common = Omit<CompiledCommon, "needs" | "diagnostics">;

/** A validating policy's validations and audit annotations; its validations also as one sequence. */
function compileValidating(
  c: PolicyCompiler,
  policy: ValidatingPolicy,
  common: Common,
  names: readonly string[],
): CompiledValidatingPolicy {
  const validations = policy.validations.map((v, i) => ({
    index: i,
    expression: c.expr(`spec.validations[${i}].expression`, v.expression, names, "validation"),
    message: v.message,
    messageExpression:
      v.messageExpression === undefined
        ? undefined
        : // The API server compiles messageExpressions without the authorizer (validating/plugin.go).
          c.expr(
            `spec.validations[${i}].messageExpression`,
            v.messageExpression,
            names,
            "messageExpression",
            false,
            false,
          ),
    reason: v.reason ?? "Invalid",
  }));
  const auditAnnotations = policy.auditAnnotations.map((a, i) => ({
    key: a.key,
    expression: c.expr(
      `spec.auditAnnotations[${i}].valueExpression`,
      a.valueExpression,
      names,
      "auditAnnotation",
    ),
  }));
  const programs = validations.flatMap((v) => (v.expression.program ? [v.expression.program] : []));
  return {
    ...common,
    kind: policy.kind,
    policy,
    validations,
    // With coverage the validations run one by one, as the closures that count them.
    sequence:
      programs.length === validations.length && !c.covering
        ? sequenceOf(programs, PER_CALL_COST_LIMIT)
        : undefined,
    auditAnnotations,
    needs: c.needs(),
    diagnostics: c.diagnostics,
  };
}

/** A mutating policy's mutations, each checked for the result type its patchType takes. */
function compileMutating(
  c: PolicyCompiler,
  policy: MutatingPolicy,
  common: Common,
  names: readonly string[],
): CompiledMutatingPolicy {
  const mutations = policy.mutations.map((m, i) => {
    const isPatch = m.patchType === "JSONPatch";
    const field = isPatch ? "jsonPatch" : "applyConfiguration";
    return {
      index: i,
      patchType: m.patchType,
      expression: c.expr(
        `spec.mutations[${i}].${field}.expression`,
        mutationSource(m),
        names,
        isPatch ? "jsonPatch" : "applyConfiguration",
        true,
      ),
    };
  });
  return { ...common, kind: policy.kind, policy, mutations, needs: c.needs(), diagnostics: c.diagnostics };
}

/** Compiles a whole set: policies, then bindings joined to their policies. */
export function compilePolicySet(set: PolicySet, options: CompileOptions = {}): CompiledPolicySet {
  const crds = crdSchemas(set, options);
  return assembleSet(
    set,
    options,
    crds,
    set.policies.map((p) => compilePolicy(p, options, crds.kinds)),
  );
}

/**
 * compilePolicySet in slices: `pause` is asked after each policy and may return a promise to wait
 * for (a turn of the event loop), so a server that reloads a large set goes on answering between
 * policies. The result is the same as compilePolicySet's.
 */
export async function compilePolicySetSliced(
  set: PolicySet,
  options: CompileOptions,
  pause: () => Promise<void> | undefined,
): Promise<CompiledPolicySet> {
  const crds = crdSchemas(set, options);
  const policies: CompiledPolicy[] = [];
  for (const p of set.policies) {
    policies.push(compilePolicy(p, options, crds.kinds));
    await pause();
  }
  return assembleSet(set, options, crds, policies);
}

function crdSchemas(set: PolicySet, options: CompileOptions) {
  return options.schemaTyping
    ? customResourceSchemas([...set.resources, ...(options.crds ?? [])])
    : { kinds: [], diagnostics: [] };
}

function assembleSet(
  set: PolicySet,
  options: CompileOptions,
  crds: ReturnType<typeof crdSchemas>,
  policies: readonly CompiledPolicy[],
): CompiledPolicySet {
  const byKey = new Map(policies.map((p) => [`${p.kind}/${p.name}`, p]));
  const bindings: CompiledBinding[] = [];
  const bound = new Set<CompiledPolicy>();
  for (const b of set.bindings) {
    const kind =
      b.kind === "ValidatingAdmissionPolicyBinding" ? "ValidatingAdmissionPolicy" : "MutatingAdmissionPolicy";
    const policy = byKey.get(`${kind}/${b.policyName}`);
    // A binding to an unknown policy is reported by the parser's reference check; it binds nothing.
    if (!policy) continue;
    bindings.push({ binding: b, policy, match: new PreparedMatch(b.matchResources) });
    bound.add(policy);
  }
  const unbound = policies.filter((p) => !bound.has(p));
  const release = options.kubernetesVersion;
  return {
    policies,
    bindings,
    unbound,
    resources: set.resources,
    diagnostics: [
      ...crds.diagnostics,
      ...policies.flatMap((p) => p.diagnostics),
      ...rejectedPolicyCelErrors(set, options),
      ...paramScopeWarnings(set, bindings, options.crds ?? []),
      ...unknownResourceWarnings(set.policies, set.bindings, [...set.resources, ...(options.crds ?? [])]),
      ...(release === undefined
        ? []
        : set.bindings.flatMap((b) =>
            [apiVersionProblem(b, release), staticNameProblem(b, release)].filter((d) => d !== undefined),
          )),
    ],
  };
}

/**
 * The CEL errors of the policies left out for structural errors: the API server validates a
 * policy's fields and compiles its expressions in one pass (validation.go), so a bad failurePolicy
 * and a syntax error are refused together. Only CEL errors: schema typing is said of the policies
 * that load, and the document's own problems are the parser's.
 */
function rejectedPolicyCelErrors(set: PolicySet, options: CompileOptions): Diagnostic[] {
  const plain: CompileOptions = { ...options, schemaTyping: false };
  return (set.rejectedPolicies ?? []).flatMap((p) =>
    compilePolicy(p, plain, []).diagnostics.filter(
      (d) => d.severity === "error" && d.code.startsWith("PE_CEL_"),
    ),
  );
}

/**
 * A paramKind celgate cannot place: not a built-in kind, and no CustomResourceDefinition for it among
 * the files. Its params are looked up as a namespaced kind's (policy_dispatcher.go CollectParams reads
 * the scope from the API server's REST mapping), and `check` says so. Only a binding's paramRef looks
 * params up, so a policy no binding with a paramRef names gets no warning: nothing is assumed for it.
 */
function paramScopeWarnings(
  set: PolicySet,
  bindings: readonly CompiledBinding[],
  crds: readonly ResourceObject[],
): Diagnostic[] {
  const scopes = KindScopes.from([...set.resources, ...crds].map((r) => r.object));
  const lookedUp = new Set(bindings.filter((b) => b.binding.paramRef).map((b) => b.policy.policy));
  const out: Diagnostic[] = [];
  for (const p of set.policies) {
    if (!lookedUp.has(p)) continue;
    const kind = p.paramKind;
    if (!kind || scopes.of(kind.apiVersion, kind.kind).source !== "assumed") continue;
    out.push({
      code: "PE_PARAM_SCOPE",
      severity: "warning",
      message: `paramKind ${kind.apiVersion} ${kind.kind} is not a built-in kind and no CustomResourceDefinition for it is loaded: its params are taken to be namespaced`,
      path: "spec.paramKind",
      location: p.source.locate("spec.paramKind"),
      object: { kind: p.kind, name: p.name },
    });
  }
  return out;
}
