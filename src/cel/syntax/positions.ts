/**
 * Node positions as cel-go's parser gives them (parser/parser.go, each Visit* method's
 * `p.helper.id(token)`), so that a caret lands where kubectl puts it. @bufbuild/cel places several
 * nodes elsewhere; this moves them, on its protobuf tree, before the tree is converted (so that the
 * nodes a macro expansion creates, placed at their call, are right too):
 *
 * - a call (`f(x)`, `a.f(x)`) and a macro (`a.all(x, p)`, `has(a.b)`): its `(` (VisitGlobalCall,
 *   VisitMemberCall; a macro's nodes get its call's location), not the name or the `.`;
 * - a binary operator (`a && b`, `a + b`, `x in l`): the operator's first character (VisitRelation,
 *   VisitCalc, VisitConditionalAnd/Or), not the end of the left operand or the expression's start;
 * - the conditional `c ? a : b`: its `?` (VisitExpr);
 * - a unary `-x` or `!x`: its (first) operator (VisitNegate, VisitLogicalNot), where @bufbuild/cel
 *   may put it on the spaces before;
 * - a struct literal `Msg{...}`: its `{` (VisitCreateMessage);
 * - a map entry or struct field: its `:` (VisitMapInitializerList, VisitFieldInitializerList).
 *
 * Each move is made only when the character found is the one expected, so an unusual layout (a
 * comment between an operand and its operator) keeps @bufbuild/cel's position rather than a wrong one.
 */
import type { Expr as PbExpr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";

const BINARY_OPERATOR = /^_[^_?]+_$/;
const OPERATOR_CHARS = "&|=!<>+-*/%";

const isSpace = (c: string | undefined): boolean =>
  c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v";
const isIdentChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);

/** Every child of a protobuf node, with map and struct entries' keys and values. */
function pbChildren(e: PbExpr): PbExpr[] {
  const k = e.exprKind;
  switch (k.case) {
    case "selectExpr":
      return k.value.operand ? [k.value.operand] : [];
    case "callExpr":
      return [...(k.value.target ? [k.value.target] : []), ...k.value.args];
    case "listExpr":
      return k.value.elements;
    case "structExpr":
      return k.value.entries.flatMap((en) => [
        ...(en.keyKind.case === "mapKey" ? [en.keyKind.value] : []),
        ...(en.value ? [en.value] : []),
      ]);
    case "comprehensionExpr": {
      const c = k.value;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].filter(
        (x): x is PbExpr => x !== undefined,
      );
    }
    default:
      return [];
  }
}

export class PositionFixer {
  /** The smallest offset in each subtree: where the expression it is starts (@bufbuild/cel's offsets). */
  private readonly starts = new Map<PbExpr, number>();

  constructor(
    private readonly text: string,
    private readonly positions: Map<number, number>,
  ) {}

  private pos(e: PbExpr): number | undefined {
    return this.positions.get(Number(e.id));
  }

  private start(e: PbExpr): number {
    let s = this.starts.get(e);
    if (s === undefined) {
      s = this.pos(e) ?? Number.MAX_SAFE_INTEGER;
      for (const c of pbChildren(e)) s = Math.min(s, this.start(c));
      this.starts.set(e, s);
    }
    return s;
  }

  /** From `at` (a name, or the `.` before it), past the name to the `(` (or `{`) that follows. */
  private forwardTo(at: number, open: string, qualified: boolean): number | undefined {
    const t = this.text;
    let i = at;
    while (isSpace(t[i])) i++;
    if (t[i] === ".") i++;
    while (i < t.length && (isIdentChar(t[i]) || isSpace(t[i]) || (qualified && t[i] === "."))) i++;
    return t[i] === open ? i : undefined;
  }

  /** Forwards from `at` over spaces: the offset of the character found, if it is `c`. */
  private skipSpacesTo(at: number, c: string): number | undefined {
    let i = at;
    while (isSpace(this.text[i])) i++;
    return this.text[i] === c ? i : undefined;
  }

  /** Backwards from before `at` over spaces and `(`: the offset of the character found, if it is `c`. */
  private backwardTo(at: number, c: string): number | undefined {
    const t = this.text;
    let i = at - 1;
    while (i >= 0 && (isSpace(t[i]) || t[i] === "(")) i--;
    return t[i] === c ? i : undefined;
  }

  /** The first character of the operator token that ends before `at` (`&&`, `>=`, `in`). */
  private operatorBefore(at: number): number | undefined {
    const t = this.text;
    let i = at - 1;
    while (i >= 0 && (isSpace(t[i]) || t[i] === "(")) i--;
    const ch = t[i];
    if (ch === undefined) return undefined;
    const word = isIdentChar(ch);
    if (!word && !OPERATOR_CHARS.includes(ch)) return undefined;
    while (i > 0 && (word ? isIdentChar(t[i - 1]) : OPERATOR_CHARS.includes(t[i - 1] as string))) i--;
    return i;
  }

  private set(e: { id: bigint }, at: number | undefined): void {
    if (at !== undefined) this.positions.set(Number(e.id), at);
  }

  /** Moves every node's position in the tree to cel-go's. */
  fix(e: PbExpr): void {
    // Children first: a parent's rule reads its children's starts, which do not move (a start is
    // the smallest offset of a subtree, and every move is forward of it).
    for (const c of pbChildren(e)) this.start(c);
    const at = this.pos(e);
    const k = e.exprKind;
    switch (k.case) {
      case "callExpr": {
        const fn = k.value.function;
        const rhs = k.value.args[1];
        if ((BINARY_OPERATOR.test(fn) && fn !== "_[_]") || fn === "@in") {
          if (rhs) this.set(e, this.operatorBefore(this.start(rhs)));
        } else if (fn === "_?_:_") {
          if (rhs) this.set(e, this.backwardTo(this.start(rhs), "?"));
        } else if ((fn === "-_" || fn === "!_") && at !== undefined) {
          this.set(e, this.skipSpacesTo(at, fn[0] as string));
        } else if (!fn.startsWith("_") && !fn.startsWith("@") && !fn.startsWith("!") && at !== undefined) {
          this.set(e, this.forwardTo(at, "(", false));
        }
        break;
      }
      case "comprehensionExpr":
        if (at !== undefined) this.set(e, this.forwardTo(at, "(", false));
        break;
      case "selectExpr":
        // has(a.b): the macro's node is placed at its call's `(`.
        if (k.value.testOnly && at !== undefined) this.set(e, this.forwardTo(at, "(", false));
        break;
      case "structExpr":
        if (k.value.messageName !== "" && at !== undefined) this.set(e, this.forwardTo(at, "{", true));
        for (const en of k.value.entries)
          if (en.value) this.set(en, this.backwardTo(this.start(en.value), ":"));
        break;
      default:
        break;
    }
    for (const c of pbChildren(e)) this.fix(c);
  }
}
