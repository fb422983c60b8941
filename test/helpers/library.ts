/**
 * Harness for the CEL library unit tests: call an overload's implementation directly, as the
 * evaluator would after dispatch, without going through the parser and compiler.
 */
import assert from "node:assert/strict";
import type { CallContext, Library, Overload } from "../../src/cel/library/types.ts";
import { compileRegex } from "../../src/cel/regex/index.ts";
import { CelError, type CelValue } from "../../src/cel/runtime/values.ts";

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
