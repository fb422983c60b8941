/**
 * `npm run build` step after tsc: copies the data files that src/ reads at run time (the built-in
 * Kubernetes schemas in src/kube/schemas/data/) to the same place under dist/, which tsc does not
 * do for files it does not compile.
 */
import { cpSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = process.argv[2] ?? "dist";
for (const dir of ["kube/schemas/data"]) {
  const from = join(root, "src", dir);
  if (existsSync(from)) cpSync(from, join(root, outDir, dir), { recursive: true });
}
