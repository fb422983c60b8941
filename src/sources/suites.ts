/**
 * The filesystem side of `celgate test`: finding suite files under the paths given, and the reader
 * the suite runner uses for the files a suite names (policies, resources, object files).
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Diagnostic } from "../errors.ts";
import type { PolicySet } from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";
import { loadPolicyPaths } from "./files.ts";

export const SUITE_SUFFIXES = [".test.yaml", ".test.yml"];

/** Directories never worth walking for suites: dependencies, not the user's policies. */
const SKIPPED_DIRECTORIES = new Set(["node_modules"]);

export function isSuiteFileName(name: string): boolean {
  return SUITE_SUFFIXES.some((s) => name.endsWith(s));
}

/** What the runner may read; tests give it a fake. */
export interface SuiteReader {
  readText(path: string): Promise<Result<string, string>>;
  exists(path: string): Promise<boolean>;
  loadPolicies(paths: readonly string[]): Promise<{ set: PolicySet; diagnostics: Diagnostic[] }>;
}

function reason(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  if (code === "ENOENT") return "no such file or directory";
  if (code === "EISDIR") return "is a directory, expected a file";
  return e instanceof Error ? e.message : String(e);
}

export const fileSuiteReader: SuiteReader = {
  async readText(path) {
    try {
      return ok(await readFile(path, "utf8"));
    } catch (e) {
      return err(reason(e));
    }
  },
  async exists(path) {
    try {
      await stat(path);
      return true;
    } catch {
      return false;
    }
  },
  loadPolicies: (paths) => loadPolicyPaths(paths),
};

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function walk(dir: string, visited: Set<string>, out: string[], problems: string[]): Promise<void> {
  let names: string[];
  try {
    const real = await realpath(dir);
    if (visited.has(real)) return;
    visited.add(real);
    names = (await readdir(dir)).sort(byName);
  } catch (e) {
    problems.push(`cannot read ${dir}: ${reason(e)}`);
    return;
  }
  for (const name of names) {
    if (name.startsWith(".") || SKIPPED_DIRECTORIES.has(name)) continue;
    const path = join(dir, name);
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch (e) {
      problems.push(`cannot read ${path}: ${reason(e)}`);
      continue;
    }
    if (info.isDirectory()) await walk(path, visited, out, problems);
    else if (info.isFile() && isSuiteFileName(name)) out.push(path);
  }
}

/**
 * The suite files under the given paths: a file is taken whatever its name; a directory contributes
 * its `*.test.yaml` and `*.test.yml` files, recursively, in sorted order, skipping hidden entries
 * and node_modules. Each file once, in the order first found.
 */
export async function findSuiteFiles(
  paths: readonly string[],
): Promise<{ files: string[]; problems: string[] }> {
  const files: string[] = [];
  const problems: string[] = [];
  const visited = new Set<string>();
  for (const path of paths) {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch (e) {
      problems.push(`cannot read ${path}: ${reason(e)}`);
      continue;
    }
    if (info.isDirectory()) await walk(path, visited, files, problems);
    else files.push(path);
  }
  const seen = new Set<string>();
  const unique: string[] = [];
  for (const f of files) {
    let key = f;
    try {
      key = await realpath(f);
    } catch {
      // Reported when the runner reads it.
    }
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(f);
  }
  return { files: unique, problems };
}
