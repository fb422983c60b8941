/**
 * Loading policy files from disk: the only module that reads policy files. Paths may be files or
 * directories; directories are walked recursively in sorted order so the same tree always yields the
 * same set and the same diagnostics, whatever order the filesystem lists entries in.
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Diagnostic } from "../errors.ts";
import { checkReferences, mergePolicySets, parsePolicyText } from "../policy/parse.ts";
import type { PolicySet } from "../policy/types.ts";

const POLICY_EXTENSIONS = [".yaml", ".yml", ".json"];
/** Test suites live next to policies and are read by the test runner, not as policies. */
const TEST_SUITE_SUFFIXES = [".test.yaml", ".test.yml"];
const TEST_FIXTURES_DIR = "fixtures";

function isPolicyFileName(name: string): boolean {
  return (
    POLICY_EXTENSIONS.some((ext) => name.endsWith(ext)) && !TEST_SUITE_SUFFIXES.some((s) => name.endsWith(s))
  );
}

function ioDiagnostic(file: string, error: unknown): Diagnostic {
  const reason = error instanceof Error ? error.message : String(error);
  return {
    code: "PE_IO",
    severity: "error",
    message: `cannot read ${file}: ${reason}`,
    location: { file, line: 1, column: 1 },
  };
}

/** Code-point order rather than locale order, so the result does not depend on the machine's locale. */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Lists the policy files under a directory, depth first in sorted order, skipping hidden entries. */
async function walk(
  dir: string,
  visited: Set<string>,
  files: string[],
  diagnostics: Diagnostic[],
): Promise<void> {
  let real: string;
  let names: string[];
  try {
    real = await realpath(dir);
    // A symlink back up the tree would otherwise be walked forever.
    if (visited.has(real)) return;
    visited.add(real);
    names = (await readdir(dir)).sort(byName);
  } catch (error) {
    diagnostics.push(ioDiagnostic(dir, error));
    return;
  }
  for (const name of names) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch (error) {
      diagnostics.push(ioDiagnostic(path, error));
      continue;
    }
    // A `fixtures` directory holds test inputs (Pods, objects) for the suites beside it, not policies or params.
    if (info.isDirectory()) {
      if (name !== TEST_FIXTURES_DIR) await walk(path, visited, files, diagnostics);
    } else if (info.isFile() && isPolicyFileName(name)) files.push(path);
  }
}

/**
 * Reads every policy file under the given paths (files are read whatever their name; directories
 * contribute their `.yaml`, `.yml` and `.json` files except `*.test.yaml` and `fixtures/`), merges what they hold,
 * and checks bindings against the merged policies.
 */
export async function loadPolicyPaths(
  paths: readonly string[],
): Promise<{ set: PolicySet; diagnostics: Diagnostic[]; files: string[] }> {
  const diagnostics: Diagnostic[] = [];
  const candidates: string[] = [];
  const visitedDirs = new Set<string>();
  for (const path of paths) {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch (error) {
      diagnostics.push(ioDiagnostic(path, error));
      continue;
    }
    if (info.isDirectory()) await walk(path, visitedDirs, candidates, diagnostics);
    else candidates.push(path);
  }

  const files: string[] = [];
  const seenFiles = new Set<string>();
  const sets: PolicySet[] = [];
  for (const file of candidates) {
    let text: string;
    try {
      // The same file reached twice (named and inside a named directory) must not define everything twice.
      const real = await realpath(file);
      if (seenFiles.has(real)) continue;
      seenFiles.add(real);
      text = await readFile(file, "utf8");
    } catch (error) {
      diagnostics.push(ioDiagnostic(file, error));
      continue;
    }
    files.push(file);
    const parsed = parsePolicyText(text, file);
    sets.push(parsed.set);
    diagnostics.push(...parsed.diagnostics);
  }
  const set = mergePolicySets(sets);
  diagnostics.push(...checkReferences(set));
  return { set, diagnostics, files };
}
