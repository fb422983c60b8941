// Writes deploy/library from policies/ (src/adapters/cli/deploy-library.ts): one opt-in kustomize
// component per policy file, audit first, with an enforce/ component and the RBAC its params need.
// Files of deploy/library it would not write (a policy file removed) are deleted, so the directory
// is exactly the generator's output. Part of `npm run manifests:deploy`; run with tsx, which loads
// the TypeScript sources.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { deployLibrary } from "../src/adapters/cli/deploy-library.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const library = join(root, "deploy", "library");
const wanted = await deployLibrary(join(root, "policies"));
const existing = readdirSync(library, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile())
  .map((e) => relative(library, join(e.parentPath, e.name)));
let written = 0;
let removed = 0;
for (const f of existing)
  if (!wanted.has(f)) {
    rmSync(join(library, f));
    removed++;
  }
for (const [f, text] of wanted) {
  const path = join(library, f);
  let before;
  try {
    before = readFileSync(path, "utf8");
  } catch {
    before = undefined;
  }
  if (before === text) continue;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  written++;
}
console.error(`deploy/library: ${wanted.size} files, ${written} written, ${removed} removed`);
