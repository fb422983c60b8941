/**
 * The state of one evaluation: the cost spent so far against its limit, the deadline, and what the
 * function libraries may ask of it (CallContext). The programs of one policy evaluation share one.
 */
// The module's, not the global: reading the global `performance` goes through a lazy getter
// first, a third of a clock read's cost here, and EvalState reads the clock as loops run.
import { performance } from "node:perf_hooks";
import type { CallContext, CelRegex } from "../library/types.ts";
import { compileRegex } from "../regex/index.ts";
import { CelError } from "../runtime/values.ts";
import { COST_LIMIT_MESSAGE, DEADLINE_MESSAGE } from "./limits.ts";

/** Per-evaluation state: cost so far and the limits. Shared by the programs of one policy evaluation. */
export class EvalState implements CallContext {
  cost = 0;
  /** Loop iterations so far across all comprehensions, nested or not; the deadline is read every 256. */
  private ticks = 0;
  constructor(
    public costLimit: number,
    public deadline: number,
  ) {}
  regex(pattern: string): CelRegex {
    return compileRegex(pattern);
  }
  addCost(units: number): void {
    this.cost += units;
    if (this.cost > this.costLimit) throw new CelError(COST_LIMIT_MESSAGE, "cost");
  }
  checkDeadline(): void {
    if (performance.now() > this.deadline) throw new CelError(DEADLINE_MESSAGE, "timeout");
  }
  /** Called once per loop iteration: cheap, and reads the clock often enough for nested loops too. */
  tick(): void {
    if ((++this.ticks & 255) === 0) this.checkDeadline();
  }
}
