/**
 * The connection to a Kubernetes API server, through the official client library
 * (`@kubernetes/client-node`): its `KubeConfig` reads a kubeconfig file or the in-cluster
 * ServiceAccount (token, CA, `KUBERNETES_SERVICE_HOST`) and does the authentication (tokens, client
 * certificates, exec plugins, OIDC, a rotating in-cluster token file). Lists, watches, discovery and
 * SubjectAccessReviews are plain JSON requests over that configuration rather than the library's
 * typed API classes and `Watch`: those decode objects into classes (timestamps become `Date`s,
 * unknown fields of custom resources are dropped) or with JSON.parse (an int64 beyond 2^53
 * rounded), while policies must see the objects exactly as the API server serves them, as they do
 * in the API server: numbers are read as its decoder reads them (yaml/json-numbers.ts).
 *
 * The library is loaded only when a cluster is used: importing it costs more than celgate's whole
 * cold start otherwise.
 */
import { existsSync } from "node:fs";
import { Agent as HttpAgent, STATUS_CODES, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, type RequestOptions, request as httpsRequest } from "node:https";
import { createInterface } from "node:readline";
import type { KubeConfig } from "@kubernetes/client-node";
import { err, ok, type Result } from "../result.ts";
import { parseJson } from "../yaml/json-numbers.ts";

/** Where the in-cluster ServiceAccount credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface ConnectOptions {
  /** A kubeconfig file; without it, the in-cluster ServiceAccount when there is one. */
  readonly kubeconfig?: string;
  /** Where to look for the ServiceAccount token and CA (tests); default SERVICE_ACCOUNT_DIR. */
  readonly serviceAccountDir?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long one request may wait for its answer, unless the caller says (default 30 s). */
  readonly requestTimeoutMs?: number;
}

/** Whether the process runs in a pod with API credentials (what client-go's InClusterConfig checks). */
export function inCluster(options: ConnectOptions = {}): boolean {
  const env = options.env ?? process.env;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  return (
    env.KUBERNETES_SERVICE_HOST !== undefined &&
    env.KUBERNETES_SERVICE_HOST !== "" &&
    existsSync(`${dir}/token`)
  );
}

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
}

/** A watch event as the stream carries it. */
export interface WatchEvent {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

export interface WatchHandle {
  abort(): void;
}

/** What the cluster code asks of a connection; tests may substitute their own. */
export interface ApiClient {
  /** The server's URL, for logs. */
  readonly server: string;
  /** One JSON request; rejects on a network error or when `timeoutMs` passes. */
  request(
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    body?: unknown,
    timeoutMs?: number,
  ): Promise<ApiResponse>;
  /**
   * Opens a watch; `onEvent` sees each event, `onDone` is called once when the stream ends (null
   * for a clean end, else the error: an HTTP status has `statusCode`).
   */
  watch(
    path: string,
    query: Readonly<Record<string, string>>,
    onEvent: (e: WatchEvent) => void,
    onDone: (error: (Error & { statusCode?: number }) | null) => void,
  ): Promise<WatchHandle>;
}

class KubeClient implements ApiClient {
  private agent: HttpsAgent | HttpAgent | undefined;
  readonly server: string;
  private readonly https: boolean;

  constructor(
    private readonly requestTimeoutMs: number,
    private readonly kc: KubeConfig,
  ) {
    this.server = kc.getCurrentCluster()?.server ?? "";
    this.https = this.server.startsWith("https:");
  }

  /** The library's TLS and credentials, on one keep-alive agent (the library makes one per call). */
  private async options(): Promise<RequestOptions> {
    const opts: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    if (!this.agent) {
      this.agent = this.https
        ? new HttpsAgent({
            keepAlive: true,
            ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
            ...(opts.cert !== undefined ? { cert: opts.cert } : {}),
            ...(opts.key !== undefined ? { key: opts.key } : {}),
            ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
            ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
          })
        : new HttpAgent({ keepAlive: true });
    }
    return opts;
  }

  /** The library's credentials as request headers. */
  private headers(opts: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json" };
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === "string") headers[k] = v;
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    return headers;
  }

  async request(
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    body?: unknown,
    timeoutMs = this.requestTimeoutMs,
  ): Promise<ApiResponse> {
    const opts = await this.options();
    const url = new URL(this.server + path);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = this.headers(opts);
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    const send = this.https ? httpsRequest : httpRequest;
    return new Promise<ApiResponse>((resolve, reject) => {
      // A timer cleared on the answer, not AbortSignal.timeout: that signal keeps the request, and
      // with it the whole response body, reachable until it fires.
      let timer: NodeJS.Timeout | undefined;
      const done =
        <T>(settle: (v: T) => void) =>
        (v: T) => {
          clearTimeout(timer);
          settle(v);
        };
      const req = send(url, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", done(reject));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = text === "" ? undefined : parseJson(text);
          } catch {
            // Not JSON (a proxy's error page): the text is the body.
          }
          done(resolve)({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      timer = setTimeout(
        () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      req.on("error", done(reject));
      req.end(payload);
    });
  }

  /**
   * A watch stream, one JSON event a line; resolves once the response's headers arrived (or the
   * request failed, which `onDone` is told). A line that is not a JSON event ends the stream with
   * an error, so the reflector lists again rather than miss the change it carried.
   */
  async watch(
    path: string,
    query: Readonly<Record<string, string>>,
    onEvent: (e: WatchEvent) => void,
    onDone: (error: (Error & { statusCode?: number }) | null) => void,
  ): Promise<WatchHandle> {
    const opts = await this.options();
    const url = new URL(this.server + path);
    url.searchParams.set("watch", "true");
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const send = this.https ? httpsRequest : httpRequest;
    let ended = false;
    const req = send(url, { method: "GET", headers: this.headers(opts), agent: this.agent });
    const end = (error: (Error & { statusCode?: number }) | null): void => {
      if (ended) return;
      ended = true;
      req.destroy();
      onDone(error);
    };
    await new Promise<void>((opened) => {
      req.on("error", (e) => {
        end(e);
        opened();
      });
      req.on("response", (res) => {
        opened();
        res.on("error", end);
        if (res.statusCode !== 200) {
          res.resume();
          const status = res.statusCode ?? 0;
          end(
            Object.assign(new Error(res.statusMessage || STATUS_CODES[status] || "Internal Server Error"), {
              statusCode: status,
            }),
          );
          return;
        }
        res.on("end", () => end(null));
        res.on("close", () => end(null));
        const lines = createInterface({ input: res, crlfDelay: Number.POSITIVE_INFINITY });
        // readline passes on the stream's errors, and an unheard one would end the process.
        lines.on("error", end);
        lines.on("line", (line) => {
          if (ended || line.trim() === "") return;
          let event: { type?: unknown; object?: unknown };
          try {
            event = parseJson(line) as typeof event;
          } catch (e) {
            end(new Error(`watch ${path}: an event that is not JSON (${(e as Error).message})`));
            return;
          }
          if (typeof event?.type !== "string" || typeof event.object !== "object" || event.object === null) {
            end(new Error(`watch ${path}: an event without a type and an object`));
            return;
          }
          onEvent({ type: event.type, object: event.object as Record<string, unknown> });
        });
      });
      req.end();
    });
    return { abort: () => end(new Error(`watch ${path}: aborted`)) };
  }
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** What connect() found: a client, or why there is none. */
export type Connection = Result<ApiClient, string>;

/**
 * A client for `--kubeconfig FILE`, or for the in-cluster ServiceAccount when no file is given and
 * the process runs in a pod; an error when neither is there or the file is unusable.
 */
export async function connect(options: ConnectOptions = {}): Promise<Connection> {
  const lib = await import("@kubernetes/client-node");
  const kc = new lib.KubeConfig();
  try {
    if (options.kubeconfig !== undefined) kc.loadFromFile(options.kubeconfig);
    else if (inCluster(options)) kc.loadFromCluster();
    else
      return err("no --kubeconfig given and not running in a cluster (no KUBERNETES_SERVICE_HOST and token)");
  } catch (e) {
    return err(`kubeconfig ${options.kubeconfig ?? "(in-cluster)"}: ${(e as Error).message}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) return err(`kubeconfig ${options.kubeconfig ?? "(in-cluster)"}: no current cluster`);
  return ok(new KubeClient(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, kc));
}
