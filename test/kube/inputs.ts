/**
 * The inputs of the Acceptance differential test: every policy file in policies/ (not the suites or
 * their fixtures), the public-policy fixtures, and each YAML example in README.md and docs/ that
 * holds an admission policy or binding (written to a temp file, named by its line).
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { KubeManifest } from "../helpers/kube-objects.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface AcceptanceInput {
  /** Where it comes from, as the summary and the known-differences table name it (`README.md:249`). */
  readonly name: string;
  /** A file holding it, for `celgate check`. */
  readonly file: string;
  /** Its YAML documents that are objects, in order. */
  readonly manifests: readonly KubeManifest[];
}

function manifestsOf(text: string): KubeManifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((o): o is KubeManifest => typeof o === "object" && o !== null && !Array.isArray(o));
}

async function yamlFiles(dir: string): Promise<string[]> {
  return (await readdir(join(ROOT, dir)))
    .filter((f) => /\.ya?ml$/.test(f) && !/\.test\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

/** The fenced YAML blocks of a Markdown file that hold admission objects, with their line numbers. */
function examples(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  for (const m of markdown.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    const text = m[1] ?? "";
    if (!text.includes("admissionregistration.k8s.io")) continue;
    out.push({ line: markdown.slice(0, m.index).split("\n").length, text });
  }
  return out;
}

/** Every input, the Markdown examples written into `tempDir`. */
export async function acceptanceInputs(tempDir: string): Promise<AcceptanceInput[]> {
  const inputs: AcceptanceInput[] = [];
  for (const rel of [
    ...(await yamlFiles("policies")),
    ...(await yamlFiles("test/fixtures/public-policies")),
  ]) {
    const file = join(ROOT, rel);
    inputs.push({ name: rel, file, manifests: manifestsOf(await readFile(file, "utf8")) });
  }
  const docs = (await readdir(join(ROOT, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  for (const rel of ["README.md", ...docs.sort()]) {
    for (const { line, text } of examples(await readFile(join(ROOT, rel), "utf8"))) {
      const file = join(tempDir, `${rel.replaceAll("/", "_")}-${line}.yaml`);
      await writeFile(file, text);
      inputs.push({ name: `${rel}:${line}`, file, manifests: manifestsOf(text) });
    }
  }
  return inputs;
}
