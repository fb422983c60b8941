/**
 * A prefilter for the policy matcher: given a request, which (policy, binding) entries could their
 * resource rules select? Everything else is skipped without running the matcher.
 *
 * The index only has to be conservative: it may return an entry the full matcher (matchesResources on
 * the policy's matchConstraints and on the binding's matchResources) then rejects, but never leave out
 * one it would select. So it looks only at what is cheap and decisive: operation, API group, resource
 * and subresource. Scope, version, resourceNames, excludeResourceRules and the selectors are left to
 * the matcher; each of them can only remove a match the index already allowed.
 *
 * Layout: one table per operation, then nested maps group -> resource -> subresource -> sorted list of
 * entry ordinals. A rule's `*` lives under the key "*" at its level, and a lookup tries the request's
 * own key and "*" at each level, so a request visits at most 8 leaves per target. Nested maps rather
 * than one map of joined strings so that a lookup builds no key strings.
 */
import { type AdmissionRequest, OPERATIONS } from "../request/types.ts";
import type { MatchResources, NamedRuleWithOperations } from "../policy/types.ts";

export interface IndexEntry<T> {
  readonly value: T;
  /** The policy's matchConstraints (its resourceRules are required for a match; absent = never matches). */
  readonly constraints: MatchResources | undefined;
  /** The binding's matchResources; empty resourceRules there means "no further restriction by rules". */
  readonly bindingResources: MatchResources | undefined;
}

const WILD = "*";

/** A rule's `*` is copied into each operation's slot, plus a slot of its own (see opSlot). */
const WILD_OP_SLOT = OPERATIONS.length;

/**
 * A request whose operation is none of the four (only possible with hand-made input) can still be
 * selected by `operations: ["*"]`, so it reads the slot holding just the `*` rules.
 */
function opSlot(operation: string): number {
  switch (operation) {
    case "CREATE":
      return 0;
    case "UPDATE":
      return 1;
    case "DELETE":
      return 2;
    case "CONNECT":
      return 3;
    default:
      return WILD_OP_SLOT;
  }
}

type Leaves<L> = Map<string, L>;
type Table<L> = Map<string, Map<string, Leaves<L>>>;

interface Key {
  readonly slot: number;
  readonly group: string;
  readonly resource: string;
  readonly subResource: string;
}

/** Every index key a rule set can select; empty when no rule can select anything. */
function keysOf(rules: readonly NamedRuleWithOperations[]): Key[] {
  const keys: Key[] = [];
  for (const rule of rules) {
    const slots = new Set<number>();
    for (const op of rule.operations) {
      if (op === WILD) {
        for (let i = 0; i <= WILD_OP_SLOT; i++) slots.add(i);
      } else {
        // An unknown name lands in the `*` slot, which is where a request with an unknown name looks.
        slots.add(opSlot(op));
      }
    }
    for (const slot of slots) {
      for (const group of rule.apiGroups) {
        for (const pattern of rule.resources) {
          // Same split as the rule matcher: only the first "/" separates resource from subresource.
          const slash = pattern.indexOf("/");
          const resource = slash < 0 ? pattern : pattern.slice(0, slash);
          const subResource = slash < 0 ? "" : pattern.slice(slash + 1);
          keys.push({ slot, group, resource, subResource });
        }
      }
    }
  }
  return keys;
}

/**
 * A rough measure of how many requests the keys admit, to pick the narrower of the policy's and the
 * binding's rules. A wildcard group or resource admits far more than a named one.
 */
function breadth(keys: readonly Key[]): number {
  let total = 0;
  for (const k of keys) {
    total += (k.group === WILD ? 64 : 1) * (k.resource === WILD ? 64 : 1) * (k.subResource === WILD ? 4 : 1);
  }
  return total;
}

/** Which rules an entry is filed under, or "always" when neither side restricts by rules. */
type Placement =
  | { readonly kind: "never" }
  | { readonly kind: "always" }
  | { readonly kind: "keys"; readonly keys: readonly Key[]; readonly equivalent: boolean };

/**
 * Both the policy's rules and the binding's must select the request, each through its own
 * matchPolicy, so either side alone is a sound filter. We do not intersect them: with Equivalent one
 * side may match through the resource and the other through the requestResource, which an index
 * keyed on the intersection would miss.
 */
function place<T>(entry: IndexEntry<T>): Placement {
  const policy = entry.constraints;
  if (policy === undefined) return { kind: "never" };
  const sides: { keys: Key[]; equivalent: boolean }[] = [];
  // An empty resourceRules selects every resource in the matcher (as in the API server), so such a
  // side gives no filter. The parser rejects it for matchConstraints, but we follow the matcher.
  for (const mr of [policy, entry.bindingResources]) {
    if (mr === undefined || mr.resourceRules.length === 0) continue;
    const keys = keysOf(mr.resourceRules);
    if (keys.length === 0) return { kind: "never" };
    sides.push({ keys, equivalent: mr.matchPolicy === "Equivalent" });
  }
  let best = sides[0];
  if (best === undefined) return { kind: "always" };
  const other = sides[1];
  if (other !== undefined && breadth(other.keys) < breadth(best.keys)) best = other;
  return { kind: "keys", keys: best.keys, equivalent: best.equivalent };
}

function leafFor(table: Table<number[]>[], key: Key): number[] {
  let groups = table[key.slot];
  if (groups === undefined) {
    groups = new Map();
    table[key.slot] = groups;
  }
  let resources = groups.get(key.group);
  if (resources === undefined) {
    resources = new Map();
    groups.set(key.group, resources);
  }
  let subs = resources.get(key.resource);
  if (subs === undefined) {
    subs = new Map();
    resources.set(key.resource, subs);
  }
  let leaf = subs.get(key.subResource);
  if (leaf === undefined) {
    leaf = [];
    subs.set(key.subResource, leaf);
  }
  return leaf;
}

/** A leaf's entries: their ordinals, sorted, for the merge; and their values, for a lookup that finds one leaf. */
interface Leaf<T> {
  readonly ordinals: Int32Array;
  readonly values: readonly T[];
}

function leaf<T>(list: readonly number[], values: readonly T[]): Leaf<T> {
  return { ordinals: Int32Array.from(list), values: list.map((o) => values[o] as T) };
}

function freeze<T>(
  table: readonly (Table<number[]> | undefined)[],
  values: readonly T[],
): (Table<Leaf<T>> | undefined)[] {
  return table.map((groups) => {
    if (groups === undefined) return undefined;
    const out: Table<Leaf<T>> = new Map();
    for (const [group, resources] of groups) {
      const r = new Map<string, Leaves<Leaf<T>>>();
      for (const [resource, subs] of resources) {
        const s: Leaves<Leaf<T>> = new Map();
        for (const [sub, list] of subs) s.set(sub, leaf(list, values));
        r.set(resource, s);
      }
      out.set(group, r);
    }
    return out;
  });
}

interface LastLookup<T> {
  readonly slot: number;
  readonly group: string;
  readonly resource: string;
  readonly sub: string;
  readonly altGroup: string | undefined;
  readonly altResource: string | undefined;
  readonly altSub: string;
  readonly candidates: readonly T[];
}

/** At most 8 leaves under the resource, 8 under the requestResource, plus the "always" list. */
const MAX_LISTS = 8 * 2 + 1;

const EMPTY: readonly never[] = Object.freeze([]);

export class PolicyIndex<T> {
  /** The entries that can ever be candidates, in the order given; ordinals index into it. */
  private readonly values: readonly T[];
  /** Every keyed entry, looked up under the request's own resource. */
  private readonly direct: readonly (Table<Leaf<T>> | undefined)[];
  /** Keyed entries whose filing side has matchPolicy Equivalent, also looked up under requestResource. */
  private readonly equivalent: readonly (Table<Leaf<T>> | undefined)[];
  private readonly always: Leaf<T>;
  /** Scratch for the merge: the leaves a lookup found and a cursor into each (reused by every call). */
  private readonly lists: Leaf<T>[] = [];
  private readonly cursors = new Int32Array(MAX_LISTS);
  private listCount = 0;

  /** The number of entries that may ever be returned (entries that can never match are dropped). */
  readonly size: number;

  constructor(entries: readonly IndexEntry<T>[]) {
    const values: T[] = [];
    const direct: Table<number[]>[] = [];
    const equivalent: Table<number[]>[] = [];
    const always: number[] = [];
    for (const entry of entries) {
      const placement = place(entry);
      if (placement.kind === "never") continue;
      const ordinal = values.length;
      values.push(entry.value);
      if (placement.kind === "always") {
        always.push(ordinal);
        continue;
      }
      for (const key of placement.keys) {
        add(leafFor(direct, key), ordinal);
        if (placement.equivalent) add(leafFor(equivalent, key), ordinal);
      }
    }
    this.values = values;
    this.size = values.length;
    this.direct = freeze(direct, values);
    this.equivalent = freeze(equivalent, values);
    this.always = leaf(always, values);
  }

  /**
   * Entries that may match, in the order they were given (stable; each at most once). The list is
   * shared: with the last request's, when this one names the same operation and resources (a
   * webhook's requests mostly do), and with the index's own lists; callers only read it.
   */
  candidates(request: AdmissionRequest): readonly T[] {
    const slot = opSlot(request.operation);
    const own = request.resource;
    const ownSub = request.subResource ?? "";
    const alt = request.requestResource;
    const altSub = alt === undefined ? "" : (request.requestSubResource ?? ownSub);
    // Five Map lookups keyed by the request's strings, which are new with every request and so
    // hashed anew, cost more than comparing them with the last request's.
    const last = this.last;
    if (
      last !== undefined &&
      last.slot === slot &&
      last.group === own.group &&
      last.resource === own.resource &&
      last.sub === ownSub &&
      last.altGroup === alt?.group &&
      last.altResource === alt?.resource &&
      last.altSub === altSub
    )
      return last.candidates;
    this.listCount = 0;
    if (this.always.ordinals.length > 0) this.pushList(this.always);
    this.lookup(this.direct[slot], own.group, own.resource, ownSub);
    // The version is not indexed, so a requestResource differing only in version finds nothing new.
    if (alt !== undefined && (alt.group !== own.group || alt.resource !== own.resource || altSub !== ownSub))
      this.lookup(this.equivalent[slot], alt.group, alt.resource, altSub);
    const candidates = this.merge();
    this.last = {
      slot,
      group: own.group,
      resource: own.resource,
      sub: ownSub,
      altGroup: alt?.group,
      altResource: alt?.resource,
      altSub,
      candidates,
    };
    return candidates;
  }

  /** The last request's key and candidates (see `candidates`). */
  private last: LastLookup<T> | undefined;

  private lookup(groups: Table<Leaf<T>> | undefined, group: string, resource: string, sub: string): void {
    if (groups === undefined) return;
    this.lookupResource(groups.get(group), resource, sub);
    if (group !== WILD) this.lookupResource(groups.get(WILD), resource, sub);
  }

  private lookupResource(
    resources: Map<string, Leaves<Leaf<T>>> | undefined,
    resource: string,
    sub: string,
  ): void {
    if (resources === undefined) return;
    this.lookupSub(resources.get(resource), sub);
    if (resource !== WILD) this.lookupSub(resources.get(WILD), sub);
  }

  private lookupSub(subs: Leaves<Leaf<T>> | undefined, sub: string): void {
    if (subs === undefined) return;
    // A pattern's `*` subresource also covers "no subresource" (`pods/*` selects pods itself).
    const exact = subs.get(sub);
    if (exact !== undefined) this.pushList(exact);
    if (sub !== WILD) {
      const any = subs.get(WILD);
      if (any !== undefined) this.pushList(any);
    }
  }

  private pushList(list: Leaf<T>): void {
    this.lists[this.listCount] = list;
    this.cursors[this.listCount] = 0;
    this.listCount++;
  }

  /** Merges the sorted ordinal lists found, dropping repeats, into the entries' values. */
  private merge(): readonly T[] {
    const n = this.listCount;
    if (n === 0) return EMPTY;
    // One leaf found, as for most requests: its values, built with the index, are the answer.
    if (n === 1) return (this.lists[0] as Leaf<T>).values;
    const lists = this.lists;
    const cursors = this.cursors;
    const out: T[] = [];
    for (;;) {
      let min = -1;
      for (let i = 0; i < n; i++) {
        const list = (lists[i] as Leaf<T>).ordinals;
        const c = cursors[i] as number;
        if (c < list.length) {
          const v = list[c] as number;
          if (min < 0 || v < min) min = v;
        }
      }
      if (min < 0) break;
      for (let i = 0; i < n; i++) {
        const list = (lists[i] as Leaf<T>).ordinals;
        const c = cursors[i] as number;
        if (c < list.length && list[c] === min) cursors[i] = c + 1;
      }
      out.push(this.values[min] as T);
    }
    return out.length === 0 ? EMPTY : out;
  }
}

/** Entries are added in order, so a repeat can only be the last element (several keys, same leaf). */
function add(list: number[], ordinal: number): void {
  if (list[list.length - 1] !== ordinal) list.push(ordinal);
}
