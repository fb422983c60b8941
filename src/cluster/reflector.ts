/**
 * A cache of one resource's objects, kept as client-go's reflector keeps an informer's store: list
 * (page by page, `limit`/`continue`), then watch from the list's resourceVersion with bookmarks on;
 * a watch that ends is opened again from the last resourceVersion seen (an event's or a
 * bookmark's); a `410 Gone` (an `ERROR` event or an expired continue token) means that version is
 * compacted away, so the cache lists again from scratch. Between one list-and-watch and the next,
 * and before a failed request is tried again, the cache waits client-go's backoff (backoff.ts), so
 * a server that answers every watch with 410 is not listed in a tight loop; the cache keeps serving
 * what it last had meanwhile.
 * (client-go: tools/cache/reflector.go RunWithContext, ListAndWatch, watch; isExpiredError.)
 *
 * A hung API server (stopped, or a connection dropped without a reset) leaves a watch open that
 * brings nothing. The API server sends each watch that asks for them a bookmark about once a minute
 * (apiserver/pkg/storage/cacher: defaultBookmarkFrequency, cacheWatcher.nextBookmarkTime) and keeps
 * its events for that plus 15 s (eventFreshDuration), so a watch that brings no event and no
 * bookmark for `silenceMs` (that, by default) is taken for lost: the cache's age counts from the
 * last thing it heard, one log line says so, and the watch is opened again. (client-go finds such
 * connections with HTTP/2 pings; the client library here speaks HTTP/1.1.)
 */
import { Backoff, REFLECTOR_BACKOFF } from "./backoff.ts";
import type { ApiClient, WatchEvent, WatchHandle } from "./client.ts";
import { collectionPath, type ResourceInfo } from "./discovery.ts";
import {
  type CacheObserver,
  type ClusterLog,
  NO_CACHE_OBSERVER,
  QUIET_LOG,
  type WatchRestartReason,
} from "./observe.ts";

/** The API server's bookmark interval plus 15 s: its own eventFreshDuration (see above). */
export const DEFAULT_SILENCE_MS = 75_000;

export type KubeObject = Readonly<Record<string, unknown>> & {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
};

/**
 * Where a reflector keeps its objects, keyed by namespace and name: a plain map by default; a
 * param cache keeps an indexed store (state.ts), as client-go's informers keep an Indexer.
 */
export interface ObjectStore {
  readonly size: number;
  get(namespace: string, name: string): KubeObject | undefined;
  /** Adds or replaces the object of its namespace and name. */
  set(namespace: string, name: string, o: KubeObject): void;
  /** Whether there was one to delete. */
  delete(namespace: string, name: string): boolean;
  /** Objects in one namespace ("" for cluster-scoped objects). */
  inNamespace(namespace: string): Iterable<KubeObject>;
  all(): Iterable<KubeObject>;
}

/** The default store: namespace → name → object. */
class MapStore implements ObjectStore {
  private readonly byNamespace = new Map<string, Map<string, KubeObject>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  set(namespace: string, name: string, o: KubeObject): void {
    let m = this.byNamespace.get(namespace);
    if (!m) {
      m = new Map();
      this.byNamespace.set(namespace, m);
    }
    if (!m.has(name)) this.count++;
    m.set(name, o);
  }

  delete(namespace: string, name: string): boolean {
    const m = this.byNamespace.get(namespace);
    if (!m?.delete(name)) return false;
    this.count--;
    if (m.size === 0) this.byNamespace.delete(namespace);
    return true;
  }

  inNamespace(namespace: string): Iterable<KubeObject> {
    return this.byNamespace.get(namespace)?.values() ?? [];
  }

  *all(): Iterable<KubeObject> {
    for (const ns of this.byNamespace.values()) yield* ns.values();
  }
}

export interface ReflectorOptions {
  /** Objects per list page; client-go's default is 500. */
  readonly pageSize?: number;
  /** The backoff's first wait and its cap; client-go's (800 ms, 30 s) by default. */
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** How long a watch may bring no event or bookmark before it is taken for lost; default 75 s. */
  readonly silenceMs?: number;
  readonly log?: ClusterLog;
  readonly observer?: CacheObserver;
  /** Called after every change to the store (an event or a relist). */
  readonly onChange?: () => void;
  /** Monotonic milliseconds; tests may pass their own clock. */
  readonly now?: () => number;
  /** A new, empty store (one per full list); default a plain map by namespace and name. */
  readonly store?: () => ObjectStore;
}

interface ListPage {
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items?: readonly KubeObject[];
}

function isGone(status: number, body: unknown): boolean {
  return status === 410 || (body as { code?: number } | undefined)?.code === 410;
}

export class Reflector {
  private store: ObjectStore;
  private resourceVersion = "";
  private stopped = true;
  private handle: WatchHandle | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private syncedOnce = false;
  private readonly syncWaiters: (() => void)[] = [];
  /** While a watch is open the cache is current; otherwise, when it last was (undefined: never). */
  private currentSince: number | undefined;
  private watching = false;
  /** When the open watch last brought anything (its headers, an event, a bookmark). */
  private lastHeard = 0;
  private readonly silenceMs: number;
  private readonly log: ClusterLog;
  private readonly observer: CacheObserver;
  private readonly now: () => number;
  readonly name: string;

  constructor(
    private readonly client: ApiClient,
    readonly resource: ResourceInfo,
    private readonly options: ReflectorOptions = {},
  ) {
    this.name = resource.group === "" ? resource.resource : `${resource.resource}.${resource.group}`;
    this.log = options.log ?? QUIET_LOG;
    this.observer = options.observer ?? NO_CACHE_OBSERVER;
    this.now = options.now ?? (() => performance.now());
    this.silenceMs = options.silenceMs ?? DEFAULT_SILENCE_MS;
    this.store = this.newStore();
  }

  private newStore(): ObjectStore {
    return this.options.store?.() ?? new MapStore();
  }

  /** The store as it is now (a full list replaces it with a new one). */
  get objects(): ObjectStore {
    return this.store;
  }

  /** Whether the first full list has completed. */
  get synced(): boolean {
    return this.syncedOnce;
  }

  /** Resolves once the first full list has completed (at once if it has). */
  whenSynced(): Promise<void> {
    if (this.syncedOnce) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /**
   * How old the cached state may be, in seconds: 0 while a watch is open and not silent, otherwise
   * the time since the cache was last known current (the last thing a silent watch brought, the end
   * of the last watch, or the last completed list); undefined before the first list.
   */
  ageSeconds(): number | undefined {
    if (this.currentSince === undefined) return undefined;
    if (this.watching) {
      const silent = this.now() - this.lastHeard;
      return silent <= this.silenceMs ? 0 : silent / 1000;
    }
    return Math.max(0, (this.now() - this.currentSince) / 1000);
  }

  /** The last resourceVersion seen (a list's, an event's or a bookmark's): where a new watch starts. */
  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  get size(): number {
    return this.store.size;
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.store.get(namespace, name);
  }

  /** Objects in one namespace ("" for cluster-scoped objects). */
  inNamespace(namespace: string): Iterable<KubeObject> {
    return this.store.inNamespace(namespace);
  }

  all(): Iterable<KubeObject> {
    return this.store.all();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.handle?.abort();
    this.handle = undefined;
    clearTimeout(this.timer);
    this.wake?.();
    this.observer.removed(this.name);
  }

  private async run(): Promise<void> {
    // One backoff for every wait, as the reflector's delayHandler is: it starts again from its first
    // wait only when its reset interval has passed, not when a watch opens (a server that opens
    // every watch and then ends it with 410 would otherwise be listed in a tight loop).
    const backoff = new Backoff(
      {
        ...REFLECTOR_BACKOFF,
        initialMs: this.options.backoffInitialMs ?? REFLECTOR_BACKOFF.initialMs,
        maxMs: this.options.backoffMaxMs ?? REFLECTOR_BACKOFF.maxMs,
      },
      this.now,
    );
    let relistReason: "initial" | "expired" | "error" = "initial";
    let lost = false;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === "") {
          await this.relist(relistReason);
          relistReason = "error";
        }
        if (this.stopped) return;
        const opened = this.now();
        const outcome = await this.watchOnce(() => {
          if (lost) {
            lost = false;
            this.log.info({ resource: this.name, server: this.client.server }, "cluster connection restored");
          }
        });
        if (this.stopped) return;
        this.observer.watchRestarted(this.name, outcome);
        if (outcome === "silent") {
          if (!lost) {
            lost = true;
            this.log.error(
              {
                resource: this.name,
                server: this.client.server,
                silentSeconds: this.silenceMs / 1000,
                cacheAgeSeconds: this.ageSeconds() ?? null,
              },
              "no event or bookmark on the watch: the API server may be hung; serving from the last synced state and opening the watch again",
            );
          }
          await this.sleep(backoff.next());
          continue;
        }
        if (outcome === "expired") {
          this.resourceVersion = "";
          relistReason = "expired";
          const waitMs = Math.round(backoff.next());
          this.log.info({ resource: this.name, inMs: waitMs }, "watch expired (410 Gone): listing again");
          await this.sleep(waitMs);
          continue;
        }
        // A watch the server ends (its timeout) is opened again at once; one that ends at once
        // is waited for, so a server that closes every watch is not asked in a tight loop.
        if (this.now() - opened < 1000) await this.sleep(backoff.next());
      } catch (e) {
        if (this.stopped) return;
        if (!lost) {
          lost = true;
          const message = (e as Error).message;
          this.log.error(
            {
              resource: this.name,
              server: this.client.server,
              error: message,
              cacheAgeSeconds: this.ageSeconds() ?? null,
              ...(/HTTP 40[13]\b/.test(message)
                ? {
                    hint: `the credentials may not get, list and watch ${this.name}: apply the ClusterRole of \`celgate manifests --rbac\`, or serve with --no-cluster`,
                  }
                : {}),
            },
            "cluster connection lost; serving from the last synced state",
          );
        }
        this.observer.watchRestarted(this.name, "error");
        await this.sleep(backoff.next());
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
      this.timer.unref();
    });
  }

  /** A full list, page by page; replaces the store only when it is complete. */
  private async relist(reason: "initial" | "expired" | "error"): Promise<void> {
    const pageSize = this.options.pageSize ?? 500;
    const path = collectionPath(this.resource);
    let fresh = this.newStore();
    let token: string | undefined;
    let listVersion = "";
    for (;;) {
      const query = new URLSearchParams({ limit: String(pageSize) });
      if (token) query.set("continue", token);
      const res = await this.client.request("GET", `${path}?${query}`);
      if (this.stopped) return;
      if (token && isGone(res.status, res.body)) {
        // The continue token outlived its snapshot: start the list over (client-go does the same).
        this.log.info({ resource: this.name }, "list continue token expired: listing again from the start");
        fresh = this.newStore();
        token = undefined;
        continue;
      }
      if (res.status !== 200) throw new Error(`list ${path}: HTTP ${res.status}${statusMessage(res.body)}`);
      const page = res.body as ListPage;
      if (token === undefined) listVersion = page.metadata?.resourceVersion ?? "";
      for (const item of page.items ?? []) {
        const o = this.complete(item);
        fresh.set(o.metadata?.namespace ?? "", o.metadata?.name ?? "", o);
      }
      token = page.metadata?.continue || undefined;
      if (token === undefined) break;
    }
    this.store = fresh;
    const count = fresh.size;
    this.resourceVersion = listVersion;
    this.currentSince = this.now();
    this.observer.relisted(this.name, reason);
    this.observer.objects(this.name, count);
    if (reason !== "initial") this.log.info({ resource: this.name, objects: count, reason }, "relisted");
    const first = !this.syncedOnce;
    this.syncedOnce = true;
    if (first) {
      this.observer.synced(this.name, true);
      this.log.info({ resource: this.name, objects: count }, "cache synced");
    }
    this.options.onChange?.();
    if (first) for (const w of this.syncWaiters.splice(0)) w();
  }

  /** Items of built-in kinds come without apiVersion and kind in a list; policies expect both. */
  private complete(item: KubeObject): KubeObject {
    if (item.apiVersion !== undefined && item.kind !== undefined) return item;
    return { apiVersion: this.resource.apiVersion, kind: this.resource.kind, ...item };
  }

  /**
   * One watch stream, until it ends: how it ended ("silent": nothing came for `silenceMs`, not even
   * its headers, and it was given up). Throws when it cannot be opened or fails.
   */
  private watchOnce(onOpen: () => void): Promise<WatchRestartReason> {
    return new Promise((resolve, reject) => {
      let expired = false;
      let failure: string | undefined;
      let opened = false;
      let ended = false;
      this.lastHeard = this.now();
      const silence = setInterval(
        () => {
          if (ended || this.now() - this.lastHeard <= this.silenceMs) return;
          ended = true;
          clearInterval(silence);
          this.handle?.abort();
          this.handle = undefined;
          // Current up to the last thing the watch brought, not up to now.
          if (this.watching) this.currentSince = this.lastHeard;
          this.watching = false;
          resolve("silent");
        },
        Math.min(1000, Math.max(10, this.silenceMs / 4)),
      );
      silence.unref();
      const onEvent = (e: WatchEvent) => {
        if (ended) return;
        this.lastHeard = this.now();
        if (!opened) {
          opened = true;
          onOpen();
        }
        if (e.type === "ERROR") {
          const code = (e.object as { code?: number }).code;
          if (code === 410) expired = true;
          else failure = `watch error: ${String((e.object as { message?: unknown }).message ?? code)}`;
          return;
        }
        this.apply(e);
      };
      const onDone = (error: (Error & { statusCode?: number }) | null) => {
        if (ended) return;
        ended = true;
        clearInterval(silence);
        this.handle = undefined;
        if (this.watching) this.currentSince = this.now();
        this.watching = false;
        if (expired || error?.statusCode === 410) resolve("expired");
        else if (error) reject(error);
        else if (failure) reject(new Error(failure));
        else resolve("closed");
      };
      const query = {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: "true",
        // client-go asks for a random 5 to 10 minutes, so watches of many clients do not end together.
        timeoutSeconds: String(300 + Math.floor(Math.random() * 300)),
      };
      this.client.watch(collectionPath(this.resource), query, onEvent, onDone).then(
        (handle) => {
          if (this.stopped || ended) handle.abort();
          else {
            this.handle = handle;
            // The response headers arrived: the stream is open and the cache current from here.
            this.lastHeard = this.now();
            if (!opened) {
              opened = true;
              onOpen();
            }
            this.watching = true;
          }
        },
        (e: unknown) => {
          if (ended) return;
          ended = true;
          clearInterval(silence);
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  }

  private apply(e: WatchEvent): void {
    const o = this.complete(e.object as KubeObject);
    const rv = o.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (e.type === "BOOKMARK") return;
    const ns = o.metadata?.namespace ?? "";
    const name = o.metadata?.name ?? "";
    if (e.type === "DELETED") this.store.delete(ns, name);
    else if (e.type === "ADDED" || e.type === "MODIFIED") this.store.set(ns, name, o);
    else return;
    this.observer.objects(this.name, this.store.size);
    this.options.onChange?.();
  }
}

function statusMessage(body: unknown): string {
  const m = (body as { message?: unknown } | undefined)?.message;
  return typeof m === "string" ? `: ${m}` : "";
}
