import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { COMMANDS } from "../../../src/adapters/cli/main.ts";
import { DIAGNOSTIC_CODES } from "../../../src/errors.ts";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

void test("README's diagnostic code table is the code catalog, row for row", () => {
  const rows = [...readme.matchAll(/^\| `([A-Z_]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]);
  assert.deepEqual(rows, Object.entries(DIAGNOSTIC_CODES));
});

void test("every celgate command README mentions exists", () => {
  const names = new Set(COMMANDS.map((c) => c.name));
  const used = [
    ...readme.matchAll(/(?:celgate --|celgate) (expr|check|eval|serve|test|repl|manifests|lint)\b/g),
  ].map((m) => m[1]);
  assert.ok(used.length > 0);
  for (const u of used)
    assert.ok(names.has(u as string), `README uses 'celgate ${u}', which is not a command`);
});
