/**
 * `npm run test:kube` (and the last step of `npm test`): the differential tests of test/kube/
 * against a real kube-apiserver. With Go on PATH it builds the missing binaries first
 * (tools/kube-build.mjs, a no-op when they are there) and runs the suite; without Go it prints one
 * line saying the suite is skipped and why, and succeeds, so a machine without Go still runs
 * everything else.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function run(command, args) {
  const r = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

const go = spawnSync("go", ["version"], { encoding: "utf8" });
if (go.error || go.status !== 0) {
  process.stdout.write(
    "test:kube: skipped, Go is not on PATH (the differential tests build and run a real kube-apiserver; see README, Differential tests)\n",
  );
  process.exit(0);
}
const built = run(process.execPath, [join(root, "tools", "kube-build.mjs")]);
if (built !== 0) process.exit(built);
const files = readdirSync(join(root, "test", "kube"))
  .filter((f) => f.endsWith(".test.ts"))
  .sort()
  .map((f) => join("test", "kube", f));
process.exit(run(join(root, "node_modules", ".bin", "tsx"), ["--test", ...files]));
