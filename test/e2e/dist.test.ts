/**
 * What the Docker image runs, checked without Docker: the production build starts from its
 * entrypoint and answers /readyz, and the shipped code imports only production dependencies
 * (what `npm ci --omit=dev` installs).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

void test("src/ imports only node builtins and production dependencies", () => {
  const builtins = new Set(builtinModules);
  const offenders: string[] = [];
  for (const file of sourceFiles(join(root, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*(?:import|export)[^'"]*?from\s+["']([^"']+)["']/gm)) {
      const spec = m[1] as string;
      if (spec.startsWith(".") || spec.startsWith("node:")) continue;
      if (/^import\s+type\b/.test(m[0].trim()) || /^export\s+type\b/.test(m[0].trim())) continue;
      const name = spec.startsWith("@")
        ? spec.split("/").slice(0, 2).join("/")
        : (spec.split("/")[0] as string);
      if (builtins.has(name)) continue;
      if (!(name in pkg.dependencies)) offenders.push(`${file.slice(root.length)} imports ${spec}`);
    }
  }
  assert.deepEqual(offenders, []);
});

void test("the production build starts from the Dockerfile's entrypoint and answers /readyz", {
  timeout: 120_000,
}, async (t) => {
  const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
  const entry = /ENTRYPOINT\s+\["node",\s*"([^"]+)"/.exec(dockerfile)?.[1];
  assert.ok(entry, "the Dockerfile has an exec-form node ENTRYPOINT");
  // Inside the repository (under the ignored .celgate/), so ESM resolution finds node_modules as in the image.
  mkdirSync(join(root, ".celgate"), { recursive: true });
  const out = mkdtempSync(join(root, ".celgate", "dist-test-"));
  copyFileSync(join(root, "package.json"), join(out, "package.json"));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const build = spawnSync(
    process.execPath,
    [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", join(out, "dist")],
    {
      encoding: "utf8",
      timeout: 100_000,
    },
  );
  assert.equal(build.status, 0, build.stdout + build.stderr);
  const bin = join(out, entry);
  const child = spawn(
    process.execPath,
    [
      bin,
      "serve",
      "--policies",
      join(root, "policies"),
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--metrics-port",
      "0",
      "--drain-seconds",
      "0",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  t.after(() => child.kill("SIGKILL"));
  let log = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no serving line in 30 s:\n${log}`)), 30_000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      log += chunk;
      const m = /on (https:\/\/[^\s;]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
  });
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(new URL("/readyz", url), { rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
  assert.equal(status, 200);
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  assert.equal(await exited, 0);
});
