/**
 * The wire comparison's parts (wire.test.ts): a client that speaks to the real API server (client
 * certificate) and to the test API server of test/helpers/kube-apiserver.ts (bearer token) alike,
 * a watch read line by line, and the shape of a JSON value (its field paths and their JSON types,
 * not their values) with the difference of two shapes.
 */
import { request as httpsRequest } from "node:https";

/** How to reach a server: its URL, the CA to trust, and the credentials. */
export interface Endpoint {
  readonly url: string;
  readonly ca: string;
  readonly token?: string;
  readonly cert?: string;
  readonly key?: string;
}

export interface WireResponse {
  readonly status: number;
  readonly body: unknown;
}

function options(e: Endpoint, method: string, path: string, length?: number) {
  const u = new URL(e.url);
  return {
    host: u.hostname,
    port: u.port,
    path,
    method,
    ca: e.ca,
    agent: false as const,
    ...(e.cert !== undefined && e.key !== undefined ? { cert: e.cert, key: e.key } : {}),
    headers: {
      accept: "application/json",
      ...(e.token !== undefined ? { authorization: `Bearer ${e.token}` } : {}),
      ...(length !== undefined ? { "content-type": "application/json", "content-length": length } : {}),
    },
    timeout: 30_000,
  };
}

/** One JSON request; never rejects on a status. */
export function call(e: Endpoint, method: string, path: string, body?: unknown): Promise<WireResponse> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(options(e, method, path, payload?.length), (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Not JSON: the text is the body.
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** An open watch: its HTTP status, the events read so far, and when the stream ends. */
export interface Watching {
  readonly status: Promise<number>;
  readonly events: Record<string, unknown>[];
  /** Resolves when the server ends the stream, or `close()` is called. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens `path` (a `?watch=true` URL) and reads its events, one JSON object a line. */
export function watch(e: Endpoint, path: string): Watching {
  const events: Record<string, unknown>[] = [];
  let setStatus: (n: number) => void = () => {};
  const status = new Promise<number>((resolve) => {
    setStatus = resolve;
  });
  let end: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  const req = httpsRequest(options(e, "GET", path), (res) => {
    setStatus(res.statusCode ?? 0);
    let buffered = "";
    res.setEncoding("utf8");
    res.on("data", (d: string) => {
      buffered += d;
      for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
        const line = buffered.slice(0, i).trim();
        buffered = buffered.slice(i + 1);
        if (line !== "") events.push(JSON.parse(line) as Record<string, unknown>);
      }
    });
    res.on("end", end);
    res.on("close", end);
  });
  req.on("error", () => {
    setStatus(0);
    end();
  });
  req.end();
  return {
    status,
    events,
    ended,
    close: () => {
      req.destroy();
      end();
    },
  };
}

/**
 * The shape of a JSON value, as `path: type` lines: objects by key, every element of an array at
 * `path[]` (their shapes merged), and the JSON type of each leaf (`string`, `number`, `boolean`,
 * `null`, or `{}`/`[]` when empty). Values are not compared; their presence and types are.
 */
export function shape(value: unknown, path = "", into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    if (value.length === 0) into.add(`${path}: []`);
    for (const v of value) shape(v, `${path}[]`, into);
  } else if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) into.add(`${path}: {}`);
    for (const [k, v] of entries) shape(v, path === "" ? k : `${path}.${k}`, into);
  } else into.add(`${path}: ${value === null ? "null" : typeof value}`);
  return into;
}

/** What the real server's shape has that the test server's lacks, and the other way round. */
export function shapeDifference(
  real: Set<string>,
  test: Set<string>,
): { readonly missing: string[]; readonly invented: string[] } {
  return {
    missing: [...real].filter((p) => !test.has(p)).sort(),
    invented: [...test].filter((p) => !real.has(p)).sort(),
  };
}
