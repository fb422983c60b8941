/**
 * The slow lane: a worker thread for the reviews that would hold the event loop long enough to
 * starve the others — a review that is still running when its time slice on the main thread ends
 * (batch.ts), and a body too large to parse on the main thread (body.ts). It keeps one review from
 * costing every other request its latency: the main thread goes on answering while the worker,
 * at a lower priority, works through the slow ones.
 *
 * The worker builds the same policy set as the main thread from the same files (checked by the
 * fingerprint of the bytes read), and answers with the same code (review.ts), so a review gives the
 * same reply in either place. A review whose set the worker does not have is handed back
 * (`unavailable`) and evaluated on the main thread: slower, never different. A worker that dies
 * (out of memory in a review, a bug) fails the reviews it held as the engine failing does (the
 * path's failurePolicy, or HTTP 500), and a new one is started.
 */
import { Worker } from "node:worker_threads";
import type { CompileOptions } from "../../compile/policy.ts";
import type { FromWorker, LaneAnswer, LaneRecipe, LaneWorkerData, ToWorker } from "./lane-protocol.ts";
import { toSharedClock } from "./lane-protocol.ts";
import type { ReviewRoute } from "./review.ts";

export interface SlowLaneOptions {
  readonly compile: CompileOptions;
  /** The worker's nice value (default 10: about a tenth of a core's share against the main thread). */
  readonly nice?: number;
  /** The worker's V8 heap limit (default 128 MiB); a review past it ends the worker, not the process. */
  readonly maxHeapMb?: number;
  /** Told when the worker stops unexpectedly or a policy set cannot be built there. */
  readonly onProblem?: (message: string) => void;
}

export interface LaneJob {
  readonly version: number;
  /**
   * The request body: text is copied to the worker; bytes that fill a buffer of their own move
   * there (this Buffer is empty afterwards), other bytes are copied.
   */
  readonly body: string | Buffer;
  readonly route: ReviewRoute;
  /** performance.now() of this thread. */
  readonly deadline: number;
  readonly debugging: boolean;
}

/** Workers stopping in a row, without building a set in between, before the lane turns itself off. */
const MAX_CRASHES = 3;

interface Pending {
  readonly resolve: (answer: LaneAnswer) => void;
}

/**
 * The worker's module: the built .js beside this file, or the .ts source under tsx (tests), whose
 * loader does not follow a worker: it is registered there first (at the lane's priority already:
 * registering compiles).
 */
function workerSource(nice: number): { readonly code: string } | { readonly file: URL } {
  const self = import.meta.url;
  if (!self.endsWith(".ts")) return { file: new URL("./slow-worker.js", self) };
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./slow-worker.ts", self).href;
  return {
    code: [
      `import("node:os").then((os) => { try { os.setPriority(${nice}); } catch {} })`,
      `.then(() => import(${JSON.stringify(tsx)}))`,
      `.then((t) => { t.register(); return import(${JSON.stringify(entry)}); })`,
    ].join(""),
  };
}

/** A body as it crosses to the worker: bytes of a buffer of their own move, the rest is copied. */
function movable(body: string | Buffer): { body: string | Uint8Array; transfer: ArrayBuffer[] } {
  if (typeof body === "string") return { body, transfer: [] };
  if (
    body.byteOffset === 0 &&
    body.byteLength === body.buffer.byteLength &&
    body.buffer instanceof ArrayBuffer
  )
    return { body: new Uint8Array(body.buffer), transfer: [body.buffer] };
  return { body: Uint8Array.from(body), transfer: [] };
}

export class SlowLane {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** The recipe of each version in use (for a restarted worker), and those the worker has built. */
  private readonly recipes = new Map<number, LaneRecipe>();
  private readonly built = new Set<number>();
  private closed = false;
  /** Workers that stopped in a row without building a set; at MAX_CRASHES the lane turns itself off. */
  private crashes = 0;
  /** Reviews sent to the worker, for metrics and tests. */
  submitted = 0;

  constructor(private readonly options: SlowLaneOptions) {}

  /**
   * A new policy set serves as `version`: the worker builds it (a worker started later builds every
   * set in use), and forgets the sets older than the one before it (a review that started on the
   * previous set may still arrive).
   */
  load(version: number, recipe: Omit<LaneRecipe, "compile">): void {
    if (this.closed) return;
    const full: LaneRecipe = { ...recipe, compile: this.options.compile };
    this.recipes.set(version, full);
    this.worker?.postMessage({ type: "load", version, recipe: full } satisfies ToWorker);
    for (const old of [...this.recipes.keys()].filter((v) => v < version - 1)) {
      this.recipes.delete(old);
      this.built.delete(old);
      this.worker?.postMessage({ type: "forget", version: old } satisfies ToWorker);
    }
  }

  /** Starts the worker now, so that it has built the sets in use before the first slow review. */
  start(): void {
    if (!this.closed && this.crashes < MAX_CRASHES) this.ensureWorker();
  }

  /**
   * Whether reviews of `version` may come here: the worker has built its set. Until then (the
   * worker starting, a reload compiling there) they stay on the main thread, as without a lane.
   */
  accepts(version: number): boolean {
    return !this.closed && this.built.has(version);
  }

  /** Whether no review is in the worker or waiting for it. */
  idle(): boolean {
    return this.pending.size === 0;
  }

  /** The worker's answer; `unavailable` when it cannot review it (the caller evaluates it itself). */
  submit(job: LaneJob): Promise<LaneAnswer> {
    if (!this.accepts(job.version)) return Promise.resolve({ kind: "unavailable" });
    const id = this.nextId++;
    this.submitted++;
    return new Promise<LaneAnswer>((resolve) => {
      this.pending.set(id, { resolve });
      const { body, transfer } = movable(job.body);
      const message: ToWorker = {
        type: "review",
        id,
        version: job.version,
        body,
        route: job.route,
        deadline: toSharedClock(job.deadline),
        debugging: job.debugging,
      };
      this.ensureWorker().postMessage(message, transfer);
    });
  }

  private ensureWorker(): Worker {
    if (this.worker !== undefined) return this.worker;
    const data: LaneWorkerData = { nice: this.options.nice ?? 10 };
    const source = workerSource(data.nice);
    const options = {
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb ?? 128 },
      // The main thread's stdout and stderr stay its own.
      stdout: true,
      stderr: true,
    };
    const worker =
      "file" in source
        ? new Worker(source.file, options)
        : new Worker(source.code, { ...options, eval: true });
    worker.unref();
    worker.stdout.resume();
    worker.stderr.resume();
    worker.on("message", (m: FromWorker) => this.received(m));
    worker.on("error", (e) => this.stopped(worker, e.message));
    worker.on("exit", (code) => this.stopped(worker, `exited with code ${code}`));
    this.worker = worker;
    // A new worker builds every set still in use.
    for (const [version, recipe] of this.recipes)
      worker.postMessage({ type: "load", version, recipe } satisfies ToWorker);
    return worker;
  }

  private received(m: FromWorker): void {
    if (m.type === "loaded") {
      this.crashes = 0;
      if (m.error === undefined) {
        if (this.recipes.has(m.version)) this.built.add(m.version);
      } else this.options.onProblem?.(`the slow lane could not build policy set ${m.version}: ${m.error}`);
      return;
    }
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    p.resolve(m.answer);
  }

  /**
   * The worker is gone: what it held failed with it, and another starts (until it has built its
   * sets, reviews stay on the main thread). A worker that keeps stopping before it has built
   * anything turns the lane off: every review then stays on the main thread, as without a lane.
   */
  private stopped(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.built.clear();
    for (const p of this.pending.values())
      p.resolve({ kind: "failed", error: `slow lane worker stopped: ${why}` });
    this.pending.clear();
    if (this.closed) return;
    this.crashes++;
    if (this.crashes < MAX_CRASHES) {
      this.options.onProblem?.(`the slow lane's worker stopped (${why}); starting another`);
      this.ensureWorker();
    } else
      this.options.onProblem?.(
        `the slow lane's worker stopped ${this.crashes} times in a row (${why}); the lane is off, every review runs on the main thread`,
      );
  }

  /** Stops the worker; reviews it still held fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    for (const p of this.pending.values()) p.resolve({ kind: "failed", error: "the slow lane is closing" });
    this.pending.clear();
    if (worker !== undefined) await worker.terminate();
  }
}
