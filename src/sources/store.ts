/**
 * The live policy set of a server: loads and compiles the policy paths, then watches them. A
 * changed set is compiled to the side and swapped whole; a set whose files do not parse is
 * rejected and the last good one keeps serving. Expressions that fail to compile do not block a
 * reload: Kubernetes loads such a policy too and lets failurePolicy decide its requests.
 */
import { stat, watch } from "node:fs";
import { type CompiledPolicySet, type CompileOptions, compilePolicySet } from "../compile/policy.ts";
import type { Diagnostic } from "../errors.ts";
import { loadPolicyPaths } from "./files.ts";

export interface PolicySnapshot {
  readonly set: CompiledPolicySet;
  readonly files: readonly string[];
  /** Parse and compile problems of this set (compile errors included: those policies still load). */
  readonly diagnostics: readonly Diagnostic[];
  readonly loadedAt: Date;
}

export type LoadOutcome =
  | { readonly ok: true; readonly snapshot: PolicySnapshot; readonly changed: boolean }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[]; readonly files: readonly string[] };

/** Loads and compiles once. A set is rejected only when a file cannot be read or parsed. */
export async function loadSnapshot(
  paths: readonly string[],
  options: CompileOptions = {},
): Promise<LoadOutcome> {
  const loaded = await loadPolicyPaths([...paths]);
  const fatal = loaded.diagnostics.filter((d) => d.severity === "error");
  if (fatal.length > 0) return { ok: false, diagnostics: loaded.diagnostics, files: loaded.files };
  const set = compilePolicySet(loaded.set, options);
  return {
    ok: true,
    changed: true,
    snapshot: {
      set,
      files: loaded.files,
      diagnostics: [...loaded.diagnostics, ...set.diagnostics],
      loadedAt: new Date(),
    },
  };
}

export interface PolicyStoreOptions {
  readonly compile?: CompileOptions;
  /** How often files are checked for changes besides fs.watch events (ConfigMap volumes swap symlinks). */
  readonly pollMs?: number;
  readonly onReload?: (outcome: LoadOutcome) => void;
}

async function fingerprint(files: readonly string[]): Promise<string> {
  const parts = await Promise.all(
    files.map(
      (f) =>
        new Promise<string>((resolve) => {
          stat(f, (err, st) => resolve(err ? `${f}:missing` : `${f}:${st.size}:${st.mtimeMs}:${st.ino}`));
        }),
    ),
  );
  return parts.join("|");
}

export class PolicyStore {
  private snapshot: PolicySnapshot;
  private print = "";
  private timer: NodeJS.Timeout | undefined;
  private watchers: { close(): void }[] = [];
  private reloading: Promise<LoadOutcome> | undefined;

  private constructor(
    private readonly paths: readonly string[],
    first: PolicySnapshot,
    private readonly options: PolicyStoreOptions,
  ) {
    this.snapshot = first;
  }

  /** Loads the paths; fails (with the diagnostics) when the first load is not usable. */
  static async open(
    paths: readonly string[],
    options: PolicyStoreOptions = {},
  ): Promise<{ store: PolicyStore } | { diagnostics: readonly Diagnostic[] }> {
    const first = await loadSnapshot(paths, options.compile);
    if (!first.ok) return { diagnostics: first.diagnostics };
    const store = new PolicyStore(paths, first.snapshot, options);
    store.print = await fingerprint(first.snapshot.files);
    return { store };
  }

  current(): PolicySnapshot {
    return this.snapshot;
  }

  /** Loads again now; swaps only a usable set. Concurrent calls share one load. */
  reload(): Promise<LoadOutcome> {
    this.reloading ??= (async () => {
      try {
        const outcome = await loadSnapshot(this.paths, this.options.compile);
        // Remember what was loaded, good or bad: a rejected set is not retried until its files change.
        this.print = await fingerprint(outcome.ok ? outcome.snapshot.files : outcome.files);
        if (outcome.ok) this.snapshot = outcome.snapshot;
        this.options.onReload?.(outcome);
        return outcome;
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** Reloads when files change: fs.watch for promptness, polling for what it misses. */
  watch(): void {
    const poll = this.options.pollMs ?? 2000;
    const check = async () => {
      const files = await loadPolicyPaths([...this.paths]).then((l) => l.files);
      const now = await fingerprint(files);
      if (now !== this.print) await this.reload();
    };
    let debounce: NodeJS.Timeout | undefined;
    const soon = () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => void check().catch(() => undefined), 150);
    };
    for (const p of this.paths) {
      try {
        const w = watch(p, { recursive: true }, soon);
        w.on("error", () => undefined);
        this.watchers.push(w);
      } catch {
        // Recursive watching is not available everywhere; polling covers it.
      }
    }
    this.timer = setInterval(() => void check().catch(() => undefined), poll);
    this.timer.unref();
    this.watchers.push({ close: () => clearTimeout(debounce) });
  }

  close(): void {
    clearInterval(this.timer);
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }
}
