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

/**
 * How many file operations may be in flight at once. One at a time, a directory of 1,000 policies
 * spent about a sixth of its load waiting on libuv's thread pool, round trip after round trip.
 */
const IO_CONCURRENCY = 32;

/** `fn` over `items` with at most `limit` calls pending; results in the items' order. */
async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

type Stat = Awaited<ReturnType<typeof stat>>;

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
    names = (await readdir(dir)).sort(byName).filter((name) => !name.startsWith("."));
  } catch (error) {
    diagnostics.push(ioDiagnostic(dir, error));
    return;
  }
  // The entries are looked at together; what they hold is still taken in sorted order below.
  const infos = await mapBounded(names, IO_CONCURRENCY, (name) =>
    stat(join(dir, name)).then(
      (info): Stat | Diagnostic => info,
      (error: unknown) => ioDiagnostic(join(dir, name), error),
    ),
  );
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const path = join(dir, name);
    const info = infos[i] as Stat | Diagnostic;
    if (!("isDirectory" in info)) {
      diagnostics.push(info);
      continue;
    }
    // A `fixtures` directory holds test inputs (Pods, objects) for the suites beside it, not policies or params.
    if (info.isDirectory()) {
      if (name !== TEST_FIXTURES_DIR) await walk(path, visited, files, diagnostics);
    } else if (info.isFile() && isPolicyFileName(name)) files.push(path);
  }
}

type Read = { readonly real: string; readonly text: string } | { readonly error: Diagnostic };

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
    let info: Stat;
    try {
      info = await stat(path);
    } catch (error) {
      diagnostics.push(ioDiagnostic(path, error));
      continue;
    }
    if (info.isDirectory()) await walk(path, visitedDirs, candidates, diagnostics);
    else candidates.push(path);
  }

  // Read concurrently, then parsed one by one in the candidates' order, so diagnostics and the
  // merged set do not depend on which read finished first.
  const reads = await mapBounded(candidates, IO_CONCURRENCY, async (file): Promise<Read> => {
    try {
      const [real, text] = await Promise.all([realpath(file), readFile(file, "utf8")]);
      return { real, text };
    } catch (error) {
      return { error: ioDiagnostic(file, error) };
    }
  });
  const files: string[] = [];
  const seenFiles = new Set<string>();
  const sets: PolicySet[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const file = candidates[i] as string;
    const read = reads[i] as Read;
    if ("error" in read) {
      diagnostics.push(read.error);
      continue;
    }
    // The same file reached twice (named and inside a named directory) must not define everything twice.
    if (seenFiles.has(read.real)) continue;
    seenFiles.add(read.real);
    const text = read.text;
    files.push(file);
    const parsed = parsePolicyText(text, file);
    sets.push(parsed.set);
    diagnostics.push(...parsed.diagnostics);
  }
  const set = mergePolicySets(sets);
  diagnostics.push(...checkReferences(set));
  return { set, diagnostics, files };
}
