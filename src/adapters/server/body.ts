/**
 * Request bodies: how many bytes of them the server holds at once, and how they are read.
 *
 * Memory: a review body can be 7 MiB, and reading and parsing one costs several times that (the
 * chunks, the joined buffer, the decoded text, the parsed object). Requests with bodies above
 * SMALL_BODY_BYTES reserve their size against a budget as their headers arrive; one that would pass
 * it is answered 429 at once, before its body is read (the API server then applies the webhook's
 * failurePolicy, as for any failed call). Smaller requests are not counted: the connection cap bounds
 * them, and the accounting would cost every ordinary review.
 *
 * Reading: the raw bytes are kept with the request, so a review that moves to a worker thread
 * (slow-lane.ts) is parsed there from the bytes, not re-encoded here; a body above the slow lane's
 * threshold is not parsed here at all.
 */
import { errorCodes, type FastifyReply, type FastifyRequest } from "fastify";
import { DISCARD_MS, discardBody } from "./connections.ts";
import { BODY_LIMIT, type HttpsApp, problem } from "./http.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The raw body of a JSON request, as read; null for other requests. */
    celgateBody: Buffer | null;
  }
}

/** Bodies up to this size are not counted against the bytes-in-flight budget. */
export const SMALL_BODY_BYTES = 64 * 1024;

/** What a body parser gives for a body it left to the slow lane to parse. */
export const UNPARSED: unique symbol = Symbol("celgate.unparsed");

/** The bytes of request bodies held at once, above SMALL_BODY_BYTES each. */
export class BytesInFlight {
  private used = 0;
  constructor(readonly limit: number) {}

  get current(): number {
    return this.used;
  }

  /** Reserves `bytes`; false, reserving nothing, when that would pass the limit. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

/**
 * The part of a review route's onRequest hook that reserves a large body's bytes: true when the
 * request may go on, false when it has been answered 429. The reservation ends when the response
 * does (sent, or the connection gone).
 */
export function reserveBody(
  budget: BytesInFlight,
  request: FastifyRequest,
  reply: FastifyReply,
  onShed: () => void,
): boolean {
  const declared = request.headers["content-length"];
  const length = declared === undefined ? Number.NaN : Number(declared);
  if (length <= SMALL_BODY_BYTES) return true;
  // A body of unknown length may grow to the limit; one over the limit gets its 413 unread.
  const bytes = Number.isFinite(length) ? Math.min(length, BODY_LIMIT) : BODY_LIMIT;
  if (!budget.take(bytes)) {
    onShed();
    const message = `too many bytes of requests in flight (${budget.current} of ${budget.limit}); this one has ${bytes}`;
    // Answered once the body has been read and thrown away (nothing of it is kept): a client that
    // is still sending when its connection closes gets a reset instead of this answer.
    void discardBody(request.raw, BODY_LIMIT, DISCARD_MS).then(() =>
      reply.code(429).header("retry-after", "1").send(problem(429, message)),
    );
    return false;
  }
  reply.raw.once("close", () => budget.give(bytes));
  return true;
}

/**
 * Replaces fastify's JSON parser with one that keeps the raw bytes (`request.celgateBody`) and, for
 * bodies above `offThreadAbove`, does not parse them (the body is UNPARSED; the slow lane parses
 * it). Errors are fastify's own, so the error handler answers them as before.
 */
export function registerJsonBody(app: HttpsApp, offThreadAbove: number): void {
  app.decorateRequest("celgateBody", null);
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser(
    "application/json",
    { parseAs: "buffer", bodyLimit: BODY_LIMIT },
    (request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      request.celgateBody = body;
      if (body.length === 0) {
        done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY());
        return;
      }
      if (body.length > offThreadAbove) {
        done(null, UNPARSED);
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch {
        done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY());
        return;
      }
      done(null, parsed);
    },
  );
}
