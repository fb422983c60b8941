/**
 * End to end: `celgate manifests` output, read by a stand-in for the API server's webhook dispatch
 * (apiserver.ts), calling the real `celgate serve` over TLS. The split paths must evaluate exactly
 * the (policy, binding) pairs the manifest routes to them: every pair once, none twice, none lost,
 * so a request admitted through the split webhooks gets the decision the unsplit `/mutate` and
 * `/validate` give. And when celgate is down, only requests a policy could deny fail.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { run } from "../../../src/adapters/cli/commands/manifests.ts";
import type { CliIO } from "../../../src/adapters/cli/io.ts";
import { decodePatch, postReview, scrape, startTestWebhook, tempDir } from "../../helpers/webhook.ts";
import { ApiServer, type ClusterRequest } from "./apiserver.ts";

const PODS = `{ apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods] }`;

function vap(
  name: string,
  failurePolicy: string,
  rules: string,
  expression: string,
  message: string,
): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  failurePolicy: ${failurePolicy}
  matchConstraints: { resourceRules: [${rules}] }
  validations: [{ expression: "${expression}", message: "${message}" }]
  # The response's audit annotations name the policies a call evaluated.
  auditAnnotations: [{ key: evaluated, valueExpression: "'yes'" }]
---
`;
}

function vapb(name: string, actions: string): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec: { policyName: ${name}, validationActions: ${actions} }
---
`;
}

function map(name: string, failurePolicy: string, reinvocation: string, patch: string): string {
  return `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  failurePolicy: ${failurePolicy}
  reinvocationPolicy: ${reinvocation}
  matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }] }
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: >-
          ${patch}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: ${name} }
spec: { policyName: ${name} }
---
`;
}

const label = (key: string) =>
  `!has(object.metadata.labels) || object.metadata.labels[?'${key}'].orValue('') != 'yes'`;

const POLICIES =
  vap("deny-fail", "Fail", PODS, label("deny"), "deny-fail says no") +
  vapb("deny-fail", "[Deny]") +
  vap("warn-fail", "Fail", PODS, label("warn"), "warn-fail warns") +
  vapb("warn-fail", "[Warn]") +
  vap("audit-fail", "Fail", PODS, label("audit"), "audit-fail audits") +
  vapb("audit-fail", "[Audit]") +
  vap("deny-ignore", "Ignore", PODS, label("deny2"), "deny-ignore says no") +
  vapb("deny-ignore", "[Deny]") +
  vap("audit-deny-fail", "Fail", PODS, label("both"), "warn-deny-fail says no") +
  vapb("audit-deny-fail", "[Audit, Deny]") +
  vap(
    "configmaps-warn",
    "Fail",
    `{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps] }`,
    "!object.metadata.name.startsWith('tmp-')",
    "configmaps-warn warns",
  ) +
  vapb("configmaps-warn", "[Warn]") +
  // A condition only this pair has: it gets a webhook of its own on /validate/fail that carries it.
  vap(
    "secrets-deny",
    "Fail",
    `{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets] }`,
    "false",
    "secrets-deny says no",
  ).replace(
    "  validations:",
    "  matchConditions: [{ name: x-only, expression: \"object.metadata.name.startsWith('x-')\" }]\n  validations:",
  ) +
  vapb("secrets-deny", "[Deny]") +
  map(
    "label-fail",
    "Fail",
    "IfNeeded",
    `has(object.metadata.labels) && 'mutated' in object.metadata.labels ? [] : [JSONPatch{op: 'add', path: has(object.metadata.labels) ? '/metadata/labels/mutated' : '/metadata/labels', value: has(object.metadata.labels) ? dyn('yes') : {'mutated': 'yes'}}]`,
  ) +
  map(
    "note-ignore",
    "Ignore",
    "Never",
    `has(object.metadata.annotations) ? [] : [JSONPatch{op: 'add', path: '/metadata/annotations', value: {'note': 'celgate'}}]`,
  );

/** The webhook each policy's pair is routed to (policy/routing.ts). */
const ROUTED: Readonly<Record<string, string>> = {
  "deny-fail": "celgate.celgate.fail.validate.celgate.dev",
  "audit-deny-fail": "celgate.celgate.fail.validate.celgate.dev",
  "warn-fail": "celgate.celgate.ignore.validate.celgate.dev",
  "audit-fail": "celgate.celgate.ignore.validate.celgate.dev",
  "deny-ignore": "celgate.celgate.ignore.validate.celgate.dev",
  "label-fail": "celgate.celgate.fail.mutate.celgate.dev",
  "note-ignore": "celgate.celgate.ignore.mutate.celgate.dev",
};

async function manifests(dir: string, extra: readonly string[] = []): Promise<Record<string, unknown>[]> {
  const out = { stdout: "", stderr: "" };
  const io: CliIO = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => "",
    cwd: dir,
    env: {},
    isTTY: false,
  };
  const code = await run(["--policies", dir, "--service", "celgate", "--namespace", "celgate", ...extra], io);
  assert.equal(code, 0, out.stderr);
  return parseAllDocuments(out.stdout).map((d) => d.toJS() as Record<string, unknown>);
}

function pod(labels: Record<string, string>): ClusterRequest {
  return {
    operation: "CREATE",
    group: "",
    version: "v1",
    resource: "pods",
    kind: "Pod",
    namespace: "team-a",
    name: "web",
    namespaced: true,
    object: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "team-a", labels },
      spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
    },
  };
}

function admissionReview(r: ClusterRequest, object: Record<string, unknown> | null): Record<string, unknown> {
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const gvr = { group: r.group, version: r.version, resource: r.resource };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "unsplit",
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: r.name,
      namespace: r.namespace,
      operation: r.operation,
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      object,
      oldObject: null,
      dryRun: false,
      options: null,
    },
  };
}

/** Evaluations of one policy so far, over every outcome. */
function evaluations(metrics: string, policy: string): number {
  let total = 0;
  for (const line of metrics.split("\n")) {
    if (!line.startsWith("celgate_policy_evaluations_total{")) continue;
    if (line.includes(`policy="${policy}"`)) total += Number(line.split(" ").at(-1));
  }
  return total;
}

async function setup(t: TestContext) {
  const dir = await tempDir(t, "celgate-routing-");
  await writeFile(join(dir, "policies.yaml"), POLICIES);
  const documents = await manifests(dir);
  const hook = await startTestWebhook(t, { policies: [dir] });
  return { dir, documents, hook, cluster: new ApiServer(documents, { port: hook.port, ca: hook.ca }) };
}

void test("each pair is served on the path the manifest routes it to: Warn/Audit-only bindings on the Ignore webhooks", async (t) => {
  const { documents } = await setup(t);
  const hooks = documents.flatMap(
    (d) =>
      (d.webhooks as {
        name: string;
        failurePolicy: string;
        clientConfig: { service: { path: string } };
      }[]) ?? [],
  );
  assert.deepEqual(
    hooks.map((h) => [h.clientConfig.service.path, h.failurePolicy]),
    [
      ["/validate/fail", "Fail"],
      ["/validate/fail", "Fail"],
      ["/validate/ignore", "Ignore"],
      ["/mutate/fail", "Fail"],
      ["/mutate/ignore", "Ignore"],
    ],
  );
  // configmaps are matched only by a Fail policy bound with [Warn]: only the Ignore webhook asks for them.
  const byPath = new Map(
    documents
      .flatMap(
        (d) =>
          (d.webhooks as {
            clientConfig: { service: { path: string } };
            rules: { resources: string[] }[];
          }[]) ?? [],
      )
      .map((h) => [h.clientConfig.service.path, h.rules.flatMap((r) => r.resources)]),
  );
  assert.deepEqual(byPath.get("/validate/fail"), ["secrets"], "the last webhook of that path");
  assert.deepEqual(byPath.get("/validate/ignore")?.sort(), ["configmaps", "pods"]);
});

void test("through the split webhooks every request gets the unsplit decision, each policy evaluated once", async (t) => {
  const { hook, cluster } = await setup(t);
  const cases: Record<string, string>[] = [
    {},
    { deny: "yes" },
    { warn: "yes" },
    { audit: "yes" },
    { deny2: "yes" },
    { both: "yes" },
    { warn: "yes", audit: "yes", both: "yes" },
    { mutated: "yes", warn: "yes" },
  ];
  for (const labels of cases) {
    const request = pod(labels);
    const before = await scrape(hook.webhook.metricsUrl);
    const split = await cluster.admit(request);
    const after = await scrape(hook.webhook.metricsUrl);
    // A call to a webhook evaluates exactly the pairs routed to it: each policy as often as its
    // webhook was called (a reinvoked mutating webhook is called twice), never by another one.
    for (const [p, webhook] of Object.entries(ROUTED)) {
      const called = split.calls.filter((c) => c === `${webhook}: called`).length;
      assert.ok(called >= 1, `${webhook} is called for a pod`);
      assert.equal(
        evaluations(after, p) - evaluations(before, p),
        called,
        `${JSON.stringify(labels)}: ${p} is evaluated once per call of ${webhook} (${split.calls.join("; ")})`,
      );
    }
    for (const { webhook, keys } of split.audits.filter((a) => a.webhook.endsWith(".validate.celgate.dev")))
      assert.deepEqual(
        keys.filter((k) => k.endsWith("_evaluated")),
        Object.entries(ROUTED)
          .filter(([, w]) => w === webhook)
          .map(([p]) => `${p}_evaluated`)
          .sort(),
        `${JSON.stringify(labels)}: ${webhook} evaluates exactly the validating pairs routed to it`,
      );

    // The same request through the unsplit routes: mutate, then validate the result.
    const mutated = await postReview(hook.port, hook.ca, "/mutate", admissionReview(request, request.object));
    const patch = decodePatch(mutated.response) ?? [];
    const { default: jsonPatch } = await import("fast-json-patch");
    const object = jsonPatch.applyPatch(structuredClone(request.object), patch as never, true, false)
      .newDocument as Record<string, unknown>;
    const validated = await postReview(hook.port, hook.ca, "/validate", admissionReview(request, object));
    const unsplit = validated.response;
    assert.equal(split.allowed, unsplit.allowed, `${JSON.stringify(labels)}: ${split.message}`);
    if (!unsplit.allowed) assert.equal(split.message, unsplit.status?.message);
    assert.deepEqual(
      [...split.warnings].sort(),
      [...(mutated.response.warnings ?? []), ...(unsplit.warnings ?? [])].sort(),
      `${JSON.stringify(labels)}: the same warnings, each once`,
    );
    if (split.allowed) assert.deepEqual(split.object, object, "the same mutations");
  }
});

void test("with celgate down, a request only Warn/Audit bindings match is admitted; one a Deny binding matches is not", async (t) => {
  const { hook, cluster } = await setup(t);
  const configmap: ClusterRequest = {
    operation: "CREATE",
    group: "",
    version: "v1",
    resource: "configmaps",
    kind: "ConfigMap",
    namespace: "team-a",
    name: "tmp-settings",
    namespaced: true,
    object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "tmp-settings", namespace: "team-a" } },
  };
  const up = await cluster.admit(configmap);
  assert.equal(up.allowed, true);
  assert.equal(up.warnings.length, 1, "while celgate is up, the warning arrives");
  assert.match(up.warnings[0] ?? "", /configmaps-warn warns$/);

  await hook.webhook.stop();
  const down = await cluster.admit(configmap);
  assert.equal(down.allowed, true, `a warn-only policy never blocks: ${down.message}`);
  assert.match(down.calls.join("\n"), /ignore\.validate\.celgate\.dev: failed/);
  const blocked = await cluster.admit(pod({}));
  assert.equal(blocked.allowed, false, "pods are under Deny bindings of Fail policies");
  assert.match(blocked.message ?? "", /failed calling webhook celgate\.celgate\.fail\.mutate\.celgate\.dev/);
});

void test("a condition carried into a webhook of its own: celgate is never called for what it excludes", async (t) => {
  const { hook, cluster } = await setup(t);
  const secret = (name: string): ClusterRequest => ({
    operation: "CREATE",
    group: "",
    version: "v1",
    resource: "secrets",
    kind: "Secret",
    namespace: "team-a",
    name,
    namespaced: true,
    object: { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "team-a" } },
  });
  const denied = await cluster.admit(secret("x-token"));
  assert.equal(denied.allowed, false);
  assert.match(denied.message ?? "", /secrets-deny says no/);
  assert.deepEqual(denied.calls, ["celgate.celgate.fail-2.validate.celgate.dev: called"]);
  const other = await cluster.admit(secret("y-token"));
  assert.deepEqual(other, { allowed: true, warnings: [], object: other.object, calls: [], audits: [] });

  await hook.webhook.stop();
  assert.equal((await cluster.admit(secret("y-token"))).allowed, true, "not sent to celgate, so not failed");
  assert.equal(
    (await cluster.admit(secret("x-token"))).allowed,
    false,
    "sent to a Fail webhook that is down",
  );
});
