/**
 * One expression in both evaluation tiers (closures, and generated code given JSON input), held to
 * the same value, error, position and cost: the tests of a run-time rule call this so that the
 * rule is checked where both tiers implement it (plan/<kind>.ts closure and emitter). The closures
 * `test --coverage` counts with (plan/coverage.ts) are held to the same outcome too.
 */
import assert from "node:assert/strict";
import { setCodegenMode } from "../../src/cel/configure.ts";
import {
  ADMISSION_VARIABLES,
  type CelEnvironment,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  run,
} from "../../src/cel/index.ts";
import { canonOurs } from "./differential.ts";

export type TierOutcome =
  | { readonly value: CelValue; readonly cost: number }
  | { readonly error: string; readonly offset: number | undefined; readonly cost: number };

const DEFAULT_ENV = createEnvironment({
  variables: { ...ADMISSION_VARIABLES, x: "dyn", y: "dyn" },
  extras: { bind: true },
});

/**
 * `source` evaluated on `values` (JSON input for the admission variables, as the engine passes it)
 * by the closures and by generated code; fails the test unless both give the same outcome.
 */
export function inBothTiers(
  source: string,
  values: Readonly<Record<string, CelValue>> = {},
  env: CelEnvironment = DEFAULT_ENV,
  costLimit = 1_000_000,
): TierOutcome {
  const outcomes = (["never", "always"] as const).map((mode) => {
    const before = setCodegenMode(mode);
    try {
      // A different source per tier: the compile cache must not hand one tier's program to the other.
      const c = compile(`${source}${mode === "never" ? " " : "  "}`, env);
      if (!c.ok) assert.fail(`${source}: ${c.problems.map((p) => p.rendered).join("\n")}`);
      const r = run(c.program, { values, json: true }, new EvalState(costLimit, performance.now() + 10_000));
      if (mode === "always") assert.equal(c.program.generated({ json: true }), true, `${source}: generated`);
      return r.ok
        ? { value: r.value, cost: r.cost }
        : { error: r.error.message, offset: r.error.offset, cost: r.cost };
    } finally {
      setCodegenMode(before);
    }
  });
  const [closures, generated] = outcomes as [TierOutcome, TierOutcome];
  const canon = (o: TierOutcome) => ("value" in o ? { ...o, value: canonOurs(o.value) } : o);
  assert.deepEqual(canon(generated), canon(closures), `${source}: generated code and closures`);
  const counted = compile(source, env, undefined, undefined, { coverage: true });
  if (!counted.ok)
    assert.fail(`${source}: with coverage: ${counted.problems.map((p) => p.rendered).join("\n")}`);
  const r = run(
    counted.program,
    { values, json: true },
    new EvalState(costLimit, performance.now() + 10_000),
  );
  const withCoverage: TierOutcome = r.ok
    ? { value: r.value, cost: r.cost }
    : { error: r.error.message, offset: r.error.offset, cost: r.cost };
  assert.deepEqual(canon(withCoverage), canon(closures), `${source}: counted closures and closures`);
  return closures;
}

/** The value of `source` in both tiers (see inBothTiers); fails the test on an error. */
export function valueInBothTiers(
  source: string,
  values: Readonly<Record<string, CelValue>> = {},
  env?: CelEnvironment,
): CelValue {
  const o = inBothTiers(source, values, env);
  if (!("value" in o)) assert.fail(`${source}: ${o.error}`);
  return o.value;
}

/** The error message of `source` in both tiers (see inBothTiers); fails the test on a value. */
export function errorInBothTiers(
  source: string,
  values: Readonly<Record<string, CelValue>> = {},
  env?: CelEnvironment,
): string {
  const o = inBothTiers(source, values, env);
  if ("value" in o) assert.fail(`${source}: expected an error, got ${canonOurs(o.value)}`);
  return o.error;
}
