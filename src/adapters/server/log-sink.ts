/**
 * Where `serve`'s request log goes: stdout, written in batches.
 *
 * pino's default destination makes one write(2) per line. Measured in-process on the webhook's
 * route, that write and sonic-boom's bookkeeping around it cost about three times what pino spends
 * building the line, and made logging 7–8% of a review's CPU. Here info and debug lines wait in memory
 * and go out together: when about 16 KiB have gathered (counted in characters), at least once a
 * second, and when the process exits or the server is released. Kubernetes' own components buffer
 * their logs the same way (klog flushes every 5 s). A warning or an error, and everything before it, is written at once, so what
 * explains a failure is on stdout before anything can go wrong next.
 *
 * A hard kill (SIGKILL, the OOM killer) can lose the last second of info lines; nothing else loses a
 * line. The write itself goes through sonic-boom, synchronously: it retries the EAGAIN a full pipe
 * gives, which a bare `fs.writeSync` would throw. A write that fails otherwise (EPIPE when the
 * reader of stdout is gone) turns the log off, with one line on stderr: a webhook that stops
 * answering over its log would take the cluster's writes down with it.
 */
import sonicBoom from "sonic-boom";

// A CommonJS module: its class is the module itself, and also its `SonicBoom` property, the one
// name TypeScript's view of it and Node's agree on.
const { SonicBoom } = sonicBoom;
type SonicBoom = InstanceType<typeof SonicBoom>;

/** pino sets `lastLevel` on a stream that carries this flag before it writes each line to it. */
export const PINO_METADATA = Symbol.for("pino.metadata");
/** pino's numeric level for `warn`; lines at or above it are not held back. */
const WARN_LEVEL = 40;

export interface LogSinkOptions {
  /** A file descriptor or a path; stdout by default. */
  readonly dest?: number | string;
  /** Characters held before a write. */
  readonly flushChars?: number;
  /** The longest a line waits, in milliseconds. */
  readonly flushMs?: number;
}

export class BatchedLogSink {
  readonly [PINO_METADATA] = true;
  /** Written by pino before each `write` (see PINO_METADATA). */
  lastLevel = 0;
  /** Lines taken, for tests and the benchmark's gate. */
  lines = 0;
  private pending: string[] = [];
  private pendingChars = 0;
  private closed = false;
  private failed = false;
  private readonly out: SonicBoom;
  private readonly flushChars: number;
  private readonly timer: NodeJS.Timeout;
  private readonly onExit = (): void => this.flush();

  constructor(options: LogSinkOptions = {}) {
    const dest = options.dest ?? 1;
    this.out = new SonicBoom(typeof dest === "number" ? { fd: dest, sync: true } : { dest, sync: true });
    this.out.on("error", (e: Error) => this.fail(e));
    this.flushChars = options.flushChars ?? 16 * 1024;
    this.timer = setInterval(() => this.flush(), options.flushMs ?? 1000);
    // The timer must not keep an otherwise finished process alive; the exit hook writes what is left.
    this.timer.unref();
    process.on("exit", this.onExit);
  }

  write(line: string): boolean {
    this.lines++;
    if (this.failed) return true;
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.closed || this.lastLevel >= WARN_LEVEL || this.pendingChars >= this.flushChars) this.flush();
    return true;
  }

  /** Writes every held line now. */
  flush(): void {
    if (this.pending.length === 0 || this.failed) return;
    const text = this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join("");
    this.pending = [];
    this.pendingChars = 0;
    this.out.write(text);
  }

  private fail(e: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.pending = [];
    this.pendingChars = 0;
    try {
      process.stderr.write(
        `celgate: the request log could not be written (${e.message}); it is off from now on\n`,
      );
    } catch {
      // stderr gone as well: nothing left to tell.
    }
  }

  /**
   * Writes what is held and stops batching: later lines (a late error during shutdown) are written
   * as they come. The descriptor stays open; it is usually stdout, which is not ours to close.
   */
  close(): void {
    this.flush();
    this.closed = true;
    clearInterval(this.timer);
    process.off("exit", this.onExit);
  }
}
