/**
 * Indexing: `c[k]` (a missing index or key is an error; on an optional chain the chain goes on) and
 * `c[?k]` (an optional chain: a missing index or key is none).
 */
import { ABSENT, indexOrError, indexValue } from "../runtime/access.ts";
import type { TypeTag } from "../runtime/tags.ts";
import type { CallNode } from "../syntax/ast.ts";
import { charge } from "./emit.ts";
import type { Emit } from "./helpers.ts";
import { type Compiled, emitRawValue, emitValue, type PlanContext, type RawEval } from "./node.ts";
import { emitMaybeOptional, maybeOptional, optionalNode } from "./optional.ts";

// --- check -----------------------------------------------------------------------------------

/** An element's type is not known; indexing an optional keeps it optional. */
function indexType(container: TypeTag): TypeTag {
  return container === "optional_type" ? "optional_type" : "dyn";
}

// --- plan ------------------------------------------------------------------------------------

/** `_[_]`. */
export function planIndex(_p: PlanContext, e: CallNode, args: readonly Compiled[]): Compiled {
  const [container, key] = args as readonly [Compiled, Compiled];
  const c = container.ev;
  const k = key.ev;
  const id = e.id;
  const cRaw = container.raw;
  if (cRaw) {
    // On an optional chain: the chain goes on, raw.
    const raw: RawEval = (f) => {
      f.st.addCost(1);
      const cv = cRaw(f);
      const kv = k(f);
      if (cv === ABSENT) return ABSENT;
      const r = indexValue(cv, kv, id);
      return r === undefined ? ABSENT : r;
    };
    const emitRaw: Emit = (g) => {
      g.line(charge(1));
      const cv = emitRawValue(g, container, cRaw);
      const kv = emitValue(g, key);
      const r = g.temp();
      g.line(
        `if (${cv} !== ${g.h.ABSENT}) { ${r} = ${g.h.indexValue}(${cv}, ${kv}, ${id}); ${cv} = ${r} === undefined ? ${g.h.ABSENT} : ${r}; }`,
      );
      return cv;
    };
    return optionalNode(raw, emitRaw);
  }
  return {
    ev: (f) => {
      f.st.addCost(1);
      const cv = c(f);
      return indexOrError(cv, k(f), id);
    },
    emit: (g) => {
      g.line(charge(1));
      const cv = emitValue(g, container);
      const kv = emitValue(g, key);
      const t = g.temp();
      g.line(`${t} = ${g.h.indexOrError}(${cv}, ${kv}, ${id});`);
      return t;
    },
    type: indexType(container.type),
  };
}

/** `_[?_]`. */
export function planOptionalIndex(_p: PlanContext, e: CallNode, args: readonly Compiled[]): Compiled {
  const [container, key] = args as readonly [Compiled, Compiled];
  const k = key.ev;
  const id = e.id;
  const cRaw = container.raw ?? maybeOptional(container.ev);
  const raw: RawEval = (f) => {
    f.st.addCost(1);
    const cv = cRaw(f);
    if (cv === ABSENT) return ABSENT;
    const r = indexValue(cv, k(f), id);
    return r === undefined ? ABSENT : r;
  };
  // The key is evaluated only when the container is there, as in the closure.
  const emitRaw: Emit = (g) => {
    g.line(charge(1));
    const cv = emitMaybeOptional(g, container);
    const r = g.temp();
    g.line(`if (${cv} !== ${g.h.ABSENT}) {`);
    const kv = emitValue(g, key);
    g.line(
      `${r} = ${g.h.indexValue}(${cv}, ${kv}, ${id}); ${cv} = ${r} === undefined ? ${g.h.ABSENT} : ${r}; }`,
    );
    return cv;
  };
  return optionalNode(raw, emitRaw);
}
