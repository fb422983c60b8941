/**
 * Issue 36: a binary or large non-YAML file gave over a thousand diagnostics and megabytes of
 * output. Every place that prints diagnostics for people (check, eval, test, serve's log) shows at
 * most MAX_DIAGNOSTICS_PER_FILE per file, then one line with how many more that file has; the
 * counts (check's "N problems", the exit status) still count them all.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { startWebhook } from "../../../src/adapters/server/app.ts";
import { MAX_DIAGNOSTICS_PER_FILE } from "../../../src/adapters/output/diagnostics.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";

/** Bytes that read as no text format: a fixed pseudo-random sequence (an LCG), the same every run. */
function noise(size: number): Buffer {
  let x = 12345;
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

async function tree(t: TestContext): Promise<string> {
  const dir = await tempTree({
    "suite.test.yaml": `apiVersion: celgate.dev/v1alpha1
kind: PolicyTest
policies: [policies]
cases:
  - name: anything
    object: { apiVersion: v1, kind: ConfigMap, metadata: { name: c } }
    expect: { allowed: true }
`,
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c }\n",
  });
  const { mkdir } = await import("node:fs/promises");
  await mkdir(join(dir, "policies"));
  await writeFile(join(dir, "policies", "blob.yaml"), noise(200_000));
  t.after(() => removeTree(dir));
  return dir;
}

/** How many diagnostics the text shows for blob.yaml, and the "… and N more" line. */
function shown(text: string): { heads: number; more: string | undefined } {
  const heads = text.split("\n").filter((l) => /blob\.yaml:\d+:\d+: error: /.test(l)).length;
  const more = text.split("\n").find((l) => /^… and [\d,]+ more in .*blob\.yaml$/.test(l));
  return { heads, more };
}

void test("check: at most the bound per file, then how many more; the summary counts them all", async (t) => {
  const dir = await tree(t);
  const r = await cli(["check", "policies"], { cwd: dir });
  assert.equal(r.code, 1);
  const total = Number(/(\d+) problems \((\d+) errors/.exec(r.stdout)?.[1]);
  assert.ok(total > MAX_DIAGNOSTICS_PER_FILE + 1, r.stdout.slice(-200));
  const s = shown(r.stdout);
  assert.equal(s.heads, MAX_DIAGNOSTICS_PER_FILE);
  const more = (total - MAX_DIAGNOSTICS_PER_FILE).toLocaleString("en-US");
  assert.ok(s.more?.startsWith(`… and ${more} more in `) && s.more.endsWith("/policies/blob.yaml"), s.more);
});

void test("eval and test show the bound too", async (t) => {
  const dir = await tree(t);
  const ev = await cli(["eval", "-p", "policies", "-r", "cm.yaml"], { cwd: dir });
  assert.equal(ev.code, 2);
  assert.equal(shown(ev.stderr).heads, MAX_DIAGNOSTICS_PER_FILE);
  assert.ok(shown(ev.stderr).more, ev.stderr.slice(-300));
  const ts = await cli(["test", "suite.test.yaml"], { cwd: dir });
  assert.equal(ts.code, 2);
  assert.equal(shown(ts.stderr).heads, MAX_DIAGNOSTICS_PER_FILE);
  assert.ok(shown(ts.stderr).more, ts.stderr.slice(-300));
});

void test("serve: the message for policies that do not load shows the bound too", async (t) => {
  const dir = await tree(t);
  const started = await startWebhook(
    {
      policies: [join(dir, "policies")],
      host: "127.0.0.1",
      port: 0,
      metricsPort: 0,
      logLevel: false,
      drainMs: 0,
    },
    () => {},
  );
  if (started.ok) {
    await started.webhook.stop();
    assert.fail("a set that does not parse must not start");
  }
  assert.equal(shown(started.message).heads, MAX_DIAGNOSTICS_PER_FILE);
  assert.ok(shown(started.message).more, started.message.slice(-300));
});
