/**
 * `eval --write-mutated DIR`: each resource as admission leaves it (after the mutating policies,
 * with the request's namespace and, unless --no-defaults, the API server's defaults) in a file of
 * its own, named after its kind, namespace and name. Files the command read are never overwritten.
 */
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify as yamlStringify } from "yaml";
import type { ResourceEvaluation, ResourceRef } from "../output/results.ts";
import { err, ok, type Result } from "../../result.ts";

/**
 * `deployment_default_web.yaml`, `namespace_team-a.yaml`: kind (lower case), namespace when there
 * is one, name, joined by `_`, which no Kubernetes name or namespace contains, so the name reads
 * back unambiguously. Characters a file name should not hold become `-`.
 */
export function mutatedFileName(ref: ResourceRef, index: number): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9.-]/g, "-");
  const name = ref.name === "" ? `unnamed-${index + 1}` : ref.name;
  const parts = [ref.kind.toLowerCase(), ...(ref.namespace ? [ref.namespace] : []), name];
  return `${parts.map(safe).join("_")}.yaml`;
}

async function real(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/**
 * Writes one file per evaluation into `dir` (created if needed). Refuses, before writing anything,
 * when a target is one of `inputs` (the files the command read) or two resources would share a
 * file. Resolves to the files written.
 */
export async function writeMutated(
  dir: string,
  evaluations: readonly ResourceEvaluation[],
  inputs: readonly string[],
): Promise<Result<string[], string>> {
  const read = new Set<string>();
  for (const f of inputs) {
    const r = await real(f);
    if (r !== undefined) read.add(r);
  }
  const targets = evaluations.map((ev, i) => ({ ev, file: join(dir, mutatedFileName(ev.resource, i)) }));
  const seen = new Map<string, ResourceEvaluation>();
  for (const { ev, file } of targets) {
    const earlier = seen.get(file);
    if (earlier)
      return err(`--write-mutated: two resources would be written to ${file}; evaluate them separately`);
    seen.set(file, ev);
    const r = await real(file);
    if (r !== undefined && read.has(r))
      return err(`--write-mutated: ${file} is one of the input files; refusing to overwrite it`);
  }
  try {
    await mkdir(dir, { recursive: true });
    for (const { ev, file } of targets) {
      const object = ev.mutated ?? ev.original;
      await writeFile(file, yamlStringify(object, { aliasDuplicateObjects: false, lineWidth: 0 }));
    }
  } catch (e) {
    return err(`--write-mutated: cannot write to ${dir}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return ok(targets.map((t) => t.file));
}
