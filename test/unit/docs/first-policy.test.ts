/**
 * README's "Writing your first policy" and "Testing policies", copied as a reader would: every YAML
 * block that starts with a `# path` comment written to that path, then every `npm run -s celgate --`
 * command of the two sections run there. The files they name must be among the blocks.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { cli } from "../cli/fake-io.ts";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

function section(title: string): string {
  const start = readme.indexOf(`## ${title}`);
  assert.ok(start >= 0, `README has a section '${title}'`);
  const end = readme.indexOf("\n## ", start + 3);
  return readme.slice(start, end < 0 ? undefined : end);
}

const text = section("Writing your first policy") + section("Testing policies");

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
    ],
  );
  for (const [, path, body] of files) {
    await mkdir(dirname(join(dir, path as string)), { recursive: true });
    await writeFile(join(dir, path as string), body as string);
  }
  const commands = [...text.matchAll(/`npm run -s celgate -- ([^`]+)`/g)].map((m) =>
    (m[1] as string).split(/\s+/),
  );
  assert.deepEqual(
    commands.map((c) => c[0]),
    ["check", "eval", "test"],
  );
  const expected: Record<string, [number, RegExp]> = {
    check: [0, /^1 policy, 1 binding, 0 problems\n$/],
    eval: [1, /\[Deny\] at most 5 replicas, got 7/],
    test: [0, /3 passed, 0 failed\n$/],
  };
  for (const argv of commands) {
    const r = await cli(argv, { cwd: dir });
    const [code, output] = expected[argv[0] as string] as [number, RegExp];
    assert.equal(r.code, code, `${argv.join(" ")}\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout, output, argv.join(" "));
  }
});
