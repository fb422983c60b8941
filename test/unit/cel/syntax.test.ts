import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { bufParserSource, parseCel } from "../../../src/cel/syntax/parse.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

test("the parser comes from @bufbuild/cel's parse.js, not its entry point", () => {
  assert.equal(bufParserSource, "parse.js");
  const parsed = parseCel("object.spec.?replicas.orValue(1) > 0");
  assert.equal(parsed.root.kind, "call");
});

test("loading the CEL front end does not load @bufbuild/cel's evaluator and its registries", () => {
  // In a fresh process: which of the package's CommonJS modules did importing syntax/parse.ts load?
  const script = `
    import { createRequire } from "node:module";
    await import(${JSON.stringify(new URL("../../../src/cel/syntax/parse.ts", import.meta.url).href)});
    const require = createRequire(import.meta.url);
    const loaded = Object.keys(require.cache).filter((k) => k.includes("@bufbuild/cel/"));
    console.log(JSON.stringify(loaded.map((k) => k.slice(k.lastIndexOf("/") + 1)).sort()));
  `;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  const loaded = JSON.parse(out.trim().split("\n").at(-1) ?? "[]") as string[];
  assert.ok(loaded.includes("parse.js"), `loaded: ${loaded.join(", ")}`);
  for (const heavy of ["index.js", "plan.js", "registry.js"])
    assert.ok(!loaded.includes(heavy), `${heavy} was loaded: ${loaded.join(", ")}`);
});
