/** docs/architecture.md's folder map names every source folder, once, and no folder that is gone. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const src = new URL("../../../src/", import.meta.url);

void test("the folder map in docs/architecture.md lists every folder of src/ and src/adapters/", () => {
  const doc = readFileSync(new URL("../../../docs/architecture.md", import.meta.url), "utf8");
  const mapped = [...doc.matchAll(/^\| `src\/([^`]+)` \|/gm)].map((m) => m[1] as string);
  const folders = (dir: URL, prefix: string) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `${prefix}${e.name}`);
  const actual = [
    ...folders(src, "").filter((f) => f !== "adapters"),
    ...folders(new URL("adapters/", src), "adapters/"),
    "index.ts",
  ];
  assert.deepEqual([...mapped].sort(), actual.sort());
  assert.equal(new Set(mapped).size, mapped.length, "each folder once");
});
