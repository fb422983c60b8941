import assert from "node:assert/strict";
import { test } from "node:test";
import type { ParsedExpression } from "../../../src/cel/syntax/ast.ts";
import { explainFalse, renderExpr } from "../../../src/cel/explain.ts";
import { ADMISSION_VARIABLES, type CelValue, createEnvironment, toCel } from "../../../src/cel/index.ts";
import { parseCel } from "../../../src/cel/syntax/parse.ts";

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "prod", labels: { app: "web" } },
  spec: {
    replicas: 7,
    hostNetwork: false,
    containers: [
      { name: "app", image: "registry.io/app:1.0", securityContext: { privileged: false } },
      {
        name: "sidecar",
        image: "evil/proxy:latest",
        securityContext: { privileged: true },
        ports: [{ containerPort: 80 }, { containerPort: 8080 }],
      },
      { name: "init", image: "registry.io/init:2", resources: { limits: { memory: "64Mi" } } },
    ],
  },
};

const env = createEnvironment({
  variables: { ...ADMISSION_VARIABLES },
  policyVariables: ["containers", "isProd", "maxReplicas"],
});

const policyVariables: Record<string, CelValue> = {
  containers: toCel(pod.spec.containers),
  isProd: true,
  maxReplicas: 3n,
};

function explain(source: string, object: unknown = pod, limits = {}): string[] {
  return explainFalse(
    parseCel(source),
    env,
    {
      values: { object: toCel(object), oldObject: null, params: null },
      variables: {
        get: (name) => {
          const v = policyVariables[name];
          if (v === undefined) throw new Error(`no such variable ${name}`);
          return v;
        },
      },
    },
    limits,
  );
}

const cases: [string, string, string[]][] = [
  [
    "a comparison shows the field's value",
    "object.spec.replicas <= 5",
    ["object.spec.replicas <= 5 is false: object.spec.replicas = 7"],
  ],
  [
    "all over containers names the element and the field, skipping the has() guard",
    "object.spec.containers.all(c, !has(c.securityContext) || c.securityContext.privileged != true)",
    [
      'containers[1] (name: "sidecar"): c.securityContext.privileged != true is false: c.securityContext.privileged = true',
    ],
  ],
  [
    "an && chain reports only its false operands",
    "object.spec.replicas > 1 && object.spec.hostNetwork == false && object.metadata.namespace != 'prod'",
    ['object.metadata.namespace != "prod" is false: object.metadata.namespace = "prod"'],
  ],
  [
    "every false operand of an && chain is reported, in order",
    "object.spec.replicas < 3 && 'team' in object.metadata.labels",
    [
      "object.spec.replicas < 3 is false: object.spec.replicas = 7",
      '"team" in object.metadata.labels is false: object.metadata.labels = {"app":"web"}',
    ],
  ],
  [
    "nested fields through a has() chain",
    "has(object.spec.securityContext) && object.spec.securityContext.runAsNonRoot == true",
    ["has(object.spec.securityContext) is false: object.spec has fields replicas, hostNetwork, containers"],
  ],
  [
    "a method call returning bool is a leaf with its receiver's value",
    "object.spec.containers.all(c, c.image.startsWith('registry.io/'))",
    [
      'containers[1] (name: "sidecar"): c.image.startsWith("registry.io/") is false: c.image = "evil/proxy:latest"',
    ],
  ],
  [
    "nested all: both elements are named",
    "object.spec.containers.all(c, !has(c.ports) || c.ports.all(p, p.containerPort > 1024))",
    ['containers[1] (name: "sidecar"): ports[0]: p.containerPort > 1024 is false: p.containerPort = 80'],
  ],
  [
    "exists false",
    "object.spec.containers.exists(c, c.name == 'istio-proxy')",
    ['no element of object.spec.containers satisfies c.name == "istio-proxy"'],
  ],
  [
    "exists over an empty list says it is empty",
    "object.spec.containers.filter(c, c.name == 'x').exists(c, true)",
    [
      'no element of object.spec.containers.filter(c, c.name == "x") satisfies true (object.spec.containers.filter(c, c.name == "x") is empty)',
    ],
  ],
  [
    "exists_one counts",
    "object.spec.containers.exists_one(c, c.image.startsWith('registry.io/'))",
    ['2 elements of object.spec.containers satisfy c.image.startsWith("registry.io/"), not exactly one'],
  ],
  [
    "variables show their values",
    "!variables.isProd || object.spec.replicas <= variables.maxReplicas",
    [
      "!variables.isProd is false: variables.isProd = true",
      "object.spec.replicas <= variables.maxReplicas is false: object.spec.replicas = 7, variables.maxReplicas = 3",
    ],
  ],
  [
    "all over a variable",
    "variables.containers.all(c, has(c.resources))",
    [
      'containers[0] (name: "app"): has(c.resources) is false: c has fields name, image, securityContext',
      'containers[1] (name: "sidecar"): has(c.resources) is false: c has fields name, image, securityContext, ports',
    ],
  ],
  [
    "a ternary explains the branch taken",
    "variables.isProd ? object.spec.replicas <= 2 : true",
    ["variables.isProd is true, so object.spec.replicas <= 2 is false: object.spec.replicas = 7"],
  ],
  [
    "|| with both sides false reports both",
    "object.spec.replicas == 1 || object.metadata.name.matches('^api-')",
    [
      "object.spec.replicas == 1 is false: object.spec.replicas = 7",
      'object.metadata.name.matches("^api-") is false: object.metadata.name = "web"',
    ],
  ],
  [
    "an element whose predicate fails to evaluate is reported with the error",
    "object.spec.containers.all(c, c.securityContext.privileged == false)",
    [
      'containers[1] (name: "sidecar"): c.securityContext.privileged == false is false: c.securityContext.privileged = true',
      'containers[2] (name: "init"): c.securityContext.privileged == false failed: no such key: securityContext',
    ],
  ],
  [
    "all over a map names the key",
    "object.metadata.labels.all(k, k.startsWith('team-'))",
    ['labels["app"]: k.startsWith("team-") is false: k = "app"'],
  ],
  ["a false constant", "false", ["false is false"]],
];

for (const [name, source, expected] of cases) {
  test(`explainFalse: ${name}`, () => {
    assert.deepEqual(explain(source), expected);
  });
}

test("explainFalse: a true expression has nothing to explain; a failing one names its error", () => {
  assert.deepEqual(explain("object.spec.replicas > 5"), []);
  assert.deepEqual(explain("object.spec.nope == 1"), ["object.spec.nope == 1 failed: no such key: nope"]);
});

test("explainFalse: failing elements are capped, then counted", () => {
  const many = {
    spec: { containers: Array.from({ length: 12 }, (_, i) => ({ name: `c${i}`, image: "x" })) },
  };
  const reasons = explain("object.spec.containers.all(c, c.image != 'x')", many);
  assert.equal(reasons.length, 6);
  assert.equal(reasons[0], 'containers[0] (name: "c0"): c.image != "x" is false: c.image = "x"');
  assert.equal(reasons[5], "and 7 more elements of containers");
});

test("explainFalse: bounded by the number of evaluations, never throwing", () => {
  const big = { spec: { containers: Array.from({ length: 500 }, (_, i) => ({ name: `c${i}` })) } };
  const reasons = explain("object.spec.containers.all(c, c.name == 'none')", big, { maxEvaluations: 50 });
  assert.equal(reasons.at(-1), "(explanation stopped: too much to evaluate)");
  assert.ok(reasons.length <= 7, reasons.join("\n"));
});

test("explainFalse: comprehension variables shadow top-level ones", () => {
  assert.deepEqual(explain("[1, 2].all(object, object < 2)"), ["[1, 2][1]: object < 2 is false: object = 2"]);
});

test("renderExpr keeps precedence with parentheses and shows macros as written", () => {
  const cases: [string, string][] = [
    ["(a || b) && c", "(a || b) && c"],
    ["a || b && c", "a || b && c"],
    ["a - (b - c)", "a - (b - c)"],
    ["!(a && b)", "!(a && b)"],
    ["x ? y : z ? 1 : 2", "x ? y : z ? 1 : 2"],
    ["xs.map(x, x * 2.0)", "xs.map(x, x * 2.0)"],
    ["xs.filter(x, x > 1u)", "xs.filter(x, x > 1u)"],
    ["m['k'][0].f", 'm["k"][0].f'],
    ["a.?b.orValue('')", 'a.?b.orValue("")'],
    ["{'a': [1, -2]}", '{"a": [1, -2]}'],
  ];
  for (const [source, expected] of cases) {
    const parsed: ParsedExpression = parseCel(source);
    assert.equal(renderExpr(parsed.root), expected, source);
  }
});
