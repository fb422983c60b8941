/**
 * The optional-syntax cases of cel-go's checker/checker_test.go (testEnv optionalSyntax: the
 * optional library's declarations, `a.?b`, `[?x]`, `{?k: v}`, `Msg{?f: v}`), as in checker.test.ts.
 */
import { type Case, runCases } from "./helpers.ts";

const P2 = "google.expr.proto2.test.TestAllTypes";

const CASES: readonly Case[] = [
  // Optional syntax (parser.EnableOptionalSyntax and the optional library's declarations).
  {
    in: `a.?b`,
    env: { optional: true, idents: { a: "map(string, string)" } },
    type: "optional_type(string)",
    out: `a~map(string, string)^a.b~optional_type(string)`,
  },
  {
    in: `type(a.?b) == optional_type`,
    env: { optional: true, idents: { a: "map(string, string)" } },
    type: "bool",
  },
  {
    in: `a.b`,
    env: { idents: { a: "optional_type(map(string, string))" } },
    type: "optional_type(string)",
    out: `a~optional_type(map(string, string))^a.b~optional_type(string)`,
  },
  {
    in: `a.dynamic`,
    env: { idents: { a: "optional_type(dyn)" } },
    type: "optional_type(dyn)",
    out: `a~optional_type(dyn)^a.dynamic~optional_type(dyn)`,
  },
  {
    in: `has(a.dynamic)`,
    env: { idents: { a: "optional_type(dyn)" } },
    type: "bool",
    out: `a~optional_type(dyn)^a.dynamic~test-only~~bool`,
  },
  {
    in: `has(a.?b.c)`,
    env: { optional: true, idents: { a: "optional_type(map(string, dyn))" } },
    type: "bool",
  },
  { in: `{?'key': {'a': 'b'}.?value}`, env: { optional: true }, type: "map(string, string)" },
  { in: `{?'key': {'a': 'b'}.?value}.key`, env: { optional: true }, type: "string" },
  {
    in: `{?'nested': a.b}`,
    env: { optional: true, idents: { a: "optional_type(map(string, string))" } },
    type: "map(string, string)",
  },
  {
    in: `{?'key': 'hi'}`,
    env: { optional: true },
    err: `ERROR: <input>:1:10: expected type 'optional_type(string)' but found 'string' | {?'key': 'hi'} | .........^`,
  },
  {
    in: `[?a, ?b, 'world']`,
    env: { optional: true, idents: { a: "optional_type(string)", b: "optional_type(string)" } },
    type: "list(string)",
    out: `[?a~optional_type(string)^a, ?b~optional_type(string)^b, "world"~string]~list(string)`,
  },
  {
    in: `[?'value']`,
    env: { optional: true },
    err: `ERROR: <input>:1:3: expected type 'optional_type(string)' but found 'string' | [?'value'] | ..^`,
  },
  {
    in: `TestAllTypes{?single_int32: {}.?i}`,
    env: { optional: true, aliases: { TestAllTypes: P2 } },
    type: "TestAllTypes",
  },
  {
    in: `TestAllTypes{?single_int32: 1}`,
    env: { optional: true, aliases: { TestAllTypes: P2 } },
    err: `ERROR: <input>:1:29: expected type 'optional_type(int)' but found 'int'
      | TestAllTypes{?single_int32: 1}
      | ............................^`,
  },
];

runCases("cel-go checker_test.go (optional syntax)", CASES);
