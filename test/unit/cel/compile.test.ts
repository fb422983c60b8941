import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ADMISSION_VARIABLES,
  compile,
  createEnvironment,
  EvalState,
  evaluate,
  type Program,
  run,
  toCel,
  toJson,
} from "../../../src/cel/index.ts";
import { setCodegenMode } from "../../../src/cel/configure.ts";

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", labels: { app: "web", "app.kubernetes.io/name": "web" } },
  spec: {
    replicas: 3,
    containers: [
      { name: "app", image: "nginx:1.27", ports: [{ containerPort: 80 }] },
      { name: "sidecar", image: "envoy:latest", securityContext: { privileged: true } },
    ],
  },
};

function value(expr: string, bindings: Record<string, unknown> = { object: pod }): unknown {
  const r = evaluate(expr, bindings);
  if (!r.ok) assert.fail(`${expr}: ${r.stage} error: ${r.error}`);
  return toJson(r.value);
}

function failure(
  expr: string,
  bindings: Record<string, unknown> = { object: pod },
): { error: string; stage: string } {
  const r = evaluate(expr, bindings);
  if (r.ok) assert.fail(`${expr}: expected an error, got ${JSON.stringify(toJson(r.value))}`);
  return { error: r.error, stage: r.stage };
}

void test("JSON integers are CEL ints and doubles stay doubles", () => {
  assert.equal(value("object.spec.replicas + 1"), 4);
  assert.equal(value("type(object.spec.replicas) == int"), true);
  assert.equal(value("x + 0.5", { x: 1.5 }), 2);
  assert.equal(value("type(x)", { x: 1.5 }), "double");
  assert.equal(value("object.spec.replicas > 2"), true);
  // Equality across numeric types is heterogeneous at run time only: cel-go's checker has no
  // `_==_(int, double)` overload (checker/standard decls), so the operands are dyn here.
  assert.equal(value("dyn(1) == 1.0 && dyn(1u) == 1 && 2 < 2.5"), true);
});

void test("ints beyond 2^53 render as decimal strings; int64 overflow is an error", () => {
  assert.equal(value("9223372036854775807"), "9223372036854775807");
  assert.match(failure("9223372036854775807 + 1").error, /overflow/);
});

void test("field access, has(), missing keys", () => {
  assert.equal(value("object.metadata.labels['app.kubernetes.io/name']"), "web");
  assert.equal(value("has(object.spec.replicas)"), true);
  assert.equal(value("has(object.spec.nodeName)"), false);
  assert.equal(failure("object.spec.nodeName == 'x'").error, "no such key: nodeName");
  assert.match(failure("object.spec.containers[5].name").error, /index out of bounds: 5/);
});

void test("optional syntax: .?, [?], optional list elements and map entries", () => {
  assert.equal(value("object.spec.?initContainers.orValue([]).size()"), 0);
  assert.equal(value("object.?spec.?containers.orValue([]).size()"), 2);
  assert.deepEqual(value("object.spec.?nodeName"), { optional: true });
  assert.deepEqual(value("object.spec.containers[?0].?name"), { optional: true, value: "app" });
  assert.deepEqual(value("object.spec.containers[?9].?name"), { optional: true });
  assert.deepEqual(value("[?optional.none(), 1, ?optional.of(2)]"), [1, 2]);
  assert.deepEqual(value("{?'a': optional.none(), 'b': 1, ?'c': optional.of(3)}"), { b: 1, c: 3 });
  assert.equal(value("object.metadata.labels[?'missing'].hasValue()"), false);
  assert.equal(
    value("optional.ofNonZeroValue('').hasValue() || optional.ofNonZeroValue(1).value() == 1"),
    true,
  );
  assert.equal(value("optional.none().or(optional.of(7)).value()"), 7);
  assert.deepEqual(value("optional.of(2).optMap(x, x * 10)"), { optional: true, value: 20 });
  assert.deepEqual(value("optional.none().optMap(x, x * 10)"), { optional: true });
  assert.deepEqual(value("optional.of(2).optFlatMap(x, optional.of(x + 1))"), { optional: true, value: 3 });
});

void test("a ternary '?' is not mistaken for an optional marker", () => {
  assert.equal(value("object.spec.replicas > 1 ? 'many' : 'one'"), "many");
  assert.deepEqual(value("[true ? 1 : 2, false ? 3 : 4]"), [1, 4]);
  assert.equal(value("'a?.b'.size()"), 4);
});

void test("macros: all, exists, exists_one, map, filter, and the two-variable forms", () => {
  assert.equal(value("object.spec.containers.all(c, c.image.contains(':'))"), true);
  assert.equal(value("object.spec.containers.exists(c, c.image.endsWith(':latest'))"), true);
  assert.equal(value("object.spec.containers.exists_one(c, has(c.securityContext))"), true);
  assert.deepEqual(value("object.spec.containers.map(c, c.name)"), ["app", "sidecar"]);
  assert.deepEqual(value("object.spec.containers.filter(c, has(c.ports)).map(c, c.name)"), ["app"]);
  assert.equal(value("object.metadata.labels.all(k, v, v == 'web')"), true);
  assert.equal(value("[10, 20].exists(i, v, i == 1 && v == 20)"), true);
  assert.equal(value("[1, 2, 3].existsOne(i, v, v > 2)"), true);
  assert.deepEqual(value("[1, 2, 3].transformList(i, v, v * i)"), [0, 2, 6]);
  assert.deepEqual(value("[1, 2, 3].transformList(i, v, i > 0, v)"), [2, 3]);
  assert.deepEqual(value("{'a': 1, 'b': 2}.transformMap(k, v, v * 10)"), { a: 10, b: 20 });
  assert.deepEqual(value("{'a': 1}.transformMapEntry(k, v, {k + k: v})"), { aa: 1 });
});

void test("&& and || absorb errors when the other side decides; all/exists likewise", () => {
  assert.equal(value("object.spec.nodeName == 'x' || true"), true);
  assert.equal(value("false && object.spec.nodeName == 'x'"), false);
  assert.equal(value("object.spec.nodeName == 'x' && false"), false);
  assert.equal(failure("object.spec.nodeName == 'x' || false").error, "no such key: nodeName");
  assert.equal(value("[0, 1].exists(x, 10 / x == 10)"), true);
  assert.equal(value("[0, 1].all(x, 10 / x == 5)"), false);
  assert.match(failure("[0, 1].all(x, 10 / x == 10)").error, /divide|division/);
});

void test("when both sides of && or || fail, the left one's error is reported, as cel-go does", () => {
  const noOverload = /^no such overload: _\/_\(string, int\)$/;
  assert.equal(failure("1 / 0 > 0 && dyn('a') / 0 > 0").error, "division by zero");
  assert.equal(failure("1 / 0 > 0 || dyn('a') / 0 > 0").error, "division by zero");
  assert.match(failure("dyn('a') / 0 > 0 && 1 / 0 > 0").error, noOverload);
  // all/exists fold the elements with && and ||: the first element's error is kept.
  // The lists are of dyn: Kubernetes' homogeneous literal validator refuses ['a', 0] (cel-go
  // cel/validator.go homogeneousAggregateLiteralValidator).
  assert.match(failure("[dyn('a'), dyn(0)].all(x, x / 0 > 0)").error, noOverload);
  assert.match(failure("[dyn('a'), dyn(0)].exists(x, x / 0 > 0)").error, noOverload);
  assert.equal(failure("[dyn(0), dyn('a')].all(x, x / 0 > 0)").error, "division by zero");
  assert.match(
    failure("[1, 0].exists(x, x == 0 ? 1 / x > 0 : dyn('str'))").error,
    // interpreter/interpretable.go evalOr: types.MaybeNoSuchOverloadErr, a bare text.
    /^no such overload$/,
  );
});

void test("a cost limit hit on the right of && is reported, not the left side's error", () => {
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  const items = Array.from({ length: 200 }, (_, i) => i);
  for (const [mode, source] of [
    ["&&", "1 / 0 > 0 && object.items.all(x, object.items.all(y, x + y >= 0))"],
    ["all", "object.items.all(x, x == 0 ? 1 / x > 0 : object.items.all(y, x + y >= 0))"],
  ] as const) {
    for (const tier of ["never", "always"] as const) {
      const before = setCodegenMode(tier);
      try {
        const c = compile(source, env);
        assert.ok(c.ok);
        const r = run(
          c.program,
          { values: { object: toCel({ items }) } },
          new EvalState(100_000, performance.now() + 60_000),
        );
        assert.equal(r.ok, false, `${mode} ${tier}`);
        if (!r.ok) assert.equal(r.error.kind, "cost", `${mode} ${tier}: ${r.error.message}`);
      } finally {
        setCodegenMode(before);
      }
    }
  }
});

void test("compile errors: undeclared names and functions, arity, with a caret under the fault", () => {
  const r = failure("objct.spec.replicas > 1");
  assert.equal(r.stage, "compile");
  assert.equal(
    r.error,
    "ERROR: <input>:1:1: undeclared reference to 'objct' (in container '')\n | objct.spec.replicas > 1\n | ^",
  );
  const f = failure("object.spec.containers.all(c, c.name.nosuch())");
  assert.equal(f.stage, "compile");
  // cel-go places a member call at its `(` (parser/parser.go VisitMemberCall), and the checker
  // reports an unknown function at the call (checker/checker.go resolveOverload).
  assert.match(f.error, /^ERROR: <input>:1:44: undeclared reference to 'nosuch'/);
  const arity = failure("'abc'.startsWith('a', 'b')");
  assert.match(
    arity.error,
    /found no matching overload for 'startsWith' applied to 'string.\(string, string\)'/,
  );
  const syntax = failure("object.spec.replicas >");
  assert.equal(syntax.stage, "compile");
  assert.match(syntax.error, /^ERROR: <input>:1:2\d: Syntax error/);
  assert.match(syntax.error, /\n \| object\.spec\.replicas >\n \| \.+\^$/);
});

void test("static type errors are found before evaluation", () => {
  const r = failure("1 + 'a'", {});
  assert.equal(r.stage, "compile");
  assert.match(
    r.error,
    /found no matching overload for '_\+_' applied to '_\+_\(int, string\)'|no matching overload/,
  );
});

// cel-go common/decls/decls.go MaybeNoSuchOverload: `no such overload: %s(%s)`, the arguments' type names.
void test("runtime type errors name the function and the argument types, as cel-go's MaybeNoSuchOverload", () => {
  assert.equal(failure("x + 1", { x: "a" }).error, "no such overload: _+_(string, int)");
});

void test("cel.bind, math and base64 are off in the Kubernetes environment and on when asked", () => {
  const k8s = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  const bind = compile("cel.bind(x, 2, x * x)", k8s);
  assert.equal(bind.ok, false);
  const math = compile("math.greatest(1, 2)", k8s);
  assert.equal(math.ok, false);
  assert.equal(value("cel.bind(x, 2, x * x)", {}), 4);
});

void test("the cost limit stops a runaway comprehension with Kubernetes' message", () => {
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  const c = compile("object.items.all(x, object.items.all(y, object.items.all(z, x + y + z >= 0)))", env);
  assert.ok(c.ok);
  const items = Array.from({ length: 200 }, (_, i) => i);
  const st = new EvalState(1_000_000, performance.now() + 60_000);
  const r = run(c.program, { values: { object: toCel({ items }) } }, st);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.error.message, "operation cancelled: actual cost limit exceeded");
    assert.equal(r.error.kind, "cost");
  }
});

void test("a passed deadline stops evaluation", () => {
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  const c = compile("object.items.all(x, object.items.all(y, x + y >= 0))", env);
  assert.ok(c.ok);
  const items = Array.from({ length: 3000 }, (_, i) => i);
  const r = run(
    c.program,
    { values: { object: toCel({ items }) } },
    new EvalState(Number.POSITIVE_INFINITY, performance.now() - 1),
  );
  assert.equal(r.ok, false);
  if (!r.ok) assert.equal(r.error.kind, "timeout");
});

void test("evaluation reports its cost", () => {
  const r = evaluate("object.spec.containers.all(c, c.name != '')", { object: pod });
  assert.ok(r.ok);
  if (r.ok) assert.ok(r.cost > 0);
});

void test("variables.<name> must be declared; compile is cached per environment and source", () => {
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES }, policyVariables: ["a"] });
  assert.equal(compile("variables.a", env).ok, true);
  const bad = compile("variables.b", env);
  assert.equal(bad.ok, false);
  // `variables` is a message type whose fields are the policy's variables (Kubernetes
  // admission/plugin/cel/composition.go), so cel-go's checker reports an undefined field.
  if (!bad.ok) assert.match(bad.problems[0]?.rendered ?? "", /^ERROR: <input>:1:10: undefined field 'b'/);
  assert.equal(compile("variables.a", env), compile("variables.a", env));
});

void test("toJson renders every kind of value as documented", () => {
  assert.deepEqual(
    // dyn elements: the homogeneous literal validator refuses a list of mixed types.
    value(
      "[dyn(1u), dyn(2.5), dyn(b'ab'), dyn(duration('1h')), dyn(timestamp('2024-01-02T03:04:05Z')), dyn(null), dyn(int)]",
      {},
    ),
    [1, 2.5, "YWI=", "3600s", "2024-01-02T03:04:05Z", null, "int"],
  );
});

void test("a constant pattern answers and costs as the same pattern given at run time", () => {
  // The compiler prices and tests a constant pattern from one scan of the subject for surrogates;
  // the library's path, taken when the pattern is a value, scans for each. Both must agree on
  // subjects with and without surrogates (a pair, a lone one) and with line terminators RE2's (?m)
  // does not know.
  const patterns = ["^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "(?m)^b$", ".", "\u{1F600}+", "x.y", ""];
  const subjects = [
    "my-app-1",
    "a\nb",
    "a\rb",
    "\u{1F600}\u{1F600}x",
    "x\u{1F600}y",
    "\u{1F600}".repeat(20),
    "x\ud800y",
    "a".repeat(45),
    "",
  ];
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  const before = setCodegenMode("never");
  try {
    for (const mode of ["never", "always"] as const) {
      setCodegenMode(mode);
      for (const pattern of patterns) {
        const literal = JSON.stringify(pattern);
        for (const [constant, variable] of [
          [`object.s.matches(${literal})`, "object.s.matches(object.p)"],
          [`matches(object.s, ${literal})`, "matches(object.s, object.p)"],
        ] as const) {
          const a = compile(`${constant} `, env);
          const b = compile(`${variable} `, env);
          // What reading the pattern costs the second form, beyond what the first pays for it.
          const read = compile("object.p ", env);
          if (!a.ok || !b.ok || !read.ok) assert.fail(`${constant}: did not compile`);
          for (const s of subjects) {
            const act = { values: { object: { s, p: pattern } }, json: true };
            const outcome = (p: Program, less = 0) => {
              const r = run(p, act, new EvalState(1_000_000, performance.now() + 10_000));
              return r.ok ? { value: r.value, cost: r.cost - less } : { error: r.error.message };
            };
            const readCost: number = run(
              read.program,
              act,
              new EvalState(1_000_000, performance.now() + 10_000),
            ).cost;
            assert.deepEqual(
              outcome(a.program),
              outcome(b.program, readCost),
              `${mode}: ${constant} on ${JSON.stringify(s)}`,
            );
          }
        }
      }
    }
  } finally {
    setCodegenMode(before);
  }
});
