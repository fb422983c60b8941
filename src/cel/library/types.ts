/**
 * How a function library is declared: tables of overloads, each with the argument types it accepts,
 * its result type (for compile-time checks) and its implementation. The compiler resolves a call
 * against these tables once; at run time the first overload whose argument types match is applied.
 */
import type { TypeTag } from "../runtime/tags.ts";
import type { CelValue } from "../runtime/values.ts";

/** Type tags are defined beside the run-time test of a value against one (runtime/tags.ts). */
export type { TypeTag };

/** Lets work that may run long stop when the evaluation's deadline has passed. */
export interface DeadlineCheck {
  /** Throws the evaluation's timeout CelError once its deadline has passed. */
  checkDeadline(): void;
}

/**
 * A compiled regular expression with RE2 semantics (see regex/index.ts). Given a DeadlineCheck, a
 * long match reads the deadline as it goes and stops with the timeout error.
 */
export interface CelRegex {
  test(text: string, deadline?: DeadlineCheck): boolean;
  /** `test` for a text the caller has found to hold no UTF-16 surrogate (runtime/code-points.ts hasSurrogate). */
  testWithoutSurrogates(text: string, deadline?: DeadlineCheck): boolean;
  /** The first match, or undefined. */
  find(text: string, deadline?: DeadlineCheck): string | undefined;
  /** Up to `limit` matches (all when limit < 0). */
  findAll(text: string, limit: number, deadline?: DeadlineCheck): string[];
}

/** What an implementation may ask of the evaluation it runs in. */
export interface CallContext extends DeadlineCheck {
  /** Compiles (and caches) a regular expression; throws a CelError for an invalid pattern. */
  regex(pattern: string): CelRegex;
  /** Adds cost for work proportional to the input (cel-go units); may throw when over the limit. */
  addCost(units: number): void;
}

// `never[]` lets each implementation declare the precise parameter types its overload's tags promise.
export type Impl = (...args: never[]) => CelValue;

export interface Overload {
  /** Stable id in cel-go's style (`string_lower_ascii`), used in docs and tests. */
  readonly id: string;
  /** Called as `receiver.name(args)`; the receiver is the first of `args`. */
  readonly member: boolean;
  readonly args: readonly TypeTag[];
  readonly result: TypeTag;
  /** Receives the arguments in order (receiver first), then the CallContext. Throws CelError. */
  readonly impl: Impl;
  /**
   * Cost of the call beyond the base cost of 1, from the arguments (cel-go's runtime cost units,
   * e.g. 0.1 per character traversed). Called after the arguments are known.
   */
  readonly cost?: (...args: never[]) => number;
}

export interface FunctionDecl {
  readonly name: string;
  readonly overloads: readonly Overload[];
}

/** A named set of functions, on by default in the Kubernetes environment or only when asked for. */
export interface Library {
  readonly name: string;
  /**
   * `kubernetes`: part of the API server's admission environment; `extra`: opt-in (cel.bind is a
   * macro and handled elsewhere); `none`: in no environment, a version of a cel-go library newer
   * than any Kubernetes release pins, kept beside its typed declaration (check/decls).
   */
  readonly availability: "kubernetes" | "extra" | "none";
  readonly functions: readonly FunctionDecl[];
}

export function globalFn(
  id: string,
  args: readonly TypeTag[],
  result: TypeTag,
  impl: Impl,
  cost?: Overload["cost"],
): Overload {
  return cost ? { id, member: false, args, result, impl, cost } : { id, member: false, args, result, impl };
}

export function memberFn(
  id: string,
  args: readonly TypeTag[],
  result: TypeTag,
  impl: Impl,
  cost?: Overload["cost"],
): Overload {
  return cost ? { id, member: true, args, result, impl, cost } : { id, member: true, args, result, impl };
}

export function fn(name: string, ...overloads: Overload[]): FunctionDecl {
  return { name, overloads };
}
