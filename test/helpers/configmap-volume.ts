/**
 * A ConfigMap volume as kubelet writes it (kubernetes pkg/volume/util/atomic_writer.go,
 * AtomicWriter.Write): the data lives in a hidden timestamped directory, `..data` is a symlink to
 * the current one, and each key is a symlink `<key> -> ..data/<key>`. An update writes a new
 * timestamped directory, links new keys, points a `..data_tmp` symlink at the new directory and
 * renames it over `..data` (the one atomic step), then unlinks removed keys and deletes the old
 * directory. Tests can act between the steps.
 */
import { mkdir, readlink, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The moments between AtomicWriter's steps: after writing (5), linking (6), swapping (9), pruning (10). */
export type VolumeStep = "written" | "linked" | "swapped" | "pruned";

export interface PublishOptions {
  /** Called after each step; the update goes on when it resolves. */
  readonly between?: (step: VolumeStep) => Promise<void> | void;
  /**
   * Keys whose file is left empty in the new directory when `..data` is swapped onto it: a writer
   * that swaps before its files are complete (kubelet does not; a hand-rolled sync might).
   */
  readonly halfWritten?: readonly string[];
}

export class ConfigMapVolume {
  private generation = 0;
  private keys = new Set<string>();

  constructor(readonly dir: string) {}

  /** Publishes `files` (key -> content) as the volume's whole content; returns the new data directory. */
  async publish(files: Readonly<Record<string, string>>, options: PublishOptions = {}): Promise<string> {
    const between = options.between ?? (() => undefined);
    const halfWritten = new Set(options.halfWritten ?? []);
    const tsName = `..2026_01_01_00_00_${String(++this.generation).padStart(2, "0")}.${process.pid}`;
    const tsDir = join(this.dir, tsName);
    await mkdir(tsDir);
    for (const [key, text] of Object.entries(files))
      await writeFile(join(tsDir, key), halfWritten.has(key) ? "" : text);
    await between("written");
    const keys = new Set(Object.keys(files));
    for (const key of keys) if (!this.keys.has(key)) await symlink(join("..data", key), join(this.dir, key));
    await between("linked");
    const dataLink = join(this.dir, "..data");
    const old = await readlink(dataLink).catch(() => undefined);
    await symlink(tsName, join(this.dir, "..data_tmp"));
    await rename(join(this.dir, "..data_tmp"), dataLink);
    await between("swapped");
    for (const key of this.keys) if (!keys.has(key)) await unlink(join(this.dir, key));
    this.keys = keys;
    await between("pruned");
    if (old !== undefined) await rm(join(this.dir, old), { recursive: true, force: true });
    // A half-written key is completed in place, in the directory that is now current.
    for (const key of halfWritten) await writeFile(join(tsDir, key), files[key] ?? "");
    return tsDir;
  }
}
