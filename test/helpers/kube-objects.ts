/**
 * Objects on a real API server (kube-control-plane.ts), by their manifests: where a kind is served
 * (read from discovery, as kubectl's RESTMapper does), create (optionally with server-side dry
 * run), read and delete. A kind or version the server does not serve is an answer, not a throw.
 */
import type { ControlPlane, KubeResponse } from "./kube-control-plane.ts";

export interface KubeManifest {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: { readonly name?: unknown; readonly namespace?: unknown };
  readonly [key: string]: unknown;
}

export interface ServedResource {
  /** The collection's path, namespace filled in for a namespaced kind. */
  readonly collection: string;
  readonly namespaced: boolean;
}

interface ApiResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** Discovery, read once per group version (and again after `forget`, as a CRD adds kinds). */
export class Resources {
  private readonly lists = new Map<string, Promise<readonly ApiResource[] | undefined>>();

  constructor(private readonly plane: ControlPlane) {}

  private list(apiVersion: string): Promise<readonly ApiResource[] | undefined> {
    let cached = this.lists.get(apiVersion);
    if (cached === undefined) {
      const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      cached = this.plane.request("GET", path).then((r) => {
        if (r.status === 404) return undefined;
        if (r.status !== 200) throw new Error(`discovery ${path}: ${r.status} ${JSON.stringify(r.body)}`);
        return ((r.body as { resources?: ApiResource[] }).resources ?? []).filter(
          (x) => !x.name.includes("/"),
        );
      });
      this.lists.set(apiVersion, cached);
    }
    return cached;
  }

  /** Forget what discovery said about `apiVersion` (a CRD was created or deleted). */
  forget(apiVersion: string): void {
    this.lists.delete(apiVersion);
  }

  /** Where `manifest` is created, or undefined when its kind is not served in its version. */
  async of(manifest: KubeManifest): Promise<ServedResource | undefined> {
    const { apiVersion, kind } = manifest;
    if (typeof apiVersion !== "string" || typeof kind !== "string") return undefined;
    const found = (await this.list(apiVersion))?.find((r) => r.kind === kind);
    if (found === undefined) return undefined;
    const prefix = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = typeof manifest.metadata?.namespace === "string" ? manifest.metadata.namespace : "default";
    return {
      collection: found.namespaced ? `${prefix}/namespaces/${ns}/${found.name}` : `${prefix}/${found.name}`,
      namespaced: found.namespaced,
    };
  }
}

/** What the server said to a create: the status, its body, and its warnings; `served: false` when the kind is not served. */
export type CreateAnswer = (KubeResponse & { readonly served: true }) | { readonly served: false };

/** Creates `manifest`; with `dryRun`, the server validates and admits it, and stores nothing. */
export async function createObject(
  plane: ControlPlane,
  resources: Resources,
  manifest: KubeManifest,
  options: { readonly dryRun: boolean },
): Promise<CreateAnswer> {
  const where = await resources.of(manifest);
  if (where === undefined) return { served: false };
  const query = options.dryRun ? "?dryRun=All" : "";
  const r = await plane.request("POST", `${where.collection}${query}`, manifest);
  return { ...r, served: true };
}

/** The stored object, or undefined when it is not there. */
export async function getObject(
  plane: ControlPlane,
  resources: Resources,
  manifest: KubeManifest,
): Promise<Record<string, unknown> | undefined> {
  const where = await resources.of(manifest);
  const name = manifest.metadata?.name;
  if (where === undefined || typeof name !== "string") return undefined;
  const r = await plane.request("GET", `${where.collection}/${encodeURIComponent(name)}`);
  return r.status === 200 ? (r.body as Record<string, unknown>) : undefined;
}

/** Deletes the object, and waits (bounded) until it is gone; a missing object is fine. */
export async function deleteObject(
  plane: ControlPlane,
  resources: Resources,
  manifest: KubeManifest,
  waitMs = 30_000,
): Promise<void> {
  const where = await resources.of(manifest);
  const name = manifest.metadata?.name;
  if (where === undefined || typeof name !== "string") return;
  const path = `${where.collection}/${encodeURIComponent(name)}`;
  const r = await plane.request("DELETE", path);
  if (r.status !== 200 && r.status !== 202 && r.status !== 404)
    throw new Error(`DELETE ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if ((await plane.request("GET", path)).status === 404) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${path} still there ${waitMs / 1000} s after DELETE`);
}

/** Polls `get` until `ready` holds for what it returns, or fails after `waitMs`. */
export async function waitFor<T>(
  what: string,
  get: () => Promise<T>,
  ready: (value: T) => boolean,
  waitMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  let last = await get();
  while (!ready(last)) {
    if (Date.now() > deadline)
      throw new Error(`${what}: not so after ${waitMs / 1000} s (last: ${JSON.stringify(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    last = await get();
  }
  return last;
}
