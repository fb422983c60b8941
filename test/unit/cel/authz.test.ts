/**
 * Kubernetes' authorizer library as apiserver/pkg/cel/library/authz.go declares it: `group()` gives a
 * GroupCheck whose `resource()` gives the ResourceCheck, the AuthzSelectors library adds
 * `fieldSelector()` / `labelSelector()` (Kubernetes 1.31+, on unless an environment leaves it out),
 * and the argument checks authz.go makes. Evaluated in both tiers.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ADMISSION_VARIABLES, AuthorizerValue, compile, createEnvironment } from "../../../src/cel/index.ts";
import type { AuthorizationAttributes, AuthorizerBackend } from "../../../src/cel/library/authz.ts";
import { evaluateBothTiers, valueInBothTiers } from "../../helpers/library.ts";

/** A backend that allows everything and records what it was asked. */
function recorder(): { backend: AuthorizerBackend; asked: AuthorizationAttributes[] } {
  const asked: AuthorizationAttributes[] = [];
  return {
    asked,
    backend: {
      authorize: (a) => {
        asked.push(a);
        return { decision: "allow", reason: "recorded" };
      },
    },
  };
}

const authorizerOf = (backend: AuthorizerBackend) =>
  new AuthorizerValue(backend, "alice", ["system:authenticated"]);

test("authz.go: group() is a GroupCheck, and resource() on it the ResourceCheck", () => {
  const { backend, asked } = recorder();
  const authorizer = authorizerOf(backend);
  assert.equal(
    String(valueInBothTiers("type(authorizer.group('apps'))", { authorizer })),
    "kubernetes.authorization.GroupCheck",
  );
  assert.equal(
    valueInBothTiers(
      "authorizer.group('apps').resource('deployments').namespace('ns').check('get').allowed()",
      {
        authorizer,
      },
    ),
    true,
  );
  assert.equal(asked.at(-1)?.group, "apps");
  assert.equal(asked.at(-1)?.resource, "deployments");
  assert.equal(asked.at(-1)?.namespace, "ns");
  // A GroupCheck has neither check() nor namespace(): resource() comes first.
  const env = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  for (const expr of ["authorizer.group('apps').check('get')", "authorizer.group('apps').namespace('x')"]) {
    const r = compile(expr, env);
    if (r.ok) {
      const o = evaluateBothTiers(expr, { authorizer });
      assert.ok(!o.ok, `${expr} is not callable`);
    }
  }
});

test("authz.go: empty resource and path, and bad service account names, are errors", () => {
  const { backend } = recorder();
  const authorizer = authorizerOf(backend);
  const errorOf = (expr: string) => {
    const o = evaluateBothTiers(expr, { authorizer });
    assert.ok(!o.ok, expr);
    return o.error;
  };
  assert.equal(errorOf("authorizer.group('').resource(' ')"), "resource must not be empty");
  assert.equal(errorOf("authorizer.path('\\t')"), "path must not be empty");
  assert.equal(errorOf("authorizer.serviceAccount('ns', 'Bad_Name')"), "Invalid service account name");
  assert.equal(errorOf("authorizer.serviceAccount('a.b', 'sa')"), "Invalid service account namespace");
  assert.equal(
    valueInBothTiers(
      "authorizer.serviceAccount('kube-system', 'a.b-c').path('/healthz').check('get').allowed()",
      {
        authorizer,
      },
    ),
    true,
  );
});

test("authz.go AuthzSelectors: fieldSelector() and labelSelector() reach the authorizer as written", () => {
  const { backend, asked } = recorder();
  const authorizer = authorizerOf(backend);
  assert.equal(
    valueInBothTiers(
      "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=mynode').labelSelector('app=example').check('list').allowed()",
      { authorizer },
    ),
    true,
  );
  const last = asked.at(-1);
  assert.equal(last?.fieldSelector, "spec.nodeName=mynode");
  assert.equal(last?.labelSelector, "app=example");
  assert.equal(last?.verb, "list");
  // What labelSelector() returns is a ResourceCheck still.
  assert.equal(
    String(
      valueInBothTiers("type(authorizer.group('').resource('pods').labelSelector('x'))", { authorizer }),
    ),
    "kubernetes.authorization.ResourceCheck",
  );
});

// base.go: AuthzSelectors arrives in 1.31 (stored expressions) and new expressions may use it from
// 1.32; cel/env/releases.ts models it, and the checker declares the library by release.
test("AuthzSelectors follows the release: on by default, undeclared in a new expression at 1.31", () => {
  const expr = "authorizer.group('').resource('pods').fieldSelector('a=b').check('list').allowed()";
  const on = createEnvironment({ variables: { ...ADMISSION_VARIABLES } });
  assert.ok(compile(expr, on).ok);
  const at131 = createEnvironment({ variables: { ...ADMISSION_VARIABLES }, kubernetesVersion: "1.31" });
  assert.notEqual(at131.key, on.key, "the environments are cached apart");
  const r = compile(expr, at131);
  assert.ok(!r.ok, "fieldSelector is undeclared in 1.31's new expressions");
  assert.match(r.problems.map((p) => p.message).join("\n"), /fieldSelector/);
  assert.ok(
    compile(expr, createEnvironment({ variables: { ...ADMISSION_VARIABLES }, kubernetesVersion: "1.32" })).ok,
  );
});

// The names apiserver/pkg/cel declares: quantity.go "kubernetes.Quantity", url.go "kubernetes.URL",
// semver.go "kubernetes.Semver", format.go "kubernetes.NamedFormat", ip.go "net.IP", cidr.go
// "net.CIDR", library/authz.go "kubernetes.authorization.*". The libraries' Types() are not
// registered with the checker's type provider (base.go adds the libraries' functions only), so the
// names are not identifiers a checked expression can write: `type(x) == kubernetes.Quantity` is
// "undeclared reference to 'kubernetes'", as in the API server, while ip.go and cidr.go declare
// `net.IP` and `net.CIDR` as variables; `type(x)` carries the name either way.
test("library types carry the names Kubernetes declares", () => {
  const { backend } = recorder();
  const authorizer = authorizerOf(backend);
  const cases: [value: string, name: string][] = [
    ["quantity('1')", "kubernetes.Quantity"],
    ["url('https://example.com')", "kubernetes.URL"],
    ["semver('1.2.3')", "kubernetes.Semver"],
    ["format.dns1123Label()", "kubernetes.NamedFormat"],
    ["ip('10.0.0.1')", "net.IP"],
    ["cidr('10.0.0.0/8')", "net.CIDR"],
    ["authorizer", "kubernetes.authorization.Authorizer"],
    ["authorizer.path('/healthz')", "kubernetes.authorization.PathCheck"],
    ["authorizer.group('')", "kubernetes.authorization.GroupCheck"],
    ["authorizer.group('').resource('pods')", "kubernetes.authorization.ResourceCheck"],
    ["authorizer.group('').resource('pods').check('get')", "kubernetes.authorization.Decision"],
  ];
  for (const [value, name] of cases) {
    const named = compile(
      `type(${value}) == ${name}`,
      createEnvironment({ variables: { ...ADMISSION_VARIABLES } }),
    );
    // ip.go and cidr.go declare their type names as variables (cel/check/env.ts LIBRARY_TYPES).
    if (name.startsWith("net.")) assert.equal(valueInBothTiers(`type(${value}) == ${name}`), true, name);
    else assert.ok(!named.ok && /undeclared reference/.test(named.problems[0]?.message ?? ""), name);
    assert.equal(valueInBothTiers(`type(${value}) == type(1)`, { authorizer }), false, name);
    const t = valueInBothTiers(`type(${value})`, { authorizer });
    assert.equal(String(t), name);
  }
});
