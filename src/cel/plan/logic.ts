/**
 * The logical operators, with cel-go's error absorption: `a && b` and `a || b` evaluate both sides
 * and let a decisive value on either side absorb the other side's error (`false && error` is
 * false); `!a`; and `@not_strictly_false`, the loop condition of the `all`/`exists` macros, which
 * takes an error or a non-bool for true. Cost and deadline errors are never absorbed.
 */
import { asBool } from "../runtime/access.ts";
import { isLimitError, withPosition } from "../runtime/errors.ts";
import { type CelValue, noSuchOverloadBare } from "../runtime/values.ts";
import type { CallNode } from "../syntax/ast.ts";
import { rethrowLimits } from "./emit.ts";
import { type Compiled, emitValue, type PlanContext } from "./node.ts";

// --- plan ------------------------------------------------------------------------------------

/** `_&&_` and `_||_`: the value that decides (false, true) short-circuits and absorbs errors. */
export function planAndOr(_p: PlanContext, e: CallNode, args: readonly Compiled[]): Compiled {
  const left = args[0] as Compiled;
  const right = args[1] as Compiled;
  const l = left.ev;
  const r = right.ev;
  const id = e.id;
  const decisive = e.fn === "_||_";
  return {
    ev: (f) => {
      let lerr: unknown;
      let lv: CelValue = null;
      try {
        lv = l(f);
        if (lv === decisive) return decisive;
      } catch (err) {
        if (isLimitError(err)) throw err;
        lerr = err;
      }
      let rv: CelValue;
      try {
        rv = r(f);
      } catch (err) {
        // Both sides failed: the left one's error, as cel-go's evalAnd/evalOr report it.
        if (isLimitError(err)) throw err;
        throw lerr ?? err;
      }
      if (rv === decisive) return decisive;
      if (lerr !== undefined) throw lerr;
      if (typeof lv !== "boolean" || typeof rv !== "boolean") return withPosition(noSuchOverloadBare(), id);
      return !decisive;
    },
    emit: (g) => {
      const res = g.temp();
      const lerr = g.temp();
      const lv = g.temp();
      const block = g.label();
      g.line(`${block}: { ${lerr} = undefined; ${lv} = null;`);
      g.line("try {");
      g.line(`${lv} = ${emitValue(g, left)};`);
      g.line(`if (${lv} === ${decisive}) { ${res} = ${decisive}; break ${block}; }`);
      g.line(`} catch (err) { ${rethrowLimits(g)} ${lerr} = err; }`);
      const rv = g.temp();
      g.line("try {");
      g.line(`${rv} = ${emitValue(g, right)};`);
      g.line(`} catch (err) { ${rethrowLimits(g)} throw ${lerr} ?? err; }`);
      g.line(`if (${rv} === ${decisive}) { ${res} = ${decisive}; break ${block}; }`);
      g.line(`if (${lerr} !== undefined) throw ${lerr};`);
      g.line(
        `if (typeof ${lv} !== "boolean" || typeof ${rv} !== "boolean") ${g.h.withPosition}(${g.h.noSuchOverloadBare}(), ${id});`,
      );
      g.line(`${res} = ${!decisive}; }`);
      return res;
    },
    operands: [left, right],
    type: "bool",
  };
}

/** `!_`. */
export function planNot(_p: PlanContext, e: CallNode, args: readonly Compiled[]): Compiled {
  const operand = args[0] as Compiled;
  const x = operand.ev;
  const id = e.id;
  return {
    ev: (f) => !asBool(x(f), "!_", id),
    emit: (g) => {
      const v = emitValue(g, operand);
      const t = g.temp();
      g.line(`${t} = !${g.h.asBool}(${v}, "!_", ${id});`);
      return t;
    },
    type: "bool",
  };
}

/** `@not_strictly_false`: true unless the operand is false. */
export function planNotStrictlyFalse(_p: PlanContext, _e: CallNode, args: readonly Compiled[]): Compiled {
  const operand = args[0] as Compiled;
  const x = operand.ev;
  return {
    ev: (f) => {
      try {
        const v = x(f);
        return typeof v === "boolean" ? v : true;
      } catch (err) {
        if (isLimitError(err)) throw err;
        return true;
      }
    },
    emit: (g) => {
      const t = g.temp();
      g.line("try {");
      const v = emitValue(g, operand);
      g.line(`${t} = typeof ${v} === "boolean" ? ${v} : true;`);
      g.line(`} catch (err) { ${rethrowLimits(g)} ${t} = true; }`);
      return t;
    },
    type: "bool",
  };
}
