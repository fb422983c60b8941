/**
 * The CEL front end: @bufbuild/cel's parser plus what Kubernetes' CEL has and it lacks.
 *
 * 1. Optional syntax (`a.?b`, `m[?k]`, `[?x]`, `{?k: v}`): its parser rejects the `?`. We find each
 *    optional marker with a small lexer (optional-marks.ts), blank it out (same length, so every
 *    offset stays true), parse, and then flag the nodes at the recorded offsets as optional.
 * 2. Macros it does not expand (two-variable comprehensions, `existsOne`, `transformList`,
 *    `transformMap`, `transformMapEntry`, `sortBy`, `optMap`, `optFlatMap`, `cel.bind`) are expanded
 *    here while converting its protobuf tree into ours (ast.ts), and `has()` of anything but a field
 *    selection is refused, as cel-go's macros do (parser/macro.go, ext/, cel/library.go).
 * 3. Literals cel-go's lexer and parser refuse and it accepts (`9223372036854775808`, `'\d'`,
 *    `1e999`) are parse errors (literals.ts).
 * 4. Nodes are placed where cel-go's parser places them (positions.ts), so carets match kubectl's.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Expr as PbExpr, ParsedExpr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js";
import type { CelValue } from "../runtime/values.ts";
import { UInt } from "../runtime/values.ts";
import { diagnoseSyntax } from "./diagnose.ts";
import { checkLiterals } from "./literals.ts";
import { type OptionalMarks, stripOptionalMarkers } from "./optional-marks.ts";
import { PositionFixer } from "./positions.ts";
import type { CallNode, ComprehensionNode, Expr, MapEntry, ParsedExpression, StructField } from "./ast.ts";

export class CelSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number | undefined,
  ) {
    super(message);
    this.name = "CelSyntaxError";
  }
}

export interface SyntaxOptions {
  /** Allow `cel.bind` (not part of Kubernetes' admission environment). */
  readonly bind?: boolean;
  /**
   * The macros of cel-go's two-variable comprehensions (ext/comprehensions.go: `all`, `exists` and
   * `existsOne` with two variables, `transformList`, `transformMap`, `transformMapEntry`), which
   * come with that library: without it they are plain calls, as cel-go's parser leaves a call no
   * macro of its environment matches. On unless false.
   */
  readonly twoVarComprehensions?: boolean;
  /** The `sortBy` macro of cel-go's lists extension (ext/lists.go, version 2 on); on unless false. */
  readonly sortBy?: boolean;
}

/**
 * @bufbuild/cel's parser on its own. The package's entry point builds the protobuf registries of
 * its evaluator and of the CEL spec as it loads, a large part of `serve`'s cold start, and the
 * parser is all we use of it: it stands alone in the package's parse.js, which loads quickly.
 * The package's exports map has no subpath for it, so it is required by file, beside the main
 * entry; package-lock.json pins the version. Should the file move, the entry point still serves.
 */
export const bufParse: (text: string) => ParsedExpr = loadParser();

/** Which module {@link bufParse} came from: "parse.js" normally, "entry point" after a fallback. */
export let bufParserSource: "parse.js" | "entry point" = "parse.js";

function loadParser(): (text: string) => ParsedExpr {
  const require = createRequire(import.meta.url);
  try {
    const standalone = require(join(dirname(require.resolve("@bufbuild/cel")), "parse.js")) as {
      parse?: unknown;
    };
    if (typeof standalone.parse === "function") return standalone.parse as (text: string) => ParsedExpr;
  } catch {
    // Fall through to the entry point.
  }
  bufParserSource = "entry point";
  return (require("@bufbuild/cel") as { parse: (text: string) => ParsedExpr }).parse;
}

/**
 * Parses a CEL expression; throws CelSyntaxError with the offset of the fault. Of a syntax error and
 * a literal error, the first in the source is thrown, as cel-go reports its errors in source order.
 */
export function parseCel(source: string, options: SyntaxOptions = {}): ParsedExpression {
  const { text, marks } = stripOptionalMarkers(source);
  const literal = checkLiterals(source)[0];
  const literalError = literal && new CelSyntaxError(literal.message, literal.offset);
  let parsed: ParsedExpr;
  try {
    parsed = bufParse(text);
  } catch (e) {
    const loc = (e as { location?: { start?: { offset?: number } } }).location;
    const raw = (e as { rawMessage?: string }).rawMessage ?? (e as Error).message;
    const offset = loc?.start?.offset;
    const known = diagnoseSyntax(source);
    const at = known?.offset ?? offset;
    if (literalError && (at === undefined || literalError.offset! <= at)) throw literalError;
    throw known
      ? new CelSyntaxError(`Syntax error: ${known.message}`, known.offset)
      : new CelSyntaxError(`Syntax error: ${raw}`, offset);
  }
  if (literalError) throw literalError;
  const positions = new Map<number, number>();
  for (const [id, off] of Object.entries(parsed.sourceInfo?.positions ?? {})) positions.set(Number(id), off);
  // The optional marks were recorded at @bufbuild/cel's positions, which the fixer moves.
  const original = new Map(positions);
  new PositionFixer(text, positions).fix(parsed.expr as PbExpr);
  const macros = new Map<number, string>();
  for (const [id, call] of Object.entries(parsed.sourceInfo?.macroCalls ?? {})) {
    if (call.exprKind.case === "callExpr") macros.set(Number(id), call.exprKind.value.function);
  }
  const conv = new Converter(positions, original, macros, marks, options);
  const root = conv.expr(parsed.expr as PbExpr);
  return { source, root, offsets: conv.offsets };
}

const ACCU = "@result";

/** cel-go's error for a comprehension macro whose variable is not an identifier. */
const SIMPLE_NAME = "argument must be a simple name";

class Converter {
  readonly offsets = new Map<number, number>();
  private nextId: number;

  constructor(
    positions: ReadonlyMap<number, number>,
    /** @bufbuild/cel's own positions, at which the optional marks were recorded. */
    private readonly original: ReadonlyMap<number, number>,
    private readonly macros: ReadonlyMap<number, string>,
    private readonly marks: OptionalMarks,
    private readonly options: SyntaxOptions,
  ) {
    let max = 0;
    for (const [id, off] of positions) {
      this.offsets.set(id, off);
      if (id > max) max = id;
    }
    this.nextId = max + 1;
  }

  private pos(id: number): number | undefined {
    return this.offsets.get(id);
  }

  /** A fresh id for a node the expansion creates, placed at the macro call's offset. */
  private fresh(at: number): number {
    const id = this.nextId++;
    const off = this.offsets.get(at);
    if (off !== undefined) this.offsets.set(id, off);
    return id;
  }

  expr(e: PbExpr): Expr {
    const id = Number(e.id);
    const k = e.exprKind;
    switch (k.case) {
      case "constExpr":
        return { kind: "const", id, value: this.constant(k.value.constantKind) };
      case "identExpr":
        return { kind: "ident", id, name: k.value.name };
      case "selectExpr": {
        const operand = this.expr(k.value.operand as PbExpr);
        const at = this.pos(id);
        const optional = at !== undefined && this.marks.selects.has(at);
        return { kind: "select", id, operand, field: k.value.field, testOnly: k.value.testOnly, optional };
      }
      case "callExpr": {
        const target = k.value.target ? this.expr(k.value.target) : undefined;
        const args = k.value.args.map((a) => this.expr(a));
        let fn = k.value.function;
        if (fn === "_[_]") {
          const at = this.pos(id);
          if (at !== undefined && this.marks.indexes.has(at)) fn = "_[?_]";
        }
        const call: CallNode = target
          ? { kind: "call", id, fn, target, args }
          : { kind: "call", id, fn, args };
        return this.macro(call) ?? call;
      }
      case "listExpr": {
        const at = this.pos(id);
        const opt = at === undefined ? undefined : this.marks.listElements.get(at);
        return {
          kind: "list",
          id,
          elements: k.value.elements.map((x) => this.expr(x)),
          optionalIndices: opt ?? new Set(),
        };
      }
      case "structExpr":
        return this.structExpr(id, k.value);
      case "comprehensionExpr":
        return this.comprehensionExpr(id, k.value);
      default:
        throw new CelSyntaxError("Syntax error: unsupported expression", this.pos(id));
    }
  }

  /** A map literal (a struct with no type name) or a struct literal (`Object{...}`). */
  private structExpr(id: number, s: Extract<PbExpr["exprKind"], { case: "structExpr" }>["value"]): Expr {
    if (s.messageName === "") {
      const entries: MapEntry[] = s.entries.map((en) => {
        const eid = Number(en.id);
        const at = this.original.get(eid);
        const key =
          en.keyKind.case === "mapKey"
            ? this.expr(en.keyKind.value)
            : this.strConst(eid, en.keyKind.value ?? "");
        return {
          id: eid,
          key,
          value: this.expr(en.value as PbExpr),
          optional: at !== undefined && this.marks.entries.has(at),
        };
      });
      return { kind: "map", id, entries };
    }
    const fields: StructField[] = s.entries.map((en) => {
      const eid = Number(en.id);
      const at = this.original.get(eid);
      return {
        id: eid,
        name: en.keyKind.case === "fieldKey" ? en.keyKind.value : "",
        value: this.expr(en.value as PbExpr),
        optional: at !== undefined && this.marks.entries.has(at),
      };
    });
    return { kind: "struct", id, typeName: s.messageName, fields };
  }

  private comprehensionExpr(
    id: number,
    c: Extract<PbExpr["exprKind"], { case: "comprehensionExpr" }>["value"],
  ): Expr {
    const macroCall = this.macros.get(id);
    const node: ComprehensionNode = {
      kind: "comprehension",
      id,
      iterRange: this.expr(c.iterRange as PbExpr),
      iterVar: c.iterVar,
      ...(c.iterVar2 ? { iterVar2: c.iterVar2 } : {}),
      accuVar: c.accuVar,
      accuInit: this.expr(c.accuInit as PbExpr),
      loopCondition: this.expr(c.loopCondition as PbExpr),
      loopStep: this.appendStep(this.expr(c.loopStep as PbExpr), c.accuVar),
      result: this.expr(c.result as PbExpr),
      ...(macroCall ? { macro: macroCall } : {}),
    };
    return node;
  }

  private strConst(id: number, s: string): Expr {
    return { kind: "const", id, value: s };
  }

  private constant(c: { case: string | undefined; value?: unknown }): CelValue {
    switch (c.case) {
      case "nullValue":
        return null;
      case "boolValue":
        return c.value as boolean;
      case "int64Value":
        return c.value as bigint;
      case "uint64Value":
        return new UInt(c.value as bigint);
      case "doubleValue":
        return c.value as number;
      case "stringValue":
        return c.value as string;
      case "bytesValue":
        return c.value as Uint8Array;
      default:
        throw new CelSyntaxError(`Syntax error: unsupported constant ${c.case}`, undefined);
    }
  }

  /**
   * `accu + [x]` as a comprehension step copies the accumulator each iteration; `@append` adds
   * in place to the accumulator the comprehension owns, keeping `map`/`filter` linear.
   */
  private appendStep(step: Expr, accu: string): Expr {
    const isAppend = (e: Expr): boolean =>
      e.kind === "call" &&
      e.fn === "_+_" &&
      !e.target &&
      e.args[0]?.kind === "ident" &&
      e.args[0].name === accu &&
      e.args[1]?.kind === "list" &&
      e.args[1].elements.length === 1 &&
      e.args[1].optionalIndices.size === 0;
    // Only when every branch appends one element or keeps the accumulator: a step that could also
    // set it to another list (`accu + other`) must not then grow that list in place.
    const appendOnly = (e: Expr): boolean =>
      isAppend(e) ||
      (e.kind === "ident" && e.name === accu) ||
      (e.kind === "call" &&
        e.fn === "_?_:_" &&
        !e.target &&
        appendOnly(e.args[1] as Expr) &&
        appendOnly(e.args[2] as Expr));
    if (!appendOnly(step)) return step;
    const rewrite = (e: Expr): Expr => {
      if (isAppend(e)) {
        const call = e as CallNode;
        const list = call.args[1] as { elements: readonly Expr[] };
        return {
          kind: "call",
          id: e.id,
          fn: "@append",
          args: [call.args[0] as Expr, list.elements[0] as Expr],
        };
      }
      if (e.kind === "call" && e.fn === "_?_:_" && !e.target) {
        return { ...e, args: [e.args[0] as Expr, rewrite(e.args[1] as Expr), rewrite(e.args[2] as Expr)] };
      }
      return e;
    };
    return rewrite(step);
  }

  private ident(at: number, name: string): Expr {
    return { kind: "ident", id: this.fresh(at), name };
  }
  private call(at: number, fn: string, args: Expr[], target?: Expr): Expr {
    return target
      ? { kind: "call", id: this.fresh(at), fn, target, args }
      : { kind: "call", id: this.fresh(at), fn, args };
  }
  private lit(at: number, value: CelValue): Expr {
    return { kind: "const", id: this.fresh(at), value };
  }

  /**
   * A macro's variable name, which must be a plain identifier; else cel-go's error for that macro,
   * at the argument (parser/macro.go, ext/comprehensions.go, ext/bindings.go, cel/library.go).
   */
  private varName(e: Expr | undefined, message: string, at: number): string {
    if (e?.kind !== "ident") throw new CelSyntaxError(message, this.pos(e?.id ?? at));
    return e.name;
  }

  /** The two variables of a two-variable comprehension (ext/comprehensions.go extractIterVars). */
  private twoVarNames(c: CallNode): [string, string] {
    const [a0, a1] = c.args;
    const k = this.varName(a0, SIMPLE_NAME, c.id);
    const v = this.varName(a1, SIMPLE_NAME, c.id);
    if (k === v) throw new CelSyntaxError(`duplicate variable name: ${k}`, this.pos((a1 as Expr).id));
    return [k, v];
  }

  /** Expands the macros @bufbuild/cel leaves as plain calls (receiver-style, by name and arity). */
  private macro(c: CallNode): Expr | undefined {
    const t = c.target;
    const n = c.args.length;
    if (!t) {
      // has(x): the has() macro takes only a field selection (parser/macro.go makeHas), which
      // @bufbuild/cel expanded already; anything else it leaves as a call.
      if (c.fn === "has" && n === 1)
        throw new CelSyntaxError("invalid argument to has() macro", this.pos((c.args[0] as Expr).id));
      return undefined;
    }
    // The standard macros with a variable that is not an identifier, which @bufbuild/cel leaves as
    // calls (parser/macro.go makeQuantifier, MakeMap, MakeFilter).
    const first = c.args[0];
    if (first !== undefined && first.kind !== "ident") {
      if ((c.fn === "all" || c.fn === "exists" || c.fn === "exists_one") && n === 2)
        throw new CelSyntaxError(SIMPLE_NAME, this.pos(first.id));
      if ((c.fn === "map" && (n === 2 || n === 3)) || (c.fn === "filter" && n === 2))
        throw new CelSyntaxError("argument is not an identifier", this.pos(first.id));
    }
    const twoVar = this.options.twoVarComprehensions !== false;
    switch (c.fn) {
      case "bind":
        return t.kind === "ident" && t.name === "cel" && n === 3 ? this.bindMacro(c) : undefined;
      case "all":
      case "exists":
        return n === 3 && twoVar ? this.allOrExists(c, t) : undefined;
      case "existsOne":
      case "exists_one":
        return n === 2 || (n === 3 && twoVar) ? this.existsOne(c, t) : undefined;
      case "transformList":
        return (n === 3 || n === 4) && twoVar ? this.transformList(c, t) : undefined;
      case "transformMap":
      case "transformMapEntry":
        return (n === 3 || n === 4) && twoVar ? this.transformMap(c, t) : undefined;
      case "sortBy":
        return n === 2 && this.options.sortBy !== false ? this.sortBy(c, t) : undefined;
      case "optMap":
      case "optFlatMap":
        return n === 2 ? this.optMap(c, t) : undefined;
      default:
        return undefined;
    }
  }

  /** `cel.bind(name, init, body)`, when the environment allows it. */
  private bindMacro(c: CallNode): Expr | undefined {
    const at = c.id;
    const a = c.args;
    if (!this.options.bind) return undefined; // left as a call: the checker reports it as unknown
    return {
      kind: "bind",
      id: at,
      name: this.varName(a[0], "cel.bind() variable names must be simple identifiers", at),
      init: a[1] as Expr,
      body: a[2] as Expr,
    };
  }

  /** The comprehension a macro over `range` expands to, with the macro call's id. */
  private comp(
    c: CallNode,
    range: Expr,
    iterVar: string,
    iterVar2: string | undefined,
    init: Expr,
    cond: Expr,
    step: Expr,
    result: Expr,
    macro: string,
  ): Expr {
    return {
      kind: "comprehension",
      id: c.id,
      iterRange: range,
      iterVar,
      ...(iterVar2 !== undefined ? { iterVar2 } : {}),
      accuVar: ACCU,
      accuInit: init,
      loopCondition: cond,
      loopStep: step,
      result,
      macro,
    };
  }

  private accu(at: number): Expr {
    return this.ident(at, ACCU);
  }

  /** `x.all(k, v, pred)` and `x.exists(k, v, pred)`, the two-variable forms. */
  private allOrExists(c: CallNode, t: Expr): Expr {
    const at = c.id;
    const a = c.args;
    const [k, v] = this.twoVarNames(c);
    const pred = a[2] as Expr;
    if (c.fn === "all")
      return this.comp(
        c,
        t,
        k,
        v,
        this.lit(at, true),
        this.call(at, "@not_strictly_false", [this.accu(at)]),
        this.call(at, "_&&_", [this.accu(at), pred]),
        this.accu(at),
        "all",
      );
    const notTrue = this.call(at, "@not_strictly_false", [this.call(at, "!_", [this.accu(at)])]);
    return this.comp(
      c,
      t,
      k,
      v,
      this.lit(at, false),
      notTrue,
      this.call(at, "_||_", [this.accu(at), pred]),
      this.accu(at),
      "exists",
    );
  }

  private existsOne(c: CallNode, t: Expr): Expr {
    const at = c.id;
    const a = c.args;
    const [k, v] = a.length === 3 ? this.twoVarNames(c) : [this.varName(a[0], SIMPLE_NAME, at), undefined];
    const pred = a[a.length - 1] as Expr;
    const step = this.call(at, "_?_:_", [
      pred,
      this.call(at, "_+_", [this.accu(at), this.lit(at, 1n)]),
      this.accu(at),
    ]);
    return this.comp(
      c,
      t,
      k,
      v,
      this.lit(at, 0n),
      this.lit(at, true),
      step,
      this.call(at, "_==_", [this.accu(at), this.lit(at, 1n)]),
      "existsOne",
    );
  }

  private transformList(c: CallNode, t: Expr): Expr {
    const at = c.id;
    const a = c.args;
    const [i, v] = this.twoVarNames(c);
    const value = a[a.length - 1] as Expr;
    const append = this.call(at, "@append", [this.accu(at), value]);
    const step = a.length === 4 ? this.call(at, "_?_:_", [a[2] as Expr, append, this.accu(at)]) : append;
    return this.comp(
      c,
      t,
      i,
      v,
      { kind: "list", id: this.fresh(at), elements: [], optionalIndices: new Set() },
      this.lit(at, true),
      step,
      this.accu(at),
      c.fn,
    );
  }

  private transformMap(c: CallNode, t: Expr): Expr {
    const at = c.id;
    const a = c.args;
    const [k, v] = this.twoVarNames(c);
    const value = a[a.length - 1] as Expr;
    const insert =
      c.fn === "transformMap"
        ? this.call(at, "@mapInsert", [this.accu(at), this.ident(at, k), value])
        : this.call(at, "@mapInsert", [this.accu(at), value]);
    const step = a.length === 4 ? this.call(at, "_?_:_", [a[2] as Expr, insert, this.accu(at)]) : insert;
    return this.comp(
      c,
      t,
      k,
      v,
      { kind: "map", id: this.fresh(at), entries: [] },
      this.lit(at, true),
      step,
      this.accu(at),
      c.fn,
    );
  }

  /** list.sortBy(x, key) → @sortByAssociatedKeys(list, list.map(x, key)), as cel-go's lists extension does. */
  private sortBy(c: CallNode, t: Expr): Expr {
    const at = c.id;
    const a = c.args;
    // ext/lists.go sortByMacro refuses a target of another kind first (a macro's expansion is a
    // comprehension, cel.bind's too), then expands through parser.MakeMap, whose error is next.
    if (t.kind === "const" || t.kind === "map" || t.kind === "struct")
      throw new CelSyntaxError(
        "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
        this.pos(t.id),
      );
    const x = this.varName(a[0], "argument is not an identifier", at);
    const keys = this.comp(
      c,
      t,
      x,
      undefined,
      { kind: "list", id: this.fresh(at), elements: [], optionalIndices: new Set() },
      this.lit(at, true),
      this.call(at, "@append", [this.accu(at), a[1] as Expr]),
      this.accu(at),
      "map",
    );
    return this.call(at, "@sortByAssociatedKeys", [t, keys]);
  }

  /** opt.optMap(v, e) → opt.hasValue() ? optional.of(cel.bind(v, opt.value(), e)) : optional.none() */
  private optMap(c: CallNode, t: Expr): Expr {
    const at = c.id;
    const a = c.args;
    const v = this.varName(a[0], `${c.fn}() variable name must be a simple identifier`, at);
    const body: Expr = {
      kind: "bind",
      id: this.fresh(at),
      name: v,
      init: this.call(at, "value", [], t),
      body: a[1] as Expr,
    };
    const some = c.fn === "optMap" ? this.call(at, "optional.of", [body]) : body;
    return this.call(at, "_?_:_", [
      this.call(at, "hasValue", [], t),
      some,
      this.call(at, "optional.none", []),
    ]);
  }
}
