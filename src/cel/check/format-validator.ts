/**
 * cel-go's static check of `'...'.format([...])` (ext/formatting.go stringFormatValidator, the
 * strings extension below version 4, as Kubernetes has it): when the format string and the
 * argument list are both literals, each clause is parsed as the runtime would and checked against
 * its argument's type, and the arguments must all be used. The first fault is reported, with the
 * runtime's text ("error during formatting: ..."), at the argument at fault or at the call.
 */
import type { CallNode, Expr } from "../syntax/ast.ts";
import type { CelType, Kind } from "./types.ts";
import { functionName, type ValidatorContext } from "./validator-context.ts";

type Verb = "s" | "d" | "f" | "e" | "b" | "x" | "o";

const ALLOWED: Record<Exclude<Verb, "s">, { readonly kinds: readonly Kind[]; readonly message: string }> = {
  d: { kinds: ["int", "uint"], message: "decimal clause can only be used on integers" },
  f: { kinds: ["double", "string"], message: "fixed-point clause can only be used on doubles" },
  e: { kinds: ["double", "string"], message: "scientific clause can only be used on doubles" },
  b: { kinds: ["int", "uint", "bool"], message: "only integers and bools can be formatted as binary" },
  x: {
    kinds: ["int", "uint", "string", "bytes"],
    message: "only integers, byte buffers, and strings can be formatted as hex",
  },
  o: { kinds: ["int", "uint"], message: "octal clause can only be used on integers" },
};

const STRING_KINDS: readonly Kind[] = [
  "list",
  "map",
  "int",
  "uint",
  "double",
  "bool",
  "string",
  "timestamp",
  "bytes",
  "duration",
  "type",
  "null",
];

const STRING_CLAUSE =
  "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps";

/** verifyTypeOneOf: dyn passes; otherwise the kind must be one of those given. */
function oneOf(t: CelType, kinds: readonly Kind[]): boolean {
  return t.kind === "dyn" || kinds.includes(t.kind);
}

/** The argument of a `%s` clause, and of its elements when it is a list or map literal. */
function badStringArg(ctx: ValidatorContext, e: Expr): Expr | undefined {
  if (!oneOf(ctx.types.get(e.id) as CelType, STRING_KINDS)) return e;
  if (e.kind === "list") {
    for (const x of e.elements) {
      const bad = badStringArg(ctx, x);
      if (bad) return bad;
    }
  } else if (e.kind === "map") {
    for (const en of e.entries) {
      const bad = badStringArg(ctx, en.key) ?? badStringArg(ctx, en.value);
      if (bad) return bad;
    }
  }
  return undefined;
}

/** A clause's argument against its verb: the node at fault and the text, or undefined. */
function checkArgument(
  ctx: ValidatorContext,
  verb: Verb,
  arg: Expr,
): { id: number; text: string } | undefined {
  if (verb === "s") {
    const bad = badStringArg(ctx, arg);
    return (
      bad && { id: bad.id, text: `${STRING_CLAUSE}, was given ${(ctx.types.get(bad.id) as CelType).name}` }
    );
  }
  const rule = ALLOWED[verb];
  const t = ctx.types.get(arg.id) as CelType;
  return oneOf(t, rule.kinds) ? undefined : { id: arg.id, text: `${rule.message}, was given ${t.name}` };
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * parseFormattingClause on the bytes after a `%`: the optional precision, then the verb.
 * Returns the bytes read and the verb, or the error text.
 */
function parseClause(bytes: Uint8Array, start: number): { read: number; verb: Verb } | { error: string } {
  let i = start;
  if (bytes[i] === 0x2e /* . */) {
    i++;
    let digits = "";
    for (;;) {
      if (i >= bytes.length)
        return { error: "error while parsing precision: could not find end of precision specifier" };
      const b = bytes[i] as number;
      if (b < DIGIT_0 || b > DIGIT_9) break;
      digits += String.fromCharCode(b);
      i++;
    }
    // strconv.Atoi's errors for an empty or oversized precision.
    if (digits === "" || BigInt(digits) > 2n ** 63n - 1n) {
      const why = digits === "" ? "invalid syntax" : "value out of range";
      return {
        error: `error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing ${JSON.stringify(digits)}: ${why}`,
      };
    }
  }
  const c = String.fromCharCode(bytes[i] as number);
  i++;
  switch (c) {
    case "s":
    case "d":
    case "f":
    case "e":
    case "b":
    case "o":
      return { read: i - start, verb: c };
    case "x":
    case "X":
      return { read: i - start, verb: "x" };
    default:
      return { error: `unrecognized formatting clause "${c}"` };
  }
}

/** matchConstantFormatStringWithListLiteralArgs: a member `format` on a string literal with a list literal. */
function isConstantFormatCall(ctx: ValidatorContext, e: CallNode): boolean {
  if (!e.target || ctx.functions.has(e.id) || functionName(ctx, e) !== "format") return false;
  const ids = ctx.overloads.get(e.id);
  if (ids && ids.length > 0 && !ids.includes("string_format")) return false;
  return (
    e.target.kind === "const" &&
    typeof e.target.value === "string" &&
    e.args.length === 1 &&
    e.args[0]?.kind === "list"
  );
}

export function checkStringFormat(ctx: ValidatorContext, e: CallNode): void {
  if (!isConstantFormatCall(ctx, e)) return;
  const report = (id: number, text: string) => ctx.report(id, text, "cel.validator.string_format");
  const bytes = new TextEncoder().encode((e.target as { value: string }).value);
  const args = (e.args[0] as Extract<Expr, { kind: "list" }>).elements;
  let requested = 0;
  let argIndex = 0;
  let i = 0;
  while (i < bytes.length) {
    if (bytes[i] !== 0x25 /* % */) {
      i++;
      continue;
    }
    if (bytes[i + 1] === 0x25) {
      i += 2;
      continue;
    }
    requested++;
    if (i + 1 >= bytes.length) {
      report(e.id, "unexpected end of string");
      return;
    }
    if (argIndex >= args.length) {
      report(e.id, `index ${argIndex} out of range`);
      return;
    }
    const clause = parseClause(bytes, i + 1);
    if ("error" in clause) {
      report(e.id, `could not parse formatting clause: ${clause.error}`);
      return;
    }
    const fault = checkArgument(ctx, clause.verb, args[argIndex] as Expr);
    if (fault) {
      report(fault.id, `error during formatting: ${fault.text}`);
      return;
    }
    i += 1 + clause.read;
    argIndex++;
  }
  if (args.length > requested)
    report(e.id, `too many arguments supplied to string.format (expected ${requested}, got ${args.length})`);
}
