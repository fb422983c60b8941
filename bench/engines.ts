/**
 * The evaluators under comparison, set up once: our engine (compiled programs over the plain JSON Pod, read lazily as the engine reads requests) and
 * @bufbuild/cel used plainly (`parse` + `plan`, plain JSON Pod as `object`). Shared by the benchmark and
 * the correctness gate so both run exactly the same code.
 */
import { type CelInput, isCelError, parse, plan, celEnv } from "@bufbuild/cel";
import {
  ADMISSION_VARIABLES,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  type Program,
  run,
} from "../src/cel/index.ts";
import type { Pod } from "./corpus.ts";
import type { Rule } from "./rules.ts";

/** The Kubernetes admission environment, no extras: what a ValidatingAdmissionPolicy gets. */
export const ADMISSION_ENV = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });

/** Cost budget per Pod (one EvalState serves the 20 rules, as one policy evaluation shares one). */
export const POD_COST_LIMIT = 1_000_000;

export function compileRules(rules: readonly Rule[]): Program[] {
  return rules.map((r) => {
    const c = compile(r.cel, ADMISSION_ENV);
    if (!c.ok)
      throw new Error(`rule ${r.name} does not compile:\n${c.problems.map((p) => p.rendered).join("\n")}`);
    return c.program;
  });
}

export function newState(): EvalState {
  return new EvalState(POD_COST_LIMIT, performance.now() + 60_000);
}

/** One evaluation through the public `run`: the boolean, or a description of what else came back. */
export function evalOurs(program: Program, object: CelValue, state: EvalState): boolean | string {
  // The corpus is JSON (parsed, or toCel'd), as the engine's activations promise (Activation.json).
  const r = run(program, { values: { object }, json: true }, state);
  if (!r.ok) return `error: ${r.error.message}`;
  return typeof r.value === "boolean" ? r.value : `non-bool: ${String(r.value)}`;
}

export type BufProgram = (ctx: { object: CelInput }) => unknown;

export function planBufbuild(rules: readonly Rule[]): BufProgram[] {
  const env = celEnv();
  return rules.map((r) => {
    return plan(env, parse(r.bufbuild));
  });
}

/** bufbuild takes the plain JSON Pod as is (JSON numbers become doubles). */
export function bufInput(pod: Pod): CelInput {
  return pod as unknown as CelInput;
}

export function evalBuf(program: BufProgram, pod: Pod): boolean | string {
  const r = program({ object: bufInput(pod) });
  if (typeof r === "boolean") return r;
  if (isCelError(r)) return `error: ${r.message}`;
  return `non-bool: ${String(r)}`;
}
