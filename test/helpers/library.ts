/**
 * Harness for the CEL library unit tests: call an overload's implementation directly, as the
 * evaluator would after dispatch, without going through the parser and compiler.
 */
import assert from "node:assert/strict";
import { setCodegenMode } from "../../src/cel/configure.ts";
import {
  ADMISSION_VARIABLES,
  compile,
  createEnvironment,
  EvalState,
  run,
  toCel,
} from "../../src/cel/index.ts";
import type { CallContext, Library, Overload, TypeTag } from "../../src/cel/library/types.ts";
import { compileRegex } from "../../src/cel/regex/index.ts";
import { CelError, type CelValue } from "../../src/cel/runtime/values.ts";
import { canonOurs } from "./differential.ts";

export { evaluate } from "../../src/cel/index.ts";

// Overload signatures are typed `never[]` so each library can be precise; tests call them with any value.
type Fn = (...args: unknown[]) => CelValue;
type CostFn = (...args: unknown[]) => number;

/**
 * A CallContext with no cost limit. Without `regex` it refuses to compile patterns, so a library
 * that should need none fails loudly if it asks; with it, patterns go to the real RE2 engine.
 */
export function stubContext(options: { readonly regex?: boolean } = {}): CallContext {
  return {
    regex: options.regex
      ? compileRegex
      : () => {
          throw new Error("this library compiles no regular expressions");
        },
    addCost: () => {},
    checkDeadline: () => {},
  };
}

function invoke(o: Overload, args: readonly CelValue[], ctx: CallContext): CelValue {
  return (o.impl as unknown as Fn)(...args, ctx);
}

/** The extra cost an overload declares for these arguments, or 0 when it declares none. */
function extraCost(o: Overload, args: readonly CelValue[]): number {
  const c = o.cost as unknown as CostFn | undefined;
  return c ? c(...args) : 0;
}

export interface LibraryHarness {
  /** The overload `id` of function `name`; fails the test when either is not declared. */
  overload(name: string, id: string): Overload;
  call(name: string, id: string, ...args: CelValue[]): CelValue;
  /** The cost the overload adds beyond the base cost of 1 (0 when it declares none). */
  cost(name: string, id: string, ...args: CelValue[]): number;
}

/** Looks overloads up by function name and overload id in one library. */
export function libraryHarness(library: Library, ctx: CallContext = stubContext()): LibraryHarness {
  const overload = (name: string, id: string): Overload => {
    const decl = library.functions.find((f) => f.name === name);
    assert.ok(decl, `function ${name} is declared`);
    const o = decl.overloads.find((x) => x.id === id);
    assert.ok(o, `overload ${id} of ${name} is declared`);
    return o;
  };
  return {
    overload,
    call: (name, id, ...args) => invoke(overload(name, id), args, ctx),
    cost: (name, id, ...args) => extraCost(overload(name, id), args),
  };
}

export interface OverloadTable {
  /** The overload `id`; fails the test when no library declares it. */
  overload(id: string): Overload;
  call(id: string, ...args: CelValue[]): CelValue;
  /** The cost the overload adds beyond the base cost of 1 (0 when it declares none). */
  cost(id: string, ...args: CelValue[]): number;
}

/** Looks overloads up by id alone, across libraries; an earlier library wins a shared id. */
export function overloadsById(
  libraries: readonly Library[],
  ctx: CallContext = stubContext(),
): OverloadTable {
  const byId = new Map<string, Overload>();
  for (const lib of libraries)
    for (const decl of lib.functions) for (const o of decl.overloads) if (!byId.has(o.id)) byId.set(o.id, o);
  const overload = (id: string): Overload => {
    const o = byId.get(id);
    assert.ok(o, `no overload ${id}`);
    return o;
  };
  return {
    overload,
    call: (id, ...args) => invoke(overload(id), args, ctx),
    cost: (id, ...args) => extraCost(overload(id), args),
  };
}

/** The message of the CelError that `f` throws; fails the test if it throws nothing or something else. */
export function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof CelError, `expected a CelError, got ${String(e)}`);
    return e.message;
  }
  assert.fail("expected an error");
}

/** Asserts that `f` throws a CelError whose message is `message` (or matches it). */
export function throwsCel(f: () => unknown, message: string | RegExp): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof CelError, `expected CelError, got ${String(e)}`);
    if (typeof message === "string") assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

/** What one evaluation gave: its value as `canonOurs` prints it, or its error, and its cost. */
export type TierOutcome =
  | { readonly ok: true; readonly value: CelValue; readonly shown: string; readonly cost: number }
  | { readonly ok: false; readonly error: string; readonly cost: number };

let tierRuns = 0;

/** Extra variables, and the Kubernetes release of the environment (the newest by default). */
export interface TierOptions {
  readonly variables?: Readonly<Record<string, TypeTag>>;
  readonly env?: { readonly kubernetesVersion?: string };
}

/**
 * Evaluates `source` once with the closures and once with generated code, asserts the two agree
 * (value, error and cost), and returns the outcome. Each call compiles afresh (the source gets a
 * run of spaces of its own, so the program cache cannot hand back a program of the other tier).
 */
export function evaluateBothTiers(
  source: string,
  bindings: Record<string, unknown> = {},
  options: TierOptions = {},
): TierOutcome {
  const env = createEnvironment({
    variables: { ...ADMISSION_VARIABLES, ...(options.variables ?? {}) },
    extras: { bind: true, math: true, base64: true },
    ...(options.env?.kubernetesVersion !== undefined
      ? { kubernetesVersion: options.env.kubernetesVersion }
      : {}),
  });
  const values: Record<string, CelValue> = {};
  for (const [k, v] of Object.entries(bindings)) values[k] = toCel(v);
  const outcomes = (["never", "always"] as const).map((mode): TierOutcome => {
    const before = setCodegenMode(mode);
    try {
      tierRuns++;
      const compiled = compile(`${source}${" ".repeat(tierRuns)}`, env);
      if (!compiled.ok) assert.fail(`${source}: ${compiled.problems.map((p) => p.rendered).join("\n")}`);
      const st = new EvalState(10_000_000, performance.now() + 10_000);
      const r = run(compiled.program, { values }, st);
      return r.ok
        ? { ok: true, value: r.value, shown: canonOurs(r.value), cost: r.cost }
        : { ok: false, error: r.error.message, cost: r.cost };
    } finally {
      setCodegenMode(before);
    }
  });
  const [closures, generated] = outcomes as [TierOutcome, TierOutcome];
  const strip = (o: TierOutcome) => (o.ok ? { shown: o.shown, cost: o.cost } : o);
  assert.deepEqual(strip(generated), strip(closures), `${source}: generated code agrees with the closures`);
  return closures;
}

/** The value `source` gives in both tiers; fails the test on an error. */
export function valueInBothTiers(
  source: string,
  bindings: Record<string, unknown> = {},
  options: TierOptions = {},
): CelValue {
  const o = evaluateBothTiers(source, bindings, options);
  if (!o.ok) assert.fail(`${source}: ${o.error}`);
  return o.value;
}

/** The error `source` gives in both tiers; fails the test on a value. */
export function errorInBothTiers(
  source: string,
  bindings: Record<string, unknown> = {},
  options: TierOptions = {},
): string {
  const o = evaluateBothTiers(source, bindings, options);
  if (o.ok) assert.fail(`${source}: expected an error, got ${o.shown}`);
  return o.error;
}
