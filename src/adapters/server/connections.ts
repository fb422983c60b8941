/**
 * The webhook's connections: how many may be open, which to give up when that many are, how they
 * end when the server closes, and how a connection whose request cannot be read ends.
 *
 * - A cap on open connections (counted from the TCP accept, before the TLS handshake), because each
 *   holds TLS and HTTP state whether it is used or not. At the cap, a new connection takes the place
 *   of the one that has waited longest for its client: idle with no request in flight, still in its
 *   TLS handshake, or still receiving a request (its headers or its body). Only connections whose
 *   request has fully arrived and is being answered are never given up; when every connection is
 *   one of those, the new one is refused. So clients that open connections and then send slowly
 *   or nothing (a slowloris) cannot hold every slot: each new connection pushes out the one that
 *   has stalled longest, and an ordinary request, which arrives at once, is never the one pushed
 *   out. The API server keeps idle connections for 90 s and closes them itself, so the keep-alive
 *   timeout stays above that (http.ts) and the cap does the bounding; the handshake, header and
 *   request timeouts (http.ts) end a stalled connection even when there is no pressure.
 * - Closing ends connections as Go's `http.Server.Shutdown` does: a connection whose request is in
 *   flight gets its answer (with `Connection: close`, which the server sets once draining) and then
 *   closes; a connection without one is closed once it has been quiet for a moment — a request the
 *   client had already sent arrives within it and is answered, where ending the connection at once
 *   would reset it. What has not finished within the close timeout is destroyed.
 * - A connection whose request cannot be parsed (headers too large, a malformed request line) gets
 *   its status line, and is then half-closed and read to the end for a while before it is dropped:
 *   dropping it at once with bytes unread makes the kernel send a reset, which can destroy the
 *   answer before the client reads it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import type { TLSSocket } from "node:tls";

/** The state of one accepted connection. */
interface Connection {
  readonly raw: Socket;
  tls: TLSSocket | undefined;
  /** The response of the last request on it; in flight until it has finished. */
  reply: ServerResponse | undefined;
  /** The last request on it: until it is complete, the connection waits for its client. */
  request: IncomingMessage | undefined;
  /**
   * performance.now() of the last sign of use: the accept, the handshake, a request, or a look that
   * found it answering. For a connection waiting for its client, when that wait began.
   */
  usedAt: number;
}

export interface ConnectionOptions {
  /** Open connections at most; at the cap the one stalled longest makes room, or the new one is refused. */
  readonly maxConnections: number;
  /** How long a connection without a request in flight must stay quiet before a close ends it. */
  readonly quietMs?: number;
  /** How often a close looks at the connections while it waits. */
  readonly pollMs?: number;
  /** Told of each connection refused at the cap, and each stalled or idle one closed to make room. */
  readonly onShed?: (what: "connection_refused" | "connection_evicted") => void;
}

export interface CloseReport {
  /** Connections still busy when the close timeout passed, destroyed with their requests. */
  readonly forced: number;
}

/** Symbol-keyed so a request can find its connection with one property read. */
const kConnection = Symbol("celgate.connection");
type Tracked = TLSSocket & { [kConnection]?: Connection };

function key(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}

/** Tracks every connection of an HTTPS server from its TCP accept; see the module comment. */
export class Connections {
  private readonly byPeer = new Map<string, Connection>();
  private readonly quietMs: number;
  private readonly pollMs: number;
  private aborted = false;

  constructor(
    server: HttpsServer,
    private readonly options: ConnectionOptions,
  ) {
    this.quietMs = options.quietMs ?? 1000;
    this.pollMs = options.pollMs ?? 50;
    // Before the TLS layer's own listener, so a refused connection costs no handshake.
    server.prependListener("connection", (socket: Socket) => this.accepted(socket));
    server.on("secureConnection", (socket: TLSSocket) => this.secured(socket));
  }

  /** Open connections, handshakes included. */
  get size(): number {
    return this.byPeer.size;
  }

  private accepted(raw: Socket): void {
    if (raw.remoteAddress === undefined) {
      // Gone before it was accepted: nothing to track.
      raw.destroy();
      return;
    }
    if (this.byPeer.size >= this.options.maxConnections && !this.makeRoom()) {
      this.options.onShed?.("connection_refused");
      raw.destroy();
      return;
    }
    const k = key(raw);
    const c: Connection = {
      raw,
      tls: undefined,
      reply: undefined,
      request: undefined,
      usedAt: performance.now(),
    };
    this.byPeer.set(k, c);
    raw.once("close", () => {
      if (this.byPeer.get(k) === c) this.byPeer.delete(k);
    });
  }

  private secured(tls: TLSSocket): void {
    const c = this.byPeer.get(key(tls));
    if (c === undefined) return;
    c.tls = tls;
    c.usedAt = performance.now();
    (tls as Tracked)[kConnection] = c;
  }

  /**
   * Called as each request starts (the server's onRequest hook, once its headers are in): the
   * connection waits for its client until `request` is complete, then is busy until `reply` finishes.
   */
  requestStarted(socket: Socket, request: IncomingMessage, reply: ServerResponse, at: number): void {
    const c = (socket as Tracked)[kConnection];
    if (c === undefined) return;
    c.request = request;
    c.reply = reply;
    c.usedAt = at;
  }

  /**
   * Closes the connection that has waited longest for its client (see the module comment) to make
   * room for a new one; false when every one is answering a request.
   */
  private makeRoom(): boolean {
    let oldest: Connection | undefined;
    const now = performance.now();
    for (const c of this.byPeer.values()) {
      if (this.answering(c, now)) continue;
      if (oldest === undefined || c.usedAt < oldest.usedAt) oldest = c;
    }
    if (oldest === undefined) return false;
    this.options.onShed?.("connection_evicted");
    this.byPeer.delete(key(oldest.raw));
    oldest.tls?.destroy();
    oldest.raw.destroy();
    return true;
  }

  /** Whether `c`'s request has arrived whole and its answer is not out yet; such a connection counts as used now. */
  private answering(c: Connection, now: number): boolean {
    if (c.reply === undefined || c.reply.writableFinished) return false;
    if (c.request !== undefined && !c.request.complete) return false;
    c.usedAt = now;
    return true;
  }

  /** Whether a request is in flight on `c`; a busy connection counts as used now. */
  private busy(c: Connection, now: number): boolean {
    if (c.reply === undefined || c.reply.writableFinished) return false;
    c.usedAt = now;
    return true;
  }

  private quiet(c: Connection, now: number): boolean {
    return !this.busy(c, now) && now - c.usedAt >= this.quietMs;
  }

  /**
   * Ends every connection: each quiet one as soon as it is quiet, each busy one once its answer is
   * out (the server answers with `Connection: close` while closing), and whatever is left after
   * `timeoutMs` by force. Resolves when none is open.
   */
  async closeAll(timeoutMs: number): Promise<CloseReport> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const now = performance.now();
      for (const c of [...this.byPeer.values()]) {
        if (!this.quiet(c, now)) continue;
        this.byPeer.delete(key(c.raw));
        // A TLS connection ends with close_notify; a handshake that never finished is dropped.
        if (c.tls !== undefined) endThenDestroy(c.tls, this.pollMs * 4);
        else c.raw.destroy();
      }
      if (this.byPeer.size === 0) return { forced: 0 };
      if (now >= deadline || this.aborted) return { forced: this.destroyAll() };
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
  }

  /** Destroys every connection now, and makes a close in progress (or to come) end at once. */
  abort(): void {
    this.aborted = true;
    this.destroyAll();
  }

  /** Destroys every open connection now, whatever it is doing; returns how many there were. */
  destroyAll(): number {
    const n = this.byPeer.size;
    for (const c of this.byPeer.values()) {
      c.tls?.destroy();
      c.raw.destroy();
    }
    this.byPeer.clear();
    return n;
  }
}

/** Half-closes `socket` and destroys it if the peer has not closed its side within `ms`. */
function endThenDestroy(socket: Socket, ms: number): void {
  socket.end();
  const timer = setTimeout(() => socket.destroy(), ms);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

/** How long, and how many bytes, a connection whose request could not be parsed is read before it is dropped. */
export const LINGER_MS = 2000;
export const LINGER_BYTES = 8 * 1024 * 1024;

const kLingering = Symbol("celgate.lingering");

/**
 * Sends a final answer on a connection whose request the HTTP parser rejected, then half-closes it
 * and reads what the client is still sending (up to LINGER_BYTES, for LINGER_MS) before dropping it,
 * so the answer is not lost to a reset. Used for fastify's clientErrorHandler.
 */
export function answerAndLinger(socket: Socket, head: string, body: string): void {
  const s = socket as Socket & { [kLingering]?: true };
  if (s.destroyed || s[kLingering]) return;
  s[kLingering] = true;
  if (s.writable)
    s.write(
      `${head}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  lingerThenClose(s);
}

/** Half-closes `socket`, discards what still arrives, and destroys it after LINGER_MS or LINGER_BYTES. */
export function lingerThenClose(socket: Socket): void {
  let read = 0;
  socket.end();
  socket.on("data", (chunk: Buffer) => {
    read += chunk.length;
    if (read > LINGER_BYTES) socket.destroy();
  });
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

/** How long an unwanted upload is read before the answer goes out anyway. */
export const DISCARD_MS = 10_000;

/**
 * Reads what is left of a request's body and throws it away, up to `maxBytes` or `maxMs`; resolves
 * when the body has ended (or the limit is reached, or the request is gone).
 */
export function discardBody(raw: IncomingMessage, maxBytes: number, maxMs: number): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const finish = (): void => {
      clearTimeout(timer);
      raw.off("data", onData);
      raw.off("end", finish);
      raw.off("error", finish);
      raw.off("close", finish);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      read += chunk.length;
      if (read > maxBytes) finish();
    };
    const timer = setTimeout(finish, maxMs);
    raw.on("data", onData);
    raw.once("end", finish);
    raw.once("error", finish);
    raw.once("close", finish);
    raw.resume();
  });
}
