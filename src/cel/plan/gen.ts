/**
 * The writer of the evaluator's second tier: a compiled expression written out as one JavaScript
 * function (the planner's node kinds, plan/*.ts, each write their part through a Gen).
 *
 * Closures made from the same source share V8's type feedback, so their calls to one another stay
 * megamorphic and are never inlined. For the nodes that dominate admission policies (field
 * selection and optional chains, `&&`/`||`/`!`, the conditional, equality, `in` a constant list,
 * comprehensions, bind) the planner also supplies an emitter; an expression made of them becomes
 * straight-line code with its loops written out, and any other node is called as its closure from
 * that code. Each emitter mirrors its closure statement for statement: the same evaluation order,
 * the same cost charges, the same error absorption and the same positions on errors, so the two
 * tiers agree on value, error and cost. The one exception is `all`/`exists`, whose emitter writes
 * out what the generic loop's condition and step come to (a local boolean and the first error)
 * rather than the steps themselves; the codegen and differential tests hold it to the closures all
 * the same.
 *
 * Generated code reaches run-time helpers only through `Gen.h`, typed by the helper table the Gen
 * was made with (plan/helpers.ts): a helper renamed or removed there is a type error in every
 * emitter that names it, and the function destructures only the helpers its code named, so a
 * name written into the code any other way is not defined when the code runs.
 *
 * Why a second tier rather than cloned closures (own feedback per site, the same calls): see
 * docs/architecture.md.
 */
import type { CelValue } from "../runtime/values.ts";

/** Run-time helpers generated code reaches by name, through `H` (plan/helpers.ts HELPERS). */
export type HelperTable = Readonly<Record<string, unknown>>;

/** The names of a helper table's helpers, as generated code spells them. */
export type HelperNames<H extends HelperTable> = { readonly [K in keyof H & string]: K };

/**
 * A generated function: `generated(A, st, S)`, the activation, the evaluation state and the slots.
 * Emitted code names them so; code that calls closures also builds the frame they take, `f`
 * (`{ act: A, slots: S, st }`, plan/node.ts Frame).
 */
export type GeneratedEval<A, S> = (act: A, st: S, slots: CelValue[]) => CelValue;

/** Where a writer's `h` keeps the set of helpers its code named. */
const USED: unique symbol = Symbol("used");

/** The getters of each helper table's names, defined once per table (helperNames). */
const namePrototypes = new WeakMap<HelperTable, object>();

/**
 * A writer's `h`: reading its property `x` gives "x" and adds it to `used`. The getters are defined
 * once per helper table, on a prototype every writer's `h` shares: getters defined per writer made
 * each `h` an object of a new shape, and writing code several times slower.
 */
function helperNames<H extends HelperTable>(helpers: H, used: Set<string>): HelperNames<H> {
  let proto = namePrototypes.get(helpers);
  if (proto === undefined) {
    proto = Object.create(null) as object;
    for (const name of Object.keys(helpers))
      Object.defineProperty(proto, name, {
        get(this: { readonly [USED]: Set<string> }): string {
          this[USED].add(name);
          return name;
        },
      });
    namePrototypes.set(helpers, proto);
  }
  const names = Object.create(proto) as { [USED]: Set<string> };
  names[USED] = used;
  return names as unknown as HelperNames<H>;
}

export class Gen<H extends HelperTable> {
  /**
   * The helpers' names, for writing into code: `${g.h.selectValue}(...)`. Reading one marks the
   * helper as used, and the function built defines only those.
   */
  readonly h: HelperNames<H>;
  private readonly used = new Set<string>();
  private readonly lines: string[] = [];
  private readonly constants: unknown[] = [];
  private temps = 0;
  private labels = 0;
  private chars = 0;
  /** Slots written as locals (`s<n>`), when `localSlots`. */
  private readonly locals = new Set<number>();
  /** Whether the code reads JSON input the quick way, valid only when the activation promises JSON. */
  assumesJson = false;
  /** Whether the code calls a closure: one that, given the frame, may read its slots. */
  callsClosures = false;

  /** How often this writing read each path (see `pathCache`). */
  private readonly pathReads = new Map<string, number>();
  /** The locals holding paths read more than once, by path. */
  private readonly pathLocals = new Map<string, string>();
  /**
   * The ordinal of the program being written, in code that writes several (sequence.ts): a loop
   * element's paths are its program's own.
   */
  program = 0;
  /**
   * For a variable holding the string a concatenation made: the variable holding its size in code
   * points, set with it, so a concatenation onto it need not count them again (plan/dispatch.ts
   * concatSizeCode).
   */
  readonly stringSizes = new Map<string, string>();

  /**
   * @param helpers the run-time helpers the code may name, through `h`
   * @param localSlots the frame's slots (loop and bind variables) as local variables: only for code
   *   that calls no closure (`callsClosures` after a first writing), since closures read the frame's.
   * @param earlier the path reads of a first writing of the same code (`pathReads`): the paths it
   *   read more than once are kept in locals in this one.
   */
  constructor(
    private readonly helpers: H,
    private readonly localSlots: boolean,
    private readonly earlier?: ReadonlyMap<string, number>,
  ) {
    this.h = helperNames(helpers, this.used);
  }

  /** How often each path was read in this writing, for a second one (`earlier`). */
  get pathReadCounts(): ReadonlyMap<string, number> {
    return this.pathReads;
  }

  /**
   * A read of `path`, a field path from a value that does not change while the code runs (a root
   * variable) or while a loop is on one element (its variable). Returns the local that keeps its
   * value once read, when the first writing read the path more than once; the reader fills it (it
   * starts undefined, which no value is) and takes it when filled. A megamorphic property read is
   * not free, and Pod Security rules read `c.?securityContext.?...` and `object.spec` over and over.
   */
  pathCache(path: string): string | undefined {
    this.pathReads.set(path, (this.pathReads.get(path) ?? 0) + 1);
    return (this.earlier?.get(path) ?? 0) > 1 ? this.pathLocal(path) : undefined;
  }

  /**
   * Empties the locals of the paths that start at `base` (a loop variable's), where the loop gives
   * it its next element.
   */
  resetPaths(base: string): void {
    if (this.earlier === undefined) return;
    const resets: string[] = [];
    for (const [path, n] of this.earlier)
      if (n > 1 && path.startsWith(base) && path.charAt(base.length) === "/")
        resets.push(`${this.pathLocal(path)} = undefined;`);
    if (resets.length > 0) this.line(resets.join(" "));
  }

  private pathLocal(path: string): string {
    let v = this.pathLocals.get(path);
    if (v === undefined) {
      v = this.temp();
      this.pathLocals.set(path, v);
    }
    return v;
  }

  /** Slot `n` of the frame, as an assignable expression. */
  slot(n: number): string {
    if (!this.localSlots) return `S[${n}]`;
    this.locals.add(n);
    return `s${n}`;
  }

  /** A fresh variable (declared once, at the top of the function). */
  temp(): string {
    return `t${this.temps++}`;
  }

  /** A fresh label for a block or loop that nested code must not break out of by mistake. */
  label(): string {
    return `L${this.labels++}`;
  }

  /** A value computed at compile time, as an expression. */
  constant(v: unknown): string {
    this.constants.push(v);
    return `K[${this.constants.length - 1}]`;
  }

  line(code: string): void {
    this.lines.push(code);
    this.chars += code.length + 1;
  }

  /** The code written so far, in characters: roughly its bytecode size in bytes (sequence.ts). */
  get size(): number {
    return this.chars;
  }

  /** Evaluates a node that has no emitter by calling its closure; returns the variable holding the value. */
  call(ev: unknown): string {
    this.callsClosures = true;
    const t = this.temp();
    this.line(`${t} = ${this.constant(ev)}(f);`);
    return t;
  }

  /**
   * The function. `new Function` compiles it outside any module scope, so everything it uses comes
   * in through K (constants, closures) and H (helpers).
   */
  build<A, S>(rootVar: string): GeneratedEval<A, S> {
    return this.buildFunction<GeneratedEval<A, S>>("generated", "", [`return ${rootVar};`]);
  }

  /**
   * A function named `name` of `(A, st, S, ...extra)`, its body the lines written so far and then
   * `tail`. The helpers' names must differ from the temporaries' (`t<n>`, `s<n>`) and from `f`.
   */
  buildFunction<F>(name: string, extra: string, tail: readonly string[]): F {
    const vars = [
      ...Array.from({ length: this.temps }, (_, i) => `t${i}`),
      ...[...this.locals].map((n) => `s${n}`),
    ];
    const decl = vars.length > 0 ? `let ${vars.join(", ")};` : "";
    const body = [
      '"use strict";',
      this.used.size > 0 ? `const { ${[...this.used].join(", ")} } = H;` : "",
      `return function ${name}(A, st, S${extra ? `, ${extra}` : ""}) {`,
      // In the order every frame is built with, so closures see frames of one shape.
      this.callsClosures ? "const f = { act: A, slots: S, st };" : "",
      decl,
      ...this.lines,
      ...tail,
      "};",
    ].join("\n");
    return new Function("K", "H", body)(this.constants, this.helpers) as F;
  }
}
