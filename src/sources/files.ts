/**
 * Loading policy files from disk: the only module that reads policy files. Paths may be files or
 * directories; directories are walked recursively in sorted order so the same tree always yields the
 * same set and the same diagnostics, whatever order the filesystem lists entries in.
 */
import { createHash } from "node:crypto";
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
import type { Diagnostic } from "../errors.ts";
import { isCustomResourceDefinition } from "../kube/schemas/index.ts";
import { checkReferences, mergePolicySets, parsePolicyText } from "../policy/parse.ts";
import type { PolicySet } from "../policy/types.ts";
import type { Pause } from "./slices.ts";

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

/**
 * How many bytes a load may read: per file, and for all the files together. A reload runs beside the
 * set that serves, and a parsed set holds many times its text (the syntax trees the source maps
 * point into), so what a reload may read is bounded before anything is read, not after. A file or a
 * set over its bound is a PE_TOO_LARGE diagnostic and is not read.
 */
export interface ReadLimits {
  readonly maxFileBytes: number;
  readonly maxSetBytes: number;
}

/**
 * serve's defaults. One file: 1 MiB, the most a ConfigMap holds (the API server refuses a larger
 * one: pkg/apis/core/validation ValidateConfigMap, MaxSecretSize), which is how policies reach a
 * Deployment. All files: 4 MiB, so the set being loaded and the set serving fit the Deployment's
 * heap together. Both are flags of `serve`.
 */
export const DEFAULT_READ_LIMITS: ReadLimits = { maxFileBytes: 1024 * 1024, maxSetBytes: 4 * 1024 * 1024 };

const NO_LIMITS: ReadLimits = {
  maxFileBytes: Number.POSITIVE_INFINITY,
  maxSetBytes: Number.POSITIVE_INFINITY,
};

/** A limit as people set it: MiB when it is whole MiB, else bytes. */
function mib(bytes: number): string {
  return bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${bytes} bytes`;
}

function tooLarge(file: string, message: string): Diagnostic {
  return { code: "PE_TOO_LARGE", severity: "error", message, location: { file, line: 1, column: 1 } };
}

/**
 * Reads `file` whole if it holds at most `max` bytes; `undefined` when it holds more (nothing
 * beyond max + 1 bytes is read, however large the file or however it grew since it was listed).
 */
async function readAtMost(file: string, max: number): Promise<Buffer | undefined> {
  const handle = await open(file, "r");
  try {
    const size = (await handle.stat()).size;
    if (size > max) return undefined;
    let buffer = Buffer.allocUnsafe(Math.min(size, max) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > max) return undefined;
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, max + 1));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return length > max ? undefined : buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
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
export async function readPolicyFiles(
  paths: readonly string[],
  limits: ReadLimits = NO_LIMITS,
): Promise<PolicyFilesRead> {
  const { files: candidates, diagnostics } = await listPolicyFiles(paths);

  // The sizes first, in order, so which files a set over its bound leaves unread does not depend on
  // which read finished first; then the reads, each bounded again (a file may grow meanwhile).
  const sizes = await mapBounded(candidates, IO_CONCURRENCY, (file) =>
    stat(file).then(
      (info) => info.size,
      () => 0,
    ),
  );
  let planned = 0;
  const refused = candidates.map((file, i): Diagnostic | undefined => {
    const size = sizes[i] ?? 0;
    if (size > limits.maxFileBytes)
      return tooLarge(
        file,
        `${file} is ${size} bytes, over the ${mib(limits.maxFileBytes)} one policy file may hold; not read`,
      );
    if (planned + size > limits.maxSetBytes)
      return tooLarge(
        file,
        `the policy files pass the ${mib(limits.maxSetBytes)} a policy set may hold at ${file} (${size} bytes, ${planned} before it); not read`,
      );
    planned += size;
    return undefined;
  });
  // Read concurrently, then taken one by one in the candidates' order, so diagnostics, the
  // fingerprint and the merged set do not depend on which read finished first.
  const reads = await mapBounded(Array.from(candidates.keys()), IO_CONCURRENCY, async (i): Promise<Read> => {
    const file = candidates[i] as string;
    const before = refused[i];
    if (before !== undefined) return { error: before };
    try {
      const [real, bytes] = await Promise.all([realpath(file), readAtMost(file, limits.maxFileBytes)]);
      if (bytes === undefined)
        return {
          error: tooLarge(
            file,
            `${file} grew over the ${mib(limits.maxFileBytes)} one policy file may hold; not read`,
          ),
        };
      return { real, bytes };
    } catch (error) {
      return { error: ioDiagnostic(file, error) };
    }
  });
  const hash = createHash("sha256");
  for (const d of diagnostics) hash.update(`!${d.message}\n`);
  const entries: PolicyFileRead[] = [];
  const seenFiles = new Set<string>();
  let total = 0;
  for (let i = 0; i < candidates.length; i++) {
    const file = candidates[i] as string;
    let read = reads[i] as Read;
    if (!("error" in read) && total + read.bytes.length > limits.maxSetBytes)
      read = {
        error: tooLarge(
          file,
          `the policy files pass the ${mib(limits.maxSetBytes)} a policy set may hold at ${file} (${read.bytes.length} bytes, ${total} before it); not read`,
        ),
      };
    if ("error" in read) {
      entries.push({ file, error: read.error });
      hash.update(`!${read.error.message}\n`);
      continue;
    }
    if (seenFiles.has(read.real)) continue;
    seenFiles.add(read.real);
    total += read.bytes.length;
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
 * A warning (PE_NO_POLICIES) for each path that yielded no policy or binding, no problem of its
 * own and, when other paths hold policies, no CustomResourceDefinition: a typo (`polcies/`) in CI or in a server's --policies must not pass as "0 problems". Every
 * command that reads policy paths reports it, worded here once; `shown` names the paths as the
 * person wrote them (default: as given).
 */
export function noPolicyWarnings(
  paths: readonly string[],
  set: PolicySet,
  diagnostics: readonly Diagnostic[],
  shown: readonly string[] = paths,
): Diagnostic[] {
  const withPolicies = set.policies.length + set.bindings.length > 0;
  const files = [
    ...set.policies.map((p) => p.source.locate("metadata.name").file),
    ...set.bindings.map((b) => b.source.locate("metadata.name").file),
    ...diagnostics.flatMap((d) => (d.location ? [d.location.file] : [])),
    // A path of CRDs beside policy paths (`check crd.yaml policy.yaml`) types those policies.
    ...(withPolicies
      ? set.resources
          .filter((r) => isCustomResourceDefinition(r.object))
          .map((r) => r.source.locate("metadata.name").file)
      : []),
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
export async function fingerprintPolicyFiles(
  paths: readonly string[],
  limits: ReadLimits = NO_LIMITS,
): Promise<string> {
  return (await readPolicyFiles(paths, limits)).fingerprint;
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
  /** What each file read contributes to `set`: its own content, or the fallback's (see LoadOptions). */
  readonly fileSets: ReadonlyMap<string, PolicySet>;
  /** Files that could not be read or have an error; with a fallback, they contribute its content. */
  readonly failedFiles: readonly string[];
}

export interface LoadOptions {
  readonly hooks?: LoadHooks;
  readonly limits?: ReadLimits;
  /**
   * What a file that cannot be read or has an error contributes instead of its own content (its
   * last good content, or nothing when it had none); without it, such a file contributes what of it
   * parsed, and its errors are the caller's to weigh.
   */
  readonly fallback?: (file: string) => PolicySet | undefined;
  /** Asked after each file is parsed; a promise it returns is waited for (slices.ts). */
  readonly pause?: Pause;
}

const EMPTY_SET: PolicySet = { policies: [], bindings: [], resources: [] };

/**
 * Reads every policy file under the given paths (see readPolicyFiles), parses and merges what they
 * hold, and checks bindings against the merged policies.
 */
export async function loadPolicyPaths(
  paths: readonly string[],
  options: LoadOptions = {},
): Promise<LoadedPolicyFiles> {
  const read = await readPolicyFiles(paths, options.limits ?? NO_LIMITS);
  const files: string[] = [];
  for (const entry of read.entries) if ("text" in entry) files.push(entry.file);
  await options.hooks?.afterRead?.(files);
  const diagnostics = [...read.diagnostics];
  const fileSets = new Map<string, PolicySet>();
  const failedFiles: string[] = [];
  const fallback = options.fallback;
  for (const entry of read.entries) {
    let set: PolicySet;
    let failed: boolean;
    if ("error" in entry) {
      diagnostics.push(entry.error);
      [set, failed] = [EMPTY_SET, true];
    } else {
      const parsed = parsePolicyText(entry.text, entry.file);
      diagnostics.push(...parsed.diagnostics);
      [set, failed] = [parsed.set, parsed.diagnostics.some((d) => d.severity === "error")];
      await options.pause?.();
    }
    if (failed) {
      failedFiles.push(entry.file);
      if (fallback !== undefined) set = fallback(entry.file) ?? EMPTY_SET;
    }
    fileSets.set(entry.file, set);
  }
  const set = mergePolicySets([...fileSets.values()]);
  diagnostics.push(...checkReferences(set));
  return { set, diagnostics, files, fingerprint: read.fingerprint, fileSets, failedFiles };
}
