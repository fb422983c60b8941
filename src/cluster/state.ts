/**
 * The cluster state the engine reads: a cache of Namespaces and one of every paramKind the loaded
 * bindings use, as the API server's admission plugin keeps informers for them
 * (apiserver/pkg/admission/plugin/policy/generic: policy_source.go starts an informer per paramKind
 * and stops it when no policy uses the kind any more). `follow()` is called with each policy set
 * and starts and stops caches to match.
 *
 * Lookups follow generic.CollectParams (policy_dispatcher.go), whose rules engine/params.ts's
 * `collectFrom` states once: a namespaced paramKind is looked up in paramRef.namespace or, without
 * one, the request's namespace (an error for a cluster-scoped request); a cluster-scoped kind must
 * not have paramRef.namespace; a kind whose cache has not finished its first list is an error ("not
 * yet synced"), and so is a kind the server does not serve; failurePolicy decides those. The kind's
 * scope is the one discovery reports.
 *
 * Objects in the policy files still count: a cluster object replaces a file object of the same
 * kind, namespace and name, and file objects fill in where the cluster has none.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { EngineContext } from "../engine/context.ts";
import { ParamIndex, type ParamObjects, overlayObjects } from "../engine/param-index.ts";
import {
  collectFrom,
  collectParams,
  type ParamError,
  type ParamLookup,
  type ParamSource,
  paramConfigError,
  type StoredParam,
} from "../engine/params.ts";
import type { KindScope } from "../kube/scope.ts";
import type { ParamKind, ParamRef } from "../policy/types.ts";
import type { Result } from "../result.ts";
import type { ApiClient } from "./client.ts";
import { Discovery, type ResourceInfo } from "./discovery.ts";
import { type CacheObserver, type ClusterLog, NO_CACHE_OBSERVER, QUIET_LOG } from "./observe.ts";
import { type KubeObject, type ObjectStore, Reflector, type ReflectorOptions } from "./reflector.ts";

const NAMESPACES: ResourceInfo = {
  apiVersion: "v1",
  kind: "Namespace",
  group: "",
  version: "v1",
  resource: "namespaces",
  namespaced: false,
};

export interface ClusterStateOptions {
  readonly log?: ClusterLog;
  readonly observer?: CacheObserver;
  readonly reflector?: Omit<ReflectorOptions, "log" | "observer" | "onChange">;
  /** How long to wait before asking discovery again about a kind it could not resolve. */
  readonly retryMs?: number;
}

/** A paramKind's cache, or why there is none yet. */
interface KindEntry {
  readonly key: string;
  readonly kind: ParamKind;
  reflector?: Reflector;
  /** Set when discovery says the server does not serve the kind. */
  missing?: string;
  retry?: NodeJS.Timeout;
  /** Discovery requests that failed in a row. */
  failures?: number;
  stopped: boolean;
}

function kindKey(k: ParamKind): string {
  return `${k.apiVersion}/${k.kind}`;
}

/** Go's GroupVersionKind.String(), as the API server's messages print a paramKind. */
function gvkString(k: ParamKind): string {
  const slash = k.apiVersion.indexOf("/");
  const group = slash === -1 ? "" : k.apiVersion.slice(0, slash);
  const version = slash === -1 ? k.apiVersion : k.apiVersion.slice(slash + 1);
  return `${group}/${version}, Kind=${k.kind}`;
}

/** A kind's scope as discovery reports it. */
const SERVED_NAMESPACED: KindScope = Object.freeze({ scope: "Namespaced", source: "served" });
const SERVED_CLUSTER: KindScope = Object.freeze({ scope: "Cluster", source: "served" });

/** A cached object as the engine's stored param (stored by the API server already). */
function asParam(o: KubeObject): StoredParam {
  const md = o.metadata ?? {};
  return {
    apiVersion: String(o.apiVersion ?? ""),
    name: md.name ?? "",
    namespace: md.namespace ?? "",
    labels: md.labels ?? {},
    object: o,
  };
}

/**
 * A param cache's store: the reflector's objects as stored params in a ParamIndex (by namespace and
 * name, by name, by label), each converted once, when the watch delivers it.
 */
class ParamStore implements ObjectStore {
  readonly params = new ParamIndex();

  get size(): number {
    return this.params.size;
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.params.named(namespace, name)?.object as KubeObject | undefined;
  }

  set(_namespace: string, _name: string, o: KubeObject): void {
    this.params.set(asParam(o));
  }

  delete(namespace: string, name: string): boolean {
    return this.params.delete(namespace, name);
  }

  *inNamespace(namespace: string): Iterable<KubeObject> {
    for (const p of this.params.inNamespace(namespace)) yield p.object as KubeObject;
  }

  *all(): Iterable<KubeObject> {
    for (const p of this.params.all()) yield p.object as KubeObject;
  }
}

/** The indexed params of a param cache's reflector (made with a ParamStore). */
function paramsOf(r: Reflector): ParamObjects {
  return (r.objects as ParamStore).params;
}

/** The paramKinds that the set's bound policies use (a policy without a binding reads no params). */
export function paramKindsOf(set: CompiledPolicySet): ParamKind[] {
  const kinds = new Map<string, ParamKind>();
  for (const b of set.bindings) {
    const k = b.policy.policy.paramKind;
    if (k && b.binding.paramRef) kinds.set(`${k.apiVersion}/${k.kind}`, k);
  }
  return [...kinds.values()];
}

export interface CacheStatus {
  readonly resource: string;
  readonly synced: boolean;
  readonly objects: number;
  /** Seconds since the cache was last known current; 0 while watching; null before the first list. */
  readonly ageSeconds: number | null;
}

export class ClusterState {
  private readonly discovery: Discovery;
  private readonly namespaces: Reflector;
  private readonly kinds = new Map<string, KindEntry>();
  private readonly log: ClusterLog;
  private readonly observer: CacheObserver;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly client: ApiClient,
    private readonly options: ClusterStateOptions = {},
  ) {
    this.discovery = new Discovery(client);
    this.log = options.log ?? QUIET_LOG;
    this.observer = options.observer ?? NO_CACHE_OBSERVER;
    this.namespaces = this.reflectorFor(NAMESPACES);
    this.namespaces.start();
  }

  private reflectorFor(resource: ResourceInfo, store?: () => ObjectStore): Reflector {
    return new Reflector(this.client, resource, {
      ...this.options.reflector,
      log: this.log,
      observer: this.observer,
      onChange: () => this.changed(),
      ...(store ? { store } : {}),
    });
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  /** Called after every change a cache sees (and when a cache starts or syncs). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keeps a cache for exactly these paramKinds: starts the new ones, stops the unused ones. */
  follow(paramKinds: readonly ParamKind[]): void {
    const wanted = new Map(paramKinds.map((k) => [kindKey(k), k] as const));
    for (const [key, entry] of this.kinds) {
      if (wanted.has(key)) continue;
      entry.stopped = true;
      clearTimeout(entry.retry);
      entry.reflector?.stop();
      this.kinds.delete(key);
      this.log.info({ paramKind: key }, "param cache stopped: no binding uses this paramKind any more");
    }
    for (const [key, kind] of wanted) {
      if (this.kinds.has(key)) continue;
      const entry: KindEntry = { key, kind, stopped: false };
      this.kinds.set(key, entry);
      void this.resolve(entry, kind);
    }
  }

  private async resolve(entry: KindEntry, kind: ParamKind): Promise<void> {
    const found = await this.discovery.resolve(kind.apiVersion, kind.kind);
    if (entry.stopped) return;
    if (found.ok) {
      delete entry.missing;
      entry.reflector = this.reflectorFor(found.resource, () => new ParamStore());
      entry.reflector.start();
      this.log.info({ paramKind: entry.key, resource: entry.reflector.name }, "param cache started");
      this.changed();
      return;
    }
    if (found.missing) {
      if (entry.missing === undefined)
        this.log.warn({ paramKind: entry.key, error: found.message }, "paramKind not served by the cluster");
      entry.missing = found.message;
      this.changed();
    }
    // A kind the server does not serve is asked about again now and then (a CRD may be installed);
    // a failed request sooner, backing off, since readiness waits for it.
    const failures = found.missing ? 0 : (entry.failures ?? 0) + 1;
    entry.failures = failures;
    const delay = found.missing
      ? (this.options.retryMs ?? 30_000)
      : Math.min(this.options.retryMs ?? 30_000, 250 * 2 ** (failures - 1));
    entry.retry = setTimeout(() => void this.resolve(entry, kind), delay);
    entry.retry.unref();
  }

  /**
   * Ready once Namespaces and every paramKind the cluster serves have finished a first list. A kind
   * the cluster does not serve does not hold readiness back: its bindings answer by failurePolicy.
   */
  ready(): boolean {
    if (!this.namespaces.synced) return false;
    for (const e of this.kinds.values()) if (!(e.reflector?.synced ?? e.missing !== undefined)) return false;
    return true;
  }

  /** Resolves true when ready, false if `timeoutMs` passes first. */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        off();
        resolve(false);
      }, timeoutMs);
      const off = this.onChange(() => {
        if (!this.ready()) return;
        clearTimeout(timer);
        off();
        resolve(true);
      });
    });
  }

  status(): CacheStatus[] {
    const out: CacheStatus[] = [];
    for (const r of [this.namespaces, ...[...this.kinds.values()].flatMap((e) => e.reflector ?? [])]) {
      out.push({ resource: r.name, synced: r.synced, objects: r.size, ageSeconds: r.ageSeconds() ?? null });
    }
    return out;
  }

  /** The oldest cache's age in seconds (0 when every cache is watching); null before every first sync. */
  ageSeconds(): number | null {
    let worst: number | null = 0;
    for (const s of this.status()) {
      if (s.ageSeconds === null) return null;
      worst = Math.max(worst ?? 0, s.ageSeconds);
    }
    return worst;
  }

  stop(): void {
    this.namespaces.stop();
    for (const e of this.kinds.values()) {
      e.stopped = true;
      clearTimeout(e.retry);
      e.reflector?.stop();
    }
    this.kinds.clear();
    this.listeners.clear();
  }

  /** Namespaces and params from the cluster, over those of the policy files (`files`). */
  context(files: EngineContext): EngineContext {
    const namespaces = this.namespaces;
    const cached = (apiVersion: string, kind: string): Reflector | undefined =>
      this.kinds.get(`${apiVersion}/${kind}`)?.reflector;
    const ofKind = (apiVersion: string, kind: string): ParamObjects => {
      const r = cached(apiVersion, kind);
      const fromFiles = files.params.ofKind(apiVersion, kind);
      return r ? overlayObjects(paramsOf(r), fromFiles) : fromFiles;
    };
    const params: ParamLookup = {
      ofKind,
      ofKindAnyVersion: (kind) => {
        // Each cached apiVersion over the files' objects of that version, then the files' other versions.
        const out: ParamObjects[] = [];
        const covered = new Set<ParamObjects>();
        for (const e of this.kinds.values()) {
          if (e.kind.kind !== kind || !e.reflector) continue;
          out.push(ofKind(e.kind.apiVersion, kind));
          covered.add(files.params.ofKind(e.kind.apiVersion, kind));
        }
        for (const f of files.params.ofKindAnyVersion?.(kind) ?? []) if (!covered.has(f)) out.push(f);
        return out;
      },
      scopeOf: (apiVersion, kind) => {
        const r = cached(apiVersion, kind);
        if (!r) return files.params.scopeOf(apiVersion, kind);
        return r.resource.namespaced ? SERVED_NAMESPACED : SERVED_CLUSTER;
      },
      select: (kind, ref, requestNamespace) => this.select(files.params, kind, ref, requestNamespace),
    };
    return {
      namespace: (name) => namespaces.get("", name) ?? files.namespace(name),
      params,
      ...(files.authorizer ? { authorizer: files.authorizer } : {}),
    };
  }

  /**
   * CollectParams over the kind's cache (collectFrom states its rules), its objects over those of
   * the files. Until the cache has finished its first list, or while discovery does not know the
   * kind, params the files hold answer; without them, that is the error failurePolicy decides.
   */
  private select(
    files: ParamLookup,
    kind: ParamKind,
    ref: ParamRef,
    requestNamespace: string,
  ): Result<readonly StoredParam[], ParamError> {
    const entry = this.kinds.get(kindKey(kind));
    const reflector = entry?.reflector;
    if (!reflector?.synced) {
      const fromFiles = collectParams(files, kind, ref, requestNamespace);
      if (fromFiles.ok && fromFiles.value.length > 0) return fromFiles;
      if (!reflector)
        return paramConfigError(
          entry?.missing !== undefined
            ? `failed to find resource referenced by paramKind: '${gvkString(kind)}'`
            : notSynced(kind),
        );
    }
    const objects = overlayObjects(paramsOf(reflector), files.ofKind(kind.apiVersion, kind.kind));
    const source: ParamSource = {
      scope: reflector.resource.namespaced ? "Namespaced" : "Cluster",
      ...(reflector.synced ? {} : { unavailable: notSynced(kind) }),
      named: (namespace, name) => objects.named(namespace, name),
      inNamespace: (namespace) => objects.inNamespace(namespace),
    };
    return collectFrom(source, ref, requestNamespace);
  }
}

function notSynced(kind: ParamKind): string {
  return `paramKind kind \`${gvkString(kind)}\` not yet synced to use for admission`;
}
