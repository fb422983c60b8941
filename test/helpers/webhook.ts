/**
 * End-to-end helpers for the webhook: real policy files in a temp directory, the real
 * `startWebhook` on 127.0.0.1 with port 0, AdmissionReview bodies, the reply decoded, metrics read
 * back from the metrics port, and a load runner that is bounded in requests and in time.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { TestContext } from "node:test";
import { type RunningWebhook, type ServeOptions, startWebhook } from "../../src/adapters/server/app.ts";
import { json, send, type TestResponse } from "./https.ts";

export async function tempDir(t: TestContext, prefix = "celgate-e2e-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Replaces a file in one step, as a ConfigMap or Secret volume update does: the new content is
 * written to a hidden file in the same directory (the policy loader skips dot files) and renamed
 * over the old one, so a reader sees the old file or the new one, never half of it.
 */
export async function replaceFile(path: string, text: string): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
  await writeFile(tmp, text);
  await rename(tmp, path);
}

export interface TestWebhook {
  readonly webhook: RunningWebhook;
  readonly port: number;
  /** The certificate to trust: the generated one, or what the test passed as tlsCert. */
  readonly ca: string;
  /** What startWebhook logged (the serve command prints these to stderr). */
  readonly logs: string[];
}

/** startWebhook on 127.0.0.1, ports picked by the OS, no request logs, stopped when the test ends. */
export async function startTestWebhook(
  t: TestContext,
  options: Partial<ServeOptions> & { readonly policies: readonly string[]; readonly ca?: string },
): Promise<TestWebhook> {
  const logs: string[] = [];
  const { ca: givenCa, ...rest } = options;
  const started = await startWebhook(
    { host: "127.0.0.1", port: 0, metricsPort: 0, logLevel: false, drainMs: 0, ...rest },
    (line) => logs.push(line),
  );
  if (!started.ok) throw new Error(`startWebhook failed: ${started.message}`);
  const { webhook } = started;
  t.after(() => webhook.stop());
  const ca = webhook.generatedCert ?? givenCa;
  if (ca === undefined) throw new Error("startTestWebhook: pass `ca` along with tlsCert");
  return { webhook, port: Number(new URL(webhook.url).port), ca, logs };
}

/**
 * A log stream for `startWebhook({ logLevel, logStream })` that keeps the JSON lines it is given, as
 * they would reach stdout.
 */
export class CapturedLog {
  readonly lines: string[] = [];
  write(line: string): boolean {
    for (const l of line.split("\n")) if (l !== "") this.lines.push(l);
    return true;
  }
  /** Every line, parsed. */
  entries(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
  /** The policy reload lines (`"event": "policy-reload"`). */
  reloads(): Record<string, unknown>[] {
    return this.entries().filter((e) => e.event === "policy-reload");
  }
}

// ---------------------------------------------------------------------------------------------
// Reviews

export const ADMISSION_V1 = "admission.k8s.io/v1";
export const ADMISSION_V1BETA1 = "admission.k8s.io/v1beta1";

export interface ReviewSpec {
  readonly apiVersion?: string;
  readonly uid?: string;
  readonly operation?: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  readonly namespace?: string;
  readonly object?: Record<string, unknown> | null;
  readonly oldObject?: Record<string, unknown> | null;
  /** Another resource than apps/v1 deployments. */
  readonly resource?: {
    readonly group: string;
    readonly version: string;
    readonly kind: string;
    readonly resource: string;
  };
}

export function deployment(
  name: string,
  replicas: number,
  extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Record<string, unknown> {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: "team-a",
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: `registry.example.com/${name}:1.0` }] },
      },
    },
  };
}

/** An AdmissionReview, by default for a Deployment. */
export function deploymentReview(spec: ReviewSpec = {}): Record<string, unknown> {
  const operation = spec.operation ?? "CREATE";
  const object = spec.object === undefined ? deployment("web", 3) : spec.object;
  const oldObject = spec.oldObject === undefined ? null : spec.oldObject;
  const named = (object ?? oldObject ?? {}) as { metadata?: { name?: string } };
  const r = spec.resource ?? { group: "apps", version: "v1", kind: "Deployment", resource: "deployments" };
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const gvr = { group: r.group, version: r.version, resource: r.resource };
  return {
    apiVersion: spec.apiVersion ?? ADMISSION_V1,
    kind: "AdmissionReview",
    request: {
      uid: spec.uid ?? randomUUID(),
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: named.metadata?.name ?? "web",
      namespace: spec.namespace ?? "team-a",
      operation,
      userInfo: { username: "alice", uid: "u-1", groups: ["system:authenticated", "dev"] },
      object,
      oldObject,
      dryRun: false,
      options:
        operation === "CONNECT"
          ? null
          : {
              apiVersion: "meta.k8s.io/v1",
              kind: `${operation[0]}${operation.slice(1).toLowerCase()}Options`,
            },
    },
  };
}

export interface ReviewResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: { readonly code: number; readonly reason?: string; readonly message?: string };
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  readonly patchType?: string;
  readonly patch?: string;
}

export interface ReviewReply {
  readonly http: TestResponse;
  readonly apiVersion: unknown;
  readonly kind: unknown;
  readonly response: ReviewResponse;
  /** Milliseconds from sending to the whole answer. */
  readonly elapsedMs: number;
}

export interface PostOptions {
  readonly agent?: Agent;
  readonly timeoutMs?: number;
  /** The query string, without `?`. */
  readonly query?: string;
}

const JSON_TYPE = { "content-type": "application/json" } as const;

/** POSTs a review and decodes the reply; fails unless it is a 200 with an AdmissionReview. */
export async function postReview(
  port: number,
  ca: string | readonly string[],
  path: string,
  body: unknown,
  options: PostOptions = {},
): Promise<ReviewReply> {
  const started = performance.now();
  const http = await send({
    port,
    ca,
    path: options.query ? `${path}?${options.query}` : path,
    body,
    // A body given as text (JSON that JSON.stringify cannot write, such as deep nesting) is JSON too.
    ...(typeof body === "string" ? { headers: JSON_TYPE } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
    timeoutMs: options.timeoutMs ?? 10_000,
  });
  const elapsedMs = performance.now() - started;
  if (http.status !== 200) throw new Error(`POST ${path}: HTTP ${http.status}: ${http.body}`);
  const parsed = json(http);
  return {
    http,
    apiVersion: parsed.apiVersion,
    kind: parsed.kind,
    response: parsed.response as ReviewResponse,
    elapsedMs,
  };
}

/** The JSON Patch of a reply, decoded from base64; undefined when the reply has none. */
export function decodePatch(response: ReviewResponse): unknown[] | undefined {
  if (response.patch === undefined) return undefined;
  const decoded = JSON.parse(Buffer.from(response.patch, "base64").toString("utf8")) as unknown;
  if (!Array.isArray(decoded)) throw new Error(`patch is not a JSON array: ${String(decoded)}`);
  return decoded;
}

// ---------------------------------------------------------------------------------------------
// Metrics

/** The value of one sample in Prometheus text, or undefined when there is no such sample. */
export function sampleValue(
  text: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have = new Map<string, string>();
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      have.set(
        l[1] ?? "",
        (l[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c)),
      );
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(m[3]);
  }
  return undefined;
}

export async function scrape(metricsUrl: string): Promise<string> {
  const { port } = new URL(metricsUrl);
  const res = await send({ scheme: "http", port: Number(port), path: "/metrics", timeoutMs: 5000 });
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  return res.body;
}

// ---------------------------------------------------------------------------------------------
// Waiting and load

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  everyMs = 50,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface LoadRecord<T> {
  readonly index: number;
  readonly worker: number;
  /** performance.now() when the request was sent and when its answer (or error) came. */
  readonly sentAt: number;
  readonly doneAt: number;
  readonly result?: T;
  readonly error?: Error;
}

export interface LoadOptions<T> {
  readonly workers: number;
  /** Hard cap on requests, whatever `shouldStop` says. */
  readonly maxRequests: number;
  /** Hard cap on wall time; no request starts after it. */
  readonly maxMs: number;
  readonly pauseMs?: number;
  /** Checked before each request; true stops that worker. */
  readonly shouldStop?: (records: readonly LoadRecord<T>[]) => boolean;
  readonly request: (index: number, worker: number) => Promise<T>;
}

/**
 * `workers` loops sending one request at a time each, until the caps or `shouldStop`. Errors are
 * recorded, not thrown, so the caller can assert on every request.
 */
export async function runLoad<T>(options: LoadOptions<T>): Promise<LoadRecord<T>[]> {
  const records: LoadRecord<T>[] = [];
  const until = performance.now() + options.maxMs;
  let next = 0;
  const worker = async (w: number): Promise<void> => {
    for (;;) {
      if (next >= options.maxRequests || performance.now() > until) return;
      if (options.shouldStop?.(records)) return;
      const index = next++;
      const sentAt = performance.now();
      try {
        const result = await options.request(index, w);
        records.push({ index, worker: w, sentAt, doneAt: performance.now(), result });
      } catch (e) {
        const error = e instanceof Error ? e : new Error(String(e));
        records.push({ index, worker: w, sentAt, doneAt: performance.now(), error });
      }
      if (options.pauseMs) await sleep(options.pauseMs);
    }
  };
  await Promise.all(Array.from({ length: options.workers }, (_, w) => worker(w)));
  return records;
}

/** One keep-alive connection per agent: a worker with its own agent behaves like one API server connection. */
export function keepAliveAgent(ca: string | readonly string[]): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1, ca: ca as string | string[] });
}
