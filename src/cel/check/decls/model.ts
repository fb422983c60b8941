/**
 * How typed function declarations are written: tables of overloads, each with cel-go's overload id
 * and a signature in the notation cel-go's documentation uses,
 *
 *   global("add_list", "(list(A), list(A)) -> list(A)")
 *   member("string_char_at_int", "string.(int) -> string")
 *
 * where a single capital letter is a type parameter, any other name that is not a CEL type is a
 * message (object) type, as Kubernetes declares its library types (cel.ObjectType), and such a name
 * with parameters is an abstract (opaque) type.
 */
import {
  ANY,
  BOOL,
  BYTES,
  type CelType,
  DOUBLE,
  DURATION,
  DYN,
  INT,
  listOf,
  mapOf,
  NULL,
  objectType,
  opaque,
  STRING,
  TIMESTAMP,
  TYPE,
  typeOf,
  typeParam,
  UINT,
} from "../types.ts";

export interface OverloadDecl {
  /** cel-go's (or Kubernetes') overload id. */
  readonly id: string;
  /** Called as `receiver.name(args)`; the receiver is the first of `args`. */
  readonly member: boolean;
  readonly args: readonly CelType[];
  readonly result: CelType;
  /** Names of the type parameters in `args` and `result`, instantiated afresh at each use. */
  readonly typeParams: readonly string[];
}

export interface FunctionDecl {
  /** The name as cel-go declares it (`_+_`, `optional.of`, `cel.@mapInsert`). */
  readonly name: string;
  readonly overloads: readonly OverloadDecl[];
}

/** A set of declarations that an environment enables or not as a whole. */
export interface LibraryDecl {
  readonly name: string;
  /**
   * The Kubernetes release (`1.28`) whose admission environment first has it, `1.0` for the base
   * environment's, or `none` for libraries Kubernetes does not enable (extras).
   */
  readonly kubernetes: string;
  /** For a library Kubernetes does not enable: the celgate extra that turns it on, if any. */
  readonly extra?: "bind" | "math" | "base64";
  readonly functions: readonly FunctionDecl[];
}

const NAMED: ReadonlyMap<string, CelType> = new Map([
  ["any", ANY],
  ["bool", BOOL],
  ["bytes", BYTES],
  ["double", DOUBLE],
  ["duration", DURATION],
  ["google.protobuf.Duration", DURATION],
  ["dyn", DYN],
  ["int", INT],
  ["null", NULL],
  ["null_type", NULL],
  ["string", STRING],
  ["timestamp", TIMESTAMP],
  ["google.protobuf.Timestamp", TIMESTAMP],
  ["type", TYPE],
  ["uint", UINT],
]);

class SignatureParser {
  private i = 0;
  constructor(private readonly text: string) {}

  private fail(): never {
    throw new Error(`bad signature ${JSON.stringify(this.text)} at ${this.i}`);
  }

  private skipSpace(): void {
    while (this.text[this.i] === " ") this.i++;
  }

  private eat(s: string): boolean {
    this.skipSpace();
    if (this.text.startsWith(s, this.i)) {
      this.i += s.length;
      return true;
    }
    return false;
  }

  private expect(s: string): void {
    if (!this.eat(s)) this.fail();
  }

  /** A type name: identifier characters and dots, stopping before `.(` (a receiver's end). */
  private name(): string {
    this.skipSpace();
    const start = this.i;
    while (this.i < this.text.length) {
      const c = this.text[this.i] as string;
      if (c === "." && this.text[this.i + 1] === "(") break;
      if (!/[A-Za-z0-9_.@]/.test(c)) break;
      this.i++;
    }
    if (this.i === start) this.fail();
    return this.text.slice(start, this.i);
  }

  type(): CelType {
    const name = this.name();
    const params: CelType[] = [];
    if (this.eat("(")) {
      do params.push(this.type());
      while (this.eat(","));
      this.expect(")");
    }
    if (/^[A-Z]$/.test(name)) return typeParam(name);
    switch (name) {
      case "list":
        return listOf(params[0] ?? this.fail());
      case "map":
        return mapOf(params[0] ?? this.fail(), params[1] ?? this.fail());
      case "type":
        return params.length === 0 ? TYPE : typeOf(params[0] as CelType);
      case "optional_type":
        return opaque("optional_type", ...params);
      default:
        // Other parameterized names are abstract (opaque) types, as cel-go's `set(T)` in its tests.
        if (params.length > 0) return opaque(name, ...params);
        return NAMED.get(name) ?? objectType(name);
    }
  }

  /** `(args) -> result` or `receiver.(args) -> result`. */
  signature(): { member: boolean; args: CelType[]; result: CelType } {
    const args: CelType[] = [];
    let member = false;
    if (!this.eat("(")) {
      args.push(this.type());
      this.expect(".(");
      member = true;
    }
    if (!this.eat(")")) {
      do args.push(this.type());
      while (this.eat(","));
      this.expect(")");
    }
    this.expect("->");
    const result = this.type();
    this.skipSpace();
    if (this.i !== this.text.length) this.fail();
    return { member, args, result };
  }
}

/** Parses a type in the signature notation (`map(string, list(A))`). */
export function parseType(text: string): CelType {
  return new SignatureParser(text).type();
}

function collectParams(t: CelType, out: Set<string>): void {
  if (t.kind === "typeParam") out.add(t.name);
  for (const p of t.params) collectParams(p, out);
}

function overload(id: string, signature: string, member: boolean): OverloadDecl {
  const sig = new SignatureParser(signature).signature();
  if (sig.member !== member)
    throw new Error(`overload ${id}: signature ${signature} has the wrong call style`);
  const params = new Set<string>();
  for (const a of sig.args) collectParams(a, params);
  collectParams(sig.result, params);
  return { id, member, args: sig.args, result: sig.result, typeParams: [...params] };
}

export function global(id: string, signature: string): OverloadDecl {
  return overload(id, signature, false);
}

export function member(id: string, signature: string): OverloadDecl {
  return overload(id, signature, true);
}

export function fn(name: string, ...overloads: OverloadDecl[]): FunctionDecl {
  return { name, overloads };
}
