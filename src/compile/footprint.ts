/**
 * What a compiled policy set will keep on the heap, estimated from the parsed set before it is
 * compiled, so that a set too large for the process can be refused before compiling it exhausts the
 * heap (sources/memory-budget.ts). The figures are calibrated by `npm run bench -- memory`, which
 * prints the estimate beside what a set keeps; the estimate must stay above it.
 */
import type { ParsedPolicy, PolicySet } from "../policy/types.ts";
import { expressionSources } from "./policy.ts";

/** Bytes a policy keeps besides its expressions (its parsed form and source map, match, binding, sequence). */
export const POLICY_BYTES = 24 * 1024;
/** Bytes an expression keeps whatever its length (its program, compiled form and paths). */
export const EXPRESSION_BYTES = 6 * 1024;
/**
 * Bytes per character of an expression's source: its parsed tree and the closures planned from it
 * grow with its length, and dominate for any expression longer than a field comparison.
 */
export const SOURCE_CHAR_BYTES = 144;

/** The estimate for one policy. */
export function estimatePolicyBytes(policy: ParsedPolicy): number {
  let bytes = POLICY_BYTES;
  for (const source of expressionSources(policy))
    bytes += EXPRESSION_BYTES + SOURCE_CHAR_BYTES * source.length;
  return bytes;
}

export interface SetEstimate {
  /** The whole set's estimate, in bytes. */
  readonly bytes: number;
  /** How many CEL expressions the set holds. */
  readonly expressions: number;
}

/** The estimate for a parsed set: the sum of its policies'. */
export function estimateSetBytes(set: PolicySet): SetEstimate {
  let bytes = 0;
  let expressions = 0;
  for (const p of set.policies) {
    bytes += estimatePolicyBytes(p);
    expressions += expressionSources(p).length;
  }
  return { bytes, expressions };
}
