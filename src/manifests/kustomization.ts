/**
 * The policy files of deploy/kustomization.yaml's ConfigMap generator, written from what the policy
 * loader reads, so a new file in policies/ is deployed without anyone remembering to list it
 * (kustomize takes no globs). `npm run manifests:deploy` runs tools/kustomize-policies.mjs, which
 * calls these; test/unit/deploy checks the kustomization says what they would write.
 */
import { isMap, isSeq, parseDocument } from "yaml";

/** Policy files as the kustomization lists them: relative to its directory, fixtures left out, sorted. */
export function configMapFiles(loaded: readonly string[], relativeTo: (file: string) => string): string[] {
  return loaded
    .map(relativeTo)
    .filter((f) => !f.split("/").includes("fixtures"))
    .sort();
}

/**
 * The kustomization text with the `files` of its configMapGenerator named `generator` replaced, and
 * everything else (comments included) as it was. Throws when there is no such generator: the
 * kustomization is the repository's own.
 */
export function withGeneratorFiles(text: string, generator: string, files: readonly string[]): string {
  const doc = parseDocument(text);
  const generators = doc.get("configMapGenerator", true);
  if (!isSeq(generators)) throw new Error("the kustomization has no configMapGenerator list");
  const entry = generators.items.find((g) => isMap(g) && g.get("name") === generator);
  if (!isMap(entry)) throw new Error(`the kustomization has no configMapGenerator named ${generator}`);
  const list = doc.createNode([...files]);
  const current = entry.get("files", true);
  if (isSeq(current)) {
    current.items = list.items;
  } else entry.set("files", list);
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}
