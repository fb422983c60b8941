/**
 * `celgate manifests --check-drift FILE`: the live configurations (as `kubectl get -o yaml` prints
 * them: a List, with what the API server and cert-manager add) against what the policies need now.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, stringify } from "yaml";
import { run } from "../../../src/adapters/cli/commands/manifests.ts";
import type { CliIO } from "../../../src/adapters/cli/io.ts";

const POLICIES = fileURLToPath(new URL("../../../policies", import.meta.url));
const BASE = [
  "--policies",
  POLICIES,
  "--service",
  "celgate",
  "--namespace",
  "celgate",
  "--cert-manager",
  "celgate-ca",
];

async function cli(argv: readonly string[], cwd: string) {
  const out = { stdout: "", stderr: "" };
  const io: CliIO = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => "",
    cwd,
    env: {},
    isTTY: false,
  };
  const code = await run(argv, io);
  return { code, ...out };
}

interface Hook {
  name: string;
  clientConfig: Record<string, unknown>;
  rules: unknown[];
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  timeoutSeconds?: number;
}
interface Json {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { annotations?: Record<string, string> };
  webhooks: Hook[];
}

let dir = "";
let generated: Json[] = [];
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "celgate-drift-"));
  const r = await cli(BASE, dir);
  assert.equal(r.code, 0, r.stderr);
  generated = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Json)
    .filter((d) => String(d.kind).endsWith("WebhookConfiguration"));
});
after(() => rm(dir, { recursive: true, force: true }));

/**
 * What the API server gives back for an applied configuration: server fields, the v1 defaults
 * written out (admissionregistration/v1/defaults.go), cert-manager's caBundle, kubectl's annotation.
 */
function asLive(config: Json): Json {
  const live = structuredClone(config);
  live.metadata = {
    ...live.metadata,
    uid: "0b4c7a0e-9f1e-4c1b-8d62-2b8a1d4f0c11",
    resourceVersion: "4711",
    generation: 3,
    creationTimestamp: "2026-01-02T03:04:05Z",
    annotations: {
      ...live.metadata.annotations,
      "kubectl.kubernetes.io/last-applied-configuration": "{}",
    },
    managedFields: [
      { manager: "kubectl", operation: "Apply", apiVersion: "admissionregistration.k8s.io/v1" },
    ],
  };
  for (const h of live.webhooks) {
    h.clientConfig.caBundle = Buffer.from("-----BEGIN CERTIFICATE-----\n...").toString("base64");
    h.objectSelector ??= {};
    // Rule order means nothing: the same rules in another order are no drift.
    h.rules = [...h.rules].reverse();
  }
  return live;
}

function list(items: Json[]): string {
  return stringify({ apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" }, items });
}

async function check(text: string) {
  const file = join(dir, `live-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, text);
  return cli([...BASE, "--check-drift", file], dir);
}

void test("the live List the API server returns for the applied output is no drift", async () => {
  const other = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "gatekeeper-validating-webhook-configuration" },
    webhooks: [],
  };
  const r = await check(list([...generated.map(asLive), other]));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^no drift: .* holds the 2 configurations the policies need\n$/);
  assert.match(
    r.stderr,
    /not celgate's, left alone: ValidatingWebhookConfiguration gatekeeper-validating-webhook-configuration/,
  );
});

void test("a changed field, a missing webhook and a stale configuration are each a difference, exit 1", async () => {
  const [validating, mutating] = generated.map(asLive) as [Json, Json];
  const first = validating.webhooks[0] as Hook;
  first.timeoutSeconds = 10;
  first.namespaceSelector = {};
  first.rules.pop();
  const staleMutating = { ...mutating, webhooks: [] };
  const r = await check(list([validating, staleMutating]));
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  const hook =
    "ValidatingWebhookConfiguration celgate.celgate.celgate.dev: webhook celgate.celgate.fail.validate.celgate.dev";
  assert.ok(lines.includes(`${hook}: timeoutSeconds: live 10, wanted 5`), r.stdout);
  assert.ok(
    lines.includes(
      `${hook}: namespaceSelector: live [], wanted ["kubernetes.io/metadata.name NotIn celgate,kube-node-lease,kube-system"]`,
    ),
    r.stdout,
  );
  assert.ok(
    lines.some((l) => l.startsWith(`${hook}: rules: live [`)),
    r.stdout,
  );
  assert.ok(
    lines.includes(
      "MutatingWebhookConfiguration celgate.celgate.celgate.dev: webhook celgate.celgate.fail.mutate.celgate.dev: missing from the live configuration",
    ),
    r.stdout,
  );
  assert.equal(lines.at(-1), "4 differences: regenerate with celgate manifests and apply it");
});

void test("a configuration the cluster lacks, and one the policies no longer need, are differences", async () => {
  const [validating, mutating] = generated.map(asLive) as [Json, Json];
  const noMutating = await check(list([validating]));
  assert.equal(noMutating.code, 1);
  assert.match(
    noMutating.stdout,
    /^MutatingWebhookConfiguration celgate\.celgate\.celgate\.dev: missing from the live configurations$/m,
  );
  const extraHook = structuredClone(mutating);
  extraHook.webhooks.push({
    ...(extraHook.webhooks[0] as Hook),
    name: "celgate.celgate.ignore.mutate.celgate.dev",
  });
  const r = await check([validating, extraHook].map((o) => `---\n${stringify(o)}`).join(""));
  assert.equal(r.code, 1);
  assert.match(
    r.stdout,
    /webhook celgate\.celgate\.ignore\.mutate\.celgate\.dev: not needed by the policies now \(remove it\)/,
  );
});

void test("a file that does not read is exit 2, with where", async () => {
  const broken = await check(
    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: { name: x }\nwebhooks: [{ name: a.b.c, timeoutSeconds: ten }]\n",
  );
  assert.equal(broken.code, 2);
  assert.match(
    broken.stderr,
    /--check-drift .* does not read:\n[\s\S]*\.yaml:4:43: error: webhooks\[0\]\.timeoutSeconds: expected an integer \[PE_FIELD_TYPE\]/,
  );
  const missing = await cli([...BASE, "--check-drift", "nowhere.yaml"], dir);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--check-drift nowhere\.yaml: ENOENT/);
});
