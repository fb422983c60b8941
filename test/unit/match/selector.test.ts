import assert from "node:assert/strict";
import { test } from "node:test";
import type { LabelSelector, LabelSelectorRequirement } from "../../../src/policy/types.ts";
import { compileLabelSelector, matchesLabels } from "../../../src/match/selector.ts";

function sel(
  matchLabels: Record<string, string> = {},
  ...matchExpressions: LabelSelectorRequirement[]
): LabelSelector {
  return { matchLabels, matchExpressions };
}

function expr(key: string, operator: LabelSelectorRequirement["operator"], ...values: string[]) {
  return { key, operator, values };
}

const cases: ReadonlyArray<{
  name: string;
  selector: LabelSelector;
  labels: Record<string, string>;
  want: boolean;
}> = [
  { name: "empty selector, no labels", selector: sel(), labels: {}, want: true },
  { name: "empty selector, some labels", selector: sel(), labels: { a: "b" }, want: true },
  { name: "matchLabels equal", selector: sel({ env: "prod" }), labels: { env: "prod", x: "y" }, want: true },
  { name: "matchLabels other value", selector: sel({ env: "prod" }), labels: { env: "dev" }, want: false },
  { name: "matchLabels missing key", selector: sel({ env: "prod" }), labels: {}, want: false },
  { name: "matchLabels empty value", selector: sel({ env: "" }), labels: { env: "" }, want: true },
  { name: "matchLabels all required", selector: sel({ a: "1", b: "2" }), labels: { a: "1" }, want: false },
  {
    name: "In hit",
    selector: sel({}, expr("env", "In", "prod", "staging")),
    labels: { env: "staging" },
    want: true,
  },
  {
    name: "In miss",
    selector: sel({}, expr("env", "In", "prod", "staging")),
    labels: { env: "dev" },
    want: false,
  },
  { name: "In absent key", selector: sel({}, expr("env", "In", "prod")), labels: {}, want: false },
  {
    name: "NotIn hit",
    selector: sel({}, expr("runlevel", "NotIn", "0", "1")),
    labels: { runlevel: "0" },
    want: false,
  },
  {
    name: "NotIn miss",
    selector: sel({}, expr("runlevel", "NotIn", "0", "1")),
    labels: { runlevel: "2" },
    want: true,
  },
  {
    name: "NotIn absent key matches",
    selector: sel({}, expr("runlevel", "NotIn", "0")),
    labels: {},
    want: true,
  },
  { name: "Exists present", selector: sel({}, expr("team", "Exists")), labels: { team: "" }, want: true },
  { name: "Exists absent", selector: sel({}, expr("team", "Exists")), labels: { other: "x" }, want: false },
  { name: "DoesNotExist absent", selector: sel({}, expr("legacy", "DoesNotExist")), labels: {}, want: true },
  {
    name: "DoesNotExist present",
    selector: sel({}, expr("legacy", "DoesNotExist")),
    labels: { legacy: "1" },
    want: false,
  },
  {
    name: "prefixed key",
    selector: sel({ "app.kubernetes.io/name": "web" }),
    labels: { "app.kubernetes.io/name": "web" },
    want: true,
  },
  {
    name: "inherited object keys are not labels",
    selector: sel({}, expr("constructor", "Exists")),
    labels: {},
    want: false,
  },
  {
    name: "labels and expressions are ANDed",
    selector: sel({ app: "web" }, expr("env", "In", "prod"), expr("legacy", "DoesNotExist")),
    labels: { app: "web", env: "prod", legacy: "yes" },
    want: false,
  },
  {
    name: "labels and expressions all satisfied",
    selector: sel({ app: "web" }, expr("env", "In", "prod"), expr("legacy", "DoesNotExist")),
    labels: { app: "web", env: "prod" },
    want: true,
  },
];

for (const c of cases) {
  void test(`selector matches: ${c.name}`, () => {
    const got = matchesLabels(c.selector, c.labels);
    assert.deepEqual(got, { ok: true, value: c.want });
  });
}

void test("an empty selector compiles to the 'everything' matcher", () => {
  const m = compileLabelSelector(sel());
  assert.ok(m.ok);
  assert.equal(m.value.empty, true);
  const n = compileLabelSelector(sel({}, expr("a", "Exists")));
  assert.ok(n.ok);
  assert.equal(n.value.empty, false);
});

void test("selector text follows Kubernetes' syntax, ordered by key", () => {
  const m = compileLabelSelector(
    sel(
      { z: "1" },
      expr("env", "In", "staging", "prod"),
      expr("b", "DoesNotExist"),
      expr("c", "NotIn", "x"),
      expr("a", "Exists"),
    ),
  );
  assert.ok(m.ok);
  assert.equal(m.value.text, "a,!b,c notin (x),env in (prod,staging),z=1");
});

const invalid: ReadonlyArray<{ name: string; selector: LabelSelector; path: string; mentions: string }> = [
  {
    name: "In without values",
    selector: sel({}, expr("env", "In")),
    path: "matchExpressions[0].values",
    mentions: "non-empty",
  },
  {
    name: "NotIn without values",
    selector: sel({}, expr("env", "NotIn")),
    path: "matchExpressions[0].values",
    mentions: "non-empty",
  },
  {
    name: "Exists with values",
    selector: sel({}, expr("env", "Exists", "x")),
    path: "matchExpressions[0].values",
    mentions: "empty",
  },
  {
    name: "DoesNotExist with values",
    selector: sel({}, expr("a", "Exists"), expr("env", "DoesNotExist", "x")),
    path: "matchExpressions[1].values",
    mentions: "empty",
  },
  {
    name: "empty key",
    selector: sel({}, expr("", "Exists")),
    path: "matchExpressions[0].key",
    mentions: "non-empty",
  },
  {
    name: "key with two slashes",
    selector: sel({}, expr("a/b/c", "Exists")),
    path: "matchExpressions[0].key",
    mentions: "'/'",
  },
  {
    name: "key with empty prefix",
    selector: sel({}, expr("/name", "Exists")),
    path: "matchExpressions[0].key",
    mentions: "prefix",
  },
  {
    name: "key with uppercase prefix",
    selector: sel({}, expr("Example.com/a", "Exists")),
    path: "matchExpressions[0].key",
    mentions: "DNS-1123",
  },
  {
    name: "key with bad characters",
    selector: sel({}, expr("a b", "Exists")),
    path: "matchExpressions[0].key",
    mentions: "alphanumeric",
  },
  {
    name: "key name too long",
    selector: sel({}, expr("k".repeat(64), "Exists")),
    path: "matchExpressions[0].key",
    mentions: "63",
  },
  {
    name: "bad value in In",
    selector: sel({}, expr("env", "In", "ok", "-bad")),
    path: "matchExpressions[0].values[1]",
    mentions: "-bad",
  },
  {
    name: "value too long",
    selector: sel({ env: "v".repeat(64) }),
    path: 'matchLabels["env"]',
    mentions: "63",
  },
  {
    name: "bad matchLabels key",
    selector: sel({ "bad key": "x" }),
    path: 'matchLabels["bad key"].key',
    mentions: "bad key",
  },
  {
    name: "unknown operator from unchecked JSON",
    selector: { matchLabels: {}, matchExpressions: [{ key: "a", operator: "Gt" as "In", values: ["1"] }] },
    path: "matchExpressions[0].operator",
    mentions: "Gt",
  },
];

for (const c of invalid) {
  void test(`invalid selector: ${c.name}`, () => {
    const got = compileLabelSelector(c.selector);
    assert.equal(got.ok, false);
    if (got.ok) return;
    assert.equal(got.error.kind, "invalid-selector");
    assert.ok(
      got.error.problems.some((p) => p.path === c.path),
      `paths: ${got.error.problems.map((p) => p.path).join(", ")}`,
    );
    assert.ok(got.error.message.includes(c.mentions), got.error.message);
    assert.deepEqual(matchesLabels(c.selector, {}).ok, false);
  });
}

void test("values at the limits are valid", () => {
  const got = compileLabelSelector(
    sel(
      { ["p".repeat(253 - 4) + ".com/" + "n".repeat(63)]: "v".repeat(63) },
      expr("a_b.c-d", "In", "", "A.b-c_D"),
    ),
  );
  assert.equal(got.ok, true, got.ok ? "" : got.error.message);
});
