/**
 * The policy files deploy/library makes components of: what the policy loader reads in policies/,
 * fixtures left out, so a new file in policies/ becomes a component without anyone remembering to
 * list it (kustomize takes no globs). `npm run manifests:deploy` runs tools/kustomize-policies.mjs;
 * test/unit/deploy checks deploy/library is what it would write.
 */

/** Policy files relative to `relativeTo`'s base, fixtures left out, sorted. */
export function configMapFiles(loaded: readonly string[], relativeTo: (file: string) => string): string[] {
  return loaded
    .map(relativeTo)
    .filter((f) => !f.split("/").includes("fixtures"))
    .sort();
}
