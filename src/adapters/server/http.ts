/**
 * The webhook's HTTP surface below its routes: the fastify instance with its TLS and limits, the
 * clock each request starts, and the answers to what is not a review (a body fastify cannot parse,
 * a wrong content type, a path or method no route serves).
 */
import { constants as cryptoConstants } from "node:crypto";
import type { Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { answerAndLinger, DISCARD_MS, discardBody } from "./connections.ts";
import { INTERNAL_ERROR_MESSAGE } from "./review.ts";
import type { ServerLog } from "./server-log.ts";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * performance.now() when the request arrived (our onRequest hook): what a review's duration and
     * deadline count from. fastify's reply.elapsedTime is 0 without a logger (it starts its clock
     * only where it adds the response listeners a logger needs).
     */
    celgateStart: number;
  }
}

/** Milliseconds since the request arrived. */
export function elapsedMs(request: FastifyRequest): number {
  return performance.now() - request.celgateStart;
}

/** A review holds object and oldObject, each up to the API server's 3 MiB request limit, plus envelope. */
export const BODY_LIMIT = 7 * 1024 * 1024 + 256 * 1024;
/** Longer than the API server's idle connection timeout (90 s), so it is always the one to close. */
export const KEEP_ALIVE_TIMEOUT_MS = 100_000;
/**
 * Headers must arrive within this; protects against clients that trickle bytes. The API server
 * writes a request's headers at once; this is a webhook's default timeout (10 s).
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const CONNECTIONS_CHECK_MS = 2_000;
/**
 * A whole request (headers and body) must arrive within this, answered 408 otherwise: the longest
 * timeout a webhook may have (timeoutSeconds is at most 30, admissionregistration validation), after
 * which the API server has given up on the answer anyway.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** An open socket with no traffic at all is closed after this (covers a stalled TLS peer too). */
export const CONNECTION_TIMEOUT_MS = 120_000;

/** A TLS handshake must finish within this; the API server's takes milliseconds (Node's default is 120 s). */
export const HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * What the webhook offers: TLS 1.3's suites, and for TLS 1.2 only ECDHE with an AEAD cipher (the
 * suites Go's crypto/tls puts first, which the API server, a Go client, offers; defaults.go). Node's
 * default list adds the CBC suites with SHA-1 MACs, which nothing that calls a webhook needs.
 */
export const TLS_CIPHERS = [
  "TLS_AES_128_GCM_SHA256",
  "TLS_AES_256_GCM_SHA384",
  "TLS_CHACHA20_POLY1305_SHA256",
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
].join(":");

/**
 * No renegotiation (TLS 1.2; 1.3 has none): a client that asks for one is refused. Go's server
 * refuses it too (crypto/tls conn.go, handlePostHandshakeMessage), and Node otherwise allows three per ten minutes,
 * each a full handshake's CPU for the server.
 */
export const TLS_SECURE_OPTIONS = cryptoConstants.SSL_OP_NO_RENEGOTIATION;

export { INTERNAL_ERROR_MESSAGE };

export type HttpsApp = FastifyInstance<HttpsServer>;

/** PEM strings. With `ca`, clients must present a certificate signed by it. */
export interface ServerTls {
  readonly cert: string;
  readonly key: string;
  readonly ca?: string;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The short JSON body of every non-review answer, shaped like fastify's own errors. */
export function problem(
  statusCode: number,
  message: string,
): { statusCode: number; error: string; message: string } {
  return { statusCode, error: STATUS_TEXT[statusCode] ?? "Error", message };
}

/** The media type without parameters, lower-cased; "" when absent. */
export function mediaType(header: string | undefined): string {
  // What the API server sends, answered without building the three strings below.
  if (header === "application/json") return header;
  return (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The fastify instance for the webhook, with TLS, HTTP/1.1 only, and the limits a webhook needs. */
export function createHttpsApp(tls: ServerTls): HttpsApp {
  const mutualTls = tls.ca !== undefined;
  return Fastify({
    https: {
      cert: tls.cert,
      key: tls.key,
      minVersion: "TLSv1.2",
      ciphers: TLS_CIPHERS,
      secureOptions: TLS_SECURE_OPTIONS,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      // The API server speaks HTTP/1.1 to webhooks; offering only it keeps ALPN from choosing h2.
      ALPNProtocols: ["http/1.1"],
      ...(mutualTls ? { ca: tls.ca } : {}),
      // With a CA, every client must present a certificate it signed. The check is ours
      // (handshake-log.ts, before the HTTP layer sees the connection) rather than Node's, which
      // drops an untrusted certificate without telling anyone: this way each refusal is logged.
      requestCert: mutualTls,
      rejectUnauthorized: false,
      headersTimeout: HEADERS_TIMEOUT_MS,
      // Node checks the header and request timeouts on this interval (default 30 s, too coarse).
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    },
    // Our own logger writes what the server logs (server-log.ts): given one, fastify would cost
    // every request its response listeners, and log two lines per request we do not want.
    logger: false,
    bodyLimit: BODY_LIMIT,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    // During drain every request still gets a real answer; fastify's default would send 503s
    // that the API server counts as failed calls.
    return503OnClosing: false,
    // fastify's default answers 400 to a body with a `__proto__` key, or a `constructor` holding
    // `prototype`, and scans every body's text for them. Both are valid in Kubernetes objects (a
    // ConfigMap may have a `__proto__` data key), and a 400 fails the call: under failurePolicy
    // Fail the API server would refuse a valid write. JSON.parse makes such keys own members,
    // which cannot reach any prototype; the engine reads them as members and writes them with
    // setMember (cel/runtime/values.ts). The two scans are also a noticeable share of a review's CPU.
    onProtoPoisoning: "ignore",
    onConstructorPoisoning: "ignore",
    clientErrorHandler: answerClientError,
  });
}

/**
 * The answer to a request the HTTP parser refused before any route saw it: 431 for headers over
 * Node's 16 KiB limit, 408 for a request that did not arrive in time, 400 for anything malformed.
 * fastify's own handler writes the same status and then destroys the socket, which resets the
 * connection while the client is still sending and can take the answer with it; this one reads the
 * rest first (connections.ts).
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, message] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "request headers are larger than 16384 bytes"]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "the request did not arrive in time"]
        : [400, "malformed HTTP request"];
  answerAndLinger(
    socket,
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}`,
    JSON.stringify(problem(status, message)),
  );
}

/** Counts a request on a review path that was not a review (the metrics' `invalid` outcome). */
export type RecordInvalid = (request: FastifyRequest) => void;

/**
 * The answers to requests no review route handles: bodies fastify cannot read (413, 415, 400),
 * unknown paths (404) and known paths with another method (405, with `allow`).
 */
export function answerProblems(
  app: HttpsApp,
  allowedMethods: ReadonlyMap<string, string>,
  recordInvalid: RecordInvalid,
  log: ServerLog,
  draining: () => boolean,
): void {
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    let status: number;
    let message: string;
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      status = 413;
      message = `request body is larger than ${BODY_LIMIT} bytes`;
      // Answered once the upload has been read and thrown away (up to four times the limit): a
      // client still sending when the connection closes gets a reset, which can destroy the
      // answer before it is read. Then the connection may carry the next request (fastify asks to
      // close it after a parse error; here the body has been read, so there is no need).
      await discardBody(request.raw, 4 * BODY_LIMIT, DISCARD_MS);
      if (!draining()) reply.removeHeader("connection");
    } else if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      status = 415;
      message = `content-type must be application/json, got ${mediaType(request.headers["content-type"]) || "none"}`;
    } else if (error.code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
      status = 400;
      message = "request body is empty; expected an AdmissionReview";
    } else if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY" || error instanceof SyntaxError) {
      status = 400;
      message = "request body is not valid JSON";
    } else if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      status = error.statusCode;
      message = error.message;
    } else {
      log.error({ err: error }, "request failed");
      status = 500;
      message = INTERNAL_ERROR_MESSAGE;
    }
    if (status < 500) recordInvalid(request);
    return reply.code(status).send(problem(status, message));
  });

  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods.get(pathOf(request.url));
    if (allowed !== undefined) {
      return reply
        .code(405)
        .header("allow", allowed)
        .send(problem(405, `method ${request.method} not allowed; use ${allowed}`));
    }
    return reply.code(404).send(problem(404, "no such endpoint"));
  });
}

/**
 * The onRequest hook of the review routes: a review must be JSON, checked before the body is read
 * so a wrong type costs nothing; then a large body must fit the bytes-in-flight budget (body.ts).
 * (A callback hook: an async one costs every request a promise and a microtask turn.)
 */
export function requireJson(
  recordInvalid: RecordInvalid,
  admitBody: (request: FastifyRequest, reply: FastifyReply) => boolean,
) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const type = mediaType(request.headers["content-type"]);
    if (type === "application/json") {
      if (admitBody(request, reply)) done();
      return;
    }
    recordInvalid(request);
    // Answered here: the request goes no further, so done() is not called.
    reply
      .code(415)
      .send(problem(415, `content-type must be application/json, got ${type === "" ? "none" : type}`));
  };
}
