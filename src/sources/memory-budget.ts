/**
 * Whether a policy set fits in the process's heap, asked before it is compiled (issue 37 item 5): a
 * set too large for the heap must be refused with a diagnostic while the last good set keeps serving,
 * not compiled until V8 aborts the process with "heap out of memory".
 *
 * A set's share is half of the heap less what the process needs besides its sets, because during a
 * reload two sets are alive at once (the one serving, and the one compiled to replace it). The same
 * share holds at start, so a set that loads can always be replaced by an edit of the same size. The
 * estimate (compile/footprint.ts) is calibrated above what a set keeps, by `npm run bench -- memory`.
 */
import { getHeapStatistics } from "node:v8";
import { estimatePolicyBytes, estimateSetBytes } from "../compile/footprint.ts";
import type { Diagnostic } from "../errors.ts";
import type { PolicySet } from "../policy/types.ts";

/** The heap the server needs with no policies (code, libraries, tables, the connections' state). */
export const PROCESS_HEAP_BYTES = 48 * 2 ** 20;
/** Kept free for reviews in flight (parsed bodies, activations, decisions) beside the sets. */
export const REQUEST_RESERVE_BYTES = 64 * 2 ** 20;

/** The estimate a policy set may reach in a heap of `heapLimitBytes` (V8's limit of this process by default). */
export function setBudgetBytes(heapLimitBytes: number = getHeapStatistics().heap_size_limit): number {
  return Math.max(0, Math.floor((heapLimitBytes - PROCESS_HEAP_BYTES - REQUEST_RESERVE_BYTES) / 2));
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * A diagnostic when the set's estimate is over `budgetBytes`, located at the policy where the
 * running estimate (in file order) passes the budget; undefined when it fits.
 */
export function memoryProblem(set: PolicySet, budgetBytes: number): Diagnostic | undefined {
  const estimate = estimateSetBytes(set);
  if (estimate.bytes <= budgetBytes) return undefined;
  let total = 0;
  const at = set.policies.find((p) => {
    total += estimatePolicyBytes(p);
    return total > budgetBytes;
  });
  return {
    code: "PE_SET_MEMORY",
    severity: "error",
    message:
      `the policy set would keep about ${mib(estimate.bytes)} of heap (${set.policies.length} policies, ` +
      `${estimate.expressions} expressions), over the ${mib(budgetBytes)} a set may take in this heap ` +
      "(half of V8's heap limit less what the server needs besides its sets); it passes that at this " +
      "policy. The set is not loaded: split it, or give the process more heap (--max-old-space-size)",
    ...(at ? { path: "metadata.name", location: at.source.locate("metadata.name") } : {}),
    ...(at ? { object: { kind: at.kind, name: at.name } } : {}),
  };
}
