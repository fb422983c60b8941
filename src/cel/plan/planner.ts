/**
 * The planner: walks a parsed expression once, giving each node to its kind's file (plan/*.ts),
 * which checks it, and returns its closure and, where it has one, its emitter (plan/node.ts).
 * The planner keeps what spans nodes: the scopes and slots of comprehension and bind variables,
 * the variables the expression reads, and which nodes are shared. It plans expressions the type
 * checker (src/cel/check) accepted: what it cannot resolve fails at run time, never at compile time.
 */
import type { CelEnvironment } from "../env/environment.ts";
import type { Expr } from "../syntax/ast.ts";
import { planBind } from "./bind.ts";
import { planCall } from "./call.ts";
import { planComprehension } from "./comprehension.ts";
import type { CoverageHook } from "./coverage.ts";
import { planIdent } from "./ident.ts";
import { planList, planMap } from "./list-map.ts";
import { planConst } from "./literal.ts";
import type { Compiled, PlanContext } from "./node.ts";
import { planSelect } from "./select.ts";
import { type SharedSubexpressions, sharedForm } from "./shared.ts";
import { planStruct } from "./struct.ts";

/** Plans one expression: the scopes and slots of its variables, its shared nodes. */
export class Planner implements PlanContext {
  readonly uses = new Set<string>();
  slotCount = 0;
  /** Comprehension and bind variables in scope: name → slot. */
  private scope: Map<string, number>[] = [];
  readonly accumulators = new Set<number>();
  readonly plainSlots = new Set<number>();
  readonly iterSlots = new Set<number>();

  constructor(
    readonly env: CelEnvironment,
    private readonly shared?: SharedSubexpressions,
    /** Coverage (`test --coverage`): each node's closure counted (coverage.ts); absent, nothing changes. */
    private readonly coverage?: CoverageHook,
  ) {}

  lookupLocal(name: string): number | undefined {
    for (let i = this.scope.length - 1; i >= 0; i--) {
      const slot = this.scope[i]?.get(name);
      if (slot !== undefined) return slot;
    }
    return undefined;
  }

  newSlot(): number {
    return this.slotCount++;
  }

  openScope(names: Map<string, number>): void {
    this.scope.push(names);
  }

  closeScope(): void {
    this.scope.pop();
  }

  plan(e: Expr): Compiled {
    const c = planNode(this, e);
    if (this.coverage !== undefined) return this.coverage.instrument(e, c);
    return this.shared === undefined
      ? c
      : sharedForm(this.shared, e, c, (name) => this.lookupLocal(name) !== undefined);
  }
}

/** A node, by its kind's planner. */
function planNode(p: PlanContext, e: Expr): Compiled {
  switch (e.kind) {
    case "const":
      return planConst(e);
    case "ident":
      return planIdent(p, e.name);
    case "select":
      return planSelect(p, e);
    case "call":
      return planCall(p, e);
    case "list":
      return planList(p, e.elements, e.optionalIndices, e.id);
    case "map":
      return planMap(p, e);
    case "struct":
      return planStruct(p, e);
    case "comprehension":
      return planComprehension(p, e);
    case "bind":
      return planBind(p, e);
  }
}
