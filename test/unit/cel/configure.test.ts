/**
 * The evaluator's process-wide settings are made by entry points, never by importing a module
 * (issue 24): importing the CEL engine neither reads CELGATE_CEL_CODEGEN nor changes V8's flags.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { codegenModeFrom, runtimeOptionsFromEnv } from "../../../src/cel/index.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const INDEX = new URL("../../../src/cel/index.ts", import.meta.url).href;
const CONFIGURE = new URL("../../../src/cel/configure.ts", import.meta.url).href;
const PACKAGE = new URL("../../../src/index.ts", import.meta.url).href;

/** Runs `body` in a fresh process with V8's setFlagsFromString recorded; returns what it printed last. */
function inFreshProcess(body: string, env: Record<string, string> = {}): unknown {
  const script = `
    import v8 from "node:v8";
    const flags = [];
    const set = v8.setFlagsFromString;
    v8.setFlagsFromString = (f) => { flags.push(f); set(f); };
    const pkg = await import(${JSON.stringify(PACKAGE)});
    const cel = await import(${JSON.stringify(INDEX)});
    const config = await import(${JSON.stringify(CONFIGURE)});
    ${body}
  `;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, ...env },
  });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "null");
}

void test("importing the CEL engine leaves the codegen mode and V8's bytecode limit alone", () => {
  const r = inFreshProcess(
    `console.log(JSON.stringify({ mode: config.codegenMode(), flags: flags.filter((f) => f.includes("bytecode")) }));`,
    { CELGATE_CEL_CODEGEN: "never" },
  );
  assert.deepEqual(r, { mode: "lazy", flags: [] });
});

void test("importing the package sets no V8 flag, as package.json's sideEffects: false says", () => {
  // Only the import: the regular-expression engine sets its flags when it compiles a pattern.
  const r = inFreshProcess(`console.log(JSON.stringify({ exports: typeof pkg.admit, flags }));`);
  assert.deepEqual(r, { exports: "function", flags: [] });
});

void test("configureRuntime applies what the entry point asks, once", () => {
  const r = inFreshProcess(`
    cel.configureRuntime(cel.runtimeOptionsFromEnv({ CELGATE_CEL_CODEGEN: "never" }));
    cel.configureRuntime({ raiseBytecodeLimit: true });
    const v = cel.evaluate("[1, 2].map(x, x * 2)");
    console.log(JSON.stringify({ mode: config.codegenMode(), flags: flags.filter((f) => f.includes("bytecode")), ok: v.ok }));
  `);
  assert.deepEqual(r, { mode: "never", flags: ["--max-optimized-bytecode-size=524288"], ok: true });
});

void test("CELGATE_CEL_CODEGEN names the mode; unset or unknown is lazy (docs/policy-format.md 'Evaluation')", () => {
  assert.deepEqual(runtimeOptionsFromEnv({}), { codegen: "lazy", raiseBytecodeLimit: true });
  assert.deepEqual(runtimeOptionsFromEnv({ CELGATE_CEL_CODEGEN: "always" }).codegen, "always");
  assert.deepEqual(runtimeOptionsFromEnv({ CELGATE_CEL_CODEGEN: "never" }).codegen, "never");
  assert.deepEqual(runtimeOptionsFromEnv({ CELGATE_CEL_CODEGEN: "fast" }).codegen, "lazy");
  assert.equal(codegenModeFrom("fast"), undefined);
});
