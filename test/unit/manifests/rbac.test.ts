/**
 * `celgate manifests --rbac` (src/manifests/rbac.ts): the ClusterRole a cluster-connected serve
 * needs, no wider than the loaded policies. The plural guess for kinds outside the built-in table is
 * apimachinery/pkg/api/meta/restmapper.go UnsafeGuessKindToResource, odd cases included.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseAllDocuments } from "yaml";
import { run } from "../../../src/adapters/cli/commands/manifests.ts";
import type { CliIO } from "../../../src/adapters/cli/io.ts";
import { guessPlural, rbacManifests, rbacRules } from "../../../src/manifests/rbac.ts";
import { compileText, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";

const RULES = {
  matchConstraints: {
    resourceRules: [
      { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
    ],
  },
};

void test("UnsafeGuessKindToResource: s → ses, y → ies even after a vowel, endpoints unchanged", () => {
  assert.equal(guessPlural("Widget"), "widgets");
  assert.equal(guessPlural("Ingress"), "ingresses");
  assert.equal(guessPlural("Policy"), "policies");
  assert.equal(guessPlural("Gateway"), "gatewaies");
  assert.equal(guessPlural("Endpoints"), "endpoints");
  assert.equal(guessPlural("Box"), "boxs");
});

void test("namespaces always; each bound paramKind's resource, grouped; SARs only when a bound policy reads authorizer", () => {
  const set = compileText(
    yamlDocs(
      vap("a", {
        ...RULES,
        paramKind: { apiVersion: "v1", kind: "ConfigMap" },
        validations: [{ expression: "true" }],
      }),
      vapBinding("a", "a", { paramRef: { name: "p", parameterNotFoundAction: "Deny" } }),
      vap("b", {
        ...RULES,
        paramKind: { apiVersion: "example.com/v1", kind: "Limit" },
        validations: [{ expression: "authorizer.path('/x').check('get').allowed()" }],
      }),
      vapBinding("b", "b", { paramRef: { name: "p", parameterNotFoundAction: "Deny" } }),
      // Unbound: its paramKind and authorizer use need nothing.
      vap("c", {
        ...RULES,
        paramKind: { apiVersion: "v1", kind: "Secret" },
        validations: [{ expression: "authorizer.path('/x').check('get').allowed()" }],
      }),
    ),
  );
  const { rules, notes } = rbacRules(set);
  assert.deepEqual(rules, [
    { apiGroups: [""], resources: ["configmaps", "namespaces"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["example.com"], resources: ["limits"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  ]);
  assert.equal(notes.length, 1);
  assert.match(notes[0]!, /example\.com\/v1 Limit: resource 'limits' is a guess/);
  const only = compileText(
    yamlDocs(vap("d", { ...RULES, validations: [{ expression: "true" }] }), vapBinding("d", "d")),
  );
  assert.deepEqual(rbacRules(only).rules, [
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
  ]);
  const withPolicies = rbacManifests(only, {
    name: "cg",
    namespace: "ns",
    serviceAccount: "sa",
    policiesFromCluster: true,
  });
  assert.deepEqual(withPolicies.rules.at(-1), {
    apiGroups: ["admissionregistration.k8s.io"],
    resources: [
      "mutatingadmissionpolicies",
      "mutatingadmissionpolicybindings",
      "validatingadmissionpolicies",
      "validatingadmissionpolicybindings",
    ],
    verbs: ["get", "list", "watch"],
  });
});

void test("the command: --rbac prints a ClusterRole and a binding to the ServiceAccount; bad combinations are usage errors", async () => {
  const out = { stdout: "", stderr: "" };
  const io: CliIO = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => "",
    cwd: process.cwd(),
    env: {},
    isTTY: false,
  };
  const argv = [
    "--rbac",
    "--policies",
    "policies",
    "--service",
    "cg",
    "--namespace",
    "ns",
    "--service-account",
    "sa",
  ];
  assert.equal(await run(argv, io), 0, out.stderr);
  const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as { kind: string; subjects?: unknown });
  assert.deepEqual(
    docs.map((d) => d.kind),
    ["ClusterRole", "ClusterRoleBinding"],
  );
  assert.deepEqual(docs[1]!.subjects, [{ kind: "ServiceAccount", name: "sa", namespace: "ns" }]);
  assert.equal(await run([...argv, "--cert-manager", "x"], io), 2);
  assert.equal(
    await run(
      ["--policies", "policies", "--service", "cg", "--namespace", "ns", "--policies-from-cluster"],
      io,
    ),
    2,
  );
});

void test("each rule says which policies need it and what serve caches; base: false leaves out Namespaces", () => {
  const set = compileText(
    yamlDocs(
      vap("pods-param", {
        ...RULES,
        paramKind: { apiVersion: "v1", kind: "Pod" },
        validations: [{ expression: "true" }],
      }),
      vapBinding("pods-param", "pods-param", {
        paramRef: { selector: {}, parameterNotFoundAction: "Allow" },
      }),
    ),
  );
  const full = rbacManifests(set, {
    name: "cg",
    namespace: "ns",
    serviceAccount: "sa",
    registerWebhooks: "cg.ns.celgate.dev",
  });
  assert.deepEqual(full.rules, [
    { apiGroups: [""], resources: ["namespaces", "pods"], verbs: ["get", "list", "watch"] },
    {
      apiGroups: ["admissionregistration.k8s.io"],
      resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
      resourceNames: ["cg.ns.celgate.dev"],
      verbs: ["get", "update"],
    },
  ]);
  assert.equal(full.reasons.length, full.rules.length);
  assert.match(full.reasons[0]![0]!, /^Namespaces: .*serve caches every Namespace/);
  assert.match(
    full.reasons[0]![1]!,
    /^params of pods-param: serve caches all pods in the cluster \(list and watch\), on each replica$/,
  );
  assert.match(full.reasons[1]![0]!, /^--register-webhooks: /);
  const component = rbacManifests(set, {
    name: "cg-x",
    namespace: "ns",
    serviceAccount: "sa",
    base: false,
    registerWebhooks: "x",
  });
  assert.deepEqual(component.rules, [
    { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
  ]);
});

void test("the command: --rbac without --policies is the RBAC of no policy; the reasons are comments above the rules", async () => {
  const out = { stdout: "", stderr: "" };
  const io: CliIO = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => "",
    cwd: process.cwd(),
    env: {},
    isTTY: false,
  };
  assert.equal(
    await run(["--rbac", "--register-webhooks", "--service", "cg", "--namespace", "ns"], io),
    0,
    out.stderr,
  );
  const role = parseAllDocuments(out.stdout)[0]!.toJS() as {
    rules: { resources: string[]; resourceNames?: string[] }[];
  };
  assert.deepEqual(
    role.rules.map((r) => r.resources),
    [["namespaces"], ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"]],
  );
  assert.deepEqual(role.rules[1]!.resourceNames, ["cg.ns.celgate.dev"]);
  assert.match(out.stdout, /\n {2}# Namespaces: [^\n]*\n {2}- apiGroups: \[""\]/);
  // Without --rbac, --register-webhooks and a missing --policies are usage errors.
  assert.equal(
    await run(["--register-webhooks", "--policies", "policies", "--service", "cg", "--namespace", "ns"], io),
    2,
  );
  assert.equal(await run(["--service", "cg", "--namespace", "ns"], io), 2);
});
