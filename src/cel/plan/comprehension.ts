/**
 * Comprehensions: the loop every iterating macro expands to (`all`, `exists`, `exists_one`, `map`,
 * `filter`, `transformList`...), over a list (its elements, or index and element) or a map (its
 * keys, or key and value), and `@append`, the step of `map()` and `filter()`.
 *
 * As in cel-go, the step's error is held in the accumulator rather than thrown, so `exists` goes
 * on after an element fails and a later true element absorbs the error; reading the accumulator
 * rethrows it. Every iteration costs one unit and counts towards the deadline check
 * (EvalState.tick).
 */
import { HeldError, isLimitError, rangeError, withPosition } from "../runtime/errors.ts";
import type { TypeTag } from "../runtime/tags.ts";
import { CelMap, type CelValue, isPlainMap, mapGet, mapKeys } from "../runtime/values.ts";
import type { CallNode, ComprehensionNode, Expr } from "../syntax/ast.ts";
import { charge, elementPath, rethrowLimits } from "./emit.ts";
import type { PlanGen } from "./helpers.ts";
import { planList, planMap } from "./list-map.ts";
import { type Compiled, type Eval, emitValue, type PlanContext } from "./node.ts";

// --- check -----------------------------------------------------------------------------------

/** A comprehension's type: its macro's where the macro tells (bool, list), else its result's. */
function comprehensionType(macro: string | undefined, result: TypeTag): TypeTag {
  if (macro === "all" || macro === "exists" || macro === "exists_one" || macro === "existsOne") return "bool";
  if (macro === "map" || macro === "filter" || macro === "transformList") return "list";
  return result;
}

/**
 * `all` (false) or `exists` (true) as the parser expands them, by the value that decides it: the
 * accumulator starts at the other one, the loop runs while it does not hold the decisive value, each
 * step is `accu && pred` (`accu || pred`), and the result is the accumulator. Undefined for any
 * other comprehension.
 */
function shortCircuitMacro(e: ComprehensionNode): boolean | undefined {
  const decisive = e.macro === "exists" ? true : e.macro === "all" ? false : undefined;
  if (decisive === undefined) return undefined;
  const isAccu = (x: Expr | undefined) => x?.kind === "ident" && x.name === e.accuVar;
  const cond = e.loopCondition;
  const condArg = cond.kind === "call" && cond.fn === "@not_strictly_false" ? cond.args[0] : undefined;
  const step = e.loopStep;
  const shaped =
    e.accuInit.kind === "const" &&
    e.accuInit.value === !decisive &&
    (decisive
      ? condArg?.kind === "call" && condArg.fn === "!_" && isAccu(condArg.args[0])
      : isAccu(condArg)) &&
    step.kind === "call" &&
    step.fn === (decisive ? "_||_" : "_&&_") &&
    !step.target &&
    isAccu(step.args[0]) &&
    isAccu(e.result);
  return shaped ? decisive : undefined;
}

// --- plan ------------------------------------------------------------------------------------

/** A comprehension's parts as planned, and the slots of its variables. */
interface Loop {
  readonly node: ComprehensionNode;
  readonly range: Compiled;
  readonly init: Compiled;
  readonly cond: Compiled;
  readonly step: Compiled;
  readonly result: Compiled;
  readonly accuSlot: number;
  /** The element's slot, or the index's (key's) with `v2`. */
  readonly v1: number;
  /** The element's (value's) slot when the macro names two variables, else -1. */
  readonly v2: number;
  /** For `all`/`exists` (shortCircuitMacro): the value that decides, and the step's predicate. */
  readonly decisive: boolean | undefined;
  readonly pred: Compiled | undefined;
}

export function planComprehension(p: PlanContext, e: ComprehensionNode): Compiled {
  const loop = planLoop(p, e);
  return {
    ev: loopClosure(loop),
    emit: (g) => emitLoop(g, loop),
    type: comprehensionType(e.macro, loop.result.type),
  };
}

/** Plans the parts in evaluation order, each in the scope it sees. */
function planLoop(p: PlanContext, e: ComprehensionNode): Loop {
  const range = p.plan(e.iterRange);
  const accuInit = e.accuInit;
  // A literal accumulator is built fresh on every evaluation: map() and filter() append to it.
  const init =
    accuInit.kind === "map"
      ? planMap(p, accuInit, true)
      : accuInit.kind === "list"
        ? planList(p, accuInit.elements, accuInit.optionalIndices, accuInit.id, true)
        : p.plan(accuInit);
  const accuSlot = p.newSlot();
  p.accumulators.add(accuSlot);
  const v1 = p.newSlot();
  const v2 = e.iterVar2 !== undefined ? p.newSlot() : -1;
  const accuScope = new Map([[e.accuVar, accuSlot]]);
  const iterScope = new Map([[e.iterVar, v1]]);
  if (e.iterVar2 !== undefined) iterScope.set(e.iterVar2, v2);
  p.iterSlots.add(v1);
  if (v2 >= 0) p.iterSlots.add(v2);
  // A plain list's elements, a plain map's keys (strings) and its values are plain.
  if (range.plain) for (const v of [v1, v2]) if (v >= 0) p.plainSlots.add(v);
  p.openScope(accuScope);
  p.openScope(iterScope);
  const cond = p.plan(e.loopCondition);
  const step = p.plan(e.loopStep);
  p.closeScope();
  const result = p.plan(e.result);
  p.closeScope();
  const decisive = shortCircuitMacro(e);
  const pred = decisive === undefined ? undefined : step.operands?.[1];
  return { node: e, range, init, cond, step, result, accuSlot, v1, v2, decisive, pred };
}

/** The loop as a closure: the generic comprehension, for every macro. */
function loopClosure(l: Loop): Eval {
  const { accuSlot, v1, v2 } = l;
  const range = l.range.ev;
  const init = l.init.ev;
  const cond = l.cond.ev;
  const step = l.step.ev;
  const result = l.result.ev;
  const two = v2 >= 0;
  const id = l.node.id;
  return (f) => {
    const r = range(f);
    const slots = f.slots;
    const st = f.st;
    slots[accuSlot] = init(f);
    // The loop body is written out (not a per-evaluation closure): it runs for every element.
    if (Array.isArray(r)) {
      for (let i = 0; i < r.length; i++) {
        st.tick();
        st.addCost(1);
        if (two) {
          slots[v1] = BigInt(i);
          slots[v2] = r[i] as CelValue;
        } else slots[v1] = r[i] as CelValue;
        if (cond(f) !== true) break;
        try {
          slots[accuSlot] = step(f);
        } catch (err) {
          if (isLimitError(err)) throw err;
          (slots as unknown[])[accuSlot] = new HeldError(err);
        }
      }
    } else if (r instanceof CelMap || isPlainMap(r)) {
      for (const k of mapKeys(r)) {
        st.tick();
        st.addCost(1);
        slots[v1] = k;
        // Only when the macro names the value: reading one out of a JSON map converts it.
        if (two) slots[v2] = mapGet(r, k) as CelValue;
        if (cond(f) !== true) break;
        try {
          slots[accuSlot] = step(f);
        } catch (err) {
          if (isLimitError(err)) throw err;
          (slots as unknown[])[accuSlot] = new HeldError(err);
        }
      }
    } else {
      return withPosition(rangeError(r, two), id);
    }
    return result(f);
  };
}

/**
 * The loop as generated code: one loop for lists and maps (a map's keys are listed first), so the
 * body is written once; the body is emitAllExists's for `all`/`exists`, else emitStep's.
 */
function emitLoop(g: PlanGen, l: Loop): string {
  const { range, v1, v2, pred, decisive } = l;
  const two = v2 >= 0;
  // A JSON array straight from its map: each element is converted as the loop takes it.
  const r = range.emitList ? range.emitList(g) : emitValue(g, range);
  // `all`/`exists`: the accumulator is a local boolean and the first error, not a slot.
  const res = pred ? g.temp() : "";
  const held = pred ? g.temp() : "";
  if (pred) g.line(`${res} = ${!decisive}; ${held} = undefined;`);
  else g.line(`${g.slot(l.accuSlot)} = ${emitValue(g, l.init)};`);
  const loop = g.label();
  const i = g.temp();
  const keys = g.temp();
  const k = g.temp();
  const raw = range.emitList ? g.temp() : "";
  const element = (slot: string): string =>
    raw
      ? `${raw} = ${r}[${i}]; if (typeof ${raw} === "number" || ${raw} === undefined || Array.isArray(${raw}) || ${raw} instanceof Number) ${raw} = ${g.h.fromJson}(${raw}); ${slot} = ${raw};`
      : `${slot} = ${r}[${i}];`;
  g.line(`${keys} = undefined;`);
  g.line(
    `if (!Array.isArray(${r})) { if (${r} instanceof ${g.h.CelMap} || ${g.h.isPlainMap}(${r})) ${keys} = [...${g.h.mapKeys}(${r})]; else ${g.h.withPosition}(${g.h.rangeError}(${r}, ${two}), ${l.node.id}); }`,
  );
  g.line(`${loop}: for (${i} = 0; ${i} < (${keys} === undefined ? ${r}.length : ${keys}.length); ${i}++) {`);
  g.line(`st.tick(); ${charge(1)}`);
  g.line(`if (${keys} === undefined) {`);
  g.line(two ? `${g.slot(v1)} = BigInt(${i}); ${element(g.slot(v2))}` : element(g.slot(v1)));
  g.line(
    `} else { ${k} = ${keys}[${i}]; ${g.slot(v1)} = ${k};${two ? ` ${g.slot(v2)} = ${g.h.mapGet}(${r}, ${k});` : ""} }`,
  );
  // The paths read from the previous element are not this one's.
  g.resetPaths(elementPath(g, v1));
  if (two) g.resetPaths(elementPath(g, v2));
  if (pred) return emitAllExists(g, l, pred, decisive === true, loop, res, held);
  return emitStep(g, l, loop);
}

/**
 * The body of `all`/`exists`: what the condition and `accu && pred` (`accu || pred`) come to, the
 * accumulator being the neutral value, the decisive one, or an error: the loop stops at the
 * decisive value, which absorbs any error; else the first error (or a non-bool's) is the result.
 */
function emitAllExists(
  g: PlanGen,
  l: Loop,
  pred: Compiled,
  decisive: boolean,
  loop: string,
  res: string,
  held: string,
): string {
  g.line(`if (${res} === ${decisive}) break ${loop};`);
  g.line("try {");
  const p = emitValue(g, pred);
  g.line(`} catch (err) { ${rethrowLimits(g)} if (${held} === undefined) ${held} = err; continue ${loop}; }`);
  g.line(`if (${p} === ${decisive}) ${res} = ${decisive};`);
  g.line(
    `else if (typeof ${p} !== "boolean" && ${held} === undefined) ${held} = ${g.h.errorAt}(${g.h.noSuchOverloadBare}(), ${l.node.loopStep.id});`,
  );
  g.line("}");
  g.line(`if (${res} !== ${decisive} && ${held} !== undefined) throw ${held};`);
  return res;
}

/** The closure's body: the condition, then the step, whose error the accumulator holds; then the result. */
function emitStep(g: PlanGen, l: Loop, loop: string): string {
  const c = emitValue(g, l.cond);
  g.line(`if (${c} !== true) break ${loop};`);
  g.line("try {");
  g.line(`${g.slot(l.accuSlot)} = ${emitValue(g, l.step)};`);
  g.line(`} catch (err) { ${rethrowLimits(g)} ${g.slot(l.accuSlot)} = new ${g.h.HeldError}(err); }`);
  g.line("}");
  return emitValue(g, l.result);
}

/** `@append(accu, x)`: appends to the accumulator in place (the list literal it starts as is built fresh). */
export function planAppend(_p: PlanContext, _e: CallNode, args: readonly Compiled[]): Compiled {
  const [accuC, xC] = args as readonly [Compiled, Compiled];
  const accu = accuC.ev;
  const x = xC.ev;
  return {
    ev: (f) => {
      const list = accu(f) as CelValue[];
      list.push(x(f));
      return list;
    },
    // The step of map() and filter(): without it their whole body would run as closures.
    emit: (g) => {
      const list = emitValue(g, accuC);
      g.line(`${list}.push(${emitValue(g, xC)});`);
      return list;
    },
    type: "list",
  };
}
