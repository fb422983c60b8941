/**
 * Real HTTP(S) requests against a server on 127.0.0.1, always bounded by a timeout so a hung server
 * fails the test instead of hanging the run.
 */
import type { IncomingHttpHeaders } from "node:http";
import { request as httpRequest } from "node:http";
import { type Agent, request as httpsRequest } from "node:https";
import type { TLSSocket } from "node:tls";

export interface TestResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Serial number (upper-case hex) of the certificate the server presented; HTTPS only. */
  readonly peerSerial?: string;
}

export interface TestRequest {
  readonly port: number;
  readonly path: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string | number>>;
  /** Strings and buffers are sent as they are; anything else as JSON with an application/json type. */
  readonly body?: unknown;
  readonly scheme?: "http" | "https";
  /** Trusted server certificate(s). */
  readonly ca?: string | readonly string[];
  /** Client certificate and key, for mutual TLS. */
  readonly cert?: string;
  readonly key?: string;
  /** Defaults to no agent: a new connection per request. */
  readonly agent?: Agent;
  readonly timeoutMs?: number;
}

export function send(req: TestRequest): Promise<TestResponse> {
  const timeoutMs = req.timeoutMs ?? 5000;
  const headers: Record<string, string | number> = { ...req.headers };
  let payload: Buffer | undefined;
  if (typeof req.body === "string") payload = Buffer.from(req.body);
  else if (Buffer.isBuffer(req.body)) payload = req.body;
  else if (req.body !== undefined) {
    payload = Buffer.from(JSON.stringify(req.body));
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
      headers["content-type"] = "application/json";
  }
  if (payload !== undefined) headers["content-length"] = payload.length;

  return new Promise<TestResponse>((resolve, reject) => {
    const options = {
      host: "127.0.0.1",
      port: req.port,
      path: req.path,
      method: req.method ?? (payload === undefined ? "GET" : "POST"),
      headers,
    };
    const onResponse = (res: import("node:http").IncomingMessage): void => {
      const socket = res.socket as TLSSocket;
      const peerSerial =
        typeof socket.getPeerCertificate === "function"
          ? socket.getPeerCertificate().serialNumber
          : undefined;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          ...(peerSerial !== undefined ? { peerSerial: peerSerial.toUpperCase() } : {}),
        });
      });
    };
    const r =
      req.scheme === "http"
        ? httpRequest({ ...options, agent: false }, onResponse)
        : httpsRequest(
            {
              ...options,
              agent: req.agent ?? false,
              ...(req.ca !== undefined ? { ca: req.ca as string | string[] } : {}),
              ...(req.cert !== undefined ? { cert: req.cert } : {}),
              ...(req.key !== undefined ? { key: req.key } : {}),
            },
            onResponse,
          );
    const timer = setTimeout(
      () => r.destroy(new Error(`request timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    r.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    r.end(payload);
  });
}

/** The body parsed as JSON, typed loosely for assertions. */
export function json(res: TestResponse): Record<string, unknown> {
  return JSON.parse(res.body) as Record<string, unknown>;
}
