/**
 * A cache by key that holds its values weakly: an entry lives as long as something else keeps its
 * value. The caches of compiled programs, parsed expressions and sequences use it, so that what the
 * serving policy set holds is found again by a reload that compiles mostly unchanged files, and a
 * set a reload replaced is collected with its programs instead of staying in a cache (with a cap on
 * the count instead, a cache held every program of the last sets up to the cap: a second copy of a
 * large set's compiled form, across each reload).
 *
 * A value stays alive until the event loop's current turn ends even if nothing else holds it
 * (WeakRef's guarantee), which callers measuring memory must wait out.
 */
export class WeakCache<V extends object> {
  private readonly entries = new Map<string, WeakRef<V>>();
  private readonly registry = new FinalizationRegistry<string>((key) => {
    // The key may have been set again since its old value was collected: drop only a dead entry.
    if (this.entries.get(key)?.deref() === undefined) this.entries.delete(key);
  });

  get(key: string): V | undefined {
    return this.entries.get(key)?.deref();
  }

  set(key: string, value: V): void {
    this.entries.set(key, new WeakRef(value));
    this.registry.register(value, key);
  }

  /** Entries whose values may still be alive (dead ones leave as their finalizers run). */
  get size(): number {
    return this.entries.size;
  }
}
