/** Shared by the cluster tests: a client for the test API server, and bounded waiting. */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { type ApiClient, connect } from "../../../src/cluster/client.ts";
import type { KubeApiServer } from "../../helpers/kube-apiserver.ts";
import { tempDir } from "../../helpers/webhook.ts";

/** A client through a kubeconfig file for `api`, as `--kubeconfig` makes one. */
export async function clientFor(t: TestContext, api: KubeApiServer): Promise<ApiClient> {
  const dir = await tempDir(t, "celgate-kubeconfig-");
  const file = join(dir, "kubeconfig");
  await writeFile(file, api.kubeconfig());
  const c = await connect({ kubeconfig: file });
  assert.ok(c.ok, c.ok ? "" : c.error);
  return c.value;
}

/** Polls a condition until it holds, or fails after the bound. */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, everyMs = 10, what = "condition" } = {},
): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`${what} did not hold within ${timeoutMs} ms`);
}
