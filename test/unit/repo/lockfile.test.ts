import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

interface LockEntry {
  readonly optionalDependencies?: Readonly<Record<string, string>>;
}

void test("package-lock.json names no optional dependency it does not contain (npm ci would refuse it)", () => {
  const lock = JSON.parse(readFileSync(new URL("../../../package-lock.json", import.meta.url), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const dangling: string[] = [];
  for (const [name, entry] of Object.entries(lock.packages)) {
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
      if (!(`node_modules/${dep}` in lock.packages) && !(`${name}/node_modules/${dep}` in lock.packages))
        dangling.push(`${name} → ${dep}`);
    }
  }
  assert.deepEqual(dangling, [], "run `npm run lock` after changing dependencies");
});
