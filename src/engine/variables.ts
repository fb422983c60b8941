/**
 * What a policy's expressions read: the activation (the request's variables, params, the working
 * object of a mutation) and the policy's own `variables`, each evaluated lazily, at most once.
 */
import {
  type Activation,
  CelError as CelErrorLike,
  type CelValue,
  type MemoEntry,
  type VariableResolver,
} from "../cel/index.ts";
import type { CompiledPolicy, PolicyNeeds } from "../compile/policy.ts";
import { type Evaluation, ExprFailure, runExpr, step, toOutcome } from "./evaluate.ts";
import type { PreparedRequest } from "./prepare.ts";

/** Lazily evaluates a policy's variables, each at most once, errors surfacing only where used. */
export class LazyVariables implements VariableResolver {
  /** Each variable's value, or the failure it ended in; undefined until it is first read. */
  private readonly outcomes: (CelValue | ExprFailure | undefined)[];
  constructor(
    private readonly policy: CompiledPolicy,
    private readonly ev: Evaluation,
    private readonly act: () => Activation,
  ) {
    this.outcomes = new Array(policy.variables.length);
  }
  get(name: string, index: number): CelValue {
    // The compiler's index is the position in policy.variables: compilePolicy gives every
    // expression an environment listing the variables in that order (the parser keeps their names
    // unique). The names are not compared as well: the policy's names are not V8's internalised
    // strings, the compiled literals are, so a comparison would not be a pointer test.
    const i = index >= 0 && index < this.outcomes.length ? index : this.policy.variableIndex.get(name);
    if (i === undefined) throw new CelErrorLike(`no such variable: ${name}`);
    let hit = this.outcomes[i];
    if (hit === undefined) {
      const v = this.policy.variables[i] as CompiledPolicy["variables"][number];
      // The variable runs as its own call, under its own per-call limit (runExpr sets it), as each
      // composited variable is its own program in Kubernetes. Its cost counts towards the budget but
      // not towards the per-call limit of the expression reading it: that limit moves up by as much.
      // Its value is kept as it came (no result object): a Pod Security policy reads a dozen.
      const ev = this.ev;
      const st = ev.state;
      const readerLimit = st.costLimit;
      const before = st.cost;
      hit = runExpr(ev, v.expression, this.act());
      if (ev.recording) step(ev, "variable", name, v.expression, toOutcome(hit, st.cost - before));
      st.costLimit = Math.min(readerLimit + (st.cost - before), ev.budgetEnd);
      this.outcomes[i] = hit;
    }
    // The using expression fails with the variable's own error (its per-call cost limit too),
    // worded as Kubernetes' variableAccessor words it (admission/plugin/cel/composition.go,
    // Callback). A failure without a cause (the policy's budget spent, the deadline passed) is
    // not the variable's program failing, and keeps its own words.
    if (hit instanceof ExprFailure)
      throw new CelErrorLike(
        hit.cause === undefined
          ? hit.message
          : `composited variable "${name}" fails to evaluate: ${hit.cause}`,
        hit.kind === "cost" || hit.kind === "timeout" ? hit.kind : "runtime",
      );
    return hit;
  }
}

/**
 * The variables of one policy evaluation. A class with the getter on its prototype: an object
 * literal spread from the prepared values with a getter of its own is rebuilt per policy, which
 * the webhook would pay several times per review.
 */
class PolicyActivation implements Activation {
  /**
   * Shared subexpressions' values (cel/plan/shared.ts), for this evaluation's expressions only; none
   * for a policy whose expressions share nothing.
   */
  readonly memo: (MemoEntry | undefined)[] | undefined;
  /**
   * The request's objects are JSON as the webhook's JSON.parse or the CLI's YAML made them, a
   * mutated object is toJson's output (mutate.ts), `request` is built of the decoded request's
   * parts (requestValue), and params and namespaces are loaded resources. One gap: a document
   * that declares `%YAML 1.1` gets that schema's timestamps, binaries and sets (Date, Buffer, Set),
   * which are not JSON; the loaders pass them through as they are.
   */
  readonly json = true;
  constructor(
    readonly values: Readonly<Record<string, CelValue>>,
    private readonly resolver: () => VariableResolver,
    memo: number,
  ) {
    this.memo = memo > 0 ? new Array<MemoEntry | undefined>(memo) : undefined;
  }
  get variables(): VariableResolver {
    return this.resolver();
  }
}

export function activation(
  prepared: PreparedRequest,
  needs: PolicyNeeds,
  params: CelValue,
  object: CelValue | undefined,
  vars: () => VariableResolver,
): Activation {
  return new PolicyActivation(prepared.values(needs, params, object), vars, needs.memo);
}

/** For a policy without variables: every name is unknown (the compiler has already said so). */
const NO_VARIABLES: VariableResolver = {
  get(name) {
    throw new CelErrorLike(`no such variable: ${name}`);
  },
};
const noVariables = () => NO_VARIABLES;

/** A validating policy's activation, its variables evaluated lazily against it (when it has any). */
export function validationActivation(
  prepared: PreparedRequest,
  policy: CompiledPolicy,
  ev: Evaluation,
  params: CelValue,
  needs: PolicyNeeds = policy.needs,
): Activation {
  if (policy.variables.length === 0) return activation(prepared, needs, params, undefined, noVariables);
  let resolver: VariableResolver | undefined;
  const act = activation(prepared, needs, params, undefined, () => resolver as VariableResolver);
  resolver = new LazyVariables(policy, ev, () => act);
  return act;
}

/**
 * The activation of a validating policy's messageExpressions and audit annotations, as the API
 * server binds it (validating/validator.go: their filters get no Authorizer): without `authorizer`,
 * and with the variables evaluated afresh against it (each filter composites its own), so that a
 * variable that checks the authorizer is an error there. Only a policy that reads the authorizer
 * can tell the difference; every other one shares the validations' activation (`act`).
 */
export function expressionActivation(
  prepared: PreparedRequest,
  policy: CompiledPolicy,
  ev: Evaluation,
  params: CelValue,
  act: Activation,
): Activation {
  if (!policy.needs.authorizer && !policy.needs.requestResource) return act;
  const needs = { ...policy.needs, authorizer: false, requestResource: false };
  return validationActivation(prepared, policy, ev, params, needs);
}
