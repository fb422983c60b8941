/**
 * The one line `serve` logs per review, written by hand instead of through pino.
 *
 * Every other line (startup, reloads, errors, the debug trace) still goes through pino; this one is
 * on the path of every request, where pino's general serialiser (a loop over the object's keys, a
 * character scan of every key and short string, the metadata it hands the stream) cost several
 * microseconds a review in the overhead benchmark. The keys here are known in advance and written
 * as literals, the pid and hostname are serialised once, and each string value is quoted as
 * JSON.stringify would quote it. The line is the one pino would write for
 * `log.info(fields, "admission review")` with the options `buildServer` gives it (pino's default
 * time, pid and hostname, default message key), so whatever reads the log sees one format; a unit
 * test holds the two side by side.
 */
import { hostname } from "node:os";
import { PINO_METADATA } from "./log-sink.ts";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(text: string): text is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(text);
}

/** Where log lines go: a Writable, the batched sink, or anything with a `write` that takes a line. */
export interface LogStream {
  write(line: string): unknown;
}

/** The server's log: its level, fixed for the server's life, and where lines go. */
export interface ServerLogging {
  readonly level: LogLevel;
  readonly stream: LogStream;
}

/** What the review line says: names and kinds only, never object contents (they can hold secrets). */
export interface ReviewLogEntry {
  readonly uid: string;
  readonly path: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly operation: string;
  readonly allowed: boolean;
  readonly outcome: string;
  readonly durationMs: number;
}

export type ReviewLogWriter = (entry: ReviewLogEntry) => void;

/** pino's numeric levels; `silent` is above every level a line can have. */
const LEVEL_VALUES: Readonly<Record<LogLevel, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};
const INFO = 30;

/** pino's default `base`: the pid and host of the process, after the time. */
function baseBindings(): string {
  return `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
}

/** What JSON.stringify escapes in a string: `"`, `\\`, control characters, and (lone) surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * JSON.stringify of a string, without its call into the runtime for the usual names and uids that
 * need no escaping: seven of those calls were half the line's cost.
 */
export function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** The writer for the review line, or undefined when the log is off or above info. */
export function reviewLogWriter(logging: ServerLogging | false): ReviewLogWriter | undefined {
  if (logging === false || LEVEL_VALUES[logging.level] > INFO) return undefined;
  const { stream } = logging;
  const base = baseBindings();
  // The batched sink (and any stream pino would hand metadata to) wants each line's level.
  const wantsLevel = (stream as { [PINO_METADATA]?: unknown })[PINO_METADATA] === true;
  return (e) => {
    const line =
      `{"level":30,"time":${Date.now()}${base},"uid":${quote(e.uid)},"path":${quote(e.path)}` +
      `,"kind":${quote(e.kind)},"namespace":${quote(e.namespace)},"name":${quote(e.name)}` +
      `,"operation":${quote(e.operation)},"allowed":${e.allowed},"outcome":${quote(e.outcome)}` +
      `,"durationMs":${Number.isFinite(e.durationMs) ? e.durationMs : null},"msg":"admission review"}\n`;
    if (wantsLevel) (stream as { lastLevel?: number }).lastLevel = INFO;
    stream.write(line);
  };
}
