/**
 * When serve connects: with --kubeconfig, or in a pod the way client-go's InClusterConfig decides
 * (KUBERNETES_SERVICE_HOST set and the ServiceAccount token mounted), and not otherwise, so that
 * serve without a cluster behaves as before. Bad kubeconfigs and flag combinations are errors.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { Registry } from "prom-client";
import { run as serveRun } from "../../../src/adapters/cli/commands/serve.ts";
import type { CliIO } from "../../../src/adapters/cli/io.ts";
import { inCluster } from "../../../src/cluster/client.ts";
import { openClusterLink } from "../../../src/cluster/link.ts";
import { QUIET_LOG } from "../../../src/cluster/observe.ts";
import { tempDir } from "../../helpers/webhook.ts";

void test("in a pod means KUBERNETES_SERVICE_HOST and a mounted token, both", async (t) => {
  const dir = await tempDir(t, "celgate-sa-");
  assert.equal(inCluster({ env: { KUBERNETES_SERVICE_HOST: "10.0.0.1" }, serviceAccountDir: dir }), false);
  await writeFile(join(dir, "token"), "t");
  assert.equal(inCluster({ env: {}, serviceAccountDir: dir }), false);
  assert.equal(inCluster({ env: { KUBERNETES_SERVICE_HOST: "" }, serviceAccountDir: dir }), false);
  assert.equal(inCluster({ env: { KUBERNETES_SERVICE_HOST: "10.0.0.1" }, serviceAccountDir: dir }), true);
});

void test("no kubeconfig and not in a pod: no link, and serve runs from its files", async (t) => {
  const dir = await tempDir(t, "celgate-sa-");
  const link = await openClusterLink({
    env: {},
    serviceAccountDir: dir,
    log: QUIET_LOG,
    registry: new Registry(),
  });
  assert.deepEqual(link, { ok: true, value: undefined });
});

void test("an unusable kubeconfig is an error naming the file", async (t) => {
  const dir = await tempDir(t, "celgate-kc-");
  const file = join(dir, "kubeconfig");
  await writeFile(file, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
  const link = await openClusterLink({ kubeconfig: file, log: QUIET_LOG, registry: new Registry() });
  assert.equal(link.ok, false);
  assert.match(link.ok ? "" : link.error, /kubeconfig .*kubeconfig: no current cluster/);
  const missing = await openClusterLink({
    kubeconfig: join(dir, "nope"),
    log: QUIET_LOG,
    registry: new Registry(),
  });
  assert.equal(missing.ok, false);
});

void test("serve: --no-cluster excludes --kubeconfig and --policies-from-cluster; the latter needs a cluster", async (t) => {
  const dir = await tempDir(t, "celgate-serve-");
  await mkdir(join(dir, "p"));
  const out = { stderr: "" };
  const io: CliIO = {
    stdout: () => {},
    stderr: (s) => {
      out.stderr += s;
    },
    stdin: async () => "",
    cwd: dir,
    env: {},
    isTTY: false,
  };
  assert.equal(await serveRun(["--policies", "p", "--no-cluster", "--kubeconfig", "k"], io), 2);
  assert.match(out.stderr, /--no-cluster cannot go with --kubeconfig or --policies-from-cluster/);
  out.stderr = "";
  // Not in a pod here and no --kubeconfig: nothing to read cluster policies from.
  assert.equal(
    await serveRun(["--policies", "p", "--policies-from-cluster", "--port", "0", "--metrics-port", "0"], io),
    2,
  );
  assert.match(out.stderr, /--policies-from-cluster needs a cluster/);
});

void test("serve: --cluster-stale-seconds is a positive number of seconds, --cluster-stale-readiness serve or unready", async (t) => {
  const dir = await tempDir(t, "celgate-serve-");
  await mkdir(join(dir, "p"));
  let stderr = "";
  const io: CliIO = {
    stdout: () => {},
    stderr: (s) => {
      stderr += s;
    },
    stdin: async () => "",
    cwd: dir,
    env: {},
    isTTY: false,
  };
  assert.equal(await serveRun(["--policies", "p", "--cluster-stale-seconds", "0"], io), 2);
  assert.match(stderr, /--cluster-stale-seconds must be a number of seconds above 0, got '0'/);
  assert.equal(await serveRun(["--policies", "p", "--cluster-stale-readiness", "maybe"], io), 2);
  assert.match(stderr, /--cluster-stale-readiness must be serve or unready, got 'maybe'/);
});
