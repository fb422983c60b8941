/**
 * Run-time error texts as cel-go v0.26 words them (issue 26 item 8), in both evaluation tiers. They
 * reach users in denials, warnings and audit annotations (test/unit/engine/cel-error-texts.test.ts).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorInBothTiers, inBothTiers } from "../../helpers/tiers.ts";

// common/decls/decls.go MaybeNoSuchOverload: `no such overload: %s(%s)` with each argument's TypeName().
test("a dispatch failure names the function and the arguments' type names (cel-go common/decls/decls.go)", () => {
  assert.equal(errorInBothTiers("x + 1 == 2", { x: "a" }), "no such overload: _+_(string, int)");
  assert.equal(errorInBothTiers("size(x) == 1", { x: 1n }), "no such overload: size(int)");
  assert.equal(errorInBothTiers("x.startsWith('a')", { x: 1n }), "no such overload: startsWith(int, string)");
  assert.equal(errorInBothTiers("x < y", { x: [1n], y: [2n] }), "no such overload: _<_(list, list)");
  assert.equal(errorInBothTiers("!x", { x: 1n }), "no such overload: !_(int)");
  // With the call's position, as cel-go labels the error with its node (types.LabelErrNode).
  // (@bufbuild/cel places a unary operator's node where its expression starts, which may be the
  // space before the `!`; cel-go places it on the `!` itself.)
  const not = inBothTiers("true && !x", { x: 1n });
  assert.equal("error" in not ? typeof not.offset : "no error", "number");
  assert.equal(errorInBothTiers("1 in x", { x: 2n }), "no such overload: @in(int, int)");
  assert.equal(errorInBothTiers("x + 1 == 2", { x: null }), "no such overload: _+_(null_type, int)");
});

// interpreter/interpretable.go evalAnd/evalOr and attributes.go conditionalAttribute:
// types.MaybeNoSuchOverloadErr, with no function named.
test("&&, || and ?: on an operand that is not a bool say a bare `no such overload` (cel-go interpretable.go)", () => {
  assert.equal(errorInBothTiers("x && true", { x: 1n }), "no such overload");
  assert.equal(errorInBothTiers("false || x", { x: "a" }), "no such overload");
  assert.equal(errorInBothTiers("(x ? 1 : 2) == 1", { x: 1n }), "no such overload");
  assert.equal(errorInBothTiers("[1, 2].all(i, x)", { x: 1n }), "no such overload");
  assert.equal(errorInBothTiers("[1, 2].exists(i, x)", { x: "a" }), "no such overload");
});

// interpreter/interpretable.go evalFold: `got '%T', expected iterable type`, and with two
// variables `unsupported comprehension range type: %T`; %T is the Go type of cel-go's value.
test("a comprehension over a value that is neither a list nor a map says cel-go's evalFold text", () => {
  assert.equal(errorInBothTiers("x.all(i, true)", { x: 5n }), "got 'types.Int', expected iterable type");
  assert.equal(
    errorInBothTiers("x.map(i, i).size() == 0", { x: "s" }),
    "got 'types.String', expected iterable type",
  );
  assert.equal(
    errorInBothTiers("x.exists(i, true)", { x: null }),
    "got 'types.Null', expected iterable type",
  );
  assert.equal(
    errorInBothTiers("x.all(i, v, true)", { x: 5n }),
    "unsupported comprehension range type: types.Int",
  );
});

// interpreter/interpretable.go invalidOptionalElementInit / invalidOptionalEntryInit.
test("an optional list element or map entry that is not an optional says cel-go's text (interpretable.go)", () => {
  assert.equal(
    errorInBothTiers("[?x].size() == 1", { x: 1n }),
    "cannot initialize optional list element from non-optional value 1",
  );
  assert.equal(
    errorInBothTiers("{?'k': x}.size() == 1", { x: "v" }),
    "cannot initialize optional entry 'k' from non-optional value v",
  );
});
