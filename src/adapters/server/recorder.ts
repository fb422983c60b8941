/**
 * `serve --record DIR`: a sample of the reviews answered, with their answers, written to rotating
 * files of JSON lines (recording.ts) for `celgate replay`. Sensitive: the files hold the objects
 * the cluster admits, redacted as the debug log redacts them (redact.ts).
 *
 * A recording must never slow or fail a review. The review route only offers what it already holds
 * (the decoded request or the body as read, and the reply), after the answer is sent; redacting,
 * encoding and writing happen later, a bounded number per turn of the event loop. What is offered
 * waits in a queue bounded in entries and in bytes; past either, a review is dropped and counted.
 * A write that fails is one JSON log line (at most one every WRITE_ERROR_LOG_MS, with the count
 * since) and a count; the review it held is dropped, and the next write tries again.
 *
 * The files are `reviews-<start time>-<sequence>.jsonl`, so that their names sort by age, across
 * restarts too. A file is closed and the next begun when it would pass an eighth of the budget;
 * when the files together pass the budget, the oldest are deleted, never the one being written.
 */
import { mkdir, open, readdir, stat, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { Counter, Gauge, type Registry } from "prom-client";
import { err, ok, type Result } from "../../result.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import {
  type AdmissionReviewReply,
  type AdmissionReviewVersion,
  decodeAdmissionReview,
} from "../admission/codec.ts";
import { parseReviewText } from "../admission/json-text.ts";
import { recordLine } from "./recording.ts";
import type { ServerLog } from "./server-log.ts";

/** Why a review that was sampled was not recorded. */
export type RecordDropReason = "queue_full" | "write_error" | "too_large" | "undecodable";

export interface RecorderOptions {
  readonly dir: string;
  /** The share of reviews recorded, above 0 and at most 1. */
  readonly sampleRate: number;
  /** Bytes the recording's files may hold together; the oldest files go first. */
  readonly maxBytes: number;
  readonly registry: Registry;
  readonly log: ServerLog;
  /** Reviews waiting to be written at most (default QUEUE_ENTRIES). */
  readonly queueEntries?: number;
  /** Bytes of review bodies waiting to be written at most (default QUEUE_BYTES). */
  readonly queueBytes?: number;
  /** For tests: the sampling draw, in [0, 1). */
  readonly random?: () => number;
}

export const QUEUE_ENTRIES = 1024;
export const QUEUE_BYTES = 32 * 1024 * 1024;
/** How many waiting reviews are written per turn of the event loop, so requests interleave. */
const PER_TURN = 32;
const WRITE_ERROR_LOG_MS = 10_000;
/** The files rotate at this share of the budget, so deleting the oldest frees a part of it. */
const FILES_PER_BUDGET = 8;
const FILE_NAME = /^reviews-\d{8}T\d{9}Z-\d{6}\.jsonl$/;

/** What the review route offers: the decoded request, or the body as read (answered by the slow lane). */
export type Offered =
  | {
      readonly path: string;
      readonly apiVersion: AdmissionReviewVersion;
      readonly request: AdmissionRequest;
      readonly reply: AdmissionReviewReply;
      readonly bytes: number;
    }
  | { readonly path: string; readonly body: string | Buffer; readonly reply: string; readonly bytes: number };

interface Waiting {
  readonly offered: Offered;
  readonly at: Date;
}

interface RecorderMetrics {
  readonly recorded: Counter;
  readonly dropped: Counter<"reason">;
  readonly bytes: Gauge;
  readonly deleted: Counter;
}

function recorderMetrics(registry: Registry): RecorderMetrics {
  return {
    recorded: new Counter({
      name: "celgate_record_reviews_total",
      help: "Reviews written to the --record directory",
      registers: [registry],
    }),
    dropped: new Counter({
      name: "celgate_record_dropped_total",
      help: "Sampled reviews not recorded, by reason (queue_full, write_error, too_large, undecodable)",
      labelNames: ["reason"],
      registers: [registry],
    }),
    bytes: new Gauge({
      name: "celgate_record_bytes",
      help: "Bytes the --record directory's files hold",
      registers: [registry],
    }),
    deleted: new Counter({
      name: "celgate_record_files_deleted_total",
      help: "Recording files deleted to keep within --record-max-mib",
      registers: [registry],
    }),
  };
}

/** A compact, sortable UTC time for file names: 20261207T223207123Z. */
function stamp(d: Date): string {
  return d.toISOString().replace(/[-:.]/g, "");
}

export class Recorder {
  private readonly queue: Waiting[] = [];
  private queuedBytes = 0;
  private draining = false;
  private closed = false;
  private idle: Promise<void> = Promise.resolve();
  private file: { handle: FileHandle; name: string; size: number } | undefined;
  private sequence = 0;
  private readonly startedAt = stamp(new Date());
  private lastErrorLog = Number.NEGATIVE_INFINITY;
  private errorsSinceLog = 0;
  private readonly fileBytes: number;
  private readonly metrics: RecorderMetrics;

  private constructor(
    private readonly options: RecorderOptions,
    /** The files of the directory, oldest first, with their sizes. */
    private readonly files: { name: string; size: number }[],
  ) {
    this.fileBytes = Math.max(1, Math.floor(options.maxBytes / FILES_PER_BUDGET));
    this.metrics = recorderMetrics(options.registry);
    this.metrics.bytes.set(this.total());
  }

  /** Creates the directory if need be and reads what earlier recordings left in it. */
  static async open(options: RecorderOptions): Promise<Result<Recorder, string>> {
    if (!(options.sampleRate > 0 && options.sampleRate <= 1))
      return err(`the sampling rate must be above 0 and at most 1, got ${options.sampleRate}`);
    try {
      await mkdir(options.dir, { recursive: true });
      const names = (await readdir(options.dir)).filter((n) => FILE_NAME.test(n)).sort();
      const files = await Promise.all(
        names.map(async (name) => ({ name, size: (await stat(join(options.dir, name))).size })),
      );
      return ok(new Recorder(options, files));
    } catch (e) {
      return err(`--record ${options.dir}: ${(e as Error).message}`);
    }
  }

  /** Whether to record the review at hand: the sampling draw (and not once closed). */
  sampled(): boolean {
    return !this.closed && (this.options.random ?? Math.random)() < this.options.sampleRate;
  }

  /** The review route's call for a sampled review, after its answer is sent: queued, or dropped and counted. */
  offer(offered: Offered): void {
    if (this.closed) return;
    const maxEntries = this.options.queueEntries ?? QUEUE_ENTRIES;
    const maxBytes = this.options.queueBytes ?? QUEUE_BYTES;
    if (this.queue.length >= maxEntries || this.queuedBytes + offered.bytes > maxBytes) {
      this.metrics.dropped.inc({ reason: "queue_full" });
      return;
    }
    this.queue.push({ offered, at: new Date() });
    this.queuedBytes += offered.bytes;
    if (!this.draining) {
      this.draining = true;
      this.idle = new Promise((resolve) => setImmediate(() => void this.drain().then(resolve)));
    }
  }

  /** Writes what is queued, then closes the file. Reviews offered from now on are not recorded. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle;
    // Closing flushes the last writes: a failure there loses records, so it is logged as one.
    await this.file?.handle.close().catch((e: unknown) => {
      this.metrics.dropped.inc({ reason: "write_error" });
      this.writeFailed(e as Error);
    });
    this.file = undefined;
  }

  private total(): number {
    return this.files.reduce((n, f) => n + f.size, 0);
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, PER_TURN);
        const lines: string[] = [];
        for (const w of batch) {
          this.queuedBytes -= w.offered.bytes;
          const line = this.lineOf(w);
          if (line === undefined) this.metrics.dropped.inc({ reason: "undecodable" });
          else if (Buffer.byteLength(line) + 1 > this.fileBytes)
            this.metrics.dropped.inc({ reason: "too_large" });
          else lines.push(`${line}\n`);
        }
        for (const line of lines) await this.write(line);
        // Let requests in between batches.
        if (this.queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.draining = false;
    }
  }

  private lineOf(w: Waiting): string | undefined {
    const o = w.offered;
    if ("request" in o) return recordLine(w.at, o.path, o.apiVersion, o.request, o.reply.response);
    // Answered by the slow lane: the body was parsed there; parse it again here, off the review's path.
    const parsed = parseReviewText(typeof o.body === "string" ? o.body : o.body.toString("utf8"));
    if (!parsed.ok) return undefined;
    const decoded = decodeAdmissionReview(parsed.value);
    if (!decoded.ok) return undefined;
    const reply = JSON.parse(o.reply) as AdmissionReviewReply;
    return recordLine(w.at, o.path, decoded.value.apiVersion, decoded.value.request, reply.response);
  }

  private async write(line: string): Promise<void> {
    const bytes = Buffer.byteLength(line);
    try {
      if (this.file !== undefined && this.file.size + bytes > this.fileBytes) {
        const full = this.file;
        this.file = undefined;
        await full.handle.close();
      }
      if (this.file === undefined) {
        const name = `reviews-${this.startedAt}-${String(++this.sequence).padStart(6, "0")}.jsonl`;
        const handle = await open(join(this.options.dir, name), "a");
        this.file = { handle, name, size: 0 };
        this.files.push({ name, size: 0 });
      }
      const file = this.file;
      await file.handle.write(line);
      file.size += bytes;
      const entry = this.files.find((f) => f.name === file.name);
      if (entry) entry.size = file.size;
      this.metrics.recorded.inc();
      await this.keepWithinBudget();
    } catch (e) {
      this.metrics.dropped.inc({ reason: "write_error" });
      // The next write opens a new file: this one may be gone with its directory.
      const broken = this.file;
      this.file = undefined;
      // The write's own error is counted and logged below; closing the broken file can only fail
      // the same way, which would say nothing more.
      await broken?.handle.close().catch(() => {});
      this.writeFailed(e as Error);
    }
  }

  /** Deletes the oldest files (never the one being written) while the files pass the budget. */
  private async keepWithinBudget(): Promise<void> {
    let total = this.total();
    while (total > this.options.maxBytes && this.files.length > 1) {
      const oldest = this.files[0] as { name: string; size: number };
      if (oldest.name === this.file?.name) break;
      this.files.shift();
      total -= oldest.size;
      this.metrics.deleted.inc();
      await unlink(join(this.options.dir, oldest.name)).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "ENOENT") throw e;
      });
    }
    this.metrics.bytes.set(total);
  }

  private writeFailed(e: Error): void {
    this.errorsSinceLog++;
    const now = performance.now();
    if (now - this.lastErrorLog < WRITE_ERROR_LOG_MS) return;
    this.lastErrorLog = now;
    this.options.log.error(
      { event: "record", dir: this.options.dir, error: e.message, failures: this.errorsSinceLog },
      "a review could not be recorded; serving goes on",
    );
    this.errorsSinceLog = 0;
  }
}
