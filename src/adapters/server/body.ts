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
 * Reading: the body is kept with the request, so a review that moves to a worker thread
 * (slow-lane.ts) is parsed there from what was read, not re-encoded here; a body above the slow
 * lane's threshold is neither decoded nor parsed here.
 */
import type { IncomingMessage } from "node:http";
import { errorCodes, type FastifyReply, type FastifyRequest } from "fastify";
import { NOT_JSON, parseReviewText } from "../admission/json-text.ts";
import { DISCARD_MS, discardBody } from "./connections.ts";
import { BODY_LIMIT, type HttpsApp, problem } from "./http.ts";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * The body of a JSON request as read: its text when it was parsed here, its bytes when it was
     * left to the slow lane (body.ts); null for other requests.
     */
    celgateBody: string | Buffer | null;
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

type Done = (err: Error | null, body?: unknown) => void;

/**
 * Replaces fastify's JSON parser with one that reads the body itself, under the same limit and with
 * fastify's own errors (so the error handler answers them as before), and keeps it with the request
 * (`request.celgateBody`): as text when it is parsed here, which is what an ordinary review needs
 * (one decode of its one chunk, no copy); as bytes of their own when it is larger than
 * `offThreadAbove`, and then not parsed here (the body is UNPARSED): the bytes move to the slow lane
 * without a copy, and nothing of the body is decoded on the main thread.
 */
export function registerJsonBody(app: HttpsApp, offThreadAbove: number): void {
  app.decorateRequest("celgateBody", null);
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser(
    "application/json",
    { bodyLimit: BODY_LIMIT },
    (request: FastifyRequest, payload: IncomingMessage, done: Done) => {
      readBody(
        request,
        payload,
        (chunks, length) => finishBody(request, chunks, length, offThreadAbove, done),
        done,
      );
    },
  );
}

/** Reads a body within BODY_LIMIT, as fastify's own reader does (content-type-parser.js, rawBody). */
function readBody(
  request: FastifyRequest,
  payload: IncomingMessage,
  whole: (chunks: Buffer[], length: number) => void,
  done: Done,
): void {
  const declared = Number(request.headers["content-length"]);
  if (declared > BODY_LIMIT) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  const stop = (): void => {
    payload.off("data", onData);
    payload.off("end", onEnd);
    payload.off("error", onEnd);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > BODY_LIMIT) {
      stop();
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (error?: Error & { statusCode?: number }): void => {
    stop();
    if (error !== undefined) {
      if (!(typeof error.statusCode === "number" && error.statusCode >= 400)) error.statusCode = 400;
      done(error);
    } else if (!Number.isNaN(declared) && received !== declared)
      done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    else whole(chunks, received);
  };
  payload.on("data", onData);
  payload.on("end", onEnd);
  payload.on("error", onEnd);
  payload.resume();
}

function finishBody(
  request: FastifyRequest,
  chunks: Buffer[],
  length: number,
  offThreadAbove: number,
  done: Done,
): void {
  if (length === 0) {
    done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY());
    return;
  }
  if (length > offThreadAbove) {
    // A buffer of its own (Buffer.concat allocates one for anything this large): it can move.
    request.celgateBody = Buffer.concat(chunks, length);
    done(null, UNPARSED);
    return;
  }
  const text =
    chunks.length === 1
      ? (chunks[0] as Buffer).toString("utf8")
      : Buffer.concat(chunks, length).toString("utf8");
  request.celgateBody = text;
  const parsed = parseReviewText(text);
  if (parsed.ok) done(null, parsed.value);
  else if (parsed.error.reason === NOT_JSON) done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY());
  else done(Object.assign(new Error(parsed.error.reason), { statusCode: parsed.error.status }));
}
