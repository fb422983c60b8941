/**
 * Loading policy files from disk: the only module that reads policy files. Paths may be files or
 * directories; directories are walked recursively in sorted order so the same tree always yields the
 * same set and the same diagnostics, whatever order the filesystem lists entries in.
 */
import { createHash } from "node:crypto";
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
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

/**
 * What a directory entry is, following symlinks; undefined for a symlink to nothing. A ConfigMap
 * volume has those for a moment at each update: kubelet links a new key's file to `..data/<key>`
 * before `..data` points at the directory that holds it, and unlinks a removed key only after
 * (kubernetes pkg/volume/util/atomic_writer.go, Write steps 6, 9 and 10). A link to nothing is
 * not a file, so it is not read, rather than failing the whole load.
 */
async function entryInfo(path: string): Promise<Stat | Diagnostic | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      const link = await lstat(path).catch(() => undefined);
      if (link?.isSymbolicLink()) return undefined;
    }
    return ioDiagnostic(path, error);
  }
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
    names = (await readdir(dir)).sort(byName).filter((name) => !name.startsWith("."));
  } catch (error) {
    diagnostics.push(ioDiagnostic(dir, error));
    return;
  }
  // The entries are looked at together; what they hold is still taken in sorted order below.
  const infos = await mapBounded(names, IO_CONCURRENCY, (name) => entryInfo(join(dir, name)));
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const path = join(dir, name);
    const info = infos[i] as Stat | Diagnostic | undefined;
    if (info === undefined) continue;
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

/**
 * The files the paths name: a file as it is (whatever its name), a directory walked as a policy
 * directory is (its `.yaml`, `.yml` and `.json` files, recursively and sorted, except `*.test.yaml`,
 * `fixtures/` and hidden entries). The one rule for every command that takes a file or a directory.
 */
export async function listPolicyFiles(
  paths: readonly string[],
): Promise<{ readonly files: string[]; readonly diagnostics: Diagnostic[] }> {
  const diagnostics: Diagnostic[] = [];
  const files: string[] = [];
  const visitedDirs = new Set<string>();
  for (const path of paths) {
    let info: Stat;
    try {
      info = await stat(path);
    } catch (error) {
      diagnostics.push(ioDiagnostic(path, error));
      continue;
    }
    if (info.isDirectory()) await walk(path, visitedDirs, files, diagnostics);
    else files.push(path);
  }
  return { files, diagnostics };
}

type Read = { readonly real: string; readonly bytes: Buffer } | { readonly error: Diagnostic };

/** One policy file as read: its text, or why it could not be read. What is parsed is what was hashed. */
export type PolicyFileRead =
  | { readonly file: string; readonly text: string }
  | { readonly file: string; readonly error: Diagnostic };

/** What the policy paths held at one moment: each file once, in load order, and a hash of it all. */
export interface PolicyFilesRead {
  readonly entries: readonly PolicyFileRead[];
  /** Paths and directories that could not be listed. */
  readonly diagnostics: readonly Diagnostic[];
  /**
   * A content hash over the files' names and bytes (and what could not be read), in load order. Two
   * reads with the same fingerprint parse to the same set; a file changed after it was read gives
   * another fingerprint, whatever its size and times say.
   */
  readonly fingerprint: string;
}

/**
 * Reads every policy file under the given paths (files are read whatever their name; directories
 * contribute their `.yaml`, `.yml` and `.json` files except `*.test.yaml` and `fixtures/`) without
 * parsing them. The same file reached twice (named and inside a named directory) is read once.
 */
export async function readPolicyFiles(paths: readonly string[]): Promise<PolicyFilesRead> {
  const { files: candidates, diagnostics } = await listPolicyFiles(paths);

  // Read concurrently, then taken one by one in the candidates' order, so diagnostics, the
  // fingerprint and the merged set do not depend on which read finished first.
  const reads = await mapBounded(candidates, IO_CONCURRENCY, async (file): Promise<Read> => {
    try {
      const [real, bytes] = await Promise.all([realpath(file), readFile(file)]);
      return { real, bytes };
    } catch (error) {
      return { error: ioDiagnostic(file, error) };
    }
  });
  const hash = createHash("sha256");
  for (const d of diagnostics) hash.update(`!${d.message}\n`);
  const entries: PolicyFileRead[] = [];
  const seenFiles = new Set<string>();
  for (let i = 0; i < candidates.length; i++) {
    const file = candidates[i] as string;
    const read = reads[i] as Read;
    if ("error" in read) {
      entries.push({ file, error: read.error });
      hash.update(`!${read.error.message}\n`);
      continue;
    }
    if (seenFiles.has(read.real)) continue;
    seenFiles.add(read.real);
    hash.update(`${file}\0${read.bytes.length}\0`).update(read.bytes).update("\n");
    entries.push({ file, text: read.bytes.toString("utf8") });
  }
  return { entries, diagnostics, fingerprint: hash.digest("hex") };
}

/** Whether `file` is `path` or inside it. */
export function under(file: string, path: string): boolean {
  return file === path || file.startsWith(path.endsWith(sep) ? path : `${path}${sep}`);
}

/**
 * A warning (PE_NO_POLICIES) for each path that yielded no policy or binding and no problem of its
 * own: a typo (`polcies/`) in CI or in a server's --policies must not pass as "0 problems". Every
 * command that reads policy paths reports it, worded here once; `shown` names the paths as the
 * person wrote them (default: as given).
 */
export function noPolicyWarnings(
  paths: readonly string[],
  set: PolicySet,
  diagnostics: readonly Diagnostic[],
  shown: readonly string[] = paths,
): Diagnostic[] {
  const files = [
    ...set.policies.map((p) => p.source.locate("metadata.name").file),
    ...set.bindings.map((b) => b.source.locate("metadata.name").file),
    ...diagnostics.flatMap((d) => (d.location ? [d.location.file] : [])),
  ];
  return paths.flatMap((path, i): Diagnostic[] =>
    files.some((f) => under(f, path))
      ? []
      : [
          {
            code: "PE_NO_POLICIES",
            severity: "warning",
            message: `${shown[i] ?? path} holds no ValidatingAdmissionPolicy, MutatingAdmissionPolicy or binding`,
          },
        ],
  );
}

/** The fingerprint of what the paths hold now (readPolicyFiles without keeping the text). */
export async function fingerprintPolicyFiles(paths: readonly string[]): Promise<string> {
  return (await readPolicyFiles(paths)).fingerprint;
}

export interface LoadHooks {
  /**
   * Called once every file has been read and before any is parsed. A seam for tests that change a
   * file between the read and the end of a load; nothing else has a reason to wait there.
   */
  readonly afterRead?: (files: readonly string[]) => Promise<void> | void;
}

export interface LoadedPolicyFiles {
  readonly set: PolicySet;
  readonly diagnostics: Diagnostic[];
  /** The files read, in load order. */
  readonly files: string[];
  /** readPolicyFiles' fingerprint of the bytes this set was parsed from. */
  readonly fingerprint: string;
}

/**
 * Reads every policy file under the given paths (see readPolicyFiles), parses and merges what they
 * hold, and checks bindings against the merged policies.
 */
export async function loadPolicyPaths(
  paths: readonly string[],
  hooks: LoadHooks = {},
): Promise<LoadedPolicyFiles> {
  const read = await readPolicyFiles(paths);
  const files: string[] = [];
  for (const entry of read.entries) if ("text" in entry) files.push(entry.file);
  await hooks.afterRead?.(files);
  const diagnostics = [...read.diagnostics];
  const sets: PolicySet[] = [];
  for (const entry of read.entries) {
    if ("error" in entry) {
      diagnostics.push(entry.error);
      continue;
    }
    const parsed = parsePolicyText(entry.text, entry.file);
    sets.push(parsed.set);
    diagnostics.push(...parsed.diagnostics);
  }
  const set = mergePolicySets(sets);
  diagnostics.push(...checkReferences(set));
  return { set, diagnostics, files, fingerprint: read.fingerprint };
}
