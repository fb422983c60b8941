/**
 * The type checker: one walk over the parsed expression, as cel-go's checker/checker.go walks its
 * AST, giving every node a type, every call the overloads it may resolve to, every identifier the
 * declaration it refers to, and cel-go's error for everything that does not type-check.
 *
 * Our syntax tree differs from cel-go's in a few places, mapped back here: `@append(accu, x)` is
 * cel-go's `accu + [x]`, `@sortByAssociatedKeys(list, keys)` its member call on `list`,
 * `@mapInsert` its `cel.@mapInsert`, a `bind` node its bind comprehension, and `a.?b` a select
 * node instead of the `_?._` call.
 */
import type {
  BindNode,
  CallNode,
  ComprehensionNode,
  Expr,
  IdentNode,
  ListNode,
  MapNode,
  SelectNode,
  StructNode,
} from "../syntax/ast.ts";
import { UInt } from "../runtime/values.ts";
import type { FunctionDecl } from "./decls/index.ts";
import type { CheckEnv } from "./env.ts";
import * as msg from "./messages.ts";
import {
  BOOL,
  BYTES,
  type CelType,
  DOUBLE,
  DYN,
  ERROR,
  declaredTypeName,
  INT,
  isDyn,
  isDynOrError,
  isExactType,
  listOf,
  mapOf,
  maybeUnwrapOptional,
  NULL,
  objectType,
  optionalOf,
  STRING,
  typeOf,
  typeParam,
  UINT,
  wellKnownTypeName,
} from "./types.ts";
import { instantiate, isAssignable, isAssignableList, Mapping, mostGeneral, substitute } from "./unify.ts";
import { checkMathMacro } from "./math-macros.ts";
import { CROSS_TYPE_NUMERIC } from "./versions.ts";

/** An issue found at a node. */
export interface NodeIssue {
  readonly id: number;
  readonly message: string;
  /** For a call no overload takes: the argument types it was given. */
  readonly operands?: readonly CelType[];
}

/** The checker's output, before the final substitution of type parameters. */
export interface Annotations {
  readonly types: Map<number, CelType>;
  readonly overloads: Map<number, readonly string[]>;
  /** Resolved function names where they differ from the node's (`optional.of`, `cel.@mapInsert`). */
  readonly functions: Map<number, string>;
  /** The declaration an identifier, a select collapsed into a qualified name, or a struct names. */
  readonly references: Map<number, string>;
}

export class Checker implements Annotations {
  readonly types = new Map<number, CelType>();
  readonly overloads = new Map<number, readonly string[]>();
  readonly functions = new Map<number, string>();
  readonly references = new Map<number, string>();
  readonly issues: NodeIssue[] = [];
  readonly mapping = new Mapping();
  private typeVars = 0;
  private readonly scopes: Map<string, CelType>[] = [];
  /**
   * Whether cross-type numeric comparisons are filtered out. cel-go's enterScope drops the filter
   * (checker/env.go builds the nested Env without it), so it is off from the first comprehension on.
   */
  private filterCrossType: boolean;

  constructor(readonly env: CheckEnv) {
    this.filterCrossType = !env.crossTypeNumericComparisons;
  }

  report(id: number, message: string, operands?: readonly CelType[]): void {
    this.issues.push(operands === undefined ? { id, message } : { id, message, operands });
  }

  typeOf(e: Expr): CelType {
    return this.types.get(e.id) ?? ERROR;
  }

  private setType(e: { id: number }, t: CelType): void {
    this.types.set(e.id, t);
  }

  newTypeVar(): CelType {
    return typeParam(`_var${this.typeVars++}`);
  }

  check(e: Expr): void {
    switch (e.kind) {
      case "const":
        this.setType(e, constType(e.value));
        return;
      case "ident":
        this.checkIdent(e);
        return;
      case "select":
        this.checkSelect(e);
        return;
      case "call":
        this.checkCall(e);
        return;
      case "list":
        this.checkList(e);
        return;
      case "map":
        this.checkMap(e);
        return;
      case "struct":
        this.checkStruct(e);
        return;
      case "comprehension":
        this.checkComprehension(e);
        return;
      case "bind":
        this.checkBind(e);
        return;
    }
  }

  // --- identifiers ---------------------------------------------------------------------------

  private lookupLocal(name: string): CelType | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const t = this.scopes[i]?.get(name);
      if (t !== undefined) return t;
    }
    return undefined;
  }

  /** env.go lookupGlobalIdent: a declared identifier, or a type the provider knows by name. */
  private lookupGlobal(name: string): CelType | undefined {
    const declared = this.env.variables.get(name);
    if (declared !== undefined) return declared;
    const named = this.resolveTypeName(name);
    return named === undefined ? undefined : typeOf(named);
  }

  private checkIdent(e: IdentNode): void {
    const t = this.lookupLocal(e.name) ?? this.lookupGlobal(e.name);
    if (t !== undefined) {
      this.setType(e, t);
      this.references.set(e.id, e.name);
      return;
    }
    this.setType(e, ERROR);
    this.report(e.id, msg.undeclaredReference(e.name));
  }

  /**
   * The dotted name a chain of plain selections from an identifier spells, or undefined; also
   * undefined when no declared name begins with its operand's name, as none could be its own.
   */
  private qualifiedName(e: Expr): string | undefined {
    if (e.kind === "ident") return e.name;
    if (e.kind !== "select" || e.testOnly || e.optional) return undefined;
    // Each select of a chain asks for its name as the chain is checked from the top: kept, so that
    // a long chain costs its length, not its length squared.
    if (this.qualified.has(e)) return this.qualified.get(e);
    const base = this.qualifiedName(e.operand);
    const name = base === undefined || !this.env.isNamespace(base) ? undefined : `${base}.${e.field}`;
    this.qualified.set(e, name);
    return name;
  }

  private readonly qualified = new WeakMap<Expr, string | undefined>();

  // --- field selection -----------------------------------------------------------------------

  private checkSelect(e: SelectNode): void {
    if (!e.testOnly && !e.optional) {
      const q = this.qualifiedName(e);
      const root = q?.slice(0, q.indexOf("."));
      if (q !== undefined && root !== undefined && this.lookupLocal(root) === undefined) {
        const t = this.lookupGlobal(q);
        if (t !== undefined) {
          this.setType(e, t);
          this.references.set(e.id, q);
          return;
        }
      }
    }
    let result = this.checkSelectField(e, e.operand, e.field, e.optional);
    if (e.testOnly) result = BOOL;
    if (e.optional) this.overloads.set(e.id, ["select_optional_field"]);
    this.setType(e, substitute(this.mapping, result, false));
  }

  private checkSelectField(e: Expr, operand: Expr, field: string, optional: boolean): CelType {
    this.check(operand);
    const operandType = substitute(this.mapping, this.typeOf(operand), false);
    const [target, wasOptional] = maybeUnwrapOptional(operandType);
    let result: CelType = ERROR;
    switch (target.kind) {
      case "map":
        result = target.params[1] as CelType;
        break;
      case "struct":
        result = this.lookupFieldType(e.id, target.name, field) ?? ERROR;
        break;
      case "typeParam":
        // Bind the parameter to dyn so that nothing later binds it to an incompatible type.
        isAssignable(this.mapping, DYN, target);
        result = DYN;
        break;
      default:
        if (!isDynOrError(target)) this.report(e.id, msg.noFieldSelection(target));
        result = DYN;
    }
    return wasOptional || optional ? optionalOf(result) : result;
  }

  private lookupFieldType(id: number, typeName: string, field: string): CelType | undefined {
    const message = this.env.findMessage(typeName);
    if (message === undefined) {
      this.report(id, msg.unexpectedFailedResolution(typeName));
      return undefined;
    }
    const t = message.field(field);
    if (t === undefined) this.report(id, msg.undefinedField(field));
    return t;
  }

  // --- calls ---------------------------------------------------------------------------------

  private checkCall(e: CallNode): void {
    if (!e.target) {
      switch (e.fn) {
        case "@append":
          this.checkAppend(e);
          return;
        case "@sortByAssociatedKeys":
          this.checkSortByKeys(e);
          return;
        case "@mapInsert":
          this.checkGlobalCall(e, "cel.@mapInsert", e.args);
          return;
      }
      this.checkGlobalCall(e, e.fn, e.args);
      return;
    }
    const macro = this.env.extras.math ? checkMathMacro(this, e) : undefined;
    if (macro) return;
    for (const a of e.args) this.check(a);
    // `ns.fn(args)`: a namespaced global function, if one is declared by that name.
    const q = this.qualifiedName(e.target);
    if (q !== undefined) {
      const namespaced = this.env.functions.get(`${q}.${e.fn}`);
      if (namespaced) {
        this.functions.set(e.id, namespaced.name);
        this.resolveOrError(e, namespaced, undefined, e.args);
        return;
      }
    }
    this.check(e.target);
    const f = this.env.functions.get(e.fn);
    if (f) {
      this.resolveOrError(e, f, e.target, e.args);
      return;
    }
    this.setType(e, ERROR);
    this.report(e.id, msg.undeclaredReference(e.fn));
  }

  /** A call without a receiver, by the function's declared name. */
  checkGlobalCall(e: CallNode, name: string, args: readonly Expr[]): void {
    for (const a of args) this.check(a);
    const f = this.env.functions.get(name);
    if (!f) {
      this.setType(e, ERROR);
      this.report(e.id, msg.undeclaredReference(name));
      return;
    }
    if (name !== e.fn) this.functions.set(e.id, name);
    this.resolveOrError(e, f, undefined, args);
  }

  /** `@append(accu, x)`: cel-go's `accu + [x]` in map, filter and transformList steps. */
  private checkAppend(e: CallNode): void {
    const [accu, x] = e.args as [Expr, Expr];
    this.check(accu);
    this.check(x);
    const f = this.env.functions.get("_+_");
    if (!f) {
      this.setType(e, ERROR);
      return;
    }
    this.functions.set(e.id, "_+_");
    this.resolveOrError(e, f, undefined, [accu, x], [this.typeOf(accu), listOf(this.typeOf(x))]);
  }

  /**
   * `@sortByAssociatedKeys(list, keys)`: cel-go's sortBy macro, a bind comprehension (over `[]`)
   * of the list whose result is `list.@sortByAssociatedKeys(keys)`.
   */
  private checkSortByKeys(e: CallNode): void {
    const [list, keys] = e.args as [Expr, Expr];
    this.newTypeVar();
    this.check(list);
    this.enterScope([]);
    this.check(keys);
    this.exitScope();
    const f = this.env.functions.get(e.fn);
    if (!f) {
      this.setType(e, ERROR);
      this.report(e.id, msg.undeclaredReference(e.fn));
      return;
    }
    this.resolveOrError(e, f, list, [keys]);
  }

  resolveOrError(
    e: CallNode,
    f: FunctionDecl,
    target: Expr | undefined,
    args: readonly Expr[],
    argTypes?: readonly CelType[],
  ): void {
    const types = argTypes ?? [...(target ? [this.typeOf(target)] : []), ...args.map((a) => this.typeOf(a))];
    const resolved = this.resolveOverload(e, f, target !== undefined, args, types);
    if (resolved === undefined) {
      this.setType(e, ERROR);
      return;
    }
    this.setType(e, resolved.type);
    this.overloads.set(e.id, resolved.ids);
  }

  /** checker.go resolveOverload: every overload whose signature the arguments fit. */
  private resolveOverload(
    call: CallNode,
    f: FunctionDecl,
    isMember: boolean,
    args: readonly Expr[],
    argTypes: readonly CelType[],
  ): { type: CelType; ids: string[] } | undefined {
    let result: CelType | undefined;
    const ids: string[] = [];
    for (const o of f.overloads) {
      if (this.filterCrossType && CROSS_TYPE_NUMERIC.has(o.id)) continue;
      if (o.member !== isMember) continue;
      if (f.name === "_&&_" || f.name === "_||_") return this.resolveLogical(o.id, args, argTypes);
      let params = o.args;
      let returns = o.result;
      if (o.typeParams.length > 0) {
        const fresh = new Map(o.typeParams.map((p) => [p, this.newTypeVar()] as const));
        params = params.map((p) => instantiate(p, fresh));
        returns = instantiate(returns, fresh);
      }
      if (!isAssignableList(this.mapping, argTypes, params)) continue;
      ids.push(o.id);
      const r = substitute(this.mapping, returns, false);
      if (result === undefined) result = r;
      else if (!isDyn(result) && !isExactType(r, result)) result = DYN;
    }
    if (result === undefined) {
      const shown = argTypes.map((t) => substitute(this.mapping, t, true));
      this.report(call.id, msg.noMatchingOverload(f.name, shown, isMember), shown);
      return undefined;
    }
    return { type: result, ids };
  }

  /** `&&` and `||`: each operand must be a bool, reported operand by operand. */
  private resolveLogical(
    id: string,
    args: readonly Expr[],
    argTypes: readonly CelType[],
  ): { type: CelType; ids: string[] } | undefined {
    let failed = false;
    argTypes.forEach((t, i) => {
      if (!isAssignable(this.mapping, t, BOOL)) {
        this.report((args[i] as Expr).id, msg.typeMismatch(BOOL, t));
        failed = true;
      }
    });
    return failed ? undefined : { type: BOOL, ids: [id] };
  }

  // --- literals ------------------------------------------------------------------------------

  private joinTypes(previous: CelType | undefined, current: CelType): CelType {
    if (previous === undefined) return current;
    if (isAssignable(this.mapping, previous, current)) return mostGeneral(previous, current);
    // Mixed literals are dyn; the homogeneous-literal validator reports them.
    return DYN;
  }

  /** The value type of an optional entry (`[?x]`, `{?k: v}`), reporting a non-optional one. */
  private optionalEntry(e: Expr, t: CelType): CelType {
    const [value, wasOptional] = maybeUnwrapOptional(t);
    if (!wasOptional && !isDyn(value)) this.report(e.id, msg.typeMismatch(optionalOf(value), value));
    return value;
  }

  private checkList(e: ListNode): void {
    let elems: CelType | undefined;
    e.elements.forEach((x, i) => {
      this.check(x);
      let t = this.typeOf(x);
      if (e.optionalIndices.has(i)) t = this.optionalEntry(x, t);
      elems = this.joinTypes(elems, t);
    });
    this.setType(e, listOf(elems ?? this.newTypeVar()));
  }

  private checkMap(e: MapNode): void {
    let keys: CelType | undefined;
    let values: CelType | undefined;
    for (const entry of e.entries) {
      this.check(entry.key);
      keys = this.joinTypes(keys, this.typeOf(entry.key));
      this.check(entry.value);
      let t = this.typeOf(entry.value);
      if (entry.optional) t = this.optionalEntry(entry.value, t);
      values = this.joinTypes(values, t);
    }
    if (keys === undefined || values === undefined) {
      keys = this.newTypeVar();
      values = this.newTypeVar();
    }
    this.setType(e, mapOf(keys, values));
  }

  /** checker.go checkCreateStruct: `Msg{field: value}`. */
  private checkStruct(e: StructNode): void {
    const named = this.resolveTypeName(e.typeName);
    if (named === undefined) {
      this.report(e.id, msg.undeclaredReference(e.typeName));
      this.setType(e, ERROR);
      return;
    }
    this.references.set(e.id, e.typeName);
    let result: CelType = named;
    let typeName = e.typeName;
    const wellKnown = wellKnownTypeName(named);
    if (wellKnown !== undefined) typeName = wellKnown;
    else if (named.kind === "struct") typeName = named.name;
    else {
      this.report(e.id, msg.notAMessageType(declaredTypeName(named)));
      result = ERROR;
    }
    this.setType(e, result);
    for (const field of e.fields) {
      this.check(field.value);
      const fieldType = this.lookupFieldType(field.id, typeName, field.name) ?? ERROR;
      let t = this.typeOf(field.value);
      if (field.optional) t = this.optionalEntry(field.value, t);
      if (!isAssignable(this.mapping, fieldType, t))
        this.report(field.id, msg.fieldTypeMismatch(field.name, fieldType, t));
    }
  }

  /** env.go resolveTypeIdent: a type the provider knows by name, or a message type. */
  private resolveTypeName(name: string): CelType | undefined {
    const registered = this.env.typeNames.get(name);
    if (registered !== undefined) return registered;
    return this.env.findMessage(name) === undefined ? undefined : objectType(name);
  }

  // --- comprehensions ------------------------------------------------------------------------

  private enterScope(vars: Iterable<readonly [string, CelType]>): void {
    this.filterCrossType = false;
    this.scopes.push(new Map(vars));
  }

  private exitScope(): void {
    this.scopes.pop();
  }

  private assertType(e: Expr, t: CelType): void {
    const actual = this.typeOf(e);
    if (!isAssignable(this.mapping, t, actual)) this.report(e.id, msg.typeMismatch(t, actual));
  }

  /** The loop variables' types for a range: a list's element (or index and element), a map's key (and value). */
  private loopVariables(e: ComprehensionNode, range: CelType): [CelType, CelType | undefined] {
    const two = e.iterVar2 !== undefined;
    switch (range.kind) {
      case "list":
        return two ? [INT, range.params[0] as CelType] : [range.params[0] as CelType, undefined];
      case "map":
        return [range.params[0] as CelType, two ? (range.params[1] as CelType) : undefined];
      case "dyn":
      case "error":
      case "typeParam":
        isAssignable(this.mapping, DYN, range);
        return [DYN, two ? DYN : undefined];
      default:
        this.report(e.iterRange.id, msg.notAComprehensionRange(range));
        return [ERROR, two ? ERROR : undefined];
    }
  }

  private checkComprehension(e: ComprehensionNode): void {
    this.check(e.iterRange);
    this.check(e.accuInit);
    const range = substitute(this.mapping, this.typeOf(e.iterRange), false);
    const accuType = this.typeOf(e.accuInit);
    this.enterScope([[e.accuVar, accuType]]);
    const [varType, var2Type] = this.loopVariables(e, range);
    const loopVars: [string, CelType][] = [[e.iterVar, varType]];
    if (e.iterVar2 !== undefined) loopVars.push([e.iterVar2, var2Type ?? ERROR]);
    this.enterScope(loopVars);
    this.check(e.loopCondition);
    this.assertType(e.loopCondition, BOOL);
    this.check(e.loopStep);
    this.assertType(e.loopStep, accuType);
    this.exitScope();
    this.check(e.result);
    this.exitScope();
    this.setType(e, substitute(this.mapping, this.typeOf(e.result), false));
  }

  /**
   * `cel.bind(name, init, body)`, which cel-go expands to a comprehension over `[]` whose
   * accumulator is `name`: checked as that comprehension is, down to the type variable of `[]`.
   */
  private checkBind(e: BindNode): void {
    const rangeElem = this.newTypeVar();
    this.check(e.init);
    const accuType = this.typeOf(e.init);
    this.enterScope([[e.name, accuType]]);
    this.enterScope([["#unused", rangeElem]]);
    this.exitScope();
    this.check(e.body);
    this.exitScope();
    this.setType(e, substitute(this.mapping, this.typeOf(e.body), false));
  }
}

function constType(v: unknown): CelType {
  switch (typeof v) {
    case "boolean":
      return BOOL;
    case "bigint":
      return INT;
    case "number":
      return DOUBLE;
    case "string":
      return STRING;
    default:
      if (v === null) return NULL;
      if (v instanceof UInt) return UINT;
      if (v instanceof Uint8Array) return BYTES;
      return ERROR;
  }
}
