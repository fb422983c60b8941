/**
 * A raw HTTP/1.1 client over TLS for the tests that need control over bytes and timing that an HTTP
 * client hides: a request sent in pieces, a connection opened before anything is sent, a body
 * written whole before the answer is read, a connection reused by hand. Every wait is bounded.
 */
import { connect, type TLSSocket } from "node:tls";

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A TLS connection to 127.0.0.1:port, resolved once the handshake is done. */
export function openTls(port: number, options: { readonly timeoutMs?: number } = {}): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: "127.0.0.1",
      port,
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("TLS handshake timed out"));
    }, options.timeoutMs ?? 5000);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** The head of a request with a JSON body of `length` bytes. */
export function requestHead(path: string, length: number, extra = ""): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;
}

/**
 * Reads one response (status line, headers, a Content-Length body) from `socket`; rejects on an
 * error, on the connection closing first, or after `timeoutMs`.
 */
export function readResponse(socket: TLSSocket, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const done = (error?: Error, response?: RawResponse): void => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("close", onClose);
      if (error) reject(error);
      else resolve(response as RawResponse);
    };
    const onError = (e: Error): void => done(e);
    const onClose = (): void => done(new Error(`connection closed before a whole response: ${buffer}`));
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf("\r\n\r\n");
      if (end === -1) return;
      const lines = buffer.subarray(0, end).toString("latin1").split("\r\n");
      const status = Number(lines[0]?.split(" ")[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers["content-length"] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const body = buffer.subarray(end + 4, end + 4 + length).toString("utf8");
      done(undefined, { status, headers, body });
    };
    const timer = setTimeout(() => done(new Error(`no whole response within ${timeoutMs} ms`)), timeoutMs);
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("close", onClose);
  });
}

/** Resolves when `socket` has closed (true), or false if it is still open after `timeoutMs`. */
export function closed(socket: TLSSocket, timeoutMs = 10_000): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.on("error", () => {});
    socket.resume();
  });
}

/**
 * Writes `data` whole, in chunks, waiting for each to drain, then resolves with the write error if
 * there was one (EPIPE, ECONNRESET), or undefined.
 */
export function writeAll(socket: TLSSocket, data: Buffer): Promise<Error | undefined> {
  return new Promise((resolve) => {
    let offset = 0;
    let failed: Error | undefined;
    socket.once("error", (e) => {
      failed = e;
      resolve(e);
    });
    const step = (): void => {
      while (offset < data.length && failed === undefined) {
        const chunk = data.subarray(offset, offset + 64 * 1024);
        offset += chunk.length;
        if (!socket.write(chunk)) {
          socket.once("drain", step);
          return;
        }
      }
      if (failed === undefined) socket.write(Buffer.alloc(0), () => resolve(failed));
    };
    step();
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
