/**
 * One param kind's objects, indexed so that a lookup costs what it finds, not what is cached: by
 * namespace and name (a paramRef with a name), by namespace (a paramRef with a selector reads one
 * namespace, as the API server's namespace-scoped lister does), by name across namespaces, and by
 * label (key=value, and key) for what a failed lookup nearly found. It is kept as client-go keeps an
 * informer's Indexer (k8s.io/client-go/tools/cache: thread_safe_store.go updates every index on each
 * add, update and delete; index.go's MetaNamespaceIndexFunc is the namespace index): the loaded
 * files build one per kind once, and a cluster cache (src/cluster/state.ts) keeps one up to date
 * from its watch.
 */
import type { LabelSelector } from "../policy/types.ts";

/** A param object as the cluster stores it (see kube/stored.ts), with what lookups read of it. */
export interface StoredParam {
  readonly apiVersion: string;
  readonly name: string;
  /** "" for a cluster-scoped kind. */
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly object: Readonly<Record<string, unknown>>;
}

/** What lookups read of one kind's objects. No method here walks every object but `all`. */
export interface ParamObjects {
  /** How many objects there are. */
  readonly size: number;
  /** The object of this name in `namespace` ("" for a cluster-scoped kind). */
  named(namespace: string, name: string): StoredParam | undefined;
  /** The objects in `namespace`. */
  inNamespace(namespace: string): Iterable<StoredParam>;
  /** The objects of this name, in every namespace. */
  withName(name: string): Iterable<StoredParam>;
  /**
   * The objects `selector` may match, from the label index: those of its narrowest equality (a
   * matchLabels entry, or an `In` expression) or `Exists` requirement. A selector without one (empty,
   * or only `NotIn` and `DoesNotExist`) narrows nothing: undefined, the caller decides whether to
   * walk `all`. The caller still applies the whole selector.
   */
  candidates(selector: LabelSelector): Iterable<StoredParam> | undefined;
  all(): Iterable<StoredParam>;
}

function addTo<K>(map: Map<K, Map<string, StoredParam>>, key: K, id: string, p: StoredParam): void {
  let m = map.get(key);
  if (!m) {
    m = new Map();
    map.set(key, m);
  }
  m.set(id, p);
}

function removeFrom<K>(map: Map<K, Map<string, StoredParam>>, key: K, id: string): void {
  const m = map.get(key);
  if (m?.delete(id) && m.size === 0) map.delete(key);
}

const NONE: Iterable<StoredParam> = [];

/** The key of an object in the name and label indexes: its namespace and name. */
const idOf = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The label index's key of one label: key and value (a key alone is its own index, `byKey`). */
const labelKey = (key: string, value: string): string => `${key}=${value}`;

export class ParamIndex implements ParamObjects {
  /** namespace → name → object: the store itself, as client-go's is keyed by namespace/name. */
  private readonly byNamespace = new Map<string, Map<string, StoredParam>>();
  private readonly byName = new Map<string, Map<string, StoredParam>>();
  private readonly byLabel = new Map<string, Map<string, StoredParam>>();
  private readonly byKey = new Map<string, Map<string, StoredParam>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `p`, or replaces the object of its namespace and name (and its index entries). */
  set(p: StoredParam): void {
    const old = this.named(p.namespace, p.name);
    if (old) this.unindex(old);
    else this.count++;
    const id = idOf(p.namespace, p.name);
    addTo(this.byNamespace, p.namespace, p.name, p);
    addTo(this.byName, p.name, id, p);
    for (const [k, v] of Object.entries(p.labels)) {
      addTo(this.byLabel, labelKey(k, v), id, p);
      addTo(this.byKey, k, id, p);
    }
  }

  /** Removes the object of this namespace and name; whether there was one. */
  delete(namespace: string, name: string): boolean {
    const old = this.named(namespace, name);
    if (!old) return false;
    this.unindex(old);
    removeFrom(this.byNamespace, namespace, name);
    this.count--;
    return true;
  }

  private unindex(p: StoredParam): void {
    const id = idOf(p.namespace, p.name);
    removeFrom(this.byName, p.name, id);
    for (const [k, v] of Object.entries(p.labels)) {
      removeFrom(this.byLabel, labelKey(k, v), id);
      removeFrom(this.byKey, k, id);
    }
  }

  named(namespace: string, name: string): StoredParam | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  inNamespace(namespace: string): Iterable<StoredParam> {
    return this.byNamespace.get(namespace)?.values() ?? NONE;
  }

  withName(name: string): Iterable<StoredParam> {
    return this.byName.get(name)?.values() ?? NONE;
  }

  candidates(selector: LabelSelector): Iterable<StoredParam> | undefined {
    // The narrowest requirement's objects, read lazily: a caller that stops early pays for what it read.
    let best: { readonly size: number; readonly items: () => Iterable<StoredParam> } | undefined;
    const consider = (size: number, items: () => Iterable<StoredParam>) => {
      if (best === undefined || size < best.size) best = { size, items };
    };
    for (const [k, v] of Object.entries(selector.matchLabels)) {
      const m = this.byLabel.get(labelKey(k, v));
      if (!m) return NONE;
      consider(m.size, () => m.values());
    }
    for (const e of selector.matchExpressions) {
      if (e.operator === "Exists") {
        const m = this.byKey.get(e.key);
        if (!m) return NONE;
        consider(m.size, () => m.values());
      } else if (e.operator === "In") {
        const buckets = [...new Set(e.values)].flatMap((v) => this.byLabel.get(labelKey(e.key, v)) ?? []);
        consider(
          buckets.reduce((n, b) => n + b.size, 0),
          function* () {
            for (const b of buckets) yield* b.values();
          },
        );
      }
    }
    return best?.items();
  }

  *all(): Iterable<StoredParam> {
    for (const m of this.byNamespace.values()) yield* m.values();
  }
}

/**
 * `cluster` objects, and the `files` objects no cluster object of the same namespace and name
 * replaces: what a cluster-connected lookup reads (cluster/state.ts). Each method reads each index
 * once; none walks every object.
 */
export function overlayObjects(cluster: ParamObjects, files: ParamObjects): ParamObjects {
  if (files.size === 0) return cluster;
  const notReplaced = function* (ps: Iterable<StoredParam>) {
    for (const p of ps) if (!cluster.named(p.namespace, p.name)) yield p;
  };
  const both = function* (c: Iterable<StoredParam>, f: Iterable<StoredParam>) {
    yield* c;
    yield* notReplaced(f);
  };
  return {
    // The files' objects are few (those of the policy files): counting them walks no cache.
    get size() {
      let n = cluster.size;
      for (const _ of notReplaced(files.all())) n++;
      return n;
    },
    named: (namespace, name) => cluster.named(namespace, name) ?? files.named(namespace, name),
    inNamespace: (namespace) => both(cluster.inNamespace(namespace), files.inNamespace(namespace)),
    withName: (name) => both(cluster.withName(name), files.withName(name)),
    candidates: (selector) => {
      const c = cluster.candidates(selector);
      const f = files.candidates(selector);
      return c === undefined || f === undefined ? undefined : both(c, f);
    },
    all: () => both(cluster.all(), files.all()),
  };
}
