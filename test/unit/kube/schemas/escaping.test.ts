/** Property names as CEL field names: k8s.io/apiserver/pkg/cel/escaping.go (cases of escaping_test.go). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeFieldName, unescapeFieldName } from "../../../../src/kube/schemas/escaping.ts";

test("escaping.go Escape: reserved words, __, ., -, / and what cannot be a field", () => {
  const cases: [string, string | undefined][] = [
    ["foo", "foo"],
    ["_foo", "_foo"],
    ["foo_bar", "foo_bar"],
    ["namespace", "__namespace__"],
    ["in", "__in__"],
    ["true", "__true__"],
    ["while", "__while__"],
    ["Namespace", "Namespace"],
    ["foo__bar", "foo__underscores__bar"],
    ["___", "__underscores___"],
    ["a.b", "a__dot__b"],
    ["a-b", "a__dash__b"],
    ["a/b", "a__slash__b"],
    ["x-kubernetes-list-type", "x__dash__kubernetes__dash__list__dash__type"],
    ["", undefined],
    ["1foo", undefined],
    ["foo bar", undefined],
    ["a.b c", undefined],
    ["naïve", undefined],
    ["a:b", undefined],
  ];
  for (const [ident, want] of cases) assert.equal(escapeFieldName(ident), want, ident);
});

test("escaping.go Unescape: the inverse, and a reserved word's escape only as the whole name", () => {
  assert.equal(unescapeFieldName("__namespace__"), "namespace");
  assert.equal(unescapeFieldName("foo__underscores__bar"), "foo__bar");
  assert.equal(unescapeFieldName("a__dot__b__dash__c__slash__d"), "a.b-c/d");
  assert.equal(unescapeFieldName("x__in__y"), undefined);
  assert.equal(unescapeFieldName("__bogus__"), undefined);
  for (const s of ["foo", "a.b", "foo__bar", "namespace", "x-y/z.w"])
    assert.equal(unescapeFieldName(escapeFieldName(s)!), s, s);
});
