/** `--run PATTERN` chooses cases as `go test -run` chooses tests (go/src/testing/match.go). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { caseSelector, rewriteName, splitPattern } from "../../../src/suite/select.ts";

function selects(pattern: string, ...names: string[]): boolean {
  const s = caseSelector(pattern);
  assert.ok(s.ok, pattern);
  return s.value(names);
}

test("splitPattern splits at '/' outside brackets and parentheses, '\\' escaping (match.go splitRegexp)", () => {
  assert.deepEqual(splitPattern("a/b/c"), ["a", "b", "c"]);
  assert.deepEqual(splitPattern("a[/]b/c"), ["a[/]b", "c"]);
  assert.deepEqual(splitPattern("(a/b)|c/d"), ["(a/b)|c", "d"]);
  assert.deepEqual(splitPattern("a\\/b/c"), ["a\\/b", "c"]);
  // An unmatched ']' is legal and does not open anything (match.go: "An unmatched ']' is legal").
  assert.deepEqual(splitPattern("a]/b"), ["a]", "b"]);
  assert.deepEqual(splitPattern(""), [""]);
});

test("rewriteName: white space becomes '_', as Go's testing.rewrite does", () => {
  assert.equal(rewriteName("replica limits"), "replica_limits");
  assert.equal(rewriteName("a\tb\u00a0c\u2003d"), "a_b_c_d");
  assert.equal(rewriteName("bell\u0007"), "bell\\x07");
});

test("each element is an unanchored expression for its level; fewer elements match on the prefix", () => {
  assert.ok(selects("replica", "replica limits", "a big deployment is denied"));
  assert.ok(selects("limits/big", "replica limits", "a big deployment is denied"));
  assert.ok(!selects("limits/small", "replica limits", "a big deployment is denied"));
  assert.ok(selects("^replica_limits$/^a_big", "replica limits", "a big deployment is denied"));
  // Spaces in the pattern match the name's spaces (both are rewritten).
  assert.ok(selects("replica limits/big deployment", "replica limits", "a big deployment is denied"));
  // Groups are levels.
  assert.ok(selects("/production/one", "replica limits", "production", "one replica is too few"));
  assert.ok(!selects("/one", "replica limits", "production", "one replica is too few"));
  const deep = ["replica limits", "production", "deletes", "deleting is never checked"] as const;
  assert.ok(selects("//deletes/deleting", ...deep));
  assert.ok(!selects("//deleting", ...deep), "level 2 is the group 'deletes'");
  // An empty element matches anything, as an empty Go expression does.
  assert.ok(selects("", "s", "c"));
});

test("a case has no subtests: a pattern deeper than its name does not match it (unlike Go)", () => {
  assert.ok(!selects("replica/big/more", "replica limits", "a big deployment is denied"));
});

test("a '/' inside a name splits it, as Go splits the full name", () => {
  assert.ok(selects("s/a/b", "s", "a/b"));
});

test("an invalid expression names its element (RE2 syntax)", () => {
  const s = caseSelector("ok/(unclosed");
  assert.equal(s.ok, false);
  if (!s.ok)
    assert.match(
      s.error,
      /^invalid regular expression for element 1 of --run \("\(unclosed"\): .*missing closing \)/,
    );
});
