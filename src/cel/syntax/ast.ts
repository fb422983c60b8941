/**
 * Our CEL syntax tree. @bufbuild/cel parses; parse.ts turns its protobuf tree into this one,
 * applying the optional syntax its parser lacks and expanding the macros it does not know, so that
 * the checker and the compiler walk one small, plain data structure.
 */
import type { CelValue } from "../runtime/values.ts";

interface Node {
  /** Unique within one expression; maps to a source offset through `ParsedExpression.offsets`. */
  readonly id: number;
}

export interface ConstNode extends Node {
  readonly kind: "const";
  readonly value: CelValue;
}

export interface IdentNode extends Node {
  readonly kind: "ident";
  readonly name: string;
}

export interface SelectNode extends Node {
  readonly kind: "select";
  readonly operand: Expr;
  readonly field: string;
  /** `has(a.b)`. */
  readonly testOnly: boolean;
  /** `a.?b`: yields an optional. */
  readonly optional: boolean;
}

export interface CallNode extends Node {
  readonly kind: "call";
  readonly fn: string;
  /** The receiver of a member call `target.fn(args)`. */
  readonly target?: Expr;
  readonly args: readonly Expr[];
}

export interface ListNode extends Node {
  readonly kind: "list";
  readonly elements: readonly Expr[];
  /** Indices of `?x` elements, included only when the optional has a value. */
  readonly optionalIndices: ReadonlySet<number>;
}

export interface MapEntry {
  readonly id: number;
  readonly key: Expr;
  readonly value: Expr;
  /** `?k: v`: the entry is present only when the optional value has a value. */
  readonly optional: boolean;
}

export interface MapNode extends Node {
  readonly kind: "map";
  readonly entries: readonly MapEntry[];
}

export interface StructField {
  readonly id: number;
  readonly name: string;
  readonly value: Expr;
  readonly optional: boolean;
}

/** `Object{...}`, `Object.spec{...}` and `JSONPatch{...}` in mutation expressions. */
export interface StructNode extends Node {
  readonly kind: "struct";
  readonly typeName: string;
  readonly fields: readonly StructField[];
}

/**
 * The general comprehension every iterating macro expands to. Over a list, `iterVar` is the element
 * (or, with `iterVar2`, the index and `iterVar2` the element); over a map, the key (and the value).
 */
export interface ComprehensionNode extends Node {
  readonly kind: "comprehension";
  readonly iterRange: Expr;
  readonly iterVar: string;
  readonly iterVar2?: string;
  readonly accuVar: string;
  readonly accuInit: Expr;
  readonly loopCondition: Expr;
  readonly loopStep: Expr;
  readonly result: Expr;
  /** The macro it came from (`all`, `exists`, `map`, ...), for messages and the explain trace. */
  readonly macro?: string;
}

/** `cel.bind(name, init, body)` and the `optMap`/`optFlatMap` macros. */
export interface BindNode extends Node {
  readonly kind: "bind";
  readonly name: string;
  readonly init: Expr;
  readonly body: Expr;
}

export type Expr =
  | ConstNode
  | IdentNode
  | SelectNode
  | CallNode
  | ListNode
  | MapNode
  | StructNode
  | ComprehensionNode
  | BindNode;

export interface ParsedExpression {
  readonly source: string;
  readonly root: Expr;
  /** Source offset (in UTF-16 units) of each node id. */
  readonly offsets: ReadonlyMap<number, number>;
}

/** A direct subexpression, with the names its parent binds around it. */
export interface Child {
  readonly expr: Expr;
  /** Comprehension or bind variables in scope in `expr` (and not around its parent). */
  readonly binds: readonly string[];
  /** In a comprehension's condition or step: evaluated once per element. */
  readonly perElement: boolean;
}

const NONE: readonly string[] = [];
const child = (expr: Expr, binds = NONE, perElement = false): Child => ({ expr, binds, perElement });

/** The direct subexpressions of `e`, in evaluation order: the one place that knows the tree's shape. */
export function children(e: Expr): Child[] {
  switch (e.kind) {
    case "const":
    case "ident":
      return [];
    case "select":
      return [child(e.operand)];
    case "call":
      return [...(e.target ? [child(e.target)] : []), ...e.args.map((a) => child(a))];
    case "list":
      return e.elements.map((x) => child(x));
    case "map":
      return e.entries.flatMap((x) => [child(x.key), child(x.value)]);
    case "struct":
      return e.fields.map((x) => child(x.value));
    case "comprehension": {
      const loop = [...(e.iterVar2 === undefined ? [e.iterVar] : [e.iterVar, e.iterVar2]), e.accuVar];
      return [
        child(e.iterRange),
        child(e.accuInit),
        child(e.loopCondition, loop, true),
        child(e.loopStep, loop, true),
        child(e.result, [e.accuVar]),
      ];
    }
    case "bind":
      return [child(e.init), child(e.body, [e.name])];
  }
}
