/**
 * Helpers for the checker's tests: check a source, render its diagnostics as cel-go prints them,
 * compare texts as cel-go's tests do (test.Compare ignores all whitespace), and print a checked
 * expression in cel-go's debug format (`expr~type^reference`, checker/printer.go), so that cases
 * ported from cel-go's checker_test.go compare node by node.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Expr, ParsedExpression } from "../../../../src/cel/syntax/ast.ts";
import {
  type CheckEnv,
  type CheckResult,
  checkExpression,
  createCheckEnv,
  formatType,
  messageType,
} from "../../../../src/cel/check/index.ts";
import { type FunctionDecl, parseType, type LibraryDecl } from "../../../../src/cel/check/decls/index.ts";
import { fn, global, member } from "../../../../src/cel/check/decls/model.ts";
import { optionalDecls } from "../../../../src/cel/check/decls/optional.ts";
import { stdDecls } from "../../../../src/cel/check/decls/std.ts";
import { renderError } from "../../../../src/cel/syntax/source.ts";
import { parseCel } from "../../../../src/cel/syntax/parse.ts";
import { UInt } from "../../../../src/cel/runtime/values.ts";

export { fn, global, member, parseType };

export function check(src: string, env: CheckEnv): { parsed: ParsedExpression; result: CheckResult } {
  const parsed = parseCel(src, { bind: true });
  return { parsed, result: checkExpression(parsed, env) };
}

/** The diagnostics as cel-go's Issues print them. */
export function rendered(src: string, result: CheckResult): string {
  return result.diagnostics.map((d) => renderError(src, d.offset, d.message)).join("\n");
}

/** cel-go's test.Compare: equal once every whitespace character is removed. */
export function sameText(actual: string, expected: string): boolean {
  return actual.replace(/\s+/g, "") === expected.replace(/\s+/g, "");
}

export function assertSameText(actual: string, expected: string, what = ""): void {
  assert.ok(sameText(actual, expected), `${what}\n--- got\n${actual}\n--- want\n${expected}`);
}

/** Messages only, for cases whose positions our parser places differently from cel-go's. */
export function messages(result: CheckResult): string[] {
  return result.diagnostics.map((d) => d.message);
}

// ---- cel-go's test declarations --------------------------------------------------------------

/** checker_test.go testEnvs["default"]. */
export const DEFAULT_IDENTS: Record<string, string> = {
  is: "string",
  ii: "int",
  iu: "uint",
  iz: "bool",
  ib: "bytes",
  id: "double",
  ix: "null",
};

export const DEFAULT_FUNCTIONS: FunctionDecl[] = [
  fn("fg_s", global("fg_s_0", "() -> string")),
  fn("fi_s_s", member("fi_s_s_0", "string.() -> string")),
];

const P3 = "google.expr.proto3.test.TestAllTypes";
const P2 = "google.expr.proto2.test.TestAllTypes";

/** The fields of the test protos (test/proto3pb, test/proto2pb) the ported cases use. */
const TEST_FIELDS: Record<string, Record<string, string>> = {
  [P3]: {
    single_int32: "int",
    single_int64: "int",
    single_value: "dyn",
    single_struct: "map(string, dyn)",
    single_timestamp: "timestamp",
    single_duration: "duration",
    repeated_int32: "list(int)",
    repeated_int64: "list(int)",
    map_string_string: "map(string, string)",
    map_int64_nested_type: "map(int, google.expr.proto3.test.NestedTestAllTypes)",
    single_nested_message: `${P3}.NestedMessage`,
    repeated_nested_message: `list(${P3}.NestedMessage)`,
    single_int64_wrapper: "google.protobuf.Int64Value",
    single_int32_wrapper: "google.protobuf.Int32Value",
    single_bool_wrapper: "google.protobuf.BoolValue",
    single_bytes_wrapper: "google.protobuf.BytesValue",
    single_double_wrapper: "google.protobuf.DoubleValue",
    single_float_wrapper: "google.protobuf.FloatValue",
    single_string_wrapper: "google.protobuf.StringValue",
    single_uint32_wrapper: "google.protobuf.UInt32Value",
    single_uint64_wrapper: "google.protobuf.UInt64Value",
  },
  [`${P3}.NestedMessage`]: { bb: "int" },
  "google.expr.proto3.test.NestedTestAllTypes": { payload: P3 },
  [P2]: {
    single_int32: "int",
    single_int64: "int",
    repeated_int32: "list(int)",
    map_string_string: "map(string, string)",
    nestedgroup: `${P2}.NestedGroup`,
    repeated_nested_message: `list(${P2}.NestedMessage)`,
  },
  [`${P2}.NestedGroup`]: { nested_id: "int" },
  [`${P2}.NestedMessage`]: { bb: "int" },
};

function testMessage(name: string, fieldsOf: string) {
  const fields = TEST_FIELDS[fieldsOf];
  if (!fields) throw new Error(`no test message ${fieldsOf}`);
  return messageType(name, Object.fromEntries(Object.entries(fields).map(([f, t]) => [f, parseType(t)])));
}

export const TEST_MESSAGES = Object.keys(TEST_FIELDS).map((n) => testMessage(n, n));

export interface TestEnvOptions {
  readonly idents?: Record<string, string>;
  readonly functions?: readonly FunctionDecl[];
  readonly optional?: boolean;
  readonly crossTypeNumericComparisons?: boolean;
  /** Message types under short names, standing for cel-go's container resolution. */
  readonly aliases?: Record<string, string>;
}

/** An environment like checker_test.go's: the standard library, and what the case declares. */
export function testEnv(o: TestEnvOptions = {}): CheckEnv {
  const libraries: LibraryDecl[] = [stdDecls];
  if (o.optional) libraries.push(optionalDecls);
  if (o.functions) libraries.push({ name: "test", kubernetes: "none", functions: o.functions });
  const aliases = Object.entries(o.aliases ?? {}).map(([short, full]) => testMessage(short, full));
  return createCheckEnv({
    libraries,
    variables: Object.entries(o.idents ?? {}).map(([n, t]) => [n, parseType(t)] as const),
    messages: [...TEST_MESSAGES, ...aliases],
    crossTypeNumericComparisons: o.crossTypeNumericComparisons ?? true,
    validators: [],
  });
}

// ---- cel-go's debug format ---------------------------------------------------------------------

function literal(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return `${v}`;
  if (v instanceof UInt) return `${v.value}u`;
  if (v instanceof Uint8Array) return `b${JSON.stringify(new TextDecoder().decode(v))}`;
  return String(v);
}

/**
 * checker/printer.go: each node followed by `~type` and, for references, `^name` or `^overloads`.
 * Comprehensions are not printed (our macros expand differently); cases with them compare types.
 */
export function debugString(parsed: ParsedExpression, r: CheckResult): string {
  const suffix = (e: Expr): string => {
    const t = r.types.get(e.id);
    let s = t ? `~${formatType(t)}` : "";
    const ref = r.references.get(e.id);
    const ids = r.overloads.get(e.id);
    if (ids && e.kind === "call") s += `^${[...ids].sort().join("|")}`;
    else if (ref !== undefined) s += `^${ref}`;
    return s;
  };
  const p = (e: Expr): string => {
    switch (e.kind) {
      case "const":
        return literal(e.value) + suffix(e);
      case "ident":
        return e.name + suffix(e);
      case "select":
        if (r.references.has(e.id)) return (r.references.get(e.id) as string) + suffix(e);
        if (e.testOnly) return `${p(e.operand)}.${e.field}~test-only~${suffix(e)}`;
        return `${p(e.operand)}.${e.field}${suffix(e)}`;
      case "call": {
        const name = r.functions.get(e.id) ?? e.fn;
        const args = e.args.map(p).join(", ");
        if (e.target && !r.functions.has(e.id)) return `${p(e.target)}.${name}(${args})${suffix(e)}`;
        return `${name}(${args})${suffix(e)}`;
      }
      case "list":
        return `[${e.elements.map((x, i) => (e.optionalIndices.has(i) ? "?" : "") + p(x)).join(", ")}]${suffix(e)}`;
      case "map":
        return `{${e.entries.map((en) => `${en.optional ? "?" : ""}${p(en.key)}:${p(en.value)}`).join(", ")}}${suffix(e)}`;
      case "struct":
        return `${e.typeName}{${e.fields.map((f) => `${f.optional ? "?" : ""}${f.name}:${p(f.value)}`).join(", ")}}${suffix(e)}`;
      default:
        throw new Error(`debugString: ${e.kind} nodes are not printed`);
    }
  };
  return p(parsed.root);
}

// ---- ported checker cases ----------------------------------------------------------------------

export interface Case {
  readonly in: string;
  readonly env?: TestEnvOptions;
  /** FormatCELType of the expected outType. */
  readonly type?: string;
  /** The checked AST as cel-go prints it. */
  readonly out?: string;
  /** The errors as cel-go prints them, positions included. */
  readonly err?: string;
  /**
   * Our parser (@bufbuild/cel through syntax/parse.ts) places this node elsewhere than cel-go's: a call
   * at its start instead of its `(`, a struct at its start instead of its `{`, a struct field at its
   * name instead of its `:`, `in` after its left operand instead of on the operator. The messages
   * are compared; the positions are syntax/parse.ts's to fix.
   */
  readonly parserOffsets?: "call" | "struct" | "field" | "in";
}

/** Runs cases ported from cel-go's checker_test.go: errors as printed, or type and checked AST. */
export function runCases(label: string, cases: readonly Case[]): void {
  for (const c of cases) {
    test(`${label}: ${c.in.replace(/\s+/g, " ")}`, () => {
      const { parsed, result } = check(c.in, testEnv(c.env));
      if (c.err !== undefined) {
        if (c.parserOffsets === undefined) assertSameText(rendered(c.in, result), c.err, "errors");
        else
          assert.deepEqual(
            messages(result),
            [...c.err.matchAll(/ERROR: <input>:\d+:\d+: ([^\n|]*)/g)].map((m) => (m[1] ?? "").trim()),
          );
        return;
      }
      assert.deepEqual(
        result.diagnostics.map((d) => d.message),
        [],
        "no errors",
      );
      if (c.type !== undefined) assert.equal(formatType(result.type), c.type);
      if (c.out !== undefined) assertSameText(debugString(parsed, result), c.out, "checked AST");
    });
  }
}
