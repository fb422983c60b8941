/**
 * deploy/library as tools/kustomize-policies.mjs writes it and test/unit/deploy checks it: one
 * component per policy file celgate loads from policies/ (fixtures and files that bind nothing left
 * out), with the ClusterRole its paramKinds need (`celgate manifests --rbac`'s rules and comments,
 * without the base's). The text of each file is manifests/library.ts's.
 */
import { readFile } from "node:fs/promises";
import { basename, relative } from "node:path";
import { configMapFiles } from "../../manifests/kustomization.ts";
import { type LibraryInput, libraryFiles } from "../../manifests/library.ts";
import { rbacManifests } from "../../manifests/rbac.ts";
import { loadPolicyPaths } from "../../sources/files.ts";
import { loadSnapshot } from "../../sources/store.ts";
import { renderDocuments } from "./commands/manifests.ts";

/** deploy/library's files (path relative to it → text) for the policy files under `policiesDir`. */
export async function deployLibrary(policiesDir: string): Promise<Map<string, string>> {
  const loaded = await loadPolicyPaths([policiesDir]);
  const inputs: LibraryInput[] = [];
  for (const rel of configMapFiles(loaded.files, (f) => relative(policiesDir, f))) {
    const file = `${policiesDir}/${rel}`;
    const snapshot = await loadSnapshot([file]);
    if (!snapshot.ok) throw new Error(`${rel} does not load: run celgate check ${rel}`);
    const set = snapshot.snapshot.set;
    if (set.bindings.length === 0) continue;
    const name = basename(rel).replace(/\.(yaml|yml|json)$/, "");
    const rbac = rbacManifests(set, {
      name: `celgate-${name}`,
      namespace: "celgate",
      serviceAccount: "celgate",
      base: false,
    });
    inputs.push({
      name,
      text: await readFile(file, "utf8"),
      ...(rbac.rules.length > 0 ? { rbac: renderDocuments(rbac.documents, rbac.reasons) } : {}),
    });
  }
  return libraryFiles(inputs);
}
