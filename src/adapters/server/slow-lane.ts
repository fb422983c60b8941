/**
 * The slow lane: a worker thread for the reviews that would hold the event loop long enough to
 * starve the others — a review that is still running when its time slice on the main thread ends
 * (batch.ts), and a body too large to parse on the main thread (body.ts). It keeps one review from
 * costing every other request its latency: the main thread goes on answering while the worker,
 * at a lower priority, works through the slow ones.
 *
 * The worker builds the same policy set as the main thread from the same files (checked by the
 * fingerprint of the bytes read), and answers with the same code (review.ts), so a review gives the
 * same reply in either place. A cluster-connected set reads the cluster (Namespaces, params,
 * SubjectAccessReviews) through the main thread, which answers the worker's lookups from the
 * context the set serves with here (lane-remote.ts, lane-lookups.ts). A review whose set the worker does not have is handed back
 * (`unavailable`) and evaluated on the main thread: slower, never different. A worker that dies
 * (out of memory in a review, a bug) fails the reviews it held as the engine failing does (the
 * path's failurePolicy, or HTTP 500), and a new one is started.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { CompileOptions } from "../../compile/policy.ts";
import type {
  FromWorker,
  LaneAnswer,
  LaneAsk,
  LaneRecipe,
  LaneWorkerData,
  ToWorker,
} from "./lane-protocol.ts";
import { fromSharedClock, toSharedClock } from "./lane-protocol.ts";
import { type LaneHost, LaneLookups } from "./lane-lookups.ts";
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

/** The main thread's end of a worker's lookup port, and the Int32 it wakes the worker with. */
interface LookupChannel {
  readonly port: MessagePort;
  readonly flag: Int32Array;
}

export class SlowLane {
  private worker: Worker | undefined;
  private channel: LookupChannel | undefined;
  /** What each cluster-connected version serves with here, for the worker's lookups. */
  private readonly hosts = new Map<number, LaneHost>();
  private readonly lookups = new LaneLookups();
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
  load(version: number, recipe: Omit<LaneRecipe, "compile">, host?: LaneHost): void {
    if (this.closed) return;
    const full: LaneRecipe = { ...recipe, compile: this.options.compile };
    this.recipes.set(version, full);
    if (host) this.hosts.set(version, host);
    this.worker?.postMessage({ type: "load", version, recipe: full } satisfies ToWorker);
    for (const old of [...this.recipes.keys()].filter((v) => v < version - 1)) {
      this.recipes.delete(old);
      this.built.delete(old);
      this.hosts.delete(old);
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
    const host = this.hosts.get(job.version);
    if (host) this.lookups.begin(id, host);
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
    const { port1, port2 } = new MessageChannel();
    const replied = new SharedArrayBuffer(4);
    const channel: LookupChannel = { port: port1, flag: new Int32Array(replied) };
    const data: LaneWorkerData = { nice: this.options.nice ?? 10, lookups: port2, replied };
    const source = workerSource(data.nice);
    const options = {
      workerData: data,
      transferList: [port2],
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
    port1.on("message", (ask: LaneAsk) => this.reply(channel, ask));
    port1.unref();
    this.channel = channel;
    worker.on("error", (e) => this.stopped(worker, e.message));
    worker.on("exit", (code) => this.stopped(worker, `exited with code ${code}`));
    this.worker = worker;
    // A new worker builds every set still in use.
    for (const [version, recipe] of this.recipes)
      worker.postMessage({ type: "load", version, recipe } satisfies ToWorker);
    return worker;
  }

  /** Answers a worker's lookup, and wakes the worker, which waits for it. */
  private reply(channel: LookupChannel, ask: LaneAsk): void {
    channel.port.postMessage(this.lookups.answer(ask));
    Atomics.store(channel.flag, 0, 1);
    Atomics.notify(channel.flag, 0);
  }

  /** Sends a review's pending SubjectAccessReviews, and tells the worker when they are answered. */
  private resolveFor(review: number, deadline: number): void {
    const worker = this.worker;
    this.lookups.resolve(review, fromSharedClock(deadline)).then(
      () => worker?.postMessage({ type: "resolved", review } satisfies ToWorker),
      (e: unknown) =>
        worker?.postMessage({
          type: "resolved",
          review,
          error: e instanceof Error ? e.message : String(e),
        } satisfies ToWorker),
    );
  }

  private received(m: FromWorker): void {
    if (m.type === "resolve") {
      this.resolveFor(m.review, m.deadline);
      return;
    }
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
    this.lookups.end(m.id);
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
    this.channel?.port.close();
    this.channel = undefined;
    this.lookups.clear();
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
    this.channel?.port.close();
    this.channel = undefined;
    this.lookups.clear();
    for (const p of this.pending.values()) p.resolve({ kind: "failed", error: "the slow lane is closing" });
    this.pending.clear();
    if (worker !== undefined) await worker.terminate();
  }
}
