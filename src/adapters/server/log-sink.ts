/**
 * Where `serve`'s request log goes: stdout, written in batches.
 *
 * pino's default destination makes one write(2) per line. Measured in-process on the webhook's
 * route, that write and sonic-boom's bookkeeping around it cost several times what pino spends
 * building the line. Here info and debug lines wait in
 * memory and go out together: when 16 KiB have gathered, at least once a second, and when the
 * process exits or the server is released. They wait as UTF-8 bytes in one buffer, not as strings:
 * a held string lives through the young generation's collections (each is copied, then promoted)
 * and cost as much again as building the line. Kubernetes' own components buffer their logs the
 * same way (klog flushes every 5 s). A warning or an error, and everything before it, is written at
 * once, so what explains a failure is on stdout before anything can go wrong next.
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
/** sonic-boom in `contentMode: "buffer"`, whose `write` takes bytes; its declarations know only strings. */
type ByteBoom = Omit<InstanceType<typeof SonicBoom>, "write"> & { write(data: Uint8Array): boolean };

/** pino sets `lastLevel` on a stream that carries this flag before it writes each line to it. */
export const PINO_METADATA = Symbol.for("pino.metadata");
/** pino's numeric level for `warn`; lines at or above it are not held back. */
const WARN_LEVEL = 40;

export interface LogSinkOptions {
  /** A file descriptor or a path; stdout by default. */
  readonly dest?: number | string;
  /** Bytes held before a write. */
  readonly flushBytes?: number;
  /** The longest a line waits, in milliseconds. */
  readonly flushMs?: number;
}

export class BatchedLogSink {
  readonly [PINO_METADATA] = true;
  /** Written by pino before each `write` (see PINO_METADATA). */
  lastLevel = 0;
  /** Lines taken, for tests and the benchmark's gate. */
  lines = 0;
  /** Held bytes: `held[0, used)`. A written buffer is handed to sonic-boom and not reused. */
  private held: Buffer;
  private used = 0;
  private closed = false;
  private failed = false;
  private readonly out: ByteBoom;
  private readonly flushBytes: number;
  private readonly timer: NodeJS.Timeout;
  private readonly onExit = (): void => this.flush();

  constructor(options: LogSinkOptions = {}) {
    const dest = options.dest ?? 1;
    const boom = { sync: true, contentMode: "buffer" } as const;
    this.out = new SonicBoom(
      typeof dest === "number" ? { fd: dest, ...boom } : { dest, ...boom },
    ) as unknown as ByteBoom;
    this.out.on("error", (e: Error) => this.fail(e));
    this.flushBytes = options.flushBytes ?? 16 * 1024;
    // Twice the threshold, so a line that arrives just under it still fits.
    this.held = Buffer.allocUnsafe(2 * this.flushBytes);
    this.timer = setInterval(() => this.flush(), options.flushMs ?? 1000);
    // The timer must not keep an otherwise finished process alive; the exit hook writes what is left.
    this.timer.unref();
    process.on("exit", this.onExit);
  }

  write(line: string): boolean {
    this.lines++;
    if (this.failed) return true;
    // A UTF-16 code unit is at most 3 bytes of UTF-8: a line that passes this check fits whole.
    if (this.used + line.length * 3 > this.held.length) {
      this.flush();
      if (line.length * 3 > this.held.length) {
        // Longer than the whole buffer (a debug trace): it goes out on its own.
        this.out.write(Buffer.from(line, "utf8"));
        return true;
      }
    }
    this.used += this.held.write(line, this.used, "utf8");
    if (this.closed || this.lastLevel >= WARN_LEVEL || this.used >= this.flushBytes) this.flush();
    return true;
  }

  /** Writes every held line now. */
  flush(): void {
    if (this.used === 0 || this.failed) return;
    const text = this.held.subarray(0, this.used);
    this.held = Buffer.allocUnsafe(this.held.length);
    this.used = 0;
    this.out.write(text);
  }

  private fail(e: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.used = 0;
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
