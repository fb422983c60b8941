import assert from "node:assert/strict";
import { test } from "node:test";
import { COMMANDS } from "../../../src/adapters/cli/main.ts";
import { DIAGNOSTIC_CODES } from "../../../src/errors.ts";

import { doc, userDocs } from "../../helpers/docs.ts";

void test("docs/diagnostics.md's code table is the code catalog, row for row", () => {
  const rows = [...doc("diagnostics.md").matchAll(/^\| `([A-Z_]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]);
  assert.deepEqual(rows, Object.entries(DIAGNOSTIC_CODES));
});

void test("every celgate command the docs mention exists", () => {
  const names = new Set(COMMANDS.map((c) => c.name));
  const used = [
    ...userDocs.matchAll(
      /(?:celgate --|celgate) (expr|check|eval|serve|test|repl|replay|manifests|lint|audit)\b/g,
    ),
  ].map((m) => m[1]);
  assert.ok(used.length > 0);
  for (const u of used)
    assert.ok(names.has(u as string), `the docs use 'celgate ${u}', which is not a command`);
});
