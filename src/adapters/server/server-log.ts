/**
 * The server's log for everything but the review line (review-log.ts): failed requests, certificate
 * reloads, draining, the debug trace. A pino logger of our own, not fastify's.
 *
 * Handing fastify a logger costs every request, whether or not it logs anything: fastify then adds
 * a `finish` and an `error` listener to every response and removes them again, and validates the
 * request's child logger: in the served process as much as the review line itself. fastify runs
 * without a logger; these lines go to the same stream with the options fastify would have given
 * pino, so the log reads as before.
 *
 * What is lost is fastify's own lines: "Server listening at" (serve prints its own), request
 * logging (off already), and warnings about programming errors in handlers (a reply sent twice).
 */
import { type Logger, pino } from "pino";
import type { ServerLogging } from "./review-log.ts";

export type ServerLog = Pick<Logger, "info" | "warn" | "error" | "debug">;

/** A logger at the configured level on the configured stream, or one that writes nothing. */
export function serverLog(logging: ServerLogging | false): ServerLog {
  if (logging === false) return pino({ enabled: false });
  return pino({ level: logging.level }, logging.stream);
}
