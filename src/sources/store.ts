/**
 * The live policy set of a server: loads and compiles the policy paths, then watches them. A
 * changed set is compiled to the side and swapped whole. Expressions that fail to compile do not
 * block a reload: Kubernetes loads such a policy too and lets failurePolicy decide its requests.
 *
 * What a reload must never do is fail open. So:
 * - What was loaded is known by the bytes read (files.ts fingerprints them as it reads), never by a
 *   later look at the files: a write that lands while a load runs is a difference, and a load whose
 *   files changed under it is run again.
 * - A file that cannot be read, does not parse, or is over the read limits keeps contributing what
 *   it last contributed while it was good (nothing, for a file that never was), and the other
 *   files' changes are applied: one broken file does not hold back a fix made meanwhile in another,
 *   and never removes what it held. The reload is reported as partial, naming the files. A first
 *   load has nothing to fall back on, so there any such file fails the load.
 * - A set that would not fit in the heap (memory-budget.ts) is rejected whole; the last good one
 *   keeps serving.
 * - A set that would remove an object the serving set holds (a policy, binding, param or Namespace:
 *   a file emptied, truncated, deleted, a document taken out) is held back until the files read the
 *   same twice, `settleMs` apart. Editors and `kubectl cp` truncate a file and then write it, so the
 *   first read of a change can be half of it; a removal meant on purpose still reads the same a
 *   moment later and is applied then.
 * - Reloads never run at once, and one asked for during a reload runs after it.
 * - A reload parses and compiles in slices (slices.ts), so requests are answered while it runs.
 */
import { watch } from "node:fs";
import {
  type CompiledPolicySet,
  type CompileOptions,
  compilePolicySet,
  compilePolicySetSliced,
} from "../compile/policy.ts";
import type { Diagnostic } from "../errors.ts";
import type { PolicySet } from "../policy/types.ts";
import {
  DEFAULT_READ_LIMITS,
  fingerprintPolicyFiles,
  type LoadHooks,
  type LoadOptions,
  loadPolicyPaths,
  noPolicyWarnings,
  type ReadLimits,
} from "./files.ts";
import {
  compareInventories,
  type Inventory,
  type InventoryChanges,
  type InventoryEntry,
  inventoryOf,
  inventoryOfSliced,
} from "./inventory.ts";
import { memoryProblem } from "./memory-budget.ts";
import { serialized } from "./serial.ts";
import { slicer } from "./slices.ts";

export interface PolicySnapshot {
  readonly set: CompiledPolicySet;
  readonly files: readonly string[];
  /** Parse and compile problems of this set (compile errors included: those policies still load). */
  readonly diagnostics: readonly Diagnostic[];
  readonly loadedAt: Date;
  /** Every object the files define, by kind and name. */
  readonly inventory: Inventory;
  /** The fingerprint of the bytes this set was parsed from (see files.ts). */
  readonly fingerprint: string;
  /** What each file contributes to the set: its content, or its last good content (failedFiles). */
  readonly fileSets: ReadonlyMap<string, PolicySet>;
  /** Files that could not be read or have errors, and contribute their last good content instead. */
  readonly failedFiles: readonly string[];
}

export type LoadOutcome =
  | { readonly ok: true; readonly snapshot: PolicySnapshot }
  | {
      readonly ok: false;
      readonly diagnostics: readonly Diagnostic[];
      readonly files: readonly string[];
      readonly fingerprint: string;
    };

/**
 * Loads and compiles once. Without a fallback (a first load), a set is rejected when a file cannot
 * be read or parsed; with one, such a file contributes the fallback's content, and only errors of
 * the whole set (a name defined twice) reject it. A set is also rejected when its estimated memory
 * is over `load.memoryBudgetBytes` (memory-budget.ts; checked before it is compiled). A path that
 * holds no policy is a warning among the diagnostics (named as in `shown`, default as given).
 */
export async function loadSnapshot(
  paths: readonly string[],
  options: CompileOptions = {},
  load: LoadOptions & { readonly memoryBudgetBytes?: number } = {},
  shown: readonly string[] = paths,
): Promise<LoadOutcome> {
  const loaded = await loadPolicyPaths([...paths], load);
  const empty = noPolicyWarnings(paths, loaded.set, loaded.diagnostics, shown);
  const failed = new Set(load.fallback === undefined ? [] : loaded.failedFiles);
  const budget = load.memoryBudgetBytes;
  const tooLarge = budget === undefined ? undefined : memoryProblem(loaded.set, budget);
  const fatal = [
    ...loaded.diagnostics.filter(
      (d) => d.severity === "error" && (d.location === undefined || !failed.has(d.location.file)),
    ),
    ...(tooLarge ? [tooLarge] : []),
  ];
  if (fatal.length > 0)
    return {
      ok: false,
      diagnostics: [...loaded.diagnostics, ...empty, ...(tooLarge ? [tooLarge] : [])],
      files: loaded.files,
      fingerprint: loaded.fingerprint,
    };
  const set =
    load.pause === undefined
      ? compilePolicySet(loaded.set, options)
      : await compilePolicySetSliced(loaded.set, options, load.pause);
  return {
    ok: true,
    snapshot: {
      set,
      files: loaded.files,
      diagnostics: [...loaded.diagnostics, ...empty, ...set.diagnostics],
      loadedAt: new Date(),
      inventory:
        load.pause === undefined ? inventoryOf(loaded.set) : await inventoryOfSliced(loaded.set, load.pause),
      fingerprint: loaded.fingerprint,
      fileSets: loaded.fileSets,
      failedFiles: [...failed],
    },
  };
}

/** What a reload did. Every outcome but `unchanged` is reported to `onReload`, once. */
export type ReloadOutcome =
  /**
   * The new set serves now; the files in `snapshot.failedFiles` (with their errors in its
   * diagnostics) contribute their last good content.
   */
  | { readonly status: "applied"; readonly snapshot: PolicySnapshot; readonly changes: InventoryChanges }
  /** The files do not parse; the last good set keeps serving. */
  | {
      readonly status: "rejected";
      readonly diagnostics: readonly Diagnostic[];
      readonly files: readonly string[];
    }
  /**
   * The files would remove objects the serving set holds; it keeps serving until the files read the
   * same again `settleMs` later. `reported` is false when this is the same held content seen again.
   */
  | {
      readonly status: "held";
      readonly removed: readonly InventoryEntry[];
      readonly files: readonly string[];
      readonly settleMs: number;
      readonly reported: boolean;
    }
  /** The reload itself failed (a fault, not the files' content); the last good set keeps serving. */
  | { readonly status: "failed"; readonly error: string }
  /** The files hold what is serving already. */
  | { readonly status: "unchanged" };

export type ReportedOutcome = Exclude<ReloadOutcome, { readonly status: "unchanged" }>;

/** How long a removal must read the same before it is applied, by default. */
export const DEFAULT_SETTLE_MS = 1000;
/**
 * Loads in one reload when the files keep changing under each: past this the reload settles for the
 * last one, and the next look at the files (a watch event or the poll) starts another.
 */
const MAX_LOADS_PER_RELOAD = 5;
/** fs.watch reports each write of a save separately; wait for them to stop. */
const WATCH_DEBOUNCE_MS = 150;

export interface PolicyStoreOptions {
  readonly compile?: CompileOptions;
  /** How often files are checked for changes besides fs.watch events (ConfigMap volumes swap symlinks). */
  readonly pollMs?: number;
  /** A reload that removes objects waits until the files have read the same for this long. */
  readonly settleMs?: number;
  /** Called for every reload outcome but `unchanged`. */
  readonly onReload?: (outcome: ReportedOutcome) => void;
  /** Passed to the loader; tests use it to change files in the middle of a load. */
  readonly loadHooks?: LoadHooks;
  /** How many bytes a load may read, per file and in all (DEFAULT_READ_LIMITS unless given). */
  readonly limits?: ReadLimits;
  /** A set whose estimated memory is over this is refused before it is compiled (memory-budget.ts). */
  readonly memoryBudgetBytes?: number;
  /** A monotonic clock in milliseconds; performance.now() unless a test passes its own. */
  readonly now?: () => number;
}

export class PolicyStore {
  private snapshot: PolicySnapshot;
  /** Whether the last reported outcome was a set applied (or the first load): then no news is no news. */
  private serving = true;
  /** The fingerprint of the files the last load read, good or bad: the watcher compares against it. */
  private seen: string;
  /** Files that would remove objects, first read at `since`. */
  private held: { readonly fingerprint: string; readonly since: number } | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private watchers: { close(): void }[] = [];
  private watching = false;
  private readonly settleMs: number;
  private readonly now: () => number;
  private readonly reloadSerially: () => Promise<ReloadOutcome>;

  private constructor(
    private readonly paths: readonly string[],
    first: PolicySnapshot,
    private readonly options: PolicyStoreOptions,
  ) {
    this.snapshot = first;
    this.seen = first.fingerprint;
    this.settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
    this.now = options.now ?? (() => performance.now());
    this.reloadSerially = serialized(() => this.load());
  }

  /** Loads the paths; fails (with the diagnostics) when the first load is not usable. */
  static async open(
    paths: readonly string[],
    options: PolicyStoreOptions = {},
  ): Promise<{ store: PolicyStore } | { diagnostics: readonly Diagnostic[] }> {
    const first = await loadSnapshot(paths, options.compile, {
      limits: options.limits ?? DEFAULT_READ_LIMITS,
      ...(options.memoryBudgetBytes !== undefined ? { memoryBudgetBytes: options.memoryBudgetBytes } : {}),
    });
    if (!first.ok) return { diagnostics: first.diagnostics };
    return { store: new PolicyStore(paths, first.snapshot, options) };
  }

  current(): PolicySnapshot {
    return this.snapshot;
  }

  /**
   * Loads again and swaps in a usable set (see the module comment for when a set is held back).
   * Reloads never overlap: one asked for while another runs starts when it ends, and every call
   * made during the same run shares that one.
   */
  reload(): Promise<ReloadOutcome> {
    return this.reloadSerially();
  }

  private async load(): Promise<ReloadOutcome> {
    let outcome: ReloadOutcome;
    try {
      outcome = await this.loadLatest();
    } catch (error) {
      // A fault of the reload itself: reported once for these files (the watcher looks again when
      // they change, not on every poll), and the serving set stays.
      this.serving = false;
      this.seen = await fingerprintPolicyFiles(this.paths, this.limits).catch(() => this.seen);
      outcome = { status: "failed", error: error instanceof Error ? error.message : String(error) };
    }
    if (outcome.status !== "unchanged" && !(outcome.status === "held" && !outcome.reported))
      this.options.onReload?.(outcome);
    return outcome;
  }

  private get limits(): ReadLimits {
    return this.options.limits ?? DEFAULT_READ_LIMITS;
  }

  private async loadLatest(): Promise<ReloadOutcome> {
    const load = () =>
      loadSnapshot(this.paths, this.options.compile, {
        ...(this.options.loadHooks ? { hooks: this.options.loadHooks } : {}),
        limits: this.limits,
        // The serving set's content of a file, which is its last good content when it failed before.
        fallback: (file) => this.snapshot.fileSets.get(file),
        ...(this.options.memoryBudgetBytes !== undefined
          ? { memoryBudgetBytes: this.options.memoryBudgetBytes }
          : {}),
        // A reload runs beside the requests the serving set answers: in slices, never in one block.
        pause: slicer(),
      });
    let loaded = await load();
    // Did the files change while they were being loaded? Then what was loaded is already old.
    for (let i = 1; i < MAX_LOADS_PER_RELOAD; i++) {
      if ((await fingerprintPolicyFiles(this.paths, this.limits)) === fingerprintOf(loaded)) break;
      loaded = await load();
    }
    return this.decide(loaded);
  }

  /** Reports a reload that failed outside load() (the watcher's own look at the files). */
  private failed(error: unknown): void {
    this.options.onReload?.({
      status: "failed",
      error: error instanceof Error ? error.message : String(error),
    });
  }

  private decide(loaded: LoadOutcome): ReloadOutcome {
    this.seen = fingerprintOf(loaded);
    if (!loaded.ok) {
      this.held = undefined;
      this.serving = false;
      return { status: "rejected", diagnostics: loaded.diagnostics, files: loaded.files };
    }
    const next = loaded.snapshot;
    if (this.serving && next.fingerprint === this.snapshot.fingerprint) {
      this.held = undefined;
      return { status: "unchanged" };
    }
    const changes = compareInventories(this.snapshot.inventory, next.inventory);
    if (changes.removed.length > 0) {
      const now = this.now();
      const held = this.held;
      const settled = held?.fingerprint === next.fingerprint && now - held.since >= this.settleMs;
      if (!settled) {
        const fresh = held?.fingerprint !== next.fingerprint;
        if (fresh) this.held = { fingerprint: next.fingerprint, since: now };
        this.serving = false;
        this.settleAfter(this.settleMs - (now - (this.held?.since ?? now)));
        return {
          status: "held",
          removed: changes.removed,
          files: next.files,
          settleMs: this.settleMs,
          reported: fresh,
        };
      }
    }
    this.held = undefined;
    this.serving = true;
    this.snapshot = next;
    return { status: "applied", snapshot: next, changes };
  }

  /** Looks at held-back files again once they may have settled; only while watching. */
  private settleAfter(ms: number): void {
    if (!this.watching) return;
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => void this.reload().catch((e) => this.failed(e)), Math.max(0, ms));
    this.settleTimer.unref();
  }

  /** Reloads when files change: fs.watch for promptness, polling for what it misses. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    const check = serialized(async () => {
      if ((await fingerprintPolicyFiles(this.paths, this.limits)) !== this.seen) await this.reload();
    });
    const look = () => void check().catch((e) => this.failed(e));
    let debounce: NodeJS.Timeout | undefined;
    const soon = () => {
      clearTimeout(debounce);
      debounce = setTimeout(look, WATCH_DEBOUNCE_MS);
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
    this.pollTimer = setInterval(look, this.options.pollMs ?? 2000);
    this.pollTimer.unref();
    this.watchers.push({ close: () => clearTimeout(debounce) });
  }

  close(): void {
    this.watching = false;
    clearInterval(this.pollTimer);
    clearTimeout(this.settleTimer);
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }
}

function fingerprintOf(loaded: LoadOutcome): string {
  return loaded.ok ? loaded.snapshot.fingerprint : loaded.fingerprint;
}
