/**
 * README's tutorial ("Writing your first policy", "Testing policies", "Parameters and namespace
 * selectors"), copied as a reader would: every YAML block that starts with a `# path` comment written
 * to that path, then every `npx celgate` command of the sections run there. The files they name
 * must be among the blocks.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { readme, section } from "../../helpers/docs.ts";
import { cli } from "../cli/fake-io.ts";

const text = ["Writing your first policy", "Testing policies", "Parameters and namespace selectors"]
  .map((title) => section(readme, title))
  .join("");

void test("the first policy's files and commands work when copied", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "celgate-readme-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = [...text.matchAll(/```yaml\n# (\S+)\n([\s\S]*?)```/g)];
  assert.deepEqual(
    files.map((m) => m[1]),
    [
      "policies/replicas.yaml",
      "policies/fixtures/big.yaml",
      "policies/fixtures/small.yaml",
      "policies/replicas.test.yaml",
      "policies/fixtures/namespaces.yaml",
      "policies/replicas-per-namespace.yaml",
      "policies/fixtures/prod-eu.yaml",
      "policies/fixtures/limits.yaml",
      "policies/replicas-per-namespace.test.yaml",
    ],
  );
  for (const [, path, body] of files) {
    await mkdir(dirname(join(dir, path as string)), { recursive: true });
    await writeFile(join(dir, path as string), body as string);
  }
  const commands = [...text.matchAll(/`npx celgate ([^`]+)`/g)].map((m) => (m[1] as string).split(/\s+/));
  assert.deepEqual(
    commands.map((c) => c[0]),
    ["check", "eval", "test", "test"],
  );
  const expected: Record<string, [number, RegExp]> = {
    check: [0, /^1 policy, 1 binding, 0 problems\n$/],
    eval: [1, /\[Deny\] at most 5 replicas, got 7/],
    // Every file is written before any command runs: both suites, 3 and 4 cases.
    test: [0, /7 passed, 0 failed\n$/],
  };
  for (const argv of commands) {
    const r = await cli(argv, { cwd: dir });
    const [code, output] = expected[argv[0] as string] as [number, RegExp];
    assert.equal(r.code, code, `${argv.join(" ")}\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout, output, argv.join(" "));
  }
});
