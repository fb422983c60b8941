// Rewrites the policy file list of deploy/kustomization.yaml's ConfigMap generator from what the
// policy loader reads in policies/ (src/manifests/kustomization.ts), so a new policy file is
// deployed without being listed by hand. Part of `npm run manifests:deploy`; run with tsx, which
// loads the TypeScript sources.
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { configMapFiles, withGeneratorFiles } from "../src/manifests/kustomization.ts";
import { loadPolicyPaths } from "../src/sources/files.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const deploy = fileURLToPath(new URL("../deploy", import.meta.url));
const file = new URL("../deploy/kustomization.yaml", import.meta.url);
const loaded = await loadPolicyPaths([fileURLToPath(new URL("../policies", import.meta.url))]);
const files = configMapFiles(loaded.files, (f) => relative(deploy, f));
const before = readFileSync(file, "utf8");
const after = withGeneratorFiles(before, "celgate-policies", files);
if (after !== before) writeFileSync(file, after);
console.error(
  `deploy/kustomization.yaml: ${files.length} policy files${after === before ? ", unchanged" : ", rewritten"} (${relative(root, deploy)})`,
);
