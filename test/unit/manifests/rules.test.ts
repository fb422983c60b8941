import assert from "node:assert/strict";
import { test } from "node:test";
import {
  boundRules,
  intersectRules,
  mergeRules,
  ruleCovers,
  toWebhookRule,
  type WebhookRule,
} from "../../../src/manifests/rules.ts";
import type { NamedRuleWithOperations, ScopeType } from "../../../src/policy/types.ts";

function rule(
  operations: string[],
  apiGroups: string[],
  apiVersions: string[],
  resources: string[],
  scope: ScopeType = "*",
): WebhookRule {
  return { operations, apiGroups, apiVersions, resources, scope };
}

function named(r: WebhookRule, resourceNames: string[] = []): NamedRuleWithOperations {
  return {
    operations: r.operations as NamedRuleWithOperations["operations"],
    apiGroups: r.apiGroups,
    apiVersions: r.apiVersions,
    resources: r.resources,
    resourceNames,
    scope: r.scope,
  };
}

// The API server's matching, written out independently of the code under test: each list matches by
// equality or "*", a resource item as resource/subresource halves that each match by equality or "*".
interface Request {
  readonly operation: string;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespaced: boolean;
}

function matchesRequest(r: WebhookRule, q: Request): boolean {
  const listMatch = (list: readonly string[], v: string) => list.includes("*") || list.includes(v);
  const resourceMatch = r.resources.some((item) => {
    const [res = "", sub = ""] = item.includes("/") ? item.split("/", 2) : [item, ""];
    return (res === "*" || res === q.resource) && (sub === "*" || sub === q.subresource);
  });
  const scopeMatch = r.scope === "*" || (r.scope === "Namespaced") === q.namespaced;
  return (
    listMatch(r.operations, q.operation) &&
    listMatch(r.apiGroups, q.group) &&
    listMatch(r.apiVersions, q.version) &&
    resourceMatch &&
    scopeMatch
  );
}

const UNIVERSE: Request[] = [];
for (const operation of ["CREATE", "UPDATE", "DELETE", "CONNECT"])
  for (const group of ["", "apps", "batch"])
    for (const version of ["v1", "v1beta1"])
      for (const [resource, subresource] of [
        ["pods", ""],
        ["pods", "status"],
        ["pods", "exec"],
        ["deployments", ""],
        ["deployments", "scale"],
        ["jobs", ""],
      ] as const)
        for (const namespaced of [true, false])
          UNIVERSE.push({ operation, group, version, resource, subresource, namespaced });

function matchedSet(rules: readonly WebhookRule[]): string {
  return UNIVERSE.map((q) => (rules.some((r) => matchesRequest(r, q)) ? "1" : "0")).join("");
}

void test("toWebhookRule drops resourceNames and puts lists in a canonical form", () => {
  const r = toWebhookRule(
    named(rule(["UPDATE", "CREATE", "UPDATE"], ["apps", ""], ["v1"], ["pods", "*", "pods/status"]), ["x"]),
  );
  assert.deepEqual(r, rule(["CREATE", "UPDATE"], ["", "apps"], ["v1"], ["*", "pods/status"]));
  assert.equal("resourceNames" in r, false);
});

void test("lists keep '*' alone and drop resource patterns another item covers", () => {
  const cases: [string[], string[]][] = [
    [["*/*", "pods", "pods/status"], ["*/*"]],
    [
      ["*", "pods", "deployments/scale"],
      ["*", "deployments/scale"],
    ],
    [["pods/*", "pods", "pods/log"], ["pods/*"]],
    [
      ["*/scale", "deployments/scale", "pods"],
      ["*/scale", "pods"],
    ],
    [
      ["pods/*", "*/scale"],
      ["*/scale", "pods/*"],
    ],
  ];
  for (const [input, expected] of cases)
    assert.deepEqual(
      toWebhookRule(named(rule(["CREATE"], ["*"], ["*"], input))).resources,
      expected,
      input.join(),
    );
  assert.deepEqual(toWebhookRule(named(rule(["CREATE", "*"], ["apps", "*"], ["*", "v1"], ["pods"]))), {
    ...rule(["*"], ["*"], ["*"], ["pods"]),
  });
});

void test("intersectRules: each list and the scope meet; nothing shared gives undefined", () => {
  const cases: [string, WebhookRule, WebhookRule, WebhookRule | undefined][] = [
    [
      "wildcards take the other side",
      rule(["*"], ["*"], ["*"], ["*"]),
      rule(["CREATE"], ["apps"], ["v1"], ["deployments"], "Namespaced"),
      rule(["CREATE"], ["apps"], ["v1"], ["deployments"], "Namespaced"),
    ],
    [
      "common items only",
      rule(["CREATE", "UPDATE"], ["", "apps"], ["v1"], ["pods", "deployments"]),
      rule(["UPDATE", "DELETE"], ["apps"], ["v1"], ["deployments"]),
      rule(["UPDATE"], ["apps"], ["v1"], ["deployments"]),
    ],
    [
      "resource halves meet separately",
      rule(["CREATE"], ["*"], ["*"], ["pods/*"]),
      rule(["CREATE"], ["*"], ["*"], ["*/status", "*"]),
      rule(["CREATE"], ["*"], ["*"], ["pods", "pods/status"]),
    ],
    [
      "*/* meets a subresource pattern",
      rule(["CREATE"], ["*"], ["*"], ["*/*"]),
      rule(["CREATE"], ["*"], ["*"], ["*/scale"]),
      rule(["CREATE"], ["*"], ["*"], ["*/scale"]),
    ],
    [
      "disjoint operations",
      rule(["CREATE"], ["*"], ["*"], ["*"]),
      rule(["DELETE"], ["*"], ["*"], ["*"]),
      undefined,
    ],
    [
      "disjoint resources",
      rule(["*"], ["*"], ["*"], ["pods"]),
      rule(["*"], ["*"], ["*"], ["pods/status"]),
      undefined,
    ],
    [
      "disjoint scopes",
      rule(["*"], ["*"], ["*"], ["*"], "Cluster"),
      rule(["*"], ["*"], ["*"], ["*"], "Namespaced"),
      undefined,
    ],
  ];
  for (const [name, a, b, expected] of cases) {
    assert.deepEqual(intersectRules(a, b), expected, name);
    assert.deepEqual(intersectRules(b, a), expected, `${name} (swapped)`);
  }
});

void test("intersectRules matches exactly the requests both rules match", () => {
  const samples = [
    rule(["*"], ["*"], ["*"], ["*/*"]),
    rule(["CREATE", "UPDATE"], ["", "apps"], ["v1"], ["pods", "deployments/*"], "Namespaced"),
    rule(["UPDATE"], ["*"], ["v1", "v1beta1"], ["*/scale", "jobs"]),
    rule(["CONNECT", "CREATE"], [""], ["*"], ["pods/exec", "*"], "Cluster"),
    rule(["*"], ["batch", "apps"], ["v1beta1"], ["*"]),
  ];
  for (const a of samples)
    for (const b of samples) {
      const both = intersectRules(a, b);
      const expected = UNIVERSE.map((q) => (matchesRequest(a, q) && matchesRequest(b, q) ? "1" : "0")).join(
        "",
      );
      assert.equal(matchedSet(both ? [both] : []), expected, `${JSON.stringify(a)} ∩ ${JSON.stringify(b)}`);
    }
});

void test("boundRules: binding rules narrow the policy's; no binding rules leave them as they are", () => {
  const policy = [named(rule(["CREATE", "UPDATE"], ["apps"], ["v1"], ["deployments", "statefulsets"]))];
  assert.deepEqual(boundRules(policy, []), [
    rule(["CREATE", "UPDATE"], ["apps"], ["v1"], ["deployments", "statefulsets"]),
  ]);
  assert.deepEqual(boundRules(policy, [named(rule(["*"], ["*"], ["*"], ["deployments"], "Namespaced"))]), [
    rule(["CREATE", "UPDATE"], ["apps"], ["v1"], ["deployments"], "Namespaced"),
  ]);
  assert.deepEqual(boundRules(policy, [named(rule(["DELETE"], ["*"], ["*"], ["*"]))]), []);
  assert.deepEqual(boundRules([], [named(rule(["*"], ["*"], ["*"], ["*"]))]), []);
});

void test("mergeRules joins rules that differ in one list and keeps scopes apart", () => {
  const cases: [string, WebhookRule[], WebhookRule[]][] = [
    [
      "same except resources",
      [
        rule(["CREATE"], ["apps"], ["v1"], ["deployments"]),
        rule(["CREATE"], ["apps"], ["v1"], ["statefulsets"]),
      ],
      [rule(["CREATE"], ["apps"], ["v1"], ["deployments", "statefulsets"])],
    ],
    [
      "same except operations",
      [rule(["CREATE"], [""], ["v1"], ["pods"]), rule(["UPDATE"], [""], ["v1"], ["pods"])],
      [rule(["CREATE", "UPDATE"], [""], ["v1"], ["pods"])],
    ],
    [
      "duplicates collapse",
      [rule(["CREATE"], [""], ["v1"], ["pods"]), rule(["CREATE"], [""], ["v1"], ["pods"])],
      [rule(["CREATE"], [""], ["v1"], ["pods"])],
    ],
    [
      "two differences stay two rules",
      [rule(["CREATE"], [""], ["v1"], ["pods"]), rule(["UPDATE"], ["apps"], ["v1"], ["deployments"])],
      [rule(["CREATE"], [""], ["v1"], ["pods"]), rule(["UPDATE"], ["apps"], ["v1"], ["deployments"])],
    ],
    [
      "different scopes stay apart",
      [
        rule(["CREATE"], [""], ["v1"], ["pods"], "Namespaced"),
        rule(["CREATE"], [""], ["v1"], ["nodes"], "Cluster"),
      ],
      [
        rule(["CREATE"], [""], ["v1"], ["pods"], "Namespaced"),
        rule(["CREATE"], [""], ["v1"], ["nodes"], "Cluster"),
      ],
    ],
    [
      "a covered rule goes",
      [
        rule(["CREATE"], ["apps"], ["v1"], ["deployments"], "Namespaced"),
        rule(["*"], ["apps"], ["*"], ["deployments"]),
      ],
      [rule(["*"], ["apps"], ["*"], ["deployments"])],
    ],
    [
      "merging chains",
      [
        rule(["CREATE"], ["apps"], ["v1"], ["deployments"]),
        rule(["CREATE"], [""], ["v1"], ["pods"]),
        rule(["UPDATE"], ["apps"], ["v1"], ["deployments"]),
        rule(["UPDATE"], [""], ["v1"], ["pods"]),
      ],
      [
        rule(["CREATE", "UPDATE"], ["apps"], ["v1"], ["deployments"]),
        rule(["CREATE", "UPDATE"], [""], ["v1"], ["pods"]),
      ],
    ],
    [
      "'*' absorbs named items on merge",
      [rule(["CREATE"], ["*"], ["v1"], ["pods"]), rule(["CREATE"], ["apps"], ["v1"], ["pods"])],
      [rule(["CREATE"], ["*"], ["v1"], ["pods"])],
    ],
  ];
  for (const [name, input, expected] of cases) assert.deepEqual(mergeRules(input), expected, name);
});

void test("mergeRules never changes which requests match, and never adds a wildcard", () => {
  const pool = [
    rule(["CREATE"], ["apps"], ["v1"], ["deployments"]),
    rule(["UPDATE"], ["apps"], ["v1"], ["deployments"]),
    rule(["CREATE"], [""], ["v1"], ["pods", "pods/status"], "Namespaced"),
    rule(["CREATE"], [""], ["v1"], ["pods/exec"], "Namespaced"),
    rule(["CONNECT"], [""], ["v1"], ["pods/exec"]),
    rule(["CREATE", "UPDATE"], ["batch"], ["v1", "v1beta1"], ["jobs"]),
    rule(["DELETE"], ["batch"], ["v1"], ["jobs"]),
    rule(["UPDATE"], ["apps"], ["v1"], ["deployments/scale"]),
    rule(["CREATE"], ["apps"], ["v1beta1"], ["deployments"], "Cluster"),
  ];
  // Every subset of the pool, in order, is a case: 512 unions.
  for (let mask = 1; mask < 1 << pool.length; mask++) {
    const input = pool.filter((_, i) => mask & (1 << i));
    const merged = mergeRules(input);
    assert.equal(matchedSet(merged), matchedSet(input), `subset ${mask}`);
    assert.ok(merged.length <= input.length, `subset ${mask} did not grow`);
    for (const r of merged)
      for (const list of [r.operations, r.apiGroups, r.apiVersions, r.resources])
        assert.ok(!list.includes("*"), `subset ${mask}: no wildcard the input did not have`);
  }
});

void test("ruleCovers compares scope, lists and resource patterns", () => {
  assert.equal(
    ruleCovers(
      rule(["*"], ["*"], ["*"], ["*/*"]),
      rule(["CREATE"], ["apps"], ["v1"], ["pods/log"], "Cluster"),
    ),
    true,
  );
  assert.equal(
    ruleCovers(rule(["*"], ["*"], ["*"], ["*"]), rule(["CREATE"], ["apps"], ["v1"], ["pods/log"])),
    false,
  );
  assert.equal(
    ruleCovers(
      rule(["*"], ["*"], ["*"], ["*/*"], "Namespaced"),
      rule(["CREATE"], ["apps"], ["v1"], ["pods"]),
    ),
    false,
  );
  assert.equal(
    ruleCovers(rule(["CREATE"], ["apps"], ["v1"], ["pods"]), rule(["*"], ["apps"], ["v1"], ["pods"])),
    false,
  );
});
